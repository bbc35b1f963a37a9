# Test fixture (written for nvfp4ctl): the entry of a CuTe DSL nvfp4_group_gemm submission --
# custom_kernel unpacks the grouped tuple (abc_tensors, sfasfb_tensors, sfasfb_reordered_tensors,
# problem_sizes) and compiles the block-scaled tile MMA of cute_dsl_submission.py on the first call;
# the answer per group comes from torch. Enough for `nvfp4ctl build --task <group task>`.
import cutlass.cute as cute
import torch
from cute_dsl_submission import _dequantize, tile_mma
from cutlass.cute.runtime import from_dlpack

_compiled = {}


def custom_kernel(data):
    abc_tensors, sfasfb_tensors, _sfasfb_reordered_tensors, problem_sizes = data
    scratch = torch.empty((128, 128), dtype=torch.float32, device=abc_tensors[0][2].device)
    if "tile" not in _compiled:
        _compiled["tile"] = cute.compile(tile_mma, from_dlpack(scratch))
    _compiled["tile"](from_dlpack(scratch))
    for (a, b, c), (sfa, sfb), (_m, _n, _k, _l) in zip(abc_tensors, sfasfb_tensors, problem_sizes):
        c[:, :, 0] = (_dequantize(a[:, :, 0], sfa[:, :, 0]) @ _dequantize(b[:, :, 0], sfb[:, :, 0]).T).to(c.dtype)
    return [c for _a, _b, c in abc_tensors]
