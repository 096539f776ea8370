"""Measuring: the microbenchmark, its syscall and instruction counts, the workloads."""

import os
import re
import shutil
import time

from configs import pin_cpu
from stats import first_line, log, median, run_capture
from workloads import (Configure, FindUsrLib, GitStatus, MakeBuild, PythonImport, ShellLoop, TarExtract,
                       TrueStart, work_env)

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


class Measure:
    """The runs. Mixed into Bench, which holds the arguments and the scratch dir."""

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

    # ---- the cost of one process start, counted ------------------------

    START_SCRIPT = "/bin/true; /bin/true; exit 0"

    def start_counts(self, configs, kinds):
        """Per configuration: the user-space instructions of one `/bin/true`
        exec'd by a shell under the configuration (callgrind: loader,
        relocation, the library's constructor, true itself), and the system
        calls one more such child adds to the shell (perf: fork, exec, the
        child's start, wait). The shell runs under the configuration, so
        under fsguard the child gets its policy handed down, as every
        process a guarded program starts does."""
        base = os.path.join(self.scratch, "starts")
        os.makedirs(os.path.join(base, "tmp"), exist_ok=True)
        logfile = os.path.join(self.scratch, "logs", "starts.log")
        out = {}
        for cfg in configs:
            prefix, env_add, _ = cfg.wrap("work", base, logfile)
            if prefix:
                continue
            env = dict(work_env(base), **env_add)
            row = {}
            if "instructions" in kinds:
                d = os.path.join(base, "cg-" + cfg.name)
                os.makedirs(d)
                r = run_capture(["valgrind", "--tool=callgrind", "-q", "--trace-children=yes",
                                 "--callgrind-out-file=%s/cg.%%p" % d, "/bin/sh", "-c", self.START_SCRIPT],
                                env=env, cwd=base, timeout=300)
                totals = []
                for name in sorted(os.listdir(d), key=lambda n: int(n.split(".")[-1])):
                    with open(os.path.join(d, name), errors="replace") as f:
                        for line in f:
                            if line.startswith("summary:") or line.startswith("totals:"):
                                totals.append(int(line.split()[1]))
                                break
                # the shell, then its two children: the last one is counted
                row["instructions"] = totals[-1] if r.returncode == 0 and len(totals) == 3 else None
            if "syscalls" in kinds:
                counts = []
                for script in ("/bin/true; exit 0", self.START_SCRIPT):
                    cmd = ["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "--", "env"] + \
                          ["%s=%s" % kv for kv in env.items()] + ["/bin/sh", "-c", script]
                    r = run_capture(cmd, env=work_env(base), cwd=base, timeout=300)
                    v = None
                    for line in r.stderr.splitlines():
                        if "raw_syscalls:sys_enter" in line and r.returncode == 0:
                            try:
                                v = float(line.split(",")[0])
                            except ValueError:
                                pass
                    counts.append(v)
                row["syscalls"] = counts[1] - counts[0] if None not in counts else None
            out[cfg.name] = row
        return out

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
        wls = [TrueStart(base, self.quick), ShellLoop(base, self.quick),
               PythonImport(base, self.quick, self.python),
               TarExtract(base, self.quick), FindUsrLib(base, self.quick),
               GitStatus(base, self.quick), MakeBuild(base, self.quick)]
        if self.quick:
            # a configure takes seconds per run: too long for the smoke run
            self.notes.append("Quick mode: no `configure` workload.")
        elif shutil.which("autoconf"):
            wls.append(Configure(base, self.quick))
        else:
            self.notes.append("autoconf not installed: no `configure` workload.")
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
