"""A deliberately wrong nvfp4_gemm submission: the torch fallback with A's scale rows 0 and 33 swapped.

The kind of bug a wrong row index in the scale layout makes: only output rows 0 and 33 go wrong.
"""

import importlib.util
from pathlib import Path

import torch

_FALLBACK = Path(__file__).resolve().parents[3] / "kernels" / "torch_dequant" / "submission.py"
_spec = importlib.util.spec_from_file_location("torch_dequant_for_swapped_rows", _FALLBACK)
fallback = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fallback)


def custom_kernel(data):
    a, b, _sfa_ref, _sfb_ref, sfa_permuted, sfb_permuted, c = data
    dtype = torch.float16 if c.is_cuda else torch.float32
    a_codes = fallback.decode_fp4(a, dtype)
    batches, rows, k = a_codes.shape
    a_scales = fallback.gather_scales(sfa_permuted, rows, k // 16, dtype)
    a_scales[:, [0, 33]] = a_scales[:, [33, 0]]  # the bug
    a_values = (a_codes.view(batches, rows, k // 16, 16) * a_scales.unsqueeze(-1)).view(batches, rows, k)
    b_values = fallback.dequantize(b, sfb_permuted, dtype)
    c.copy_(torch.matmul(a_values.float(), b_values.float().transpose(1, 2)).permute(1, 2, 0))
    return c
