"""NVFP4 GEMV for GPU MODE's nvfp4_gemv in plain torch: c[:, 0, l] = A_l · b_l.

The exact fallback and a starting point, not a fast kernel. Tuple (a, b, sfa_ref, sfb_ref,
sfa_permuted, sfb_permuted, c): a (m, k/2, l) fp4 e2m1, b padded to (128, k/2, l) of which row 0
is the vector; e4m3 scales per 16 k elements, read from the permuted tensors (indices 4, 5);
c (m, 1, l) fp16. The dot products run in fp32. Self-contained: imports only torch.
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
    a_values = dequantize(a, sfa_permuted, torch.float32)  # (l, m, k)
    b_values = dequantize(b, sfb_permuted, torch.float32)[:, :1, :]  # (l, 1, k): row 0 of the padded b
    allow_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        product = torch.matmul(a_values, b_values.transpose(1, 2))  # (l, m, 1)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allow_tf32
    c.copy_(product.permute(1, 2, 0))
    return c
