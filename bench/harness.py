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
import shutil
import sys
import tempfile
import time

from configs import Bare, Fakechroot, Fsguard, FsguardCli, Landlock, Naive, Proot
from machine import fs_type, loadavg, machine_info, machine_slug
from measure import Measure
from report import Report
from stats import log, run_capture


class Bench(Measure, Report):
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.bins = args.bins
        self.failures = []      # (section, config label, workload, message)
        self.notes = []
        self.warm = {}

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
                kinds = set() if (self.quick or a.no_counts) else self.counts_available()
                if kinds:
                    scfgs = [c for c in wcfgs if c.name in ("bare", "fsguard", "naive")]
                    t0 = time.monotonic()
                    work["starts"] = {"kinds": kinds, "configs": scfgs, "values": self.start_counts(scfgs, kinds)}
                    log("start counts took %.1f s" % (time.monotonic() - t0))
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
    ap.add_argument("--workloads", help="comma-separated subset: true,loop,python,tar,find,git,make,configure")
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
