#!/usr/bin/env bash
# Draws every py_port::random method with NumPy's default_rng and with py_port, 11 seeds ×
# 10,000 draws each, and checks that the two streams are identical, bit for bit; also
# regenerates the committed golden files (crates/py_port/tests/data/numpy_streams_golden.txt,
# the values of seeds 0 and 42, and numpy_streams_digests.txt, a CRC-32 of every full stream)
# and checks they are unchanged. Runs tools/py_format/check.sh (Python's number formats) first.
# Prints "SKIPPED: ..." and exits 0 when NumPy is missing and cannot be installed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

bash tools/py_format/check.sh

out=target/numpy_rng
mkdir -p "$out"
golden=crates/py_port/tests/data/numpy_streams_golden.txt
digests=crates/py_port/tests/data/numpy_streams_digests.txt

source "$root/tools/lib/python.sh"
need_numpy "numpy streams" || exit 0
version=$(python3 -c 'import numpy; print(numpy.__version__)')

python3 "$here/numpy_streams.py" --digests "$out/digests.txt" > "$out/numpy.txt"
cargo run --quiet -p py_port --example numpy_streams > "$out/rust.txt"
if cmp -s "$out/numpy.txt" "$out/rust.txt"; then
    values=$(grep -vc '^==' "$out/numpy.txt")
    seeds=$(grep '^==' "$out/numpy.txt" | sed 's/ case=.*//' | sort -u | wc -l)
    methods=$(grep '^==' "$out/numpy.txt" | sed 's/.* case=//' | sort -u | wc -l)
    echo "numpy streams: $values values identical to NumPy $version over $seeds seeds × $methods methods"
else
    echo "numpy streams: py_port differs from NumPy $version (< NumPy, > py_port):" >&2
    line=$(cmp "$out/numpy.txt" "$out/rust.txt" 2>&1 | sed -n 's/.* line \([0-9]*\).*/\1/p' || true)
    if [ -n "$line" ]; then
        echo "first difference at line $line, in: $(head -n "$line" "$out/numpy.txt" | grep '^==' | tail -1)" >&2
    fi
    diff "$out/numpy.txt" "$out/rust.txt" | head -20 >&2 || true
    exit 1
fi

python3 "$here/numpy_streams.py" --draws 40 --seeds 0,42 --header > "$out/golden.txt"
if ! cmp -s <(tail -n +2 "$golden") <(tail -n +2 "$out/golden.txt"); then
    echo "numpy streams: NumPy $version draws the golden streams differently from $golden:" >&2
    diff <(tail -n +2 "$golden") <(tail -n +2 "$out/golden.txt") | head -20 >&2 || true
    exit 1
fi
if ! cmp -s <(tail -n +2 "$digests") "$out/digests.txt"; then
    echo "numpy streams: NumPy $version's stream digests differ from $digests:" >&2
    diff <(tail -n +2 "$digests") "$out/digests.txt" | head -20 >&2 || true
    exit 1
fi
