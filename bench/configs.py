"""The configurations: how to put a command under each tool the benchmark compares."""

import os
import shutil

from stats import run_capture


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
