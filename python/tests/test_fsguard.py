"""The installed fsguard package, exercised with real guarded commands.

Run against an installed wheel (tests/python_package.rs does: a fresh venv,
the wheel, no Rust toolchain on PATH), or by hand:

    pip install dist/fsguard-*.whl pytest && python -m pytest python/tests
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fsguard


def real(p: Path) -> str:
    return os.path.realpath(p)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    d.mkdir()
    (d / "notes.txt").write_text("inside\n")
    return d


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir()
    (d / "data.txt").write_text("outside\n")
    return d


def test_installed_package_bundles_cli_and_library() -> None:
    pkg = Path(fsguard.__file__).resolve().parent
    if os.environ.get("TEST_FSGUARD_INSTALLED") == "1":
        # The package under test is the installed wheel, not a checkout.
        assert Path(sys.prefix).resolve() in pkg.parents, pkg
        assert not (pkg.parent / "Cargo.toml").exists()
    if os.environ.get("TEST_FSGUARD_NO_TOOLCHAIN") == "1":
        import shutil

        assert shutil.which("cargo") is None and shutil.which("rustc") is None
    assert fsguard.cli_path() == pkg / "bin" / "fsguard"
    assert os.access(fsguard.cli_path(), os.X_OK)
    assert fsguard.library_path().is_absolute()
    assert fsguard.library_path().read_bytes()[:4] == b"\x7fELF"
    assert fsguard.__version__[0].isdigit()


def test_console_script_and_python_m(ws: Path, outside: Path) -> None:
    target = outside / "x"
    for cmd in (["fsguard"], [sys.executable, "-m", "fsguard"]):
        p = subprocess.run(
            [*cmd, "check", "--root", str(ws)], capture_output=True, text=True
        )
        assert p.returncode == 0, p.stderr
        assert f'root = "{real(ws)}"' in p.stdout
        p = subprocess.run(
            [*cmd, "run", "--root", str(ws), "--", "sh", "-c", f"echo x > {target}"],
            capture_output=True,
            text=True,
        )
        assert p.returncode == 2, p.stderr
        assert f"[fsguard] blocked open write path={real(target)} rule=root" in p.stderr
        assert not target.exists()
    p = subprocess.run(["fsguard", "run", "--root", "/nonexistent-x", "--", "true"],
                       capture_output=True, text=True)
    assert p.returncode == 125 and p.stderr.startswith("fsguard: error: ")


def test_allowed_write_inside_root(ws: Path) -> None:
    r = fsguard.run(["sh", "-c", "echo hello > out.txt && cat notes.txt"], root=ws, cwd=ws)
    assert r.returncode == 0, r.stderr
    assert r.ok and r.blocked == [] and not r.timed_out
    assert r.stdout == "inside\n"
    assert (ws / "out.txt").read_text() == "hello\n"


def test_blocked_write_outside_root(ws: Path, outside: Path) -> None:
    target = outside / "evil.txt"
    r = fsguard.run(["sh", "-c", f"echo x > {target}; echo after"], root=ws, cwd=ws)
    assert r.returncode == 0  # the shell carries on after the failed redirect
    assert r.stdout == "after\n"
    assert "Permission denied" in r.stderr
    assert not target.exists()
    assert len(r.blocked) == 1, r.events
    e = r.blocked[0]
    assert (e.event, e.call, e.access, e.path, e.rule) == (
        "blocked", "open", "write", real(target), "root"
    )
    assert e.errno == 13 and e.pid > 0 and os.path.basename(e.exe) in ("sh", "dash", "bash")
    assert str(e) == f"blocked open write path={real(target)} rule=root"
    assert not r.ok


def test_blocked_read_and_status(ws: Path, outside: Path) -> None:
    r = fsguard.run(["cat", str(outside / "data.txt")], root=ws)
    assert r.returncode == 1 and r.stdout == ""
    assert [(e.access, e.path, e.rule) for e in r.blocked] == [
        ("read", real(outside / "data.txt"), "root")
    ]


def test_readonly(ws: Path) -> None:
    r = fsguard.run(["sh", "-c", "cat notes.txt; rm notes.txt; echo x > new"],
                    root=ws, readonly=True, cwd=ws)
    assert r.stdout == "inside\n"
    assert (ws / "notes.txt").exists() and not (ws / "new").exists()
    got = [(e.call, e.access, e.path, e.rule) for e in r.blocked]
    assert ("open", "write", real(ws / "new"), "readonly") in got
    assert all(rule == "readonly" for *_, rule in got), got


def test_rules_deny_read_and_allow_write(ws: Path, outside: Path) -> None:
    (ws / ".env").write_text("SECRET=1\n")
    r = fsguard.run(
        ["sh", "-c", f"cat .env; echo ok > {outside}/allowed.txt"],
        root=ws,
        cwd=ws,
        deny_read=["**/.env*"],
        allow_write=[outside],
    )
    assert "SECRET" not in r.stdout
    assert (outside / "allowed.txt").read_text() == "ok\n"
    [e] = r.blocked
    assert (e.access, e.path) == ("read", real(ws / ".env"))
    assert e.rule.startswith("read.deny:"), e.rule


def test_children_stay_guarded(ws: Path, outside: Path) -> None:
    target = outside / "from-grandchild"
    r = fsguard.run(
        ["sh", "-c", f"env -i /bin/sh -c 'echo x > {target}'; echo $$"], root=ws
    )
    assert not target.exists()
    [e] = r.blocked
    assert e.path == real(target) and e.rule == "root"
    assert e.pid != int(r.stdout)  # refused in the grandchild, not the shell


def test_audit_mode(ws: Path, outside: Path) -> None:
    target = outside / "audited"
    # The library blocks nothing in audit mode; without Landlock the write
    # happens and is reported.
    r = fsguard.run(["sh", "-c", f"echo x > {target}"], root=ws, audit=True, landlock=False)
    assert r.returncode == 0 and target.exists()
    assert r.blocked == []
    assert [(e.event, e.path, e.rule) for e in r.audited] == [("audit", real(target), "root")]
    target.unlink()
    # Under the default Landlock ruleset the kernel still refuses writes
    # outside the root; the library's report is the same.
    r = fsguard.run(["sh", "-c", f"echo x > {target}"], root=ws, audit=True)
    assert r.returncode != 0 and not target.exists()
    assert [(e.event, e.path, e.rule) for e in r.audited] == [("audit", real(target), "root")]


def test_timeout(ws: Path) -> None:
    t = time.monotonic()
    r = fsguard.run(["sleep", "30"], root=ws, timeout=0.5)
    assert r.timed_out and r.returncode == 124
    assert time.monotonic() - t < 10
    r = fsguard.run(["sh", "-c", "exit 124"], root=ws, timeout=20)
    assert r.returncode == 124 and not r.timed_out


def test_input_env_and_missing_command(ws: Path) -> None:
    r = fsguard.run(["sh", "-c", 'read l; echo "$l $GREETING"'], root=ws,
                    input="hi", env={**os.environ, "GREETING": "there"})
    assert r.stdout == "hi there\n"
    r = fsguard.run(["no-such-command-fsguard"], root=ws)
    assert r.returncode == 127
    with pytest.raises(TypeError):
        fsguard.run("echo hi", root=ws)  # type: ignore[arg-type]


def test_policy_error_in_config(tmp_path: Path, ws: Path) -> None:
    cfg = tmp_path / "policy.toml"
    cfg.write_text('root = "ws"\nreadonly = "yes please"\n')
    with pytest.raises(fsguard.PolicyError) as ei:
        fsguard.run(["true"], config=cfg)
    err = ei.value
    assert (err.key, err.file, err.line) == ("readonly", str(cfg), 2)
    assert err.column is not None and "readonly" in str(err)
    assert isinstance(err, fsguard.FsguardError) and isinstance(err, ValueError)

    cfg.write_text('root = "ws"\n\n[write]\nallow = ["ok", ""]\n')
    with pytest.raises(fsguard.PolicyError) as ei:
        fsguard.run(["true"], config=cfg)
    assert (ei.value.key, ei.value.file, ei.value.line) == ("write.allow", str(cfg), 4)

    cfg.write_text('root = "missing-dir"\n')
    with pytest.raises(fsguard.PolicyError) as ei:
        fsguard.run(["true"], config=cfg)
    assert (ei.value.key, ei.value.file, ei.value.line) == ("root", str(cfg), 1)

    with pytest.raises(fsguard.PolicyError) as ei:
        fsguard.run(["true"], config=tmp_path / "nope.toml")
    assert (ei.value.key, ei.value.file) == ("config", str(tmp_path / "nope.toml"))


def test_policy_error_in_arguments(tmp_path: Path, ws: Path) -> None:
    with pytest.raises(fsguard.PolicyError) as ei:
        fsguard.run(["true"], root=tmp_path / "missing")
    assert ei.value.key == "root"
    with pytest.raises(fsguard.PolicyError) as ei:
        fsguard.run(["true"], root=ws, allow_write=["src/[oops"])
    assert ei.value.key == "allow_write" and "[oops" in str(ei.value)
    with pytest.raises(fsguard.PolicyError) as ei:
        fsguard.environ(root=ws, errno="EWHAT")
    assert ei.value.key == "FSGUARD_ERRNO"


def test_environ_with_subprocess(tmp_path: Path, ws: Path, outside: Path) -> None:
    v = fsguard.environ(root=ws)
    assert v == {"FSGUARD_ROOT": real(ws), "LD_PRELOAD": str(fsguard.library_path())}

    target = outside / "x"
    env = fsguard.environ(root=ws, base=os.environ)
    p = subprocess.run(["sh", "-c", f"echo in > {ws}/ok; echo out > {target}"],
                       env=env, capture_output=True, text=True)
    assert (ws / "ok").read_text() == "in\n" and not target.exists()
    assert f"[fsguard] blocked open write path={real(target)} rule=root" in p.stderr

    log = tmp_path / "trace.jsonl"
    env = fsguard.environ(root=ws, readonly=True, log=log, log_format="json", base=os.environ)
    subprocess.run(["sh", "-c", f"rm {ws}/notes.txt"], env=env, capture_output=True)
    assert (ws / "notes.txt").exists()
    [e] = fsguard.parse_events(log.read_text())
    assert (e.event, e.access, e.path, e.rule) == ("blocked", "write", real(ws / "notes.txt"),
                                                   "readonly")
    assert e.call in ("unlink", "unlinkat")


def test_lost_trace_lines_are_never_read_as_nothing_blocked(ws: Path, outside: Path) -> None:
    # The trace log cannot be written (a full disk): an audit run reports
    # no events, and must not read as "nothing would have been blocked".
    target = outside / "audited.txt"
    r = fsguard.run(
        ["sh", "-c", f"echo x > {target}"],
        root=ws,
        cwd=ws,
        audit=True,
        landlock=False,
        extra_args=["--log", "/dev/full"],
    )
    assert r.returncode == 0, r.stderr
    assert r.events == []
    assert r.lost == 1, r.stderr
    assert not r.ok


def test_paths_are_the_callers_quiet_and_hints(tmp_path: Path, outside: Path) -> None:
    # python/README.md's example: root and cwd both "ws", against our cwd.
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / ".env").write_text("KEY=hunter2\n")
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = fsguard.run(
            ["sh", "-c", f"echo ok > out.txt; cat .env; echo x > {outside}/f"],
            root="ws", cwd="ws", deny_read=["**/.env*"], quiet=True,
        )
    finally:
        os.chdir(here)
    assert (tmp_path / "ws" / "out.txt").read_text() == "ok\n"
    assert "hunter2" not in r.stdout and "fsguard:" not in r.stderr, r.stderr
    env, out = r.blocked
    assert env.rule.startswith("read.deny:") and env.hint is None, env
    assert out.rule == "root" and out.hint == f"--allow-write {real(outside)}/f", out


def test_profile_is_the_first_layer(tmp_path: Path, ws: Path, outside: Path) -> None:
    (ws / ".env").write_text("SECRET=1\n")
    script = f"cat .env; echo x > {outside}/a.txt; echo y > mine.txt"
    # The agent profile confines to the root and keeps .env unreadable.
    r = fsguard.run(["sh", "-c", script], profile="agent", root=ws, cwd=ws)
    assert "SECRET" not in r.stdout
    assert not (outside / "a.txt").exists() and (ws / "mine.txt").exists()
    assert sorted((e.access, e.rule.split(":")[0]) for e in r.blocked) == [
        ("read", "read.deny"),
        ("write", "root"),
    ]
    # An allow given as an argument goes on top; the profile's denials stay.
    r = fsguard.run(["sh", "-c", script], profile="agent", root=ws, cwd=ws, allow_write=[outside])
    assert "SECRET" not in r.stdout
    assert (outside / "a.txt").read_text() == "x\n"
    [e] = r.blocked
    assert (e.path, e.rule.split(":")[0]) == (real(ws / ".env"), "read.deny")
    # No root given: the profile's root (".") is the command's cwd.
    (outside / "a.txt").unlink()
    r = fsguard.run(["sh", "-c", script], profile="agent", cwd=ws)
    assert "SECRET" not in r.stdout and not (outside / "a.txt").exists()
    with pytest.raises(fsguard.PolicyError) as ei:
        fsguard.run(["true"], profile="agnet")
    assert ei.value.key == "profile"
    assert "agent, agent-dev, analysis, build" in str(ei.value)


def test_audit_says_what_the_kernel_refused(ws: Path, outside: Path) -> None:
    target = outside / "audited"
    # Without Landlock the audited write happens: nothing refused it.
    r = fsguard.run(["sh", "-c", f"echo x > {target}"], root=ws, audit=True, landlock=False)
    assert target.exists() and r.refused_by_kernel == []
    assert [e.refused for e in r.audited] == [False]
    target.unlink()
    if not os.path.exists("/sys/kernel/security/landlock") and not _landlock_abi():
        pytest.skip("no Landlock")
    # Under the ruleset the kernel refuses it: the audited call failed.
    r = fsguard.run(["sh", "-c", f"echo x > {target}"], root=ws, audit=True)
    assert not target.exists()
    [k] = r.refused_by_kernel
    assert (k.event, k.call, k.path, k.rule, k.errno) == ("blocked", "open", real(target), "landlock", 13)
    assert k in r.blocked
    assert [(e.path, e.refused) for e in r.audited] == [(real(target), True)]


def _landlock_abi() -> int:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    # landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    return max(0, libc.syscall(444, None, 0, 1))
