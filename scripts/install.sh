#!/bin/sh
# Installs fsguard: PREFIX/bin/fsguard, PREFIX/lib/libfsguard.so and the
# manual page PREFIX/share/man/man1/fsguard.1.
#
#   scripts/install.sh [PREFIX]        # default PREFIX: /usr/local
#
# The CLI finds the library in ../lib/ next to itself, from any directory.
# The bare form `LD_PRELOAD=libfsguard.so cmd` needs the library on ld.so's
# search path as well: with PREFIX=/usr/local run `ldconfig` afterwards (as
# root); for another PREFIX, add PREFIX/lib to /etc/ld.so.conf.d/fsguard.conf
# and run `ldconfig`. Until then, use `fsguard run` or
# `LD_PRELOAD=$(fsguard lib-path)`: ld.so ignores a preload it cannot find
# and the program runs unguarded.
set -eu
prefix=${1:-/usr/local}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${FSGUARD_NO_BUILD:-}" ]; then
    (cd "$here" && cargo build --release -p fsguard -p fsguard-cli)
fi
target=${CARGO_TARGET_DIR:-$here/target}
mkdir -p "$prefix/bin" "$prefix/lib"
install -m 0755 "$target/release/fsguard" "$prefix/bin/fsguard"
install -m 0755 "$target/release/libfsguard.so" "$prefix/lib/libfsguard.so"
# The release build keeps line tables for backtraces; the installed copies
# need none (about 20 MB and 13 MB become 5 MB and 2 MB).
# FSGUARD_NO_STRIP=1 keeps them.
if [ -z "${FSGUARD_NO_STRIP:-}" ] && command -v strip >/dev/null 2>&1; then
    strip --strip-debug "$prefix/bin/fsguard" "$prefix/lib/libfsguard.so"
fi
mkdir -p "$prefix/share/man/man1"
"$prefix/bin/fsguard" man >"$prefix/share/man/man1/fsguard.1"
echo "installed $prefix/bin/fsguard, $prefix/lib/libfsguard.so and $prefix/share/man/man1/fsguard.1"
case "$prefix" in
/usr/local | /usr) echo "run ldconfig (as root) so that LD_PRELOAD=libfsguard.so finds it" ;;
*) echo "for LD_PRELOAD=libfsguard.so: add $prefix/lib to /etc/ld.so.conf.d/fsguard.conf and run ldconfig" ;;
esac
