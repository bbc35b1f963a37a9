"""The exact reference: decode, scale, sum in float64, round once to fp16. Same answer on every arch.

Why float64 is exact here: a dequantized value (e2m1 x e4m3) has at most 6 significant bits and is
a multiple of 2**-10, so a product of two is a multiple of 2**-20 with at most 12 bits. While every
partial sum stays below 2**32 in magnitude (K * max|product| < 2**32; fp16 itself overflows at
2**16) it is a multiple of 2**-20 needing < 53 bits: every partial sum of a float64 matmul is exact
whatever the summation order (CPU or any GPU), and the one rounding to fp16 at the end is done
correctly (to nearest, ties to even) by `round_to_fp16`. Hence no TF32 or accumulation-order concerns.
"""

from __future__ import annotations

import torch

from nvfp4ctl.problems.nvfp4_gemm.formats import E2M1_VALUES, E4M3_VALUES, SF_VEC

FP16_MIN_NORMAL_EXPONENT = -14
FP16_MAX_EXPONENT = 15
FP16_MANTISSA_BITS = 10
K_CHUNK_ELEMENTS = 1 << 25  # (m + n) * k_chunk float64 operands held at once: 256 MiB


def _byte_codes(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.view(torch.uint8).to(torch.int64)


def decode_e2m1(packed: torch.Tensor) -> torch.Tensor:
    """Packed fp4 (uint8 or float4_e2m1fn_x2) (..., K/2) -> float32 (..., K).

    Element 2i is the low nibble of byte i, element 2i+1 the high nibble: torch's
    float4_e2m1fn_x2 (c10/util/Float4_e2m1fn_x2.h: "val1 : val0" = bits 7654 : 3210) and the OCP MX
    spec, which cuBLAS and the tcgen05 instructions read the same way.
    """
    codes = _byte_codes(packed)
    nibbles = torch.stack((codes & 0xF, codes >> 4), dim=-1).flatten(-2)
    table = torch.tensor(E2M1_VALUES, dtype=torch.float32, device=packed.device)
    return table[nibbles]


def decode_e4m3(tensor: torch.Tensor) -> torch.Tensor:
    """e4m3fn (float8_e4m3fn or its uint8 codes) -> float32, exact: ±0, subnormals, 448, NaN for 0x7f/0xff."""
    table = torch.tensor(E4M3_VALUES, dtype=torch.float32, device=tensor.device)
    return table[_byte_codes(tensor)]


def dequantize(packed: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """fp4 (rows, kc/2) with e4m3 scales (rows, kc/16) -> float64 (rows, kc); every product is exact."""
    values = decode_e2m1(packed).to(torch.float64)
    rows, kc = values.shape
    block_scales = decode_e4m3(scales).to(torch.float64).unsqueeze(-1)
    return (values.view(rows, kc // SF_VEC, SF_VEC) * block_scales).view(rows, kc)


def _power_of_two(exponent: torch.Tensor) -> torch.Tensor:
    """2.0 ** exponent as float64, built from the exponent bits (exact on every device, unlike pow)."""
    return ((exponent.to(torch.int64) + 1023) << 52).view(torch.float64)


def round_to_fp16(x: torch.Tensor) -> torch.Tensor:
    """float64 -> fp16 rounded once, to nearest, ties to even (a float32 detour could round twice)."""
    _, exponent = torch.frexp(x)  # |x| = mantissa * 2**exponent with 0.5 <= mantissa < 1
    # fp16's spacing at x: 2**-24 for subnormals; capped at 2**6 (|x| >= 2**16 must become inf anyway)
    binade = (exponent - 1).clamp(min=FP16_MIN_NORMAL_EXPONENT, max=FP16_MAX_EXPONENT + 1)
    ulp = _power_of_two(binade - FP16_MANTISSA_BITS)
    # x / ulp and the product are exact (powers of two); torch.round rounds half to even. The result
    # is an fp16 value (or >= 65536, which becomes inf), so the final cast does no rounding.
    return (torch.round(x / ulp) * ulp).to(torch.float16)


def _k_chunk(m: int, n: int, k: int) -> int:
    chunk = (K_CHUNK_ELEMENTS // (m + n)) // SF_VEC * SF_VEC
    return min(k, max(SF_VEC, chunk))


def reference_gemm(
    a: torch.Tensor,
    b: torch.Tensor,
    sfa_ref: torch.Tensor,
    sfb_ref: torch.Tensor,
    k_chunk: int | None = None,
) -> torch.Tensor:
    """C[:, :, i] = (A_i * sfa_i) @ (B_i * sfb_i).T for every batch: a new fp16 tensor (m, n, l).

    a (m, k/2, l), b (n, k/2, l) packed fp4; sfa_ref (m, k/16, l), sfb_ref (n, k/16, l) e4m3.
    The output has c's layout (batch outermost). K is processed in chunks to bound memory.
    """
    m, half_k, l = a.shape
    n = b.shape[0]
    k = 2 * half_k
    chunk = k_chunk if k_chunk is not None else _k_chunk(m, n, k)
    if chunk % SF_VEC:
        raise ValueError(f"k_chunk must be a multiple of {SF_VEC}, got {chunk}")
    out = torch.empty((l, m, n), dtype=torch.float16, device=a.device)
    for batch in range(l):
        acc = torch.zeros((m, n), dtype=torch.float64, device=a.device)
        for k0 in range(0, k, chunk):
            k1 = min(k, k0 + chunk)
            a_values = dequantize(a[:, k0 // 2 : k1 // 2, batch], sfa_ref[:, k0 // SF_VEC : k1 // SF_VEC, batch])
            b_values = dequantize(b[:, k0 // 2 : k1 // 2, batch], sfb_ref[:, k0 // SF_VEC : k1 // SF_VEC, batch])
            acc += a_values @ b_values.T
        out[batch] = round_to_fp16(acc)
    return out.permute(1, 2, 0)
