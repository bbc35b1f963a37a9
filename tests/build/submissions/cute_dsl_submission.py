# Test fixture (written for nvfp4ctl): the structure of public GPU MODE nvfp4_gemm submissions in the
# CuTe DSL (nvidia-cutlass-dsl): @cute.kernel + @cute.jit host function, operands passed with
# from_dlpack, one cute.compile on the first call cached per shape, then launches of the compiled
# function. This kernel only decodes the fp4 operand A with its scales (the GEMM itself is torch's),
# enough to exercise the compile path.
import cutlass
import cutlass.cute as cute
import torch
from cutlass.cute.runtime import from_dlpack

E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)
THREADS = 128


@cute.kernel
def decode_scale_kernel(codes: cute.Tensor, scales: cute.Tensor, out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    if i < cute.size(out):
        out[i] = codes[i] * scales[i // 16]


@cute.jit
def decode_scale(codes: cute.Tensor, scales: cute.Tensor, out: cute.Tensor):
    blocks = (cute.size(out) + THREADS - 1) // THREADS
    decode_scale_kernel(codes, scales, out).launch(grid=(blocks, 1, 1), block=(THREADS, 1, 1))


_compiled = {}


def _decode(packed, scales):
    nibbles = torch.stack((packed.view(torch.uint8) & 0xF, packed.view(torch.uint8) >> 4), dim=-1).flatten(-2)
    codes = torch.tensor(E2M1, device=packed.device)[nibbles.long()].contiguous().view(-1)
    scale_values = scales.to(torch.float32).contiguous().view(-1)
    out = torch.empty_like(codes)
    key = codes.numel()
    if key not in _compiled:
        _compiled[key] = cute.compile(decode_scale, from_dlpack(codes), from_dlpack(scale_values), from_dlpack(out))
    _compiled[key](from_dlpack(codes), from_dlpack(scale_values), from_dlpack(out))
    return out.view(nibbles.shape)


def custom_kernel(data):
    a, b, sfa_ref, sfb_ref, _sfa_permuted, _sfb_permuted, c = data
    for batch in range(c.shape[2]):
        a_values = _decode(a[:, :, batch], sfa_ref[:, :, batch])
        b_values = _decode(b[:, :, batch], sfb_ref[:, :, batch])
        c[:, :, batch] = (a_values @ b_values.T).to(c.dtype)
    return c
