"""Writes NumPy's 2-D reductions of arrays drawn from default_rng, one line each: the golden
values of crates/py_port/tests/data/numpy_arrays_golden.txt (py_port::array): a.argmax(-1),
a.mean(0) and a.mean(1) of rng.normal(0, 1e6, (rows, cols)) and of rounded copies (ties)."""
import numpy as np

print(f"# numpy {np.__version__}: seed rows cols | argmax(-1) | mean(0) | mean(1)")
for seed in (0, 7):
    for rows, cols in ((1, 1), (3, 8), (9, 129), (300, 7), (130, 3)):
        rng = np.random.default_rng(seed)
        a = rng.normal(0.0, 1e6, (rows, cols))
        a[::2] = np.round(a[::2] / 1e6)  # every other row: small integers, many ties
        parts = [
            " ".join(str(int(i)) for i in a.argmax(-1)),
            " ".join(repr(float(v)) for v in a.mean(0)),
            " ".join(repr(float(v)) for v in a.mean(1)),
        ]
        print(seed, rows, cols, "|", " | ".join(parts))
