"""Writes NumPy's float32 reductions of arrays drawn from default_rng, one line each: the
golden values of crates/py_port/tests/data/numpy_f32_golden.txt (py_port::stats::sum_f32,
mean_f32 and py_port::array::sum_axis, mean_axis on float32): x.sum() and x.mean() of the
flattened array, then a.sum(0), a.sum(1), a.mean(0), a.mean(1) (of the axis-0 results, the
first 16 columns), each value a float32 written exactly as a Python float."""
import numpy as np


def floats(values):
    return " ".join(repr(float(v)) for v in np.atleast_1d(values))


print(f"# numpy {np.__version__}: seed rows cols | sum mean | sum(0) | sum(1) | mean(0) | mean(1)")
for seed in (0, 7):
    for rows, cols in ((1, 1), (3, 8), (9, 129), (300, 7), (130, 3), (2, 300), (4, 8193)):
        rng = np.random.default_rng(seed)
        a = rng.normal(0.0, 1e3, (rows, cols)).astype(np.float32)
        x = a.ravel()
        parts = [
            floats([x.sum(), x.mean()]),
            floats(a.sum(0)[:16]),
            floats(a.sum(1)),
            floats(a.mean(0)[:16]),
            floats(a.mean(1)),
        ]
        print(seed, rows, cols, "|", " | ".join(parts))
