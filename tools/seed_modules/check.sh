#!/usr/bin/env bash
# The seed script is the test: runs tools/seed/05_spec_decode_on_hardware.py (the original
# lecture script, unchanged; checked against ../shared/seed/ when that folder is there) on
# the modules of this folder, recreated from SPEC.md, and `cargo run -p lecture06`, and
# checks that they print the same bytes.
# Prints "SKIPPED: ..." and exits 0 when NumPy is missing and cannot be installed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

seed=$root/tools/seed/05_spec_decode_on_hardware.py
original=$root/../shared/seed/05_spec_decode_on_hardware.py
if [ -f "$original" ] && ! cmp -s "$seed" "$original"; then
    echo "seed script: tools/seed/ is not the original script ($original)" >&2
    exit 1
fi
out=target/seed_modules
mkdir -p "$out"

source "$root/tools/lib/python.sh"
need_numpy "seed script" || exit 0
version=$(python3 -c 'import numpy; print(numpy.__version__)')

(cd "$here" && for m in llm_math decode_lab transformer_lab quant_lab; do python3 "$m.py" >/dev/null; done)
PYTHONPATH="$here" python3 "$seed" > "$out/python.txt"
cargo run --quiet -p lecture06 > "$out/rust.txt"
if cmp -s "$out/python.txt" "$out/rust.txt"; then
    echo "seed script: lecture06 prints the same $(wc -l < "$out/python.txt") lines as $(basename "$seed") on tools/seed_modules (NumPy $version), byte for byte"
else
    echo "seed script: lecture06 differs from $(basename "$seed") on tools/seed_modules (NumPy $version) (< Python, > Rust):" >&2
    diff "$out/python.txt" "$out/rust.txt" | head -20 >&2 || true
    exit 1
fi
