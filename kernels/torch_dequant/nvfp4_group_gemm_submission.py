"""NVFP4 grouped GEMM for GPU MODE's nvfp4_group_gemm in plain torch: C_g = A_g·B_gᵀ per group.

The exact fallback and a starting point, not a fast kernel. Tuple (abc_tensors, sfasfb_tensors,
sfasfb_reordered_tensors, problem_sizes): per group (a, b, c) with a (m, k/2, 1), b (n, k/2, 1) fp4
e2m1 and c (m, n, 1) fp16; reference scales (sfa, sfb) (on the CPU, unused here) and the permuted
ones (index 2), one e4m3 scale per 16 k elements; problem_sizes (m, n, k, l). Returns the list of c.
Every dequantized value is exact in fp16 and the matmul accumulates in fp32. Imports only torch.
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


def gemm(a, b, sfa_permuted, sfb_permuted, c):
    dtype = torch.float16 if c.is_cuda else torch.float32
    a_values = dequantize(a, sfa_permuted, dtype)  # (l, m, k)
    b_values = dequantize(b, sfb_permuted, dtype)  # (l, n, k)
    reduced_precision = torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    try:
        product = torch.matmul(a_values, b_values.transpose(1, 2))  # (l, m, n)
    finally:
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = reduced_precision
    c.copy_(product.permute(1, 2, 0))
    return c


def custom_kernel(data):
    abc_tensors, _sfasfb_tensors, sfasfb_reordered_tensors, _problem_sizes = data
    return [gemm(a, b, sfa_permuted, sfb_permuted, c)
            for (a, b, c), (sfa_permuted, sfb_permuted) in zip(abc_tensors, sfasfb_reordered_tensors)]
