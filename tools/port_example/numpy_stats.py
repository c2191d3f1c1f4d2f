"""Writes NumPy's sum, mean and percentiles of arrays drawn from default_rng, one line each:
the golden values of crates/py_port/tests/data/numpy_stats_golden.txt (py_port::stats)."""
import numpy as np

QS = [0, 1, 2.5, 25, 50, 75, 90, 99, 99.9, 100]
print(f"# numpy {np.__version__}: case seed n | sum mean | percentiles at " + " ".join(map(str, QS)))
for seed in (0, 42, 349):
    for n in (1, 2, 7, 8, 9, 16, 127, 128, 129, 1000, 8191, 8192, 8193, 100003):
        rng = np.random.default_rng(seed)
        cases = {"normal": rng.normal(0.0, 1.0, n), "exponential": rng.exponential(1000.0, n)}
        for name, x in cases.items():
            vals = [np.sum(x), np.mean(x)] + list(np.percentile(x, QS))
            print(name, seed, n, "|", " ".join(repr(float(v)) for v in vals))
