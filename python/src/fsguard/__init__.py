"""Run commands with their filesystem access confined by fsguard.

fsguard is an ``LD_PRELOAD`` library plus a small CLI; this package carries
both (``fsguard/bin/fsguard``, ``fsguard/lib/libfsguard.so``) and a typed API
for harnesses that run untrusted commands::

    import fsguard

    r = fsguard.run(["sh", "-c", "echo hi > out.txt; echo x > /etc/x"],
                    root="ws", cwd="ws", timeout=30)   # paths: as subprocess, against our cwd
    r.returncode          # the command's status (124 on timeout)
    r.blocked             # [Event(call='open', access='write', path='/etc/x', rule='root', ...)]

:func:`run` goes through ``fsguard run`` (the supervisor: it confirms the
library loaded, gives the command a private ``TMPDIR``, enforces the timeout).
:func:`environ` gives the variables for a harness that starts its children
itself. A bad policy raises :class:`PolicyError` with the key, file and line.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Union

__all__ = [
    "Event",
    "Result",
    "FsguardError",
    "PolicyError",
    "run",
    "environ",
    "check",
    "parse_events",
    "cli_path",
    "library_path",
    "__version__",
]

try:
    from importlib.metadata import version as _dist_version

    __version__: str = _dist_version("fsguard")
except Exception:  # not installed (a source checkout)
    __version__ = "0+unknown"

StrPath = Union[str, "os.PathLike[str]"]

_HERE = Path(__file__).resolve().parent

#: Exit status of ``fsguard run`` when fsguard itself fails.
EXIT_FSGUARD = 125
#: Exit status of ``fsguard run`` when the command timed out.
EXIT_TIMEOUT = 124
# ``fsguard run`` sends SIGTERM at the timeout and SIGKILL 5 s later; past
# that (plus slack) the CLI itself is killed.
_GRACE = 5.0 + 10.0


def cli_path() -> Path:
    """The bundled ``fsguard`` executable."""
    return _HERE / "bin" / "fsguard"


def library_path() -> Path:
    """The bundled preload library (``libfsguard.so``), an absolute path."""
    return _HERE / "lib" / "libfsguard.so"


# ---------------------------------------------------------------------------
# Results and events


@dataclass(frozen=True)
class Event:
    """One trace line: an access fsguard blocked (or, in audit mode, would have).

    Attributes mirror the JSON trace format: ``event`` (``blocked``,
    ``audit`` or ``unguarded``), ``call`` (the libc call, e.g. ``open``,
    ``unlink``, ``rename``), ``access`` (``read``, ``write`` or ``exec``),
    ``path`` (resolved, absolute), ``rule`` (the deciding rule, e.g.
    ``root``, ``readonly``, ``read.deny:"/ws/**/.env*"``), ``pid`` and
    ``exe`` of the process that made the call, ``errno`` it failed with
    (0 when it went ahead), ``dest`` for two-path calls (rename, link),
    and ``hint``, the option that would allow it (``--allow-write
    ~/.cache/tool``), for a refusal at the policy's boundary only (``root``,
    ``not_allowed``, ``readonly``): ``None`` for a refusal by a rule the
    policy's author wrote on purpose (``deny``, ``deny_always``,
    ``secrets``, the trace log), which no option should be offered to lift.
    ``refused``, on an ``audit`` event: the kernel's Landlock ruleset
    refused the call all the same (it failed: it was blocked, not only
    would have been); its ``blocked`` event has rule ``landlock``.
    """

    event: str
    call: str
    access: str
    path: str
    rule: str
    pid: int = 0
    exe: str = ""
    errno: int = 0
    dest: Optional[str] = None
    hint: Optional[str] = None
    refused: bool = False
    raw: Mapping[str, object] = field(default_factory=dict, repr=False, compare=False)

    def __str__(self) -> str:
        s = f"{self.event} {self.call} {self.access} path={self.path}"
        if self.dest is not None:
            s += f" dest={self.dest}"
        return s + f" rule={self.rule}"

    @classmethod
    def from_json(cls, obj: Mapping[str, object]) -> "Event":
        """An event from one decoded JSON trace object."""

        def s(k: str) -> str:
            v = obj.get(k, "")
            return v if isinstance(v, str) else str(v)

        def n(k: str) -> int:
            v = obj.get(k, 0)
            return v if isinstance(v, int) else 0

        dest = obj.get("dest")
        hint = obj.get("hint")
        return cls(
            event=s("event"),
            call=s("call"),
            access=s("access"),
            path=s("path"),
            rule=s("rule"),
            pid=n("pid"),
            exe=s("exe"),
            errno=n("errno"),
            dest=dest if isinstance(dest, str) else None,
            hint=hint if isinstance(hint, str) else None,
            raw=dict(obj),
        )


def parse_events(text: str) -> List[Event]:
    """Parses JSON trace lines (``--log-format json``, ``FSGUARD_LOG_FORMAT=json``).

    Lines that are not JSON objects (a text trace, a truncated last line)
    are skipped.
    """
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and "event" in obj:
            out.append(Event.from_json(obj))
    return out


@dataclass
class Result:
    """What :func:`run` returns.

    ``returncode`` is the command's exit status (124 when it timed out,
    126 not executable, 127 not found, 128+N killed by signal N).
    ``stdout`` and ``stderr`` are the command's output, decoded as UTF-8
    (invalid bytes replaced). ``events`` holds every trace line the run
    produced; ``blocked`` only the refused accesses. ``lost`` counts trace
    lines the library could not write (a full disk): then ``events`` is
    incomplete, and ``ok`` is false.
    """

    argv: List[str]
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False
    events: List[Event] = field(default_factory=list)
    duration: float = 0.0
    lost: int = 0

    @property
    def blocked(self) -> List[Event]:
        """The accesses that were refused (``event == "blocked"``)."""
        return [e for e in self.events if e.event == "blocked"]

    @property
    def audited(self) -> List[Event]:
        """The accesses audit mode let through but would have refused.
        Those the kernel's Landlock ruleset refused all the same (under
        ``fsguard run`` it keeps writes inside the root) have ``refused``
        set: they failed."""
        kernel = {(e.pid, e.call, e.path) for e in self.refused_by_kernel}
        return [
            dataclasses.replace(e, refused=(e.pid, e.call, e.path) in kernel)
            for e in self.events
            if e.event == "audit"
        ]

    @property
    def refused_by_kernel(self) -> List[Event]:
        """The calls fsguard's library let through (allowed, or audited)
        that the kernel's Landlock ruleset refused: ``blocked`` events with
        rule ``landlock``, in :attr:`blocked` too."""
        return [e for e in self.events if e.event == "blocked" and e.rule == "landlock"]

    @property
    def ok(self) -> bool:
        """True if the command exited 0 and nothing was blocked (and no
        trace line was lost, which would leave that unknown)."""
        return self.returncode == 0 and not self.blocked and not self.lost


# ---------------------------------------------------------------------------
# Errors


class FsguardError(Exception):
    """fsguard itself failed (exit 125): the library is missing or did not
    load, a bad option, or a bad policy (then a :class:`PolicyError`)."""

    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.stderr = stderr


class PolicyError(FsguardError, ValueError):
    """The policy is invalid: a bad config key or value, a bad pattern, a
    missing root, an unknown ``FSGUARD_*`` variable.

    ``key`` is the config key (``readonly``, ``write.allow``), the option
    (``root``, ``allow_write``) or the variable (``FSGUARD_ROOT``) at fault,
    when known; ``file``, ``line`` and ``column`` locate it in a config file.
    """

    def __init__(
        self,
        message: str,
        key: Optional[str] = None,
        file: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
        stderr: str = "",
    ) -> None:
        super().__init__(message, stderr)
        self.key = key
        self.file = file
        self.line = line
        self.column = column


_ERR = re.compile(r"^fsguard: error: (.*)$", re.M)
_LOST = re.compile(r"^fsguard: (\d+) trace lines? could not be written \(lost\)", re.M)
# FILE:LINE[:COL]: [KEY: ]message  (config files)
_AT = re.compile(r"^(?P<file>/.*?):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<rest>.*)$", re.S)
_KEY = re.compile(r"^(?P<key>[A-Za-z_][A-Za-z0-9_.-]*): (?P<msg>.*)$", re.S)
_CONFIG = re.compile(r"^config (?P<file>/.*?): (?P<msg>.*)$", re.S)
_FLAG = re.compile(r"^--(?P<flag>[a-z-]+)(?:[ =](?P<val>\S*))?: (?P<msg>.*)$", re.S)
_VAR = re.compile(r"^(?:unknown variable )?(?P<var>FSGUARD_[A-Z_]+)\b:? ?(?P<msg>.*)$", re.S)


def _own_error(stderr: str) -> bool:
    """Whether stderr opens with fsguard's own error (after any of its
    warnings), i.e. the CLI failed before the command said anything."""
    for line in stderr.splitlines():
        if line.startswith("fsguard: error: "):
            return True
        if not line.startswith("fsguard: "):
            return False
    return False


def _error_from(stderr: str, patterns: Optional[Mapping[str, str]] = None) -> FsguardError:
    """The exception for an ``fsguard: error: …`` message (exit 125).
    ``patterns`` maps each pattern given as an argument to the argument's name."""
    m = _ERR.search(stderr)
    msg = m.group(1).strip() if m else (stderr.strip() or "fsguard failed (exit 125)")
    at = _AT.match(msg)
    if at:
        k = _KEY.match(at.group("rest"))
        key = k.group("key") if k else None
        return PolicyError(
            msg,
            key=key,
            file=at.group("file"),
            line=int(at.group("line")),
            column=int(at.group("col")) if at.group("col") else None,
            stderr=stderr,
        )
    c = _CONFIG.match(msg)
    if c:
        return PolicyError(msg, key="config", file=c.group("file"), stderr=stderr)
    f = _FLAG.match(msg)
    if f:
        return PolicyError(msg, key=f.group("flag").replace("-", "_"), stderr=stderr)
    v = _VAR.match(msg)
    if v:
        return PolicyError(msg, key=v.group("var"), stderr=stderr)
    for pat, name in (patterns or {}).items():
        if msg.startswith(pat + ": "):
            return PolicyError(msg, key=name, stderr=stderr)
    return FsguardError(msg, stderr)


