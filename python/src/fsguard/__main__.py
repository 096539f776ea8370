"""``python -m fsguard ARGS`` and the ``fsguard`` console script: the bundled CLI.

The process becomes the CLI (``exec``), so exit statuses and signals are the
CLI's own. ``FSGUARD_LIB`` is set to the bundled library, which is the one
built with this CLI.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional

from . import cli_path, library_path


def main(argv: Optional[List[str]] = None) -> None:
    """Execs the bundled ``fsguard`` with ``argv`` (default: ``sys.argv[1:]``)."""
    args = sys.argv[1:] if argv is None else argv
    exe = str(cli_path())
    env = dict(os.environ)
    env["FSGUARD_LIB"] = str(library_path())
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(exe, ["fsguard", *args], env)
    except OSError as e:
        sys.stderr.write(f"fsguard: error: cannot run the bundled CLI {exe}: {e}\n")
        sys.exit(125)


if __name__ == "__main__":
    main()
