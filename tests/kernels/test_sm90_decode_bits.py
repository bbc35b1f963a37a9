"""Host-side proof of the sm_90a kernel's e4m3-placement decode (kernels/common/sm90_nvfp4_decode.cuh).

decode_e2m1x8_e4m3 builds e4m3 bytes from packed e2m1 nibbles with two shifts and two lop3 and lets
cvt.rn.f16x2.e4m3x2 convert them. The same bit operations in Python, read through the exact format
decoders, must give every nibble's e2m1 value times 2^-6, in the pairs the kernel's K order expects
(h02, h13, h46, h57), for every word; and every product with a finite e4m3 scale must stay exact in
fp16, so the epilogue's 2^12 restores the exact GEMM.
"""

from __future__ import annotations

import math
import random

import pytest

from nvfp4ctl.problems.nvfp4_gemm.formats import E2M1_VALUES, E4M3_MAX_CODE, E4M3_VALUES

MAGNITUDE_BITS = 0x1C1C1C1C
MASK32 = 0xFFFFFFFF


def select_bits(in_mask: int, outside_mask: int, mask: int) -> int:
    """lop3 0xE4: (a & c) | (b & ~c)."""
    return ((in_mask & mask) | (outside_mask & ~mask)) & MASK32


def decode_word(x: int) -> dict[str, tuple[float, float]]:
    """The kernel's bit operations on one 32-bit word, each e4m3 byte read exactly."""
    signs = x & 0x88888888
    even = select_bits((x << 2) & MASK32, (signs << 4) & MASK32, MAGNITUDE_BITS)
    odd = select_bits(x >> 2, signs, MAGNITUDE_BITS)

    def byte(word: int, i: int) -> float:
        return E4M3_VALUES[(word >> (8 * i)) & 0xFF]

    # cvt.rn.f16x2.e4m3x2 of a 16-bit half: low byte -> low fp16, high byte -> high fp16
    return {"h02": (byte(even, 0), byte(even, 1)), "h46": (byte(even, 2), byte(even, 3)),
            "h13": (byte(odd, 0), byte(odd, 1)), "h57": (byte(odd, 2), byte(odd, 3))}


def nibble_value(x: int, i: int) -> float:
    return E2M1_VALUES[(x >> (4 * i)) & 0xF]


PAIRS = {"h02": (0, 2), "h13": (1, 3), "h46": (4, 6), "h57": (5, 7)}


def check_word(x: int) -> None:
    got = decode_word(x)
    for name, (lo, hi) in PAIRS.items():
        want = (math.ldexp(nibble_value(x, lo), -6), math.ldexp(nibble_value(x, hi), -6))
        assert got[name] == want, f"word {x:#010x} {name}: got {got[name]}, want {want}"


@pytest.mark.parametrize("position", range(4))
def test_every_byte_value_in_every_position(position: int) -> None:
    for byte in range(256):
        check_word(byte << (8 * position))
        check_word((byte << (8 * position)) | (0x5A3C96E1 & ~(0xFF << (8 * position)) & MASK32))


def test_random_words() -> None:
    rng = random.Random(1234)
    for _ in range(20000):
        check_word(rng.getrandbits(32))


def fp16_exact(value: float) -> bool:
    """Whether `value` is a finite fp16 number (normal or subnormal)."""
    if value == 0:
        return True
    mantissa, exponent = math.frexp(abs(value))  # value = mantissa * 2**exponent, mantissa in [0.5, 1)
    if abs(value) > 65504:
        return False
    lowest_bit = max(exponent - 11, -24)  # fp16: 11 significant bits, subnormal step 2^-24
    return math.ldexp(mantissa, exponent - lowest_bit).is_integer()


def test_scaled_values_stay_exact_in_fp16() -> None:
    for code in range(16):
        for scale_code in range(E4M3_MAX_CODE + 1):
            value = math.ldexp(E2M1_VALUES[code], -6) * E4M3_VALUES[scale_code]
            assert fp16_exact(value), (code, scale_code, value)