# ---------------------------------------------------------------------------
# Policy arguments


def _abs(p: StrPath, base: Optional[StrPath] = None) -> str:
    """``p`` made absolute against ``base`` (default: the current directory)."""
    s = os.path.expanduser(os.fspath(p))
    if base is not None:
        s = os.path.join(os.path.abspath(os.fspath(base)), s)
    return os.path.abspath(s)


_GLOB = re.compile(r"[*?\[{]")


def _abs_pattern(p: str, base: str) -> str:
    """A relative pattern made absolute against ``base``, meaning what a
    config's pattern means there: a slash-less glob (``*.pem``) matches at
    any depth below it; ``~/`` is kept."""
    if p.startswith("/") or p == "~" or p.startswith("~/"):
        return p
    base = base.rstrip("/")
    if "/" not in p and _GLOB.search(p):
        return f"{base}/**/{p}"
    return f"{base}/{p}"


def _patterns(name: str, pats: Sequence[StrPath], base: str) -> List[str]:
    if isinstance(pats, (str, bytes, os.PathLike)):
        raise TypeError(f"{name}: a list of patterns, not one string")
    out = []
    for p in pats:
        s = os.fspath(p)
        if not isinstance(s, str) or not s:
            raise PolicyError(f"{name}: empty pattern", key=name)
        out.append(_abs_pattern(s, base))
    return out


