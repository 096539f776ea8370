"""The whole workloads, their generated inputs, and the environment they run in."""

import os
import shutil
import subprocess

PY_IMPORTS = "import json, asyncio, email, http.client, decimal, xml.etree.ElementTree, sqlite3, argparse"


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
