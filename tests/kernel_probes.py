"""Kernel fixtures made from tests/build/fixtures/hgmma_probe.cu (C = 0, `arch=sm_90a`, one wgmma in a kernel
never launched) by swapping its MMA kernel, so that each probe differs from it only where it means to."""

from __future__ import annotations

from pathlib import Path

HGMMA_PROBE = Path(__file__).parent / "build" / "fixtures" / "hgmma_probe.cu"
# One m16n8k16 fp16 mma.sync with fp32 accumulation (HMMA.16816.F32, a tensor-core op of every arch since sm_80,
# narrower than wgmma or tcgen05), in a kernel never launched; the fragments come from the caller
MMA_PROBE = """__global__ void mma_probe(float* out, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                          unsigned b1) {
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9},"
               " {%0, %1, %2, %3};\\n"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  out[threadIdx.x] = d0 + d1 + d2 + d3;
}

"""


def wgmma_kernel() -> tuple[str, int, int]:
    """hgmma_probe.cu's text, and where its wgmma kernel starts and ends."""
    text = HGMMA_PROBE.read_text()
    return text, text.index("// One m64n8k16"), text.index("const char*")


def mma_sync_probe(folder: Path) -> Path:
    """folder/mma_sync_probe.cu: hgmma_probe.cu with its wgmma kernel swapped for an mma.sync one."""
    text, start, end = wgmma_kernel()
    folder.mkdir(parents=True, exist_ok=True)
    probe = folder / "mma_sync_probe.cu"
    probe.write_text(text[:start] + MMA_PROBE + text[end:])
    return probe