def _policy_flags(
    patterns: Dict[str, str],
    root: Optional[StrPath],
    readonly: bool,
    config: Optional[StrPath],
    profile: Optional[str],
    allow_read: Sequence[StrPath],
    deny_read: Sequence[StrPath],
    deny_read_always: Sequence[StrPath],
    allow_write: Sequence[StrPath],
    deny_write: Sequence[StrPath],
    deny_write_always: Sequence[StrPath],
    audit: bool,
) -> List[str]:
    flags: List[str] = []
    if profile is not None:
        if not isinstance(profile, str) or not profile:
            raise TypeError("profile: a profile's name (see `fsguard profiles`)")
        flags += ["--profile", profile]
    if config is not None:
        flags += ["--config", _abs(config)]
    else:
        # The arguments are the whole policy: a `.fsguard.toml` found where
        # the command runs (a workspace it may write) never layers over them.
        flags.append("--no-config")
    base = os.getcwd()
    if root is not None:
        r = _abs(root)
        if not os.path.isdir(r):
            raise PolicyError(f"root: {r}: not a directory", key="root")
        flags += ["--root", r]
        base = r
    if readonly:
        flags.append("--readonly")
    for name, opt, pats in (
        ("allow_read", "--allow-read", allow_read),
        ("deny_read", "--deny-read", deny_read),
        ("deny_read_always", "--deny-read-always", deny_read_always),
        ("allow_write", "--allow-write", allow_write),
        ("deny_write", "--deny-write", deny_write),
        ("deny_write_always", "--deny-write-always", deny_write_always),
    ):
        for given, p in zip(pats, _patterns(name, pats, base)):
            patterns.setdefault(p, name)
            patterns.setdefault(os.fspath(given), name)
            flags.append(f"{opt}={p}")
    if audit:
        flags.append("--audit")
    return flags


