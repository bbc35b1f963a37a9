# Test fixture (written for nvfp4ctl): the structure of public GPU MODE nvfp4_gemm submissions in the
# CuTe DSL (nvidia-cutlass-dsl): a block-scaled tiled MMA from the Blackwell helpers
# (kind::mxf4nvf4, e2m1 x e2m1, e4m3 scales per 16), smem layouts for A/B/SFA/SFB, TMEM for the
# accumulator and the scales, cute.gemm per K block; @cute.kernel + @cute.jit, one cute.compile on
# the first call (from_dlpack operands), cached. Kept to the MMA of one 128x128x256 tile on whatever
# shared memory holds -- the TMA loads and scale copies of a real submission are left out, and the
# answer comes from torch -- which is all `nvfp4ctl build` needs: the compile path and the op.
import cutlass
import cutlass.cute as cute
import cutlass.utils.blackwell_helpers as sm100_utils
import cutlass.utils.blockscaled_layout as blockscaled_utils
import torch
from cutlass.cute.nvgpu import OperandMajorMode, tcgen05
from cutlass.cute.runtime import from_dlpack
from cutlass.memory import SmemAllocator

SF_VEC = 16
MMA_TILER = (128, 128, 256)
TMEM_COLUMNS = 512
E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


@cute.kernel
def tile_mma_kernel(tiled_mma: cute.TiledMma, a_layout: cute.ComposedLayout, b_layout: cute.ComposedLayout,
                    sfa_layout: cute.Layout, sfb_layout: cute.Layout, out: cute.Tensor):
    warp = cute.arch.warp_idx()
    smem = SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float4E2M1FN, a_layout.outer, byte_alignment=1024, swizzle=a_layout.inner)
    sB = smem.allocate_tensor(cutlass.Float4E2M1FN, b_layout.outer, byte_alignment=1024, swizzle=b_layout.inner)
    tmem_holder = smem.allocate(cutlass.Int32, byte_alignment=4)
    if warp == 0:
        cute.arch.alloc_tmem(TMEM_COLUMNS, tmem_holder)
    cute.arch.sync_threads()
    acc_ptr = cute.arch.retrieve_tmem_ptr(cutlass.Float32, 16, tmem_holder)
    tCtAcc = cute.make_tensor(acc_ptr, tiled_mma.make_fragment_C(tiled_mma.partition_shape_C(MMA_TILER[:2])).layout)
    acc_cols = tcgen05.find_tmem_tensor_col_offset(tCtAcc)
    sfa_tmem = blockscaled_utils.make_tmem_layout_sfa(tiled_mma, MMA_TILER, SF_VEC,
                                                       cute.slice_(sfa_layout, (None, None, None, 0)))
    sfb_tmem = blockscaled_utils.make_tmem_layout_sfb(tiled_mma, MMA_TILER, SF_VEC,
                                                       cute.slice_(sfb_layout, (None, None, None, 0)))
    tCtSFA = cute.make_tensor(cute.recast_ptr(acc_ptr + acc_cols, dtype=cutlass.Float8E4M3FN), sfa_tmem)
    sfa_cols = tcgen05.find_tmem_tensor_col_offset(tCtSFA)
    tCtSFB = cute.make_tensor(cute.recast_ptr(acc_ptr + acc_cols + sfa_cols, dtype=cutlass.Float8E4M3FN), sfb_tmem)
    tCrA = tiled_mma.make_fragment_A(sA)
    tCrB = tiled_mma.make_fragment_B(sB)
    if warp == 0:
        tiled_mma.set(tcgen05.Field.ACCUMULATE, False)
        for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
            tiled_mma.set(tcgen05.Field.SFA, tCtSFA[(None, None, kb)].iterator)
            tiled_mma.set(tcgen05.Field.SFB, tCtSFB[(None, None, kb)].iterator)
            cute.gemm(tiled_mma, tCtAcc, tCrA[(None, None, kb, 0)], tCrB[(None, None, kb, 0)], tCtAcc)
            tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
    cute.arch.sync_threads()
    if warp == 0:
        cute.arch.dealloc_tmem(acc_ptr, TMEM_COLUMNS)


@cute.jit
def tile_mma(out: cute.Tensor):
    tiled_mma = sm100_utils.make_blockscaled_trivial_tiled_mma(
        cutlass.Float4E2M1FN, OperandMajorMode.K, OperandMajorMode.K, cutlass.Float8E4M3FN, SF_VEC,
        tcgen05.CtaGroup.ONE, MMA_TILER[:2])
    a_layout = sm100_utils.make_smem_layout_a(tiled_mma, MMA_TILER, cutlass.Float4E2M1FN, 1)
    b_layout = sm100_utils.make_smem_layout_b(tiled_mma, MMA_TILER, cutlass.Float4E2M1FN, 1)
    sfa_layout = blockscaled_utils.make_smem_layout_sfa(tiled_mma, MMA_TILER, SF_VEC, 1)
    sfb_layout = blockscaled_utils.make_smem_layout_sfb(tiled_mma, MMA_TILER, SF_VEC, 1)
    tile_mma_kernel(tiled_mma, a_layout, b_layout, sfa_layout, sfb_layout, out).launch(
        grid=(1, 1, 1), block=(128, 1, 1), smem=64 * 1024)


_compiled = {}


def _dequantize(packed, scales):
    codes = packed.view(torch.uint8)
    nibbles = torch.stack((codes & 0xF, codes >> 4), dim=-1).flatten(-2)
    values = torch.tensor(E2M1, device=packed.device)[nibbles.long()]
    return values * scales.to(torch.float32).repeat_interleave(16, dim=-1)


def custom_kernel(data):
    a, b, sfa_ref, sfb_ref, _sfa_permuted, _sfb_permuted, c = data
    scratch = torch.empty((128, 128), dtype=torch.float32, device=c.device)
    if "tile" not in _compiled:
        _compiled["tile"] = cute.compile(tile_mma, from_dlpack(scratch))
    _compiled["tile"](from_dlpack(scratch))
    for batch in range(c.shape[2]):
        c[:, :, batch] = (_dequantize(a[:, :, batch], sfa_ref[:, :, batch])
                          @ _dequantize(b[:, :, batch], sfb_ref[:, :, batch]).T).to(c.dtype)
    return c
