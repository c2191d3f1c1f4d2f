#!/usr/bin/env python3
"""Prints how CPython formats numbers, for py_port::format to be diffed against.

One line per check, tab-separated:

    f  <float.hex(x)>  <spec>  <format(x, spec)>      a float with a format spec
    i  <int>           <spec>  <format(n, spec)>      an int with a format spec
    r  <float.hex(x)>          <repr(x)>
    h  <float.hex(x)>          <float.hex(x)>

A spec that Python rejects prints `!error` as its result. Only the part of the format-spec
mini-language that py_port implements is exercised (no '#', 'z', 'n', 'x', ...).

    python3 py_format.py            # the full set (about 60,000 lines)
    python3 py_format.py --golden   # the small committed subset, with a header line
"""
import math
import random
import struct
import sys

FLOAT_SPECS = [
    "", ".0f", ".1f", ".2f", ".3f", ".6f", ".10f", ".17f", ".30f", "f", "F", ".2F",
    ".0e", ".1e", ".2e", ".3e", "e", ".10e", ".16e", "E", ".3E",
    ".0g", ".1g", ".2g", ".3g", ".4g", "g", ".10g", ".12g", ".15g", ".16g", ".17g", ".20g",
    "G", ".3G",
    ".0", ".1", ".2", ".3", ".6", ".12", ".17",
    "%", ".0%", ".1%", ".2%", ".3%",
    ",", "_", ",.2f", "_.3f", ",.0f", ",.1%", ",.3e", ",g", ",.3", ",.12",
    "10", ">10.2f", "<10.2f", "^10.2f", "=10.2f", "*^15.3e", "_<12,.1f", "\u00e9>12.2%",
    "0>8.1f", "x=+12.3f", "<", "^", "=",
    "010.2f", "012,.2f", "08", "08,", "020,.3", "+010.3f", "-08.2e", " 010.1%", "<010.2f",
    "^010.1f", "016_.4g",
    "+.2f", " .2f", "-.2f", "+", " ", "+,", "+g", " e", "+.0%",
    "15", "25.17g", "30,.10f", "40_",
    # Python rejects these.
    ".f", ",_", "_,", ",,", "d", "10.2q", ".2fd", "..2f", "10.2.f",
]

INT_SPECS = [
    "", "d", ",", "_", ",d", "_d", "+d", " d", "+,", "08d", "08,", "010_", "^10", "<10,",
    "*>12,d", "=+10", "0=10", "x^9d", "-d",
    ".2f", ".0f", ",.2f", ".1%", "e", ".3e", "g", ".3g", "%", "f", ".20g", "+.1e",
    # Python rejects these.
    ".2", ".0d", "10.3", ",_", "q",
]

SPECIAL_FLOATS = [
    0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
    2.225073858507201e-308, 1.7976931348623157e308, -1.7976931348623157e308,
    1e16, 1e15, 9999999999999998.0, 1e17, 2.0**53, 2.0**63, 2.0**64, 1e22, 1e23,
    1e-5, 1e-4, 0.0001, 0.00001234, 1.5e300, 1e-300,
    0.5, 1.5, 2.5, 3.5, -0.5, -2.5, 0.125, 0.375, 0.625, 2.675, 1.005, 0.145, 0.155, 0.285,
    0.0005, 0.0015, 9.995, 99.95, 999.5, 9999.5, 0.9999995, 0.99999999999, 9.999999999999999,
    123456789.0, 1234.5, 1234567.891, -1234567.891, 100.0, 10.0, 1.0, 2.0, -1.0, 7.0,
    0.1, 0.2, 0.3, 0.1 + 0.2, 1 / 3, 2 / 3, math.pi, math.e, 6.0221e23, 1.380649e-23,
    0.015, 0.025, 0.035, 0.045, 0.055, 0.065, 0.075, 0.085, 0.095,
    123.456, 0.7739560485559633, 1e100, 12345678901234567890.0,
]

SPECIAL_INTS = [
    0, 1, -1, 7, 999, 1000, -1000, 999999, 1000000, 1234567, -1234567, 2**31, 2**53,
    2**53 + 1, 2**53 + 3, 2**62 + 1, 2**63 - 1, -2**63, -2**63 + 1, 10**18, -10**15,
]


def random_floats(rnd, n):
    out = []
    for k in range(n):
        kind = k % 5
        if kind == 0:  # a tie or near-tie: a dyadic rational with few bits
            x = rnd.randint(-10**6, 10**6) / 2 ** rnd.randint(1, 14)
        elif kind == 1:  # a short decimal, as lecture figures are
            x = round(rnd.uniform(-1e6, 1e6), rnd.randint(0, 6))
        elif kind == 2:  # any magnitude
            x = rnd.uniform(1, 10) * 10.0 ** rnd.randint(-30, 30) * rnd.choice([1, -1])
        elif kind == 3:  # a fraction, as percentages are
            x = round(rnd.random(), rnd.randint(1, 5))
        else:  # any finite bit pattern
            while True:
                x = struct.unpack("<d", struct.pack("<Q", rnd.getrandbits(64)))[0]
                if math.isfinite(x):
                    break
        out.append(x)
    return out


def random_ints(rnd, n):
    return [rnd.choice([1, -1]) * rnd.randint(0, 10 ** rnd.randint(1, 18)) for _ in range(n)]


def fmt(x, spec):
    try:
        return format(x, spec)
    except ValueError:
        return "!error"


def lines(n_random_floats, n_random_ints, n_bit_patterns):
    rnd = random.Random(349)
    floats = SPECIAL_FLOATS + random_floats(rnd, n_random_floats)
    ints = SPECIAL_INTS + random_ints(rnd, n_random_ints)
    for x in floats:
        for spec in FLOAT_SPECS:
            yield f"f\t{x.hex()}\t{spec}\t{fmt(x, spec)}"
    for n in ints:
        for spec in INT_SPECS:
            yield f"i\t{n}\t{spec}\t{fmt(n, spec)}"
    for x in floats + random_floats(rnd, n_bit_patterns):
        yield f"r\t{x.hex()}\t\t{x!r}"
        yield f"h\t{x.hex()}\t\t{x.hex()}"


def main():
    sys.stdout.reconfigure(encoding="utf-8", newline="\n")
    if "--golden" in sys.argv[1:]:
        # Every line for the special values with a few specs, then a random sample of the rest.
        print(f"# Python {sys.version.split()[0]}: python3 tools/py_format/py_format.py --golden")
        everything = list(lines(300, 100, 0))
        pick = random.Random(1).sample(range(len(everything)), 450)
        specials = {x.hex() for x in SPECIAL_FLOATS[:60]}
        named = [i for i, l in enumerate(everything)
                 if l.split("\t")[2] in (".2f", ".0%", "", ",", ".3g", "010,.1f")
                 and l.split("\t")[1] in specials]
        for i in sorted(set(pick) | set(named)):
            print(everything[i])
    else:
        for line in lines(600, 300, 5000):
            print(line)


if __name__ == "__main__":
    main()
