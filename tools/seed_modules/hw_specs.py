"""Accelerator spec sheets (SPEC.md §2), recreated for the seed scripts: only what lecture 6's
script 05 imports. Written from SPEC.md as a second implementation of the Rust `hw_specs`."""


class Accelerator:
    """A card's datasheet figures: dense bf16 FLOP/s, HBM bytes/s, memory bytes."""

    def __init__(self, name, peak_flops_bf16, hbm_bandwidth, memory_bytes):
        self.name = name
        self.peak_flops_bf16 = peak_flops_bf16
        self.hbm_bandwidth = hbm_bandwidth
        self.memory_bytes = memory_bytes


# H100 SXM: 989 TFLOP/s dense bf16, 3.35 TB/s HBM3, 80 GB (decimal, as the script says "80 GB").
H100 = Accelerator("H100", 989e12, 3.35e12, 80e9)
