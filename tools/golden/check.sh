#!/usr/bin/env bash
# Regenerates the golden logits from freshly exported weights and checks that they are
# identical to the committed file, byte for byte (see README.md beside this script).
# Prints "SKIPPED: ..." and exits 0 when NumPy is missing and cannot be installed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

out=target/golden
mkdir -p "$out"

if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIPPED: golden values: python3 is not installed"
    exit 0
fi
if ! python3 -c 'import numpy' >/dev/null 2>&1; then
    echo "golden values: installing NumPy with pip"
    if ! python3 -m pip install --quiet numpy >/dev/null 2>&1 \
        || ! python3 -c 'import numpy' >/dev/null 2>&1; then
        echo "SKIPPED: golden values: NumPy is not installed and pip could not install it"
        exit 0
    fi
fi

cargo run --quiet -p transformer_lab --example export_weights -- "$out/qcfg_seed0.safetensors" 0
python3 "$here/golden.py" "$out/qcfg_seed0.safetensors" "$out/qcfg_seed0_logits.txt"
if cmp "$here/qcfg_seed0_logits.txt" "$out/qcfg_seed0_logits.txt"; then
    echo "golden values: regenerated logits are identical to tools/golden/qcfg_seed0_logits.txt"
else
    echo "golden values: regenerated logits differ from the committed file:" >&2
    diff <(head -c 2000 "$here/qcfg_seed0_logits.txt") <(head -c 2000 "$out/qcfg_seed0_logits.txt") >&2 || true
    exit 1
fi
