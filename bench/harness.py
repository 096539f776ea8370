#!/usr/bin/env python3
"""fsguard benchmark harness — run by bench/run, which builds the binaries first.

Runs the C microbenchmark and the whole-workload suite under every available
configuration (bare, fsguard, naive realpath preload, Landlock, fakechroot,
proot), interleaved repetition by repetition, and writes a Markdown report.
Only this script's children are ever put under a preload or a sandbox.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PY_IMPORTS = "import json, asyncio, email, http.client, decimal, xml.etree.ElementTree, sqlite3, argparse"

MICRO_CASES = [
    ("open_close", "open+close (3 levels deep)"),
    ("openat_close", "openat(dirfd)+close"),
    ("stat", "stat"),
    ("access", "access"),
    ("fopen_fclose", "fopen+fclose"),
    ("create_unlink", "create+unlink"),
    ("mkdir_rmdir", "mkdir+rmdir"),
    ("denied_open", "denied open (write outside root, logged)"),
]

# Targets for fsguard, as guarded/bare ratios (pairwise medians): the
# resolver rework's (calls act through the fd that was checked), and the
# earlier ones it did not change.
TARGETS = {
    ("micro", "open_close"): 1.05,
    ("micro", "openat_close"): 1.20,
    ("micro", "stat"): 1.05,
    ("micro", "fopen_fclose"): 1.10,
    ("micro", "create_unlink"): 1.10,
    ("micro", "mkdir_rmdir"): 1.10,
    ("work", "find"): 1.05,
    ("work", "tar"): 1.15,
    ("work", "python"): 1.10,
}
TARGET_STARTUP_MS = 1.0
TARGET_RSS_MIB = 2.0


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def quartiles(xs):
    if len(xs) < 4:
        return (min(xs), max(xs)) if xs else (float("nan"), float("nan"))
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


def run_capture(cmd, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, **kw)
    except OSError as e:
        return subprocess.CompletedProcess(cmd, 127, "", str(e))


def first_line(text):
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


# --------------------------------------------------------------------------
# configurations


class Config:
    """How to put a command under one tool. wrap() returns (argv prefix,
    environment additions, wrun options)."""

    def __init__(self, name, label, available=True, reason=""):
        self.name, self.label = name, label
        self.available, self.reason = available, reason

    def wrap(self, ctx, rootdir, logfile):
        return [], {}, []


class Bare(Config):
    pass


class Fsguard(Config):
    def __init__(self, lib, config_file=None, name="fsguard", label="fsguard"):
        ok = lib is not None and os.path.exists(lib)
        super().__init__(name, label, ok, "" if ok else "target/release/libfsguard.so not built")
        self.lib, self.config_file = lib, config_file

    def wrap(self, ctx, rootdir, logfile):
        env = {"LD_PRELOAD": self.lib, "FSGUARD_ROOT": rootdir, "FSGUARD_LOG": logfile}
        if self.config_file:
            env["FSGUARD_CONFIG"] = self.config_file
        return [], env, []


class FsguardCli(Config):
    def __init__(self, cli, lib):
        ok = cli is not None and os.path.exists(cli) and lib is not None and os.path.exists(lib)
        super().__init__("fsguard-cli", "`fsguard run`", ok, "" if ok else "target/release/fsguard not built")
        self.cli = cli

    def wrap(self, ctx, rootdir, logfile):
        return [self.cli, "run", "--root", rootdir, "--log", logfile, "--"], {}, []


class Naive(Config):
    def __init__(self, so):
        super().__init__("naive", "naive realpath preload", os.path.exists(so), "not built")
        self.so = so

    def wrap(self, ctx, rootdir, logfile):
        return [], {"LD_PRELOAD": self.so}, []


class Landlock(Config):
    def __init__(self, abi, launcher):
        super().__init__("landlock", "Landlock", abi >= 1, "kernel has no Landlock")
        self.launcher = launcher

    def wrap(self, ctx, rootdir, logfile):
        if ctx == "micro":
            return [self.launcher, "--rw", rootdir, "--"], {}, []
        return [], {}, ["-L", rootdir]  # wrun applies the ruleset in the child


class Fakechroot(Config):
    def __init__(self):
        ok, ver = False, ""
        if shutil.which("fakechroot"):
            r = run_capture(["fakechroot", "--version"])
            ver = (r.stdout.split() or [""])[-1]
            d = run_capture(["/bin/echo"], env=dict(os.environ, LD_PRELOAD="libfakechroot.so", FAKECHROOT_DETECT="1"))
            ok = d.stdout.startswith("fakechroot")
        super().__init__("fakechroot", "fakechroot", ok, "not installed")
        self.version = ver

    def wrap(self, ctx, rootdir, logfile):
        # what the `fakechroot` wrapper script exports, minus its extra shell process
        return [], {"LD_PRELOAD": "libfakechroot.so", "FAKECHROOT": "true",
                    "FAKECHROOT_VERSION": self.version}, []


def pin_cpu():
    """the CPU used for pinning: the last one this process may run on"""
    try:
        return max(os.sched_getaffinity(0))
    except (AttributeError, OSError, ValueError):
        return None


class Proot(Config):
    def __init__(self):
        ok = shutil.which("proot") is not None and run_capture(["proot", "/bin/true"]).returncode == 0
        super().__init__("proot", "proot", ok, "not installed" if not shutil.which("proot") else "does not run here")

    def wrap(self, ctx, rootdir, logfile):
        # Pinned: with tracer and tracee on different CPUs, every stop costs
        # cross-CPU wake-ups and proot turns bimodal (5-10x slower, at random)
        # on a VM. Pinned is its best case; the microbenchmark pins everything.
        cpu = pin_cpu()
        return ["proot"], {}, (["-P", str(cpu)] if cpu is not None else [])


# --------------------------------------------------------------------------
# workloads


class Workload:
    inner = 1          # runs per repetition (median taken)
    stdout = None      # file for the command's stdout (default /dev/null)

    def __init__(self, base, quick):
        self.dir = os.path.join(base, self.name)
        self.quick = quick
        os.makedirs(os.path.join(self.dir, "tmp"))

    def setup(self):
        pass

    def prep(self):
        """untimed, before each timed run"""

    def cwd(self):
        return self.dir


class TrueStart(Workload):
    name, title = "true", "process start-up: `/bin/true`"
    cmd = ["/bin/true"]

    def __init__(self, base, quick):
        super().__init__(base, quick)
        self.inner = 5 if quick else 20


class PythonImport(Workload):
    name, title = "python", "python3 start-up + heavy stdlib imports"

    def __init__(self, base, quick, python):
        super().__init__(base, quick)
        self.cmd = [python, "-c", PY_IMPORTS]
        self.inner = 1 if quick else 3


class TarExtract(Workload):
    name, title = "tar", "tar -xf of {n} small files"

    def setup(self):
        n = 600 if self.quick else 3000
        self.title = self.title.format(n=n)
        src = os.path.join(self.dir, "src")
        per_dir = 50
        for i in range(n):
            d = os.path.join(src, "d%02d" % (i // per_dir), "sub%d" % (i % 3))
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "f%04d.txt" % i), "w") as f:
                f.write(("line %d of a small file\n" % i) * (1 + i % 40))
        subprocess.run(["tar", "-cf", os.path.join(self.dir, "archive.tar"), "-C", src, "."], check=True)
        shutil.rmtree(src)
        self.cmd = ["tar", "-xf", "archive.tar", "-C", "dest"]

    def prep(self):
        dest = os.path.join(self.dir, "dest")
        shutil.rmtree(dest, ignore_errors=True)
        os.mkdir(dest)


class FindUsrLib(Workload):
    name, title = "find", "`find /usr/lib`"
    cmd = ["find", "/usr/lib"]


class GitStatus(Workload):
    name, title = "git", "`git status` in a repository of {n} files"

    def setup(self):
        n = 600 if self.quick else 3000
        self.title = self.title.format(n=n)
        repo = os.path.join(self.dir, "repo")
        for i in range(n):
            d = os.path.join(repo, "pkg%02d" % (i // 100), "mod%d" % (i % 5))
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "file%04d.py" % i), "w") as f:
                f.write("# file %d\nVALUE = %d\n" % (i, i))
        env = dict(work_env(self.dir), GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
                   GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid")
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
            subprocess.run(["git"] + args, cwd=repo, env=env, check=True, stdout=subprocess.DEVNULL)
        # a few changes so status has something to report
        for i in range(0, n, max(1, n // 10)):
            p = os.path.join(repo, "pkg%02d" % (i // 100), "mod%d" % (i % 5), "file%04d.py" % i)
            with open(p, "a") as f:
                f.write("CHANGED = True\n")
        for i in range(10):
            with open(os.path.join(repo, "untracked%d.txt" % i), "w") as f:
                f.write("new\n")
        subprocess.run(["git", "status"], cwd=repo, env=env, check=True, stdout=subprocess.DEVNULL)
        self.cmd = ["git", "status"]

    def cwd(self):
        return os.path.join(self.dir, "repo")


class MakeBuild(Workload):
    name, title = "make", "`make` + `cc` build of {n} C files"

    def setup(self):
        n = 6 if self.quick else 20
        self.title = self.title.format(n=n)
        src = os.path.join(self.dir, "src")
        os.makedirs(src)
        objs = []
        with open(os.path.join(src, "util.h"), "w") as f:
            for i in range(n):
                f.write("int unit%d(int);\n" % i)
        for i in range(n):
            with open(os.path.join(src, "unit%d.c" % i), "w") as f:
                f.write('#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\n#include "util.h"\n'
                        "int unit%d(int x) {\n  char b[64];\n  snprintf(b, sizeof b, \"%%d\", x * %d);\n"
                        "  return (int)strlen(b) + atoi(b) %% 7;\n}\n" % (i, i + 3))
            objs.append("unit%d.o" % i)
        with open(os.path.join(src, "main.c"), "w") as f:
            f.write('#include <stdio.h>\n#include "util.h"\nint main(void) {\n  int s = 0;\n')
            for i in range(n):
                f.write("  s += unit%d(%d);\n" % (i, i))
            f.write('  printf("%d\\n", s);\n  return 0;\n}\n')
        objs.append("main.o")
        with open(os.path.join(src, "Makefile"), "w") as f:
            f.write("CC = cc\nCFLAGS = -O1\nOBJS = %s\n\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n\n"
                    "%%.o: %%.c util.h\n\t$(CC) $(CFLAGS) -c -o $@ $<\n" % " ".join(objs))
        self.cmd = ["make", "-s", "-j1"]

    def cwd(self):
        return os.path.join(self.dir, "src")

    def prep(self):
        src = self.cwd()
        for name in os.listdir(src):
            if name.endswith(".o") or name == "prog":
                os.unlink(os.path.join(src, name))


def work_env(wdir):
    """A small fixed environment, the same for every configuration."""
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": wdir,
        "TMPDIR": os.path.join(wdir, "tmp"),
        "LC_ALL": "C",
        "LANG": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
    }


# --------------------------------------------------------------------------
# machine description


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


# --------------------------------------------------------------------------
# the run


class Bench:
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.bins = args.bins
        self.failures = []      # (section, config label, workload, message)
        self.notes = []
        self.warm = {}

    # ---- micro --------------------------------------------------------

    def micro_setup(self):
        base = os.path.join(self.scratch, "micro")
        self.m_root = os.path.join(base, "root")
        self.m_out = os.path.join(base, "outside")
        for d in (self.m_root, self.m_out):
            os.makedirs(os.path.join(d, "a", "b", "c"))
            with open(os.path.join(d, "a", "b", "c", "file"), "w") as f:
                f.write("benchmark file\n")
        os.makedirs(os.path.join(base, "tmp"))
        self.m_logdir = os.path.join(self.scratch, "logs")
        os.makedirs(self.m_logdir, exist_ok=True)

    def micro_once(self, cfg, target_ms):
        logfile = os.path.join(self.m_logdir, "micro-%s.log" % cfg.name)
        prefix, env_add, _ = cfg.wrap("micro", self.m_root, logfile)
        env = dict(work_env(os.path.join(self.scratch, "micro")), **env_add)
        cmd = prefix + [os.path.join(self.bins, "micro"), self.m_root, self.m_out, str(target_ms)]
        cpu = pin_cpu()
        pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
        r = run_capture(cmd, env=env, cwd=self.m_root, timeout=600, preexec_fn=pin)
        if r.returncode != 0:
            return None, "exit %d: %s" % (r.returncode, first_line(r.stderr) or first_line(r.stdout))
        res = {}
        for line in r.stdout.splitlines():
            parts = line.split()
            if len(parts) == 4:
                res[parts[0]] = (float(parts[1]), int(parts[2]), parts[3])
        missing = [c for c, _ in MICRO_CASES if c not in res]
        if missing:
            return None, "no result for %s (stderr: %s)" % (", ".join(missing), first_line(r.stderr))
        return res, None

    def run_micro(self, configs):
        reps = self.args.micro_reps
        target_ms = self.args.micro_ms
        self.micro_setup()
        data = {c.name: {case: [] for case, _ in MICRO_CASES} for c in configs}
        status = {c.name: {} for c in configs}
        failed = {}
        log("micro: %d repetitions x %d configurations, %d ms per case" % (reps, len(configs), target_ms))
        for rep in range(reps):
            order = configs[rep % len(configs):] + configs[:rep % len(configs)]
            for cfg in order:
                if cfg.name in failed:
                    continue
                res, err = self.micro_once(cfg, target_ms)
                if err:
                    failed[cfg.name] = err
                    log("  micro under %s FAILED: %s" % (cfg.label, err))
                    continue
                for case, (ns, iters, st) in res.items():
                    data[cfg.name][case].append(ns)
                    status[cfg.name][case] = st
            log("  micro repetition %d/%d done" % (rep + 1, reps))
        for name, err in failed.items():
            data[name] = None
            label = next(c.label for c in configs if c.name == name)
            self.failures.append(("micro", label, "microbenchmark", err))
        trace_lines = {}
        for cfg in configs:
            p = os.path.join(self.m_logdir, "micro-%s.log" % cfg.name)
            if os.path.exists(p):
                with open(p, "rb") as f:
                    trace_lines[cfg.name] = sum(1 for _ in f)
        return {"data": data, "status": status, "trace_lines": trace_lines, "reps": reps, "target_ms": target_ms}

    # ---- counts: syscalls and user-space instructions per call ---------

    def counts_available(self):
        tools = {}
        if shutil.which("perf"):
            r = run_capture(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "--", "/bin/true"])
            tools["syscalls"] = r.returncode == 0 and "raw_syscalls:sys_enter" in r.stderr
        if shutil.which("valgrind"):
            r = run_capture(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "/bin/true"])
            tools["instructions"] = r.returncode == 0 and "Collected" in r.stderr
        return {k for k, v in tools.items() if v}

    def count_one(self, kind, cfg, case, n):
        logfile = os.path.join(self.m_logdir, "counts-%s.log" % cfg.name)
        prefix, env_add, _ = cfg.wrap("micro", self.m_root, logfile)
        env = dict(work_env(os.path.join(self.scratch, "micro")), **env_add)
        micro = prefix + [os.path.join(self.bins, "micro"), self.m_root, self.m_out, "x%d" % n, case]
        if kind == "syscalls":
            # env(1) puts the configuration on the benchmark process only, not on perf
            cmd = ["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "--", "env"] + \
                  ["%s=%s" % kv for kv in env.items()] + micro
            r = run_capture(cmd, env=work_env(os.path.join(self.scratch, "micro")), cwd=self.m_root, timeout=300)
            for line in r.stderr.splitlines():
                if "raw_syscalls:sys_enter" in line:
                    try:
                        return float(line.split(",")[0]) if r.returncode == 0 else None
                    except ValueError:
                        return None
            return None
        # callgrind counts only the timed loop (measure_loop), so start-up cancels out
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
               "--toggle-collect=measure_loop", "--"] + micro
        r = run_capture(cmd, env=env, cwd=self.m_root, timeout=600)
        if re.search(r"unhandled \S+ syscall: 437\b", r.stderr):
            # openat2 unknown to valgrind: the guard took its openat route
            self.valgrind_lacks_openat2 = True
        m = re.search(r"Collected\s*:\s*(\d+)", r.stderr)
        return int(m.group(1)) if (m and r.returncode == 0) else None

    def run_counts(self, configs, kinds):
        from concurrent.futures import ThreadPoolExecutor
        n1, n2 = 100, 1100
        jobs = []
        for kind in sorted(kinds):
            for cfg in configs:
                for case, _ in MICRO_CASES:
                    if kind == "syscalls":
                        jobs.append((kind, cfg, case, n1))
                    jobs.append((kind, cfg, case, n2))
        log("counts: %d runs (%s)" % (len(jobs), ", ".join(sorted(kinds))))
        # counts do not depend on timing, so they may run in parallel
        with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as ex:
            results = list(ex.map(lambda j: self.count_one(*j), jobs))
        got = {(k, c.name, case, n): v for (k, c, case, n), v in zip(jobs, results)}
        out = {}
        for kind in kinds:
            for cfg in configs:
                for case, _ in MICRO_CASES:
                    if kind == "syscalls":
                        a, b = got[(kind, cfg.name, case, n1)], got[(kind, cfg.name, case, n2)]
                        v = (b - a) / (n2 - n1) if a is not None and b is not None else None
                    else:
                        b = got[(kind, cfg.name, case, n2)]
                        v = b / n2 if b is not None else None
                    out[(kind, cfg.name, case)] = v
        return {"kinds": kinds, "configs": configs, "values": out}

    def counts_table(self, counts):
        cfgs, V = counts["configs"], counts["values"]
        self.raw["counts"] = {"%s/%s/%s" % k: v for k, v in V.items()}
        L = ["## Cost breakdown: syscalls and instructions per call\n",
             "Repeatable counts, independent of machine noise. Syscalls: `perf stat -e raw_syscalls:sys_enter`, "
             "difference between 1100 and 100 iterations of one case, divided by 1000 (so start-up cancels). "
             "Instructions: user-space instructions executed inside the timed loop (`valgrind --tool=callgrind "
             "--toggle-collect=measure_loop`), per iteration; kernel work is not in this count. "
             "Cells: syscalls / instructions.\n"]
        kinds = counts["kinds"]
        L.append("| call | " + " | ".join(c.label for c in cfgs) + " |")
        L.append("|---" * (len(cfgs) + 1) + "|")
        for case, label in MICRO_CASES:
            cells = []
            for c in cfgs:
                parts = []
                for kind, fmt in (("syscalls", "%.1f"), ("instructions", "%.0f")):
                    if kind in kinds:
                        v = V.get((kind, c.name, case))
                        parts.append(fmt % v if v is not None else "failed")
                cells.append(" / ".join(parts))
            L.append("| %s | %s |" % (label, " | ".join(cells)))
        L.append("")
        if "instructions" not in kinds:
            L.append("(valgrind not installed: no instruction counts.)\n")
        elif getattr(self, "valgrind_lacks_openat2", False):
            L.append("This valgrind does not know `openat2` (it answers ENOSYS), so under it fsguard takes its "
                     "`openat` route: an `O_PATH` open, a `/proc/self/fd` read and a reopen, as on a kernel "
                     "without `openat2` or for a path through a symlink. The fsguard instruction counts are "
                     "that route's; the `openat2` route the syscall column counts runs only the lexical fold "
                     "and the policy decision of it.\n")
        if "syscalls" not in kinds:
            L.append("(perf with tracepoints unavailable: no syscall counts.)\n")
        return L

    # ---- workloads ----------------------------------------------------

    def work_once(self, wl, cfg, n):
        logfile = os.path.join(self.scratch, "logs", "%s-%s.log" % (wl.name, cfg.name))
        errfile = os.path.join(self.scratch, "logs", "%s-%s.stderr" % (wl.name, cfg.name))
        prefix, env_add, wopts = cfg.wrap("work", wl.dir, logfile)
        env = dict(work_env(wl.dir), **env_add)
        cmd = [os.path.join(self.bins, "wrun"), "-n", str(n), "-C", wl.cwd(), "-E", errfile]
        for k, v in env.items():
            cmd += ["-e", "%s=%s" % (k, v)]
        cmd += wopts + ["--"] + prefix + wl.cmd
        open(errfile, "w").close()
        r = run_capture(cmd, timeout=900, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        runs = []
        for line in r.stdout.splitlines():
            parts = line.split()
            if len(parts) == 3:
                runs.append((int(parts[0]) / 1e6, int(parts[1]), int(parts[2])))
        if r.returncode != 0 or len(runs) != n:
            return None, "harness error: %s" % (first_line(r.stderr) or "wrun exit %d" % r.returncode)
        bad = [st for _, _, st in runs if st != 0]
        if bad:
            with open(errfile, errors="replace") as f:
                msg = first_line(f.read())
            return None, "exit %d%s" % (bad[0], ": " + msg if msg else "")
        return runs, None

    def run_workloads(self, configs, extra_true):
        reps = self.args.work_reps
        base = os.path.join(self.scratch, "work")
        os.makedirs(os.path.join(self.scratch, "logs"), exist_ok=True)
        wls = [TrueStart(base, self.quick), PythonImport(base, self.quick, self.python),
               TarExtract(base, self.quick), FindUsrLib(base, self.quick),
               GitStatus(base, self.quick), MakeBuild(base, self.quick)]
        if self.args.workloads:
            keep = set(self.args.workloads.split(","))
            wls = [w for w in wls if w.name in keep]
        log("workloads: generating inputs")
        for wl in wls:
            wl.setup()
        times = {w.name: {c.name: [] for c in configs + extra_true} for w in wls}
        rss = {w.name: {c.name: [] for c in configs + extra_true} for w in wls}
        failed = {w.name: {} for w in wls}

        def cfgs_for(wl):
            return configs + (extra_true if wl.name == "true" else [])

        def one(wl, cfg, n, record):
            if cfg.name in failed[wl.name]:
                return
            wl.prep()
            runs, err = self.work_once(wl, cfg, n)
            if err:
                failed[wl.name][cfg.name] = err
                log("  %s under %s FAILED: %s" % (wl.name, cfg.label, err))
                return
            if record:
                times[wl.name][cfg.name].append(median([t for t, _, _ in runs]))
                rss[wl.name][cfg.name].append(median([m for _, m, _ in runs]))

        log("workloads: warm-up (one untimed run each)")
        for wl in wls:
            t0 = time.monotonic()
            for cfg in cfgs_for(wl):
                t1 = time.monotonic()
                one(wl, cfg, 1, False)
                self.warm[(wl.name, cfg.name)] = time.monotonic() - t1
            log("  %-6s %.1f s (%s)" % (wl.name, time.monotonic() - t0, ", ".join(
                "%s %.2f" % (c.name, self.warm[(wl.name, c.name)]) for c in cfgs_for(wl))))
        # the trace lines of warm-up runs are not counted
        for name in os.listdir(os.path.join(self.scratch, "logs")):
            if name.endswith(".log") and not name.startswith("micro-"):
                os.unlink(os.path.join(self.scratch, "logs", name))
        log("workloads: %d repetitions" % reps)
        for rep in range(reps):
            t0 = time.monotonic()
            for wl in wls:
                cs = cfgs_for(wl)
                order = cs[rep % len(cs):] + cs[:rep % len(cs)]
                for cfg in order:
                    one(wl, cfg, wl.inner, True)
            log("  workload repetition %d/%d done (%.1f s)" % (rep + 1, reps, time.monotonic() - t0))
        trace = {}
        for wl in wls:
            for cfg in cfgs_for(wl):
                p = os.path.join(self.scratch, "logs", "%s-%s.log" % (wl.name, cfg.name))
                if os.path.exists(p):
                    with open(p, "rb") as f:
                        lines = f.read().splitlines()
                    runs = max(1, len(times[wl.name][cfg.name]) * wl.inner)
                    trace[(wl.name, cfg.name)] = (len(lines), runs, lines[:3])
        for wl in wls:
            for cname, err in failed[wl.name].items():
                label = next(c.label for c in cfgs_for(wl) if c.name == cname)
                self.failures.append(("workload", label, wl.name, err))
        return {"wls": wls, "times": times, "rss": rss, "failed": failed, "trace": trace, "reps": reps}

    # ---- main ---------------------------------------------------------

    def main(self):
        a = self.args
        self.python = a.python
        abi = int((run_capture([os.path.join(self.bins, "landlock_run"), "--abi"]).stdout or "0").strip() or 0)
        fs_lib = a.lib if a.lib and os.path.exists(a.lib) else None
        configs = [Bare("bare", "bare"), Fsguard(fs_lib), Naive(os.path.join(self.bins, "naive_preload.so")),
                   Landlock(abi, os.path.join(self.bins, "landlock_run")), Fakechroot(), Proot()]
        if a.configs:
            keep = set(a.configs.split(",")) | {"bare"}
            for c in configs:
                if c.name not in keep and c.available:
                    c.available, c.reason = False, "skipped (--configs)"
        avail = [c for c in configs if c.available]
        for c in configs:
            log("config %-11s %s" % (c.name, "yes" if c.available else "no: " + c.reason))

        scratch_base = a.scratch
        self.scratch = tempfile.mkdtemp(prefix="fsguard-bench.", dir=scratch_base)
        scratch_fs = fs_type(self.scratch)
        self.load = [loadavg()]
        started = time.monotonic()
        try:
            micro = None
            if a.only in (None, "micro"):
                mcfgs = list(avail)
                if fs_lib and not self.quick and "fsguard" in [c.name for c in avail]:
                    cfgfile = os.path.join(self.scratch, "rules-1k.toml")
                    self.write_rules_config(cfgfile)
                    i = [c.name for c in mcfgs].index("fsguard")
                    mcfgs.insert(i + 1, Fsguard(fs_lib, cfgfile, "fsguard-1k", "fsguard, 1000 prefix rules"))
                t0 = time.monotonic()
                micro = self.run_micro(mcfgs)
                log("micro took %.1f s" % (time.monotonic() - t0))
                micro["configs"] = mcfgs
                kinds = set() if (self.quick or a.no_counts) else self.counts_available()
                if kinds:
                    ccfgs = [c for c in mcfgs if c.name in ("bare", "fsguard", "fsguard-1k", "naive", "fakechroot")]
                    t0 = time.monotonic()
                    micro["counts"] = self.run_counts(ccfgs, kinds)
                    log("counts took %.1f s" % (time.monotonic() - t0))
            work = None
            if a.only in (None, "work"):
                extra = []
                cli = FsguardCli(a.cli, fs_lib)
                if cli.available and "fsguard" in [c.name for c in avail]:
                    extra.append(cli)
                wcfgs = avail
                if self.quick:
                    # the smoke run keeps the outside tools to the microbenchmark:
                    # proot alone would take minutes over find and make
                    wcfgs = [c for c in avail if c.name not in ("fakechroot", "proot")]
                    skipped = [c.label for c in avail if c not in wcfgs]
                    if skipped:
                        self.notes.append("Quick mode: %s measured in the microbenchmark only." % ", ".join(skipped))
                work = self.run_workloads(wcfgs, extra)
                work["configs"] = wcfgs
                work["extra"] = extra
            elapsed = time.monotonic() - started
            self.load.append(loadavg())
            info = machine_info(scratch_base, scratch_fs, abi, configs, self.python)
            report = self.report(info, configs, micro, work, elapsed)
        finally:
            if a.keep:
                log("scratch kept: %s" % self.scratch)
            else:
                shutil.rmtree(self.scratch, ignore_errors=True)

        outs = [a.out] if a.out else []
        if a.results_dir:
            os.makedirs(a.results_dir, exist_ok=True)
            day = datetime.date.today().isoformat()
            outs = [os.path.join(a.results_dir, "%s-%s.md" % (day, machine_slug(info))),
                    os.path.join(a.results_dir, "latest.md")] + outs
        for p in outs:
            with open(p, "w") as f:
                f.write(report)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(self.raw, f, indent=1)
        print(report)
        for p in outs:
            log("results written to %s" % os.path.relpath(p))
        log("benchmark took %.0f s" % elapsed)
        own = [f for f in self.failures if f[1] in ("fsguard", "fsguard, 1000 prefix rules", "`fsguard run`")]
        if own:
            log("FAILED: %d fsguard run(s) did not complete (see the Failures section)" % len(own))
            return 1
        return 0

    def write_rules_config(self, path):
        # 1000 prefix rules that never match the benchmark's paths, so every
        # checked call has to get past all of them
        def arr(prefix, n):
            return "[\n" + "".join('  "/nonexistent/%s%04d",\n' % (prefix, i) for i in range(n)) + "]\n"
        with open(path, "w") as f:
            f.write('root = "%s"\n\n[read]\ndeny = %s\n[write]\ndeny = %s' % (
                self.m_root if hasattr(self, "m_root") else os.path.join(self.scratch, "micro", "root"),
                arr("read", 500), arr("write", 500)))

    # ---- report -------------------------------------------------------

    def report(self, info, configs, micro, work, elapsed):
        self.raw = {"machine": info, "micro": None, "work": None}
        L = []
        today = datetime.date.today().isoformat()
        L.append("# fsguard benchmark results — %s\n" % today)
        mode = "quick (smoke test; small inputs, few repetitions — not for quoting)" if self.quick else "full"
        L.append("- Mode: %s; wall time of the run %.0f s; 1-min load average %.1f at start, %.1f at end%s" % (
            mode, elapsed, self.load[0], self.load[-1],
            " (**busy machine: expect noise**)" if max(self.load) > (info["cores"] or 1) else ""))
        L.append("- CPU: %s, %s cores%s, %s" % (info["cpu"], info["cores"], ", " + info["mem"] if info["mem"] else "", info["arch"]))
        L.append("- Kernel: %s; Landlock ABI %s" % (info["kernel"], info["landlock_abi"] or "none"))
        L.append("- C library: %s" % (info["glibc"] or "unknown"))
        L.append("- Scratch filesystem: %s" % info["scratch"])
        t = info["tools"]
        L.append("- Tools: " + ", ".join("%s %s" % (k, v) for k, v in sorted(t.items())))
        L.append("- Configurations: " + "; ".join(
            "%s%s" % (c.label, "" if c.available else " — " + c.reason) for c in configs))
        L.append("")
        L.append("Every number is a median over repetitions. A ratio ×r is the median of the "
                 "per-repetition ratios config/bare, each pair measured back to back in the same "
                 "repetition (configuration order rotates every repetition). See bench/README.md.\n")

        for n in self.notes:
            L.append("- " + n)
        if self.notes:
            L.append("")
        headline = self.headline(micro, work)
        if headline:
            L += headline
        if micro:
            L += self.micro_tables(micro)
            if micro.get("counts"):
                L += self.counts_table(micro["counts"])
        if work:
            L += self.work_tables(work)
        if self.failures:
            L.append("## Failures\n")
            L.append("A guarded run that exits non-zero is reported here and left out of the tables.\n")
            L.append("| where | configuration | what | error |\n|---|---|---|---|")
            for sec, label, what, err in self.failures:
                L.append("| %s | %s | %s | %s |" % (sec, label, what, err.replace("|", "\\|")))
            L.append("")
        return "\n".join(L) + "\n"

    @staticmethod
    def ratios(xs, bs):
        return [x / b for x, b in zip(xs, bs) if b > 0]

    @staticmethod
    def fmt_ns(ns):
        if ns != ns:
            return "–"
        if ns >= 1e6:
            return "%.2f ms" % (ns / 1e6)
        if ns >= 1e3:
            return "%.2f µs" % (ns / 1e3)
        return "%.0f ns" % ns

    @staticmethod
    def fmt_ms(ms):
        if ms >= 1000:
            return "%.2f s" % (ms / 1000)
        if ms >= 10:
            return "%.0f ms" % ms
        return "%.2f ms" % ms

    def headline(self, micro, work):
        rows = []
        if micro and micro["data"].get("fsguard") and micro["data"].get("bare"):
            d = micro["data"]
            for case, label in MICRO_CASES:
                tgt = TARGETS.get(("micro", case))
                if tgt is None:
                    continue
                r = median(self.ratios(d["fsguard"][case], d["bare"][case]))
                rows.append((label, self.fmt_ns(median(d["bare"][case])), self.fmt_ns(median(d["fsguard"][case])),
                             r, "≤ %.2f×" % tgt, r <= tgt))
        if work and "fsguard" in [c.name for c in work["configs"]]:
            T = work["times"]
            for wl in work["wls"]:
                tgt = TARGETS.get(("work", wl.name))
                if tgt is not None and T[wl.name]["fsguard"] and T[wl.name]["bare"]:
                    r = median(self.ratios(T[wl.name]["fsguard"], T[wl.name]["bare"]))
                    rows.append((wl.title, self.fmt_ms(median(T[wl.name]["bare"])),
                                 self.fmt_ms(median(T[wl.name]["fsguard"])), r, "≤ %.2f×" % tgt, r <= tgt))
            if "true" in T and T["true"]["fsguard"] and T["true"]["bare"]:
                dlt = median([g - b for g, b in zip(T["true"]["fsguard"], T["true"]["bare"])])
                rows.append(("process start-up, added", self.fmt_ms(median(T["true"]["bare"])),
                             self.fmt_ms(median(T["true"]["fsguard"])), None,
                             "≤ +%.0f ms (got %+.2f ms)" % (TARGET_STARTUP_MS, dlt), dlt <= TARGET_STARTUP_MS))
            R = work["rss"]
            deltas = [median(R[w.name]["fsguard"]) - median(R[w.name]["bare"])
                      for w in work["wls"] if R[w.name]["fsguard"] and R[w.name]["bare"]]
            if deltas:
                worst = max(deltas) / 1024
                rows.append(("peak RSS added (worst workload)", "", "", None,
                             "≤ %.0f MiB (got %+.2f MiB)" % (TARGET_RSS_MIB, worst), worst <= TARGET_RSS_MIB))
        if not rows:
            return []
        L = ["## fsguard against the targets\n",
             "| measure | bare | fsguard | fsguard/bare | target | met |", "|---|---|---|---|---|---|"]
        for label, b, g, r, tgt, ok in rows:
            L.append("| %s | %s | %s | %s | %s | %s |" % (label, b, g, "×%.2f" % r if r is not None else "", tgt,
                                                      "yes" if ok else "**no**"))
        L.append("")
        return L

    def micro_tables(self, micro):
        cfgs = micro["configs"]
        d, st = micro["data"], micro["status"]
        self.raw["micro"] = {"reps": micro["reps"], "target_ms": micro["target_ms"], "ns_per_call": d}
        L = ["## Microbenchmark: time per call\n",
             "bench/micro.c, %d repetitions per configuration, each case timed for %d ms per repetition "
             "(after a warm-up), every process pinned to one CPU; paths on the scratch filesystem, the file three directories below the "
             "guarded root. Cells: median time per call, and ×ratio to bare.\n" % (micro["reps"], micro["target_ms"])]
        ok_cfgs = [c for c in cfgs if d.get(c.name)]
        L.append("| call | " + " | ".join(c.label for c in ok_cfgs) + " |")
        L.append("|---" * (len(ok_cfgs) + 1) + "|")
        base = d.get("bare")
        for case, label in MICRO_CASES:
            cells = []
            for c in ok_cfgs:
                xs = d[c.name][case]
                cell = self.fmt_ns(median(xs))
                if c.name != "bare" and base:
                    cell += " ×%.2f" % median(self.ratios(xs, base[case]))
                if case == "denied_open":
                    s = st[c.name].get(case, "?")
                    cell += " (%s)" % ("allowed" if s == "ok" else s)
                cells.append(cell)
            L.append("| %s | %s |" % (label, " | ".join(cells)))
        L.append("")
        if base:
            L.append("Added cost per call (median of per-repetition differences to bare), and spread of the ratio "
                     "(25th–75th percentile):\n")
            L.append("| call | " + " | ".join(c.label for c in ok_cfgs if c.name != "bare") + " |")
            L.append("|---" * len(ok_cfgs) + "|")
            for case, label in MICRO_CASES:
                cells = []
                for c in ok_cfgs:
                    if c.name == "bare":
                        continue
                    xs = d[c.name][case]
                    diff = median([x - b for x, b in zip(xs, base[case])])
                    lo, hi = quartiles(self.ratios(xs, base[case]))
                    cells.append("%+.0f ns (×%.2f–%.2f)" % (diff, lo, hi))
                L.append("| %s | %s |" % (label, " | ".join(cells)))
            L.append("")
        tl = micro["trace_lines"]
        if tl:
            L.append("Trace lines written to FSGUARD_LOG during the microbenchmark: " +
                     ", ".join("%s %d" % (c.label, tl[c.name]) for c in cfgs if c.name in tl) + ".\n")
        return L

    def work_tables(self, work):
        cfgs, extra, wls = work["configs"], work["extra"], work["wls"]
        T, R, failed = work["times"], work["rss"], work["failed"]
        self.raw["work"] = {"reps": work["reps"], "ms": T, "maxrss_kib": R}
        L = ["## Whole workloads: wall time\n",
             "%d repetitions; each configuration runs each workload once per repetition (process start-up: "
             "%d back-to-back runs, python: %d, median taken), after one untimed warm-up run. Timed from fork to "
             "reap by bench/wrun.c; stdout to /dev/null; proot pinned to one CPU (its best case), the others "
             "free to use every CPU. Cells: median, and ×ratio to bare.\n"
             % (work["reps"], next((w.inner for w in wls if w.name == "true"), 1),
                next((w.inner for w in wls if w.name == "python"), 1))]
        L.append("| workload | " + " | ".join(c.label for c in cfgs) + " |")
        L.append("|---" * (len(cfgs) + 1) + "|")
        for wl in wls:
            cells = []
            b = T[wl.name]["bare"]
            for c in cfgs:
                xs = T[wl.name][c.name]
                if c.name in failed[wl.name]:
                    cells.append("FAILED")
                elif not xs:
                    cells.append("–")
                elif c.name == "bare":
                    cells.append(self.fmt_ms(median(xs)))
                else:
                    cells.append("%s ×%.2f" % (self.fmt_ms(median(xs)), median(self.ratios(xs, b)) if b else float("nan")))
            L.append("| %s | %s |" % (wl.title, " | ".join(cells)))
        L.append("")
        if "true" in T and T["true"]["bare"]:
            L.append("Process start-up cost added per exec of `/bin/true` (median of per-repetition differences):\n")
            allc = [c for c in cfgs + extra if c.name != "bare" and T["true"][c.name]]
            L.append("| " + " | ".join(c.label for c in allc) + " |")
            L.append("|---" * len(allc) + "|")
            L.append("| " + " | ".join("%+.0f µs" % (1000 * median(
                [x - y for x, y in zip(T["true"][c.name], T["true"]["bare"])])) for c in allc) + " |")
            L.append("")
            if extra:
                L.append("`fsguard run` is the CLI launching the command (its own process start-up included); "
                         "the fsguard column sets LD_PRELOAD/FSGUARD_* directly.\n")
                if T["true"].get("fsguard") and T["true"].get("fsguard-cli"):
                    over = median([x - y for x, y in zip(T["true"]["fsguard-cli"], T["true"]["fsguard"])])
                    L.append("Launch cost of `fsguard run` over `LD_PRELOAD=… /bin/true` (median of "
                             "per-repetition differences, same run): %+.2f ms.\n" % over)
        L.append("## Peak RSS\n")
        L.append("ru_maxrss of the workload process (largest of it and the children it waited for), median. "
                 "Cells for guarded runs: median and the difference to bare.\n")
        L.append("| workload | " + " | ".join(c.label for c in cfgs) + " |")
        L.append("|---" * (len(cfgs) + 1) + "|")
        for wl in wls:
            cells = []
            b = median(R[wl.name]["bare"]) if R[wl.name]["bare"] else None
            for c in cfgs:
                xs = R[wl.name][c.name]
                if not xs:
                    cells.append("FAILED" if c.name in failed[wl.name] else "–")
                elif c.name == "bare" or b is None:
                    cells.append("%.1f MiB" % (median(xs) / 1024))
                else:
                    cells.append("%.1f MiB (%+.2f)" % (median(xs) / 1024, (median(xs) - b) / 1024))
            L.append("| %s | %s |" % (wl.name, " | ".join(cells)))
        L.append("")
        tr = {k: v for k, v in work["trace"].items() if v[0] > 0}
        if tr:
            L.append("Trace lines the guard wrote during timed runs (a denial that did not make the command fail "
                     "still costs a trace line):\n")
            for (wname, cname), (n, runs, sample) in sorted(tr.items()):
                ex = sample[0].decode(errors="replace") if sample else ""
                L.append("- %s under %s: %.1f per run, e.g. `%s`" % (wname, cname, n / runs, ex))
            L.append("")
        elif any(c.name == "fsguard" for c in cfgs):
            L.append("fsguard wrote no trace lines during the timed workload runs (nothing was denied).\n")
        return L


def main():
    import signal
    # SIGTERM/SIGHUP unwind like Ctrl-C, so the scratch directory is removed
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(143))
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bins", required=True, help="directory with micro, wrun, landlock_run, naive_preload.so")
    ap.add_argument("--lib", help="libfsguard.so")
    ap.add_argument("--cli", help="fsguard CLI")
    ap.add_argument("--python", default=sys.executable, help="python interpreter for the python workload")
    ap.add_argument("--scratch", required=True, help="directory to create the scratch dir in")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--micro-reps", type=int)
    ap.add_argument("--micro-ms", type=int)
    ap.add_argument("--work-reps", type=int)
    ap.add_argument("--only", choices=["micro", "work"])
    ap.add_argument("--configs", help="comma-separated subset of configurations")
    ap.add_argument("--workloads", help="comma-separated subset: true,python,tar,find,git,make")
    ap.add_argument("--results-dir", help="write <date>-<machine>.md and latest.md here")
    ap.add_argument("--out", help="also (or only) write the report to this file")
    ap.add_argument("--json", help="write raw numbers as JSON here")
    ap.add_argument("--no-counts", action="store_true", help="skip the syscall/instruction counts")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    a = ap.parse_args()
    if a.micro_reps is None:
        a.micro_reps = 3 if a.quick else 15
    if a.micro_ms is None:
        a.micro_ms = 5 if a.quick else 25
    if a.work_reps is None:
        a.work_reps = 3 if a.quick else 9
    return Bench(a).main()


if __name__ == "__main__":
    sys.exit(main())
