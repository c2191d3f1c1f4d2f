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

source "$root/tools/lib/python.sh"
need_numpy "port example" || exit 0
version=$(python3 -c 'import numpy; print(numpy.__version__)')

bash "$root/tools/port_diff.sh" lecture90 "$here/serving_sim.py" | sed 's/^port diff/port example/'
bash "$root/tools/port_diff.sh" lecture91 "$here/draft_agreement.py" | sed 's/^port diff/port example/'

# golden SCRIPT GOLDEN WHAT SAYS: NumPy, running tools/port_example/SCRIPT, must print the
# golden file GOLDEN (its first line, the NumPy version it was written with, aside); SAYS is
# what they hold, for the line that says so.
golden() {
    local script=$1 golden=$2 what=$3 says=$4
    local got="$out/$(basename "$script" .py).txt"
    python3 "$here/$script" > "$got"
    if ! cmp -s <(tail -n +2 "$golden") <(tail -n +2 "$got"); then
        echo "port example: NumPy $version $what differently from $golden:" >&2
        diff <(tail -n +2 "$golden") <(tail -n +2 "$got") | cut -c1-200 | head -10 >&2 || true
        exit 1
    fi
    echo "port example: NumPy $version's $says"
}

data=crates/py_port/tests/data
golden numpy_stats.py "$data/numpy_stats_golden.txt" "computes the golden statistics" \
    "sums, means and percentiles are the golden values py_port::stats is tested on"
golden numpy_arrays.py "$data/numpy_arrays_golden.txt" "reduces the golden arrays" \
    "argmax(-1), mean(0) and mean(1) are the golden values py_port::array is tested on"
golden numpy_f32.py "$data/numpy_f32_golden.txt" "reduces the golden float32 arrays" \
    "float32 sums and means, whole and along each axis, are the golden values py_port is tested on"
