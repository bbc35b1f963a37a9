"""The two NVFP4 number formats, decoded exactly from their bit fields (no float rounding anywhere).

e2m1 (fp4): sign, 2 exponent bits (bias 1), 1 mantissa bit; no inf/NaN. Magnitudes 0, .5, 1, 1.5, 2, 3, 4, 6.
e4m3 (fp8, "fn"): sign, 4 exponent bits (bias 7), 3 mantissa bits; subnormals m * 2**-9; no inf;
0x7f and 0xff are NaN; largest finite 448. NVFP4 scales are unsigned (UE4M3): codes 0x00..0x7e.
"""

from __future__ import annotations

import math

SF_VEC = 16  # fp4 elements that share one e4m3 scale (along K)
E2M1_MAX = 6.0
E4M3_MAX = 448.0
E4M3_MAX_CODE = 0x7E  # the largest finite positive scale code; 0x7f is NaN
FP16_MAX = 65504.0


def e2m1_value(code: int) -> float:
    """Value of a 4-bit e2m1 code."""
    sign = -1.0 if code & 0x8 else 1.0
    exponent = (code >> 1) & 0x3
    mantissa = code & 0x1
    if exponent == 0:  # subnormal: 0 or 0.5
        return sign * mantissa * 0.5
    return sign * math.ldexp(1.0 + mantissa / 2.0, exponent - 1)


def e4m3_value(code: int) -> float:
    """Value of an 8-bit e4m3fn code (NaN for 0x7f / 0xff)."""
    sign = -1.0 if code & 0x80 else 1.0
    exponent = (code >> 3) & 0xF
    mantissa = code & 0x7
    if exponent == 0xF and mantissa == 0x7:
        return math.nan
    if exponent == 0:  # subnormal: mantissa * 2**-9
        return sign * math.ldexp(mantissa, -9)
    return sign * math.ldexp(1.0 + mantissa / 8.0, exponent - 7)


E2M1_VALUES: tuple[float, ...] = tuple(e2m1_value(code) for code in range(16))
E4M3_VALUES: tuple[float, ...] = tuple(e4m3_value(code) for code in range(256))
