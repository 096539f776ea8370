"""Writing the Markdown report from the measured numbers."""

import datetime

from measure import MICRO_CASES
from stats import median, quartiles

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
    # issue 33: a shell loop of 300 `/bin/true`, and a real autotools configure
    ("work", "loop"): 1.15,
    ("work", "configure"): 1.05,
}
TARGET_STARTUP_MS = 1.0
# issue 33: one process start under fsguard against one under a preload
# that only forwards (the naive configuration), same run
TARGET_START_OVER_PRELOAD_MS = 0.1
TARGET_RSS_MIB = 2.0


class Report:
    """The report's sections, in report order. Mixed into Bench; fills self.raw for the JSON dump."""

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
            if "true" in T and T["true"]["fsguard"] and T["true"].get("naive"):
                dlt = median([g - n for g, n in zip(T["true"]["fsguard"], T["true"]["naive"])])
                rows.append(("process start-up over a forwarding preload (naive)",
                             self.fmt_ms(median(T["true"]["naive"])), self.fmt_ms(median(T["true"]["fsguard"])),
                             None, "≤ +%.1f ms (got %+.3f ms)" % (TARGET_START_OVER_PRELOAD_MS, dlt),
                             dlt <= TARGET_START_OVER_PRELOAD_MS))
            starts = work.get("starts")
            if starts and starts["values"].get("fsguard", {}).get("instructions"):
                v = starts["values"]
                b = v.get("bare", {}).get("instructions")
                g = v["fsguard"]["instructions"]
                rows.append(("instructions per start (callgrind, `/bin/true` exec'd by a guarded shell)",
                             "%d" % b if b else "", "%d" % g, None,
                             "information (%+d over bare)" % (g - b) if b else "information", True))
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

    def starts_table(self, starts, T):
        cfgs, V, kinds = starts["configs"], starts["values"], starts["kinds"]
        self.raw["starts"] = {c.name: V.get(c.name) for c in cfgs}
        L = ["## The cost of one process start\n",
             "Repeatable counts for one `/bin/true` exec'd by `sh -c '/bin/true; /bin/true; exit 0'` run under "
             "the configuration (under fsguard the child is handed its policy, as every process a guarded "
             "program starts is). Instructions: callgrind's total for the second child (loader, relocation, "
             "constructors, true itself; user space only). Syscalls: `perf stat -e raw_syscalls:sys_enter` of "
             "that script minus the script with one child (fork, exec, the child's whole life, wait).\n"]
        L.append("| count | " + " | ".join(c.label for c in cfgs) + " |")
        L.append("|---" * (len(cfgs) + 1) + "|")
        for kind in ("instructions", "syscalls"):
            if kind not in kinds:
                continue
            cells = []
            for c in cfgs:
                x = V.get(c.name, {}).get(kind)
                cells.append("failed" if x is None else "%.0f" % x)
            L.append("| %s per start | %s |" % (kind, " | ".join(cells)))
        L.append("")
        if "loop" in T and T["loop"].get("fsguard") and T["loop"].get("naive") and T["loop"].get("bare"):
            per = lambda a, b: 1000 * median([x - y for x, y in zip(T["loop"][a], T["loop"][b])]) / 300
            L.append("The 300-process shell loop, per process: fsguard %+.0f µs over bare, %+.0f µs over the "
                     "forwarding preload (naive); naive %+.0f µs over bare.\n"
                     % (per("fsguard", "bare"), per("fsguard", "naive"), per("naive", "bare")))
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
        starts = work.get("starts")
        if starts:
            L += self.starts_table(starts, T)
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
