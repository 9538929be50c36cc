#!/usr/bin/env bash
# Proves that ./dev keeps one environment per clone: two fresh clones of this
# repository's HEAD, set up and run at the same time, each import only their own code
# (modules, console scripts, installed metadata) while sharing the pinned dependencies.
#
#   tools/two_clones.sh            # in a temporary folder, removed afterwards
#
# TOOLMEND_VENV (a shared base environment) and XDG_CACHE_HOME pass through to ./dev.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
git clone -q "$ROOT" "$WORK/a"
git clone -q "$ROOT" "$WORK/b"
CHECK='
import importlib.metadata as m, shutil, sys, toolmend, toolmend_engine
print(toolmend.__file__)
print(toolmend_engine.__file__)
print(m.distribution("toolmend").locate_file("toolmend"))
print(shutil.which("toolmend-engine"))
print(sys.prefix)
'
run() { (cd "$WORK/$1" && ./dev python -c "$CHECK" >"$WORK/$1.out" 2>"$WORK/$1.err"); }
run a & a=$!
run b & b=$!
wait "$a"
wait "$b"
status=0
for clone in a b; do
    other=$([ "$clone" = a ] && echo b || echo a)
    cat "$WORK/$clone.out"
    if ! grep -q "^$WORK/$clone/packages/core/src/toolmend/__init__.py$" "$WORK/$clone.out" \
        || ! grep -q "^$WORK/$clone/packages/engine/src/toolmend_engine/__init__.py$" "$WORK/$clone.out" \
        || grep -q "$WORK/$other/" "$WORK/$clone.out"; then
        echo "clone $clone imports code that is not its own" >&2
        status=1
    fi
done
a_prefix=$(tail -1 "$WORK/a.out")
b_prefix=$(tail -1 "$WORK/b.out")
if [ "$a_prefix" = "$b_prefix" ]; then
    echo "the two clones share one environment: $a_prefix" >&2
    status=1
fi
[ "$status" = 0 ] && echo "two clones, two environments, each with its own code"
exit "$status"
