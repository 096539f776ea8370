"""An agent harness: each shell tool call runs under fsguard, confined to a
workspace; what the guard blocked goes back to the model as one short,
structured line per refusal.

    pip install fsguard   # or the wheel built by `pip wheel ./python`
    python3 examples/harness/agent_harness.py WORKSPACE ['shell line' ...]

The model sees the command's own output and the refusals, never fsguard's
summary (`quiet=True`): its "to allow: --allow-…" lines are for the person
who writes the policy, not for the model the policy confines. A refusal the
policy makes on purpose (a `.env`, a key, a credential) says so, with no
way around it; one at the workspace's edge says the path is outside it.
"""
import sys

import fsguard


def refusal(e: fsguard.Event) -> str:
    """One refusal, as the model sees it."""
    if e.rule == "root":
        why = "outside the workspace"
    elif e.hint is not None:
        why = "not allowed in this workspace"
    else:
        why = "refused on purpose by the workspace's policy; do not work around it"
    return f"[harness] blocked: {e.access} of {e.path} by {e.call}() ({e.rule}): {why}"


def shell_tool(command: str, workspace: str) -> str:
    """The tool an LLM calls: run one shell line, return what it should see."""
    r = fsguard.run(["sh", "-c", command], root=workspace, cwd=workspace,
                    deny_read=["**/.env*"], timeout=60, quiet=True)
    out = r.stdout + r.stderr
    lines = [out.rstrip()] if out.strip() else []
    if r.timed_out:
        lines.append("[harness] timed out after 60 s")
    lines += [refusal(e) for e in r.blocked]
    return "\n".join(lines + [f"[exit {r.returncode}]"])


if __name__ == "__main__":
    ws, calls = sys.argv[1], sys.argv[2:] or [
        "echo draft > notes.md && cat notes.md",  # inside: allowed
        "cat .env",                               # a secret: blocked read
        "echo pwned >> ~/.bashrc",                # outside: blocked write
    ]
    for call in calls:
        print(f"$ {call}\n{shell_tool(call, ws)}\n")
