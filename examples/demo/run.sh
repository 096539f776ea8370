#!/bin/sh
# Runs the bundled agent demo under the guard with examples/agent.toml.
# From a fresh clone:  cargo build --release && examples/demo/run.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
fsguard=${FSGUARD:-$repo/target/release/fsguard}
if [ ! -x "$fsguard" ]; then
    echo "run.sh: $fsguard not found; build it first: cargo build --release" >&2
    exit 1
fi
echo "\$ fsguard run --config examples/agent.toml -- python3 agent.py"
cd "$here/workspace"
exec "$fsguard" run --config "$repo/examples/agent.toml" -- python3 agent.py
