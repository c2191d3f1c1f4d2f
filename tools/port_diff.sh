#!/usr/bin/env bash
# Diffs a port against its Python: runs SCRIPT.py on tools/seed_modules (the course's helper
# modules, recreated) and `cargo run -p LECTURE [-- FLAGS…]`, and checks they print the
# same bytes; on a difference, prints the first lines of the diff (< Python, > Rust) and
# exits 1. Installs NumPy with pip when it is missing; prints "SKIPPED: …" and exits 0 when
# it cannot.
#
#   bash tools/port_diff.sh lecture90 tools/port_example/serving_sim.py
#   bash tools/port_diff.sh lecture06 ~/course/04_draft_models.py --script 04_draft_models
set -euo pipefail

if [ $# -lt 2 ]; then
    echo "usage: bash tools/port_diff.sh LECTURE SCRIPT.py [FLAGS…]   (FLAGS go to the lecture)" >&2
    exit 2
fi
lecture=$1
script=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
shift 2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
if [ ! -f "$script" ]; then
    echo "port diff: no Python script at $script" >&2
    exit 2
fi

source "$root/tools/lib/python.sh"
need_numpy "port diff" || exit 0
version=$(python3 -c 'import numpy; print(numpy.__version__)')
out=target/port_diff/$lecture
mkdir -p "$out"
name=$(basename "$script" .py)

PYTHONPATH="$root/tools/seed_modules" python3 "$script" > "$out/$name.python.txt"
cargo run --quiet -p "$lecture" -- "$@" > "$out/$name.rust.txt"
if cmp -s "$out/$name.python.txt" "$out/$name.rust.txt"; then
    echo "port diff: $lecture prints the same $(wc -l < "$out/$name.python.txt") lines as $name.py (NumPy $version), byte for byte"
else
    echo "port diff: $lecture differs from $name.py (NumPy $version) (< Python, > Rust; both in $out/):" >&2
    diff "$out/$name.python.txt" "$out/$name.rust.txt" | head -20 >&2 || true
    exit 1
fi
