#!/usr/bin/env python3
"""Prints NumPy's default_rng streams in the text format of py_port's `numpy_streams` example.

For every seed and every case, a fresh `np.random.default_rng(seed)` draws `--draws` values:

    == seed=<seed> case=<case>
    <one value per line>

Floats are printed with float.hex() (exact), integers in decimal. Cases that return a few values
per call (choice without replacement, permutation, shuffle, the scalar mix) call again on the
same generator until `--draws` values are out, and the last call's extra values are dropped.
The case list must match crates/py_port/tests/support/streams.rs line for line.

    python3 numpy_streams.py [--draws N] [--seeds 0,42] [--header] [--digests PATH]

With --digests, it also writes one line per block to PATH, `seed=<seed> case=<case>
draws=<n> bytes=<length> crc32=<8 hex digits>`: the length and zlib CRC-32 of the block's
value lines (newlines included), a small file that pins the full streams for tests that run
without NumPy.
"""
import argparse
import sys
import zlib

import numpy as np

SEEDS = [0, 1, 42, 12345, 2**32 + 5, 2**63 + 7, 7, 2024, 987654321, 2**32 - 1, 2**64 - 1]
P5 = [0.1, 0.2, 0.3, 0.25, 0.15]
P10 = [0.05, 0.15, 0.1, 0.1, 0.2, 0.05, 0.05, 0.1, 0.15, 0.05]


def repeat(call, n):
    """Calls `call()` (which returns a list) until n values are out."""
    out = []
    while len(out) < n:
        out.extend(call())
    return out[:n]


def shuffled_lists(g, n):
    x = list(range(20))

    def call():
        g.shuffle(x)
        return list(x)

    return repeat(call, n)


def mixed(g, n):
    """Scalar calls interleaved: the 32-bit buffer must survive the 64-bit draws between."""

    def call():
        return [
            int(g.integers(0, 10)),
            float(g.random()),
            int(g.integers(0, 1000)),
            float(g.standard_normal()),
        ]

    return repeat(call, n)


# (name, function(generator, n) -> list of Python ints, floats or strs)
CASES = [
    ("random_raw", lambda g, n: g.bit_generator.random_raw(n).tolist()),
    ("random", lambda g, n: g.random(n).tolist()),
    ("integers(0,10)", lambda g, n: g.integers(0, 10, size=n).tolist()),
    ("integers(-5,2**40)", lambda g, n: g.integers(-5, 2**40, size=n).tolist()),
    ("integers(0,2**32)", lambda g, n: g.integers(0, 2**32, size=n).tolist()),
    ("integers(-2**63,2**63-1)", lambda g, n: g.integers(-2**63, 2**63 - 1, size=n).tolist()),
    ("integers(-3,3,endpoint=True)", lambda g, n: g.integers(-3, 3, size=n, endpoint=True).tolist()),
    ("standard_normal", lambda g, n: g.standard_normal(n).tolist()),
    ("normal(2,3)", lambda g, n: g.normal(2, 3, size=n).tolist()),
    ("standard_exponential", lambda g, n: g.standard_exponential(n).tolist()),
    ("exponential(0.5)", lambda g, n: g.exponential(0.5, size=n).tolist()),
    ("geometric(0.2)", lambda g, n: g.geometric(0.2, size=n).tolist()),
    ("geometric(0.7)", lambda g, n: g.geometric(0.7, size=n).tolist()),
    ("geometric(0.001)", lambda g, n: g.geometric(0.001, size=n).tolist()),
    ("choice(10)", lambda g, n: g.choice(10, size=n).tolist()),
    ("choice(5,p=P5)", lambda g, n: g.choice(5, size=n, p=P5).tolist()),
    ("choice([x,y,z])", lambda g, n: g.choice(["x", "y", "z"], size=n).tolist()),
    ("choice(100,50,replace=False)",
     lambda g, n: repeat(lambda: g.choice(100, 50, replace=False).tolist(), n)),
    ("choice(20000,500,replace=False)",
     lambda g, n: repeat(lambda: g.choice(20000, 500, replace=False).tolist(), n)),
    ("choice(10,5,replace=False,p=P10)",
     lambda g, n: repeat(lambda: g.choice(10, 5, replace=False, p=P10).tolist(), n)),
    ("permutation(50)", lambda g, n: repeat(lambda: g.permutation(50).tolist(), n)),
    ("shuffle(list(range(20)))", shuffled_lists),
    ("mixed", mixed),
]


def text(v):
    if isinstance(v, float):
        return v.hex()
    return str(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=10_000)
    ap.add_argument("--seeds", default=",".join(str(s) for s in SEEDS))
    ap.add_argument("--header", action="store_true", help="first line: the NumPy version")
    ap.add_argument("--digests", metavar="PATH", help="also write one CRC-32 per block to PATH")
    args = ap.parse_args()
    out = sys.stdout
    digests = open(args.digests, "w") if args.digests else None
    if args.header:
        header = (f"# numpy {np.__version__}: python3 tools/numpy_rng/numpy_streams.py "
                  f"--draws {args.draws} --seeds {args.seeds}\n")
        out.write(header)
        if digests:
            digests.write(header)
    for seed in (int(s) for s in args.seeds.split(",")):
        for name, draw in CASES:
            g = np.random.default_rng(seed)
            values = draw(g, args.draws)
            assert len(values) == args.draws, (name, len(values))
            block = "".join(text(v) + "\n" for v in values)
            out.write(f"== seed={seed} case={name}\n{block}")
            if digests:
                data = block.encode()
                digests.write(f"seed={seed} case={name} draws={args.draws} "
                              f"bytes={len(data)} crc32={zlib.crc32(data):08x}\n")
    if digests:
        digests.close()


if __name__ == "__main__":
    main()
