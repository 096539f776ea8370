"""The machine description at the top of the report, and the name of the results file."""

import os
import platform
import re

from stats import first_line, run_capture


def machine_info(scratch_base, scratch_fs, abi, configs, python):
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = "%.0f GiB RAM" % (kb / 1048576)
    except (OSError, ValueError, IndexError):
        pass
    glibc = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else ""
    tools = {}
    for name, cmd in (("cc", ["cc", "--version"]), ("python", [python, "--version"]),
                      ("git", ["git", "--version"]), ("tar", ["tar", "--version"]),
                      ("make", ["make", "--version"]), ("find", ["find", "--version"]),
                      ("proot", ["proot", "--version"])):
        r = run_capture(cmd)
        text = r.stdout + r.stderr
        line = first_line(text) if name != "proot" else text  # proot starts with a banner
        m = re.search(r"(\d+\.\d+(?:\.\d+)?)", line)
        if r.returncode == 0 and m:
            tools[name] = m.group(1)
    fc = next((c for c in configs if c.name == "fakechroot"), None)
    if fc and fc.available:
        tools["fakechroot"] = fc.version
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "mem": mem,
        "kernel": platform.system() + " " + platform.release(),
        "arch": platform.machine(),
        "glibc": glibc,
        "scratch": "%s (%s)" % (scratch_fs, scratch_base),
        "landlock_abi": abi,
        "tools": tools,
    }


def machine_slug(info):
    cpu = re.sub(r"\((R|TM|tm|r)\)", "", info["cpu"])
    cpu = re.sub(r"@.*$", "", cpu)
    cpu = re.sub(r"\b(CPU|Processor|with|Radeon.*|\d+-Core)\b", "", cpu)
    cpu = re.sub(r"[^a-z0-9]+", "-", cpu.lower()).strip("-") or "cpu"
    kernel = re.match(r"\d+\.\d+", platform.release())
    return "%s-%dc-linux%s" % (cpu, info["cores"] or 0, kernel.group(0) if kernel else "")


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def fs_type(path):
    """filesystem type of the mount containing path, from /proc/self/mounts"""
    best, fstype = "", "unknown"
    real = os.path.realpath(path)
    try:
        with open("/proc/self/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) < 3:
                    continue
                mnt = parts[1].replace("\\040", " ")
                if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                    best, fstype = mnt, parts[2]
    except OSError:
        pass
    return fstype
