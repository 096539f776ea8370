"""A small PEP 517 backend that packs fsguard's native artifacts into a wheel.

The wheel holds the Python module (``src/fsguard``) plus the two artifacts
``cargo build --release`` makes: the CLI as ``fsguard/bin/fsguard`` and the
preload library as ``fsguard/lib/libfsguard.so`` (the CLI finds the library
in ``../lib/`` next to itself, so the bundled pair works as is). Nothing is
compiled on the machine that installs the wheel.

Where the artifacts come from:

* ``FSGUARD_ARTIFACTS=DIR``: a directory holding ``fsguard`` and
  ``libfsguard.so`` (already built; relative: against the repository root);
* otherwise ``cargo build --release -p fsguard -p fsguard-cli`` in the
  repository above this directory (incremental), artifacts taken from
  cargo's own messages.

The platform tag is ``manylinux_2_N_<arch>``: N is the newest ``GLIBC_2.N``
symbol version the binaries require, the architecture is the ELF machine.
(They link only libc, libgcc_s and the loader, which the manylinux policy
allows.) ``FSGUARD_WHEEL_PLAT`` overrides the tag. Debug info is stripped
when ``strip`` is available (``FSGUARD_NO_STRIP=1`` keeps it).

This backend has no build requirements, so ``pip wheel ./python`` needs no
network. It needs Python 3.8+ and, without ``FSGUARD_ARTIFACTS``, cargo.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

NAME = "fsguard"
HERE = Path(__file__).resolve().parent
PYROOT = HERE.parent  # python/
REPO = PYROOT.parent  # the Rust workspace
SUMMARY = "Confine what a process may do to the filesystem (LD_PRELOAD, no root)"
ELF_MACHINES = {62: "x86_64", 183: "aarch64", 3: "i686", 21: "ppc64le", 22: "s390x"}


def _version() -> str:
    """The workspace version from the top-level Cargo.toml."""
    text = (REPO / "Cargo.toml").read_text()
    m = re.search(r'^\[workspace\.package\][^\[]*?^version\s*=\s*"([^"]+)"', text, re.M | re.S)
    if not m:
        raise RuntimeError("no [workspace.package] version in Cargo.toml")
    return m.group(1)


def _cargo_artifacts() -> Tuple[Path, Path]:
    cmd = [
        os.environ.get("CARGO", "cargo"),
        "build",
        "--release",
        "-p",
        "fsguard",
        "-p",
        "fsguard-cli",
        "--message-format=json-render-diagnostics",
    ]
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    out = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, check=True).stdout
    cli = lib = None
    for line in out.decode().splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") != "compiler-artifact":
            continue
        if msg.get("executable", "") and msg["executable"].endswith("/fsguard"):
            cli = Path(msg["executable"])
        for f in msg.get("filenames", []):
            if f.endswith("/libfsguard.so"):
                lib = Path(f)
    if cli is None or lib is None:
        raise RuntimeError("cargo did not report target/release/fsguard and libfsguard.so")
    return cli, lib


def _artifacts() -> Tuple[Path, Path]:
    d = os.environ.get("FSGUARD_ARTIFACTS")
    if d:
        base = REPO / d  # relative: against the repository root
        cli, lib = base / "fsguard", base / "libfsguard.so"
        for p in (cli, lib):
            if not p.is_file():
                raise RuntimeError(f"FSGUARD_ARTIFACTS: {p} does not exist")
        return cli, lib
    return _cargo_artifacts()


def _platform_tag(paths: List[Path]) -> str:
    forced = os.environ.get("FSGUARD_WHEEL_PLAT")
    if forced:
        return forced
    arch = None
    minor = 0
    for p in paths:
        data = p.read_bytes()
        if data[:4] != b"\x7fELF":
            raise RuntimeError(f"{p} is not an ELF file (only Linux wheels are built)")
        little = data[5] == 1
        machine = int.from_bytes(data[18:20], "little" if little else "big")
        a = ELF_MACHINES.get(machine)
        if a is None or (arch is not None and a != arch):
            raise RuntimeError(f"{p}: unexpected ELF machine {machine}")
        arch = a
        for m in re.finditer(rb"GLIBC_2\.(\d+)", data):
            minor = max(minor, int(m.group(1)))
    if minor == 0:
        return f"linux_{arch}"
    return f"manylinux_2_{minor}_{arch}"


def _strip(src: Path, dst: Path) -> None:
    shutil.copyfile(src, dst)
    if os.environ.get("FSGUARD_NO_STRIP") != "1" and shutil.which("strip"):
        subprocess.run(["strip", "--strip-debug", str(dst)], check=True)
    os.chmod(dst, 0o755)


def _metadata(version: str) -> str:
    readme = (PYROOT / "README.md").read_text()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\n"
        f"Version: {version}\n"
        f"Summary: {SUMMARY}\n"
        "License: MIT OR Apache-2.0\n"
        "Requires-Python: >=3.8\n"
        "Classifier: Operating System :: POSIX :: Linux\n"
        "Classifier: Programming Language :: Python :: 3\n"
        "Classifier: Topic :: Security\n"
        "Classifier: Typing :: Typed\n"
        "Description-Content-Type: text/markdown\n"
        "\n" + readme
    )


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def _dist_info(version: str, tag: str) -> Dict[str, bytes]:
    di = f"{NAME}-{version}.dist-info"
    return {
        f"{di}/METADATA": _metadata(version).encode(),
        f"{di}/WHEEL": (
            "Wheel-Version: 1.0\n"
            "Generator: fsguard_build\n"
            "Root-Is-Purelib: false\n"
            f"Tag: py3-none-{tag}\n"
        ).encode(),
        f"{di}/entry_points.txt": b"[console_scripts]\nfsguard = fsguard.__main__:main\n",
    }


def _write_wheel(path: Path, files: List[Tuple[str, bytes, int]], record_name: str) -> None:
    # Fixed timestamps: the same inputs give the same wheel.
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    stamp = time.gmtime(max(epoch, 315532800))[:6]
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in files:
            info = zipfile.ZipInfo(name, stamp)
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            record.append(f"{name},{_record_hash(data)},{len(data)}")
        record.append(f"{record_name},,")
        info = zipfile.ZipInfo(record_name, stamp)
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, "\n".join(record) + "\n")


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[Dict[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    """PEP 517: build ``fsguard-<version>-py3-none-<plat>.whl``."""
    version = _version()
    cli, lib = _artifacts()
    tag = _platform_tag([cli, lib])
    files: List[Tuple[str, bytes, int]] = []
    src = PYROOT / "src" / NAME
    for p in sorted(src.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts and p.suffix in (".py", ".typed"):
            files.append((f"{NAME}/{p.relative_to(src).as_posix()}", p.read_bytes(), 0o644))
    with tempfile.TemporaryDirectory() as tmp:
        for art, dest in ((cli, "bin/fsguard"), (lib, "lib/libfsguard.so")):
            out = Path(tmp) / Path(dest).name
            _strip(art, out)
            files.append((f"{NAME}/{dest}", out.read_bytes(), 0o755))
    for name, data in _dist_info(version, tag).items():
        files.append((name, data, 0o644))
    wheel = f"{NAME}-{version}-py3-none-{tag}.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    _write_wheel(Path(wheel_directory) / wheel, files, f"{NAME}-{version}.dist-info/RECORD")
    return wheel


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: Optional[Dict[str, Any]] = None
) -> str:
    """PEP 517: the .dist-info without building anything (the tag is a guess
    here; pip takes the real one from the wheel)."""
    version = _version()
    di = Path(metadata_directory) / f"{NAME}-{version}.dist-info"
    di.mkdir(parents=True, exist_ok=True)
    for name, data in _dist_info(version, "linux_x86_64").items():
        (Path(metadata_directory) / name).write_bytes(data)
    return di.name


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    raise RuntimeError(
        "fsguard has no sdist: build the wheel from a checkout (pip wheel ./python), "
        "which needs cargo, and install the wheel"
    )


if __name__ == "__main__":
    import sys

    print(build_wheel(sys.argv[1] if len(sys.argv) > 1 else "dist"))
