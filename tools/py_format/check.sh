#!/usr/bin/env bash
# Formats ~93,000 (value, spec) pairs with CPython and with py_port::format and checks that the
# results are identical, character for character; also regenerates the committed golden subset
# (crates/py_port/tests/data/py_format_golden.txt) and checks it is unchanged.
# Prints "SKIPPED: ..." and exits 0 when python3 is missing.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

out=target/py_format
mkdir -p "$out"
golden=crates/py_port/tests/data/py_format_golden.txt

source "$root/tools/lib/python.sh"
need_python "python formats" || exit 0
version=$(python3 -c 'import sys; print(sys.version.split()[0])')

python3 "$here/py_format.py" > "$out/python.txt"
cargo run --quiet -p py_port --example py_format -- "$out/python.txt" > "$out/rust.txt"
n=$(wc -l < "$out/python.txt")
if cmp -s "$out/python.txt" "$out/rust.txt"; then
    echo "python formats: $n results identical to Python $version (format(float), format(int), repr, float.hex)"
else
    echo "python formats: py_port differs from Python $version (< Python, > py_port):" >&2
    diff "$out/python.txt" "$out/rust.txt" | head -20 >&2 || true
    exit 1
fi

python3 "$here/py_format.py" --golden > "$out/golden.txt"
if ! cmp -s <(tail -n +2 "$golden") <(tail -n +2 "$out/golden.txt"); then
    echo "python formats: Python $version prints the golden subset differently from $golden:" >&2
    diff <(tail -n +2 "$golden") <(tail -n +2 "$out/golden.txt") | head -20 >&2 || true
    exit 1
fi
