"""NVFP4 dual GEMM for GPU MODE's nvfp4_dual_gemm in plain torch: C = silu(A·B1ᵀ) ⊙ (A·B2ᵀ).

The exact fallback and a starting point, not a fast kernel. Tuple (a, b1, b2, sfa_ref, sfb1_ref,
sfb2_ref, sfa_permuted, sfb1_permuted, sfb2_permuted, c): fp4 e2m1 operands (rows, k/2, l), two per
byte, K-major; e4m3 scales, one per 16 k elements, read here from the permuted tensors (indices 6-8);
c (m, n, l) fp16. Both products are kept in fp32 (as the leaderboard's `_scaled_mm(out_dtype=float32)`),
then silu and the product in fp32 and one rounding to fp16. Self-contained: imports only torch.
"""

import torch

# e2m1 code -> value (bit 3 sign, bits 2..1 exponent, bit 0 mantissa); code 8 is -0.
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)
SF_VEC = 16  # fp4 elements per scale
ATOM_ROWS = 128  # rows per 512-byte scale atom
ATOM_K = 4  # k-blocks per scale atom


def decode_fp4(packed, dtype):
    """(rows, k/2, l) packed e2m1 -> (l, rows, k) values; element 2i is the low nibble of byte i."""
    codes = packed.view(torch.uint8).permute(2, 0, 1)
    nibbles = torch.stack((codes & 0xF, codes >> 4), dim=-1).flatten(-2)
    table = torch.tensor(E2M1_VALUES, dtype=dtype, device=packed.device)
    return table[nibbles.long()]


def scale_offsets(rows, sf_k, device):
    """Byte offset of the scale of (row, k-block) inside one batch of the permuted layout."""
    row = torch.arange(rows, device=device).unsqueeze(1)
    k_block = torch.arange(sf_k, device=device).unsqueeze(0)
    k_atoms = (sf_k + ATOM_K - 1) // ATOM_K
    atom = (row // ATOM_ROWS) * k_atoms + k_block // ATOM_K
    return atom * 512 + (row % 32) * 16 + ((row // 32) % 4) * 4 + k_block % ATOM_K


def gather_scales(permuted, rows, sf_k, dtype):
    """(32, 4, rest_mn, 4, rest_k, l) permuted e4m3 scales -> (l, rows, sf_k) values."""
    batches = permuted.shape[5]
    # Undo the view's permutation to walk each batch's bytes in memory order (a view, no copy).
    per_batch = permuted.view(torch.uint8).permute(5, 2, 4, 0, 1, 3).reshape(batches, -1)
    codes = per_batch[:, scale_offsets(rows, sf_k, permuted.device)]
    return codes.view(torch.float8_e4m3fn).to(dtype)


def dequantize(packed, permuted_scales, dtype):
    """fp4 operand (rows, k/2, l) and its permuted scales -> (l, rows, k) values in `dtype`."""
    values = decode_fp4(packed, dtype)
    batches, rows, k = values.shape
    scales = gather_scales(permuted_scales, rows, k // SF_VEC, dtype)
    return (values.view(batches, rows, k // SF_VEC, SF_VEC) * scales.unsqueeze(-1)).view(batches, rows, k)


def product_fp32(a_values, b_values):
    """(l, m, k) x (l, n, k) -> (l, m, n) in fp32; TF32 off so every partial sum keeps 24 bits."""
    allow_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        return torch.matmul(a_values, b_values.transpose(1, 2))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allow_tf32


def custom_kernel(data):
    a, b1, b2, _sfa_ref, _sfb1_ref, _sfb2_ref, sfa_permuted, sfb1_permuted, sfb2_permuted, c = data
    a_values = dequantize(a, sfa_permuted, torch.float32)  # (l, m, k), exact
    first = product_fp32(a_values, dequantize(b1, sfb1_permuted, torch.float32))
    second = product_fp32(a_values, dequantize(b2, sfb2_permuted, torch.float32))
    result = torch.nn.functional.silu(first) * second
    c.copy_(result.permute(1, 2, 0))
    return c
