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

source "$root/tools/lib/python.sh"
need_numpy "golden values" || exit 0

cargo run --quiet -p transformer_lab --example export_weights -- "$out/qcfg_seed0.safetensors" 0
python3 "$here/golden.py" "$out/qcfg_seed0.safetensors" "$out/qcfg_seed0_logits.txt"
if cmp "$here/qcfg_seed0_logits.txt" "$out/qcfg_seed0_logits.txt"; then
    echo "golden values: regenerated logits are identical to tools/golden/qcfg_seed0_logits.txt"
else
    echo "golden values: regenerated logits differ from the committed file:" >&2
    diff <(head -c 2000 "$here/qcfg_seed0_logits.txt") <(head -c 2000 "$out/qcfg_seed0_logits.txt") >&2 || true
    exit 1
fi
