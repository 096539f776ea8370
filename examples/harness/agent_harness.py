"""An agent harness: each shell tool call runs under fsguard, confined to a
workspace; what the guard blocked goes back to the model as plain text.

    pip install fsguard   # or the wheel built by `pip wheel ./python`
    python3 examples/harness/agent_harness.py WORKSPACE ['shell line' ...]
"""
import sys

import fsguard


def shell_tool(command: str, workspace: str) -> str:
    """The tool an LLM calls: run one shell line, return what it should see."""
    r = fsguard.run(["sh", "-c", command], root=workspace, cwd=workspace,
                    deny_read=["**/.env*"], timeout=60)
    lines = [(r.stdout + r.stderr).rstrip()] if r.stdout + r.stderr else []
    if r.timed_out:
        lines.append("[harness] timed out after 60 s")
    for e in r.blocked:
        lines.append(f"[harness] blocked: {e.access} of {e.path} by {e.call}() ({e.rule})")
    return "\n".join(lines + [f"[exit {r.returncode}]"])


if __name__ == "__main__":
    ws, calls = sys.argv[1], sys.argv[2:] or [
        "echo draft > notes.md && cat notes.md",  # inside: allowed
        "cat .env",                               # a secret: blocked read
        "echo pwned >> ~/.bashrc",                # outside: blocked write
    ]
    for call in calls:
        print(f"$ {call}\n{shell_tool(call, ws)}\n")
