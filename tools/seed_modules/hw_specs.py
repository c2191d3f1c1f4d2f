"""Accelerator spec sheets for the roofline model of lecture 1 (used again in lecture 6).

Models a card by the three datasheet figures the roofline needs: peak dense bf16 FLOP/s,
HBM bandwidth, and memory size. Only `H100` is defined, because that is all the seed script
(05_spec_decode_on_hardware.py) imports.

Written from SPEC.md §2 alone, as an independent second implementation of the workspace's
Rust `hw_specs` crate (not translated from it).
"""


class Accelerator:
    """One accelerator's datasheet figures.

    name            -- a label, e.g. "H100 SXM"
    peak_flops      -- dense bf16 FLOP/s (no sparsity)
    hbm_bandwidth   -- HBM bytes per second
    memory_bytes    -- HBM capacity in bytes (decimal: 80 GB = 80e9 bytes)
    """

    def __init__(self, name, peak_flops, hbm_bandwidth, memory_bytes):
        self.name = name
        self.peak_flops = peak_flops
        self.hbm_bandwidth = hbm_bandwidth
        self.memory_bytes = memory_bytes

    def __repr__(self):
        return (f"Accelerator({self.name!r}, peak_flops={self.peak_flops:g}, "
                f"hbm_bandwidth={self.hbm_bandwidth:g}, memory_bytes={self.memory_bytes:g})")


# H100 SXM: 989 TFLOP/s dense bf16, 3.35 TB/s HBM3, 80 GB (decimal GB, as the seed says "80 GB").
# The memory is an exact integer so that max_batch can use integer arithmetic.
H100 = Accelerator("H100 SXM", peak_flops=989e12, hbm_bandwidth=3.35e12, memory_bytes=80_000_000_000)


if __name__ == "__main__":
    assert H100.memory_bytes == 80e9
    print(H100)