def _cli_env(env: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """The environment for the CLI: ``env`` (default: ours) without any
    ``FSGUARD_*`` policy variable (the arguments are the whole policy) or
    ``LD_PRELOAD``, plus ``FSGUARD_LIB`` naming the bundled library."""
    base = os.environ if env is None else env
    out = {k: v for k, v in base.items() if not k.startswith("FSGUARD_") and k != "LD_PRELOAD"}
    out["FSGUARD_LIB"] = str(library_path())
    return out


def _decode(b: Optional[bytes]) -> str:
    return (b or b"").decode("utf-8", errors="replace")


# ---------------------------------------------------------------------------
# The API


def run(
    argv: Sequence[StrPath],
    *,
    root: Optional[StrPath] = None,
    readonly: bool = False,
    allow_read: Sequence[StrPath] = (),
    deny_read: Sequence[StrPath] = (),
    deny_read_always: Sequence[StrPath] = (),
    allow_write: Sequence[StrPath] = (),
    deny_write: Sequence[StrPath] = (),
    deny_write_always: Sequence[StrPath] = (),
    config: Optional[StrPath] = None,
    profile: Optional[str] = None,
    audit: bool = False,
    landlock: Union[None, bool, str] = None,
    timeout: Optional[float] = None,
    cwd: Optional[StrPath] = None,
    env: Optional[Mapping[str, str]] = None,
    input: Union[str, bytes, None] = None,
    quiet: bool = False,
    extra_args: Sequence[str] = (),
) -> Result:
    """Runs ``argv`` under ``fsguard run`` and returns a :class:`Result`.

    The policy is exactly the arguments (``FSGUARD_*`` variables in ``env``
    or in this process are dropped):

    - ``root``: confine reads and writes to this directory (reads of
      installed software stay allowed);
    - ``readonly``: deny every write;
    - ``allow_read``, ``deny_read``, ``deny_read_always``, ``allow_write``,
      ``deny_write``, ``deny_write_always``: path patterns as in the TOML
      config's ``[read]``/``[write]`` lists (globs; ``~/`` expanded; a
      slash-less glob such as ``*.pem`` matches at any depth);
    - ``config``: a TOML policy file; the arguments above override it;
    - ``profile``: a built-in profile (``fsguard profiles`` lists them:
      ``"agent"``, ``"agent-dev"``, ``"analysis"``, ``"build"``), the
      first layer: ``config`` and the arguments above go on top (rule
      lists add up, so none of the profile's denials is lost). Its
      relative paths (the ``root = "."`` of ``agent``) are against
      ``root`` when one is given, else against ``cwd``, the command's
      working directory (default: this process's). An unknown name raises
      :class:`PolicyError`;
    - ``audit``: block nothing, report what would have been blocked
      (see :attr:`Result.audited`);
    - ``landlock``: ``None`` (the default) is the CLI's default, a Landlock
      ruleset wherever the kernel has one; ``False`` runs without it;
      ``"required"`` fails where the kernel has none. Under Landlock an
      ``audit`` run still refuses writes outside the root.

    Relative paths (``root``, ``config``) are against this process's
    working directory, as ``subprocess`` takes them, never against ``cwd``:
    ``run(..., root="ws", cwd="ws")`` confines to ``./ws`` and runs there.
    Relative patterns are against the root, as in a config file
    (``deny_read=["**/.env*"]`` covers the root's ``.env`` files), or this
    process's working directory when there is no root; a slash-less glob
    (``*.pem``) matches at any depth below that directory.

    ``quiet``: fsguard writes nothing of its own to ``stderr`` (no summary
    of what was blocked, no notes), so ``Result.stderr`` is the command's
    alone, fit to hand to a model; the refusals are in :attr:`Result.blocked`.

    ``timeout`` (seconds): the command gets SIGTERM, then SIGKILL 5 s
    later; :attr:`Result.timed_out` is set and ``returncode`` is 124.
    ``cwd`` and ``env`` are the command's working directory and full
    environment (default: this process's). ``input`` is fed to its stdin
    (default: empty stdin, never this process's). ``argv[0]`` is looked up
    on ``PATH`` like ``execvp``; use ``["sh", "-c", line]`` for a shell line.

    Raises :class:`PolicyError` for a bad policy (with ``key``, ``file``,
    ``line``) and :class:`FsguardError` when the guard cannot run the
    command (library missing or not loaded). A command that cannot be found
    or executed is not an error: ``returncode`` is 127 or 126.
    """
    if isinstance(argv, (str, bytes)):
        raise TypeError("argv: a list of arguments (use ['sh', '-c', line] for a shell line)")
    args = [os.fspath(a) for a in argv]
    if not args:
        raise ValueError("argv is empty")
    patterns: Dict[str, str] = {}
    flags = _policy_flags(
        patterns,
        root,
        readonly,
        config,
        profile,
        allow_read,
        deny_read,
        deny_read_always,
        allow_write,
        deny_write,
        deny_write_always,
        audit,
    )
    if landlock is False:
        flags.append("--no-landlock")
    elif landlock:
        flags.append("--landlock=required" if landlock == "required" else "--landlock")
    if quiet:
        flags.append("--quiet")
    if timeout is not None:
        if not timeout > 0:
            raise ValueError("timeout: seconds > 0")
        flags.append(f"--timeout={float(timeout)}")
    data = input.encode() if isinstance(input, str) else input
    logdir = tempfile.mkdtemp(prefix="fsguard-py-")
    log = os.path.join(logdir, "trace.jsonl")
    try:
        cmd = [str(cli_path()), "run", *flags, "--log", log, "--log-format", "json"]
        cmd += [*extra_args, "--", *args]
        started = time.monotonic()
        try:
            p = subprocess.run(
                cmd,
                input=data,
                stdin=subprocess.DEVNULL if data is None else None,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=None if cwd is None else os.fspath(cwd),
                env=_cli_env(env),
                timeout=None if timeout is None else timeout + _GRACE,
            )
        except subprocess.TimeoutExpired as e:
            # The supervisor itself did not stop (it was killed): report a timeout.
            out, err, code = e.stdout, e.stderr, EXIT_TIMEOUT
            elapsed = time.monotonic() - started
        else:
            out, err, code = p.stdout, p.stderr, p.returncode
            elapsed = time.monotonic() - started
        stderr = _decode(err)
        if code == EXIT_FSGUARD and _own_error(stderr):
            raise _error_from(stderr, patterns)
        try:
            with open(log, encoding="utf-8", errors="replace") as f:
                events = parse_events(f.read())
        except FileNotFoundError:
            events = []
        timed_out = (
            timeout is not None and code == EXIT_TIMEOUT and elapsed >= timeout
        )
        return Result(
            argv=args,
            returncode=code,
            stdout=_decode(out),
            stderr=stderr,
            timed_out=timed_out,
            events=events,
            duration=elapsed,
            lost=sum(int(m.group(1)) for m in _LOST.finditer(stderr)),
        )
    finally:
        shutil.rmtree(logdir, ignore_errors=True)


def environ(
    root: Optional[StrPath] = None,
    *,
    readonly: bool = False,
    config: Optional[StrPath] = None,
    audit: bool = False,
    log: Optional[StrPath] = None,
    log_format: Optional[str] = None,
    errno: Optional[str] = None,
    base: Optional[Mapping[str, str]] = None,
    validate: bool = True,
) -> Dict[str, str]:
    """The environment variables that put a child process under the guard.

    For harnesses that start children themselves (``subprocess``,
    ``os.posix_spawn``)::

        env = fsguard.environ(root="ws", base=os.environ)
        subprocess.run(["sh", "-c", "echo x > /tmp/x"], env=env)   # EACCES

    Returns ``LD_PRELOAD`` (the bundled library, absolute) and the
    ``FSGUARD_*`` variables for the arguments; with ``base``, a copy of
    ``base`` with those set (its own ``FSGUARD_*`` variables dropped, its
    ``LD_PRELOAD`` kept after the library). Path rules beyond root and
    read-only need a ``config`` file, and the file must stay in place while
    children start (each new guarded process tree reads it once, at load).

    ``log`` is a file for trace lines (default: the child's stderr) and
    ``log_format`` ``"text"`` or ``"json"`` (read the file back with
    :func:`parse_events`); ``errno`` is ``"EACCES"`` or ``"EPERM"``.
    ``validate`` checks the policy now with ``fsguard check`` and raises
    :class:`PolicyError`, instead of every child failing with exit 125.

    Prefer :func:`run` where it fits: only ``fsguard run`` confirms that
    the library loaded, sets ``no_new_privs`` and enforces timeouts.
    """
    v: Dict[str, str] = {}
    if root is not None:
        r = _abs(root)
        if not os.path.isdir(r):
            raise PolicyError(f"root: {r}: not a directory", key="root")
        v["FSGUARD_ROOT"] = r
    if readonly:
        v["FSGUARD_READONLY"] = "1"
    if config is not None:
        v["FSGUARD_CONFIG"] = _abs(config)
    if audit:
        v["FSGUARD_MODE"] = "audit"
    if log is not None:
        s = os.fspath(log)
        v["FSGUARD_LOG"] = s if s in ("stderr", "off") else _abs(s)
    if log_format is not None:
        v["FSGUARD_LOG_FORMAT"] = log_format
    if errno is not None:
        v["FSGUARD_ERRNO"] = errno
    if validate:
        check(env=v)
    lib = str(library_path())
    if base is None:
        v["LD_PRELOAD"] = lib
        return v
    out = {k: val for k, val in base.items() if not k.startswith("FSGUARD_")}
    rest = [p for p in re.split(r"[: ]", out.get("LD_PRELOAD", "")) if p and p != lib]
    out.update(v)
    out["LD_PRELOAD"] = ":".join([lib, *rest])
    return out


def check(
    *args: str,
    env: Optional[Mapping[str, str]] = None,
) -> str:
    """Runs ``fsguard check [ARGS]`` and returns the effective policy it prints.

    ``env`` holds ``FSGUARD_*`` variables to check (the process's own are
    not used). Raises :class:`PolicyError` if the policy is invalid.
    """
    e = _cli_env(None)
    e.update(env or {})
    p = subprocess.run(
        [str(cli_path()), "check", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=e,
    )
    if p.returncode != 0:
        raise _error_from(_decode(p.stderr))
    return _decode(p.stdout)
