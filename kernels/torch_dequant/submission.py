"""NVFP4 block-scaled GEMM for GPU MODE's nvfp4_gemm in plain torch: dequantize, then one matmul.

Readable fallback and a template for the tuple's layouts, not a fast kernel:
  a (m, k/2, l), b (n, k/2, l): fp4 e2m1, two per byte, K-major, batch outermost in memory;
  sfa_permuted / sfb_permuted (32, 4, rest_mn, 4, rest_k, l): one e4m3 scale per 16 k elements in
  the block-scaling layout (each batch one contiguous run of 512-byte atoms of 128 rows x 4 k-blocks);
  c (m, n, l) fp16: C[:, :, i] = (A_i * sfa_i) @ (B_i * sfb_i).T
Every dequantized value (e2m1 x e4m3) is exact in fp16, and the matmul accumulates in fp32.
Self-contained: imports only torch, reads only the permuted scales (tuple indices 4 and 5).
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


def custom_kernel(data):
    a, b, _sfa_ref, _sfb_ref, sfa_permuted, sfb_permuted, c = data
    # fp16 operands are exact and run on tensor cores; the CPU path (tests) uses float32.
    dtype = torch.float16 if c.is_cuda else torch.float32
    a_values = dequantize(a, sfa_permuted, dtype)  # (l, m, k)
    b_values = dequantize(b, sfb_permuted, dtype)  # (l, n, k)
    # Keep every partial sum in fp32 (cuBLAS may otherwise reduce split-K partials in fp16).
    reduced_precision = torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    try:
        product = torch.matmul(a_values, b_values.transpose(1, 2))  # (l, m, n); B^T is a view
    finally:
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = reduced_precision
    c.copy_(product.permute(1, 2, 0))
    return c
