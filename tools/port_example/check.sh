#!/usr/bin/env bash
# Diffs the Python scripts tools/port_example/serving_sim.py and draft_agreement.py against
# their Rust ports (lecture90, lecture91) with tools/port_diff.sh, the command that diffs any
# port against its Python; then checks the golden values py_port::stats and py_port::array
# are tested on (crates/py_port/tests/data/numpy_*_golden.txt) against the installed NumPy.
# Prints "SKIPPED: ..." and exits 0 when NumPy is missing and cannot be installed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

out=target/port_example
mkdir -p "$out"
golden=crates/py_port/tests/data/numpy_stats_golden.txt

source "$root/tools/lib/python.sh"
need_numpy "port example" || exit 0
version=$(python3 -c 'import numpy; print(numpy.__version__)')

bash "$root/tools/port_diff.sh" lecture90 "$here/serving_sim.py" | sed 's/^port diff/port example/'
bash "$root/tools/port_diff.sh" lecture91 "$here/draft_agreement.py" | sed 's/^port diff/port example/'

python3 "$here/numpy_stats.py" > "$out/numpy_stats.txt"
if ! cmp -s <(tail -n +2 "$golden") <(tail -n +2 "$out/numpy_stats.txt"); then
    echo "port example: NumPy $version computes the golden statistics differently from $golden:" >&2
    diff <(tail -n +2 "$golden") <(tail -n +2 "$out/numpy_stats.txt") | cut -c1-200 | head -10 >&2 || true
    exit 1
fi
echo "port example: NumPy $version's sums, means and percentiles are the golden values py_port::stats is tested on"

arrays=crates/py_port/tests/data/numpy_arrays_golden.txt
python3 "$here/numpy_arrays.py" > "$out/numpy_arrays.txt"
if ! cmp -s <(tail -n +2 "$arrays") <(tail -n +2 "$out/numpy_arrays.txt"); then
    echo "port example: NumPy $version reduces the golden arrays differently from $arrays:" >&2
    diff <(tail -n +2 "$arrays") <(tail -n +2 "$out/numpy_arrays.txt") | cut -c1-200 | head -10 >&2 || true
    exit 1
fi
echo "port example: NumPy $version's argmax(-1), mean(0) and mean(1) are the golden values py_port::array is tested on"

float32=crates/py_port/tests/data/numpy_f32_golden.txt
python3 "$here/numpy_f32.py" > "$out/numpy_f32.txt"
if ! cmp -s <(tail -n +2 "$float32") <(tail -n +2 "$out/numpy_f32.txt"); then
    echo "port example: NumPy $version reduces the golden float32 arrays differently from $float32:" >&2
    diff <(tail -n +2 "$float32") <(tail -n +2 "$out/numpy_f32.txt") | cut -c1-200 | head -10 >&2 || true
    exit 1
fi
echo "port example: NumPy $version's float32 sums and means, whole and along each axis, are the golden values py_port is tested on"
