"""This GPU's own ceilings, measured once and cached per GPU name (`--recalibrate` measures again).

Compute: the best of a few fp16 cuBLAS matmuls (8192³). Memory: the best of a few device-to-device
copies of 1 GiB, counting read + write bytes. Both are what this card really reaches, not its
datasheet. The cache is one JSON file per GPU under $NVFP4CTL_CACHE (default ~/.cache/nvfp4ctl).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from nvfp4ctl.atomic_file import write_text_atomic
from nvfp4ctl.project import cache_root

# Where the fp16 matmul's rate is the one an NVFP4 kernel can reach: sm_90 has no fp4 MMA, so its
# kernels dequantize and run the fp16 tensor cores. sm_100's fp4 MMA runs several times faster than its
# fp16, so there a percentage of the fp16 ceiling would overstate a kernel, and its bound label mislead.
FP16_ROOFLINE_ARCHES = frozenset({"sm_90"})
MATMUL_SIZE = 8192
COPY_BYTES = 1 << 30
WARM_REPEATS, TIMED_REPEATS = 3, 10


@dataclass(frozen=True)
class Ceilings:
    gpu: str
    tflops: float  # fp16 dense matmul via cuBLAS, TFLOP/s
    tbps: float  # device copy, read + write, TB/s
    measured_at: str
    cached: bool = False

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @property
    def roofline_withheld(self) -> str | None:
        """Why no % of this GPU is given against these ceilings; None where the fp16 one is the roofline."""
        arch = arch_of(self.gpu)
        if arch in FP16_ROOFLINE_ARCHES:
            return None
        named = arch or "this GPU's arch (unknown)"
        return (f"no % of this GPU on {named}: its fp4 tensor cores outrun the {self.tflops:.0f} TFLOP/s fp16 cuBLAS"
                " ceiling measured, so a share of that ceiling would overstate the kernel")


def arch_of(gpu: str) -> str | None:
    """"sm_100" from the child's "NVIDIA B200 (sm_100)"; None where the name carries no arch."""
    found = re.search(r"\((sm_\d+)a?\)\s*$", gpu)
    return found.group(1) if found else None


def cache_file(gpu: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", gpu).strip("-").lower() or "unknown"
    return cache_root() / "calibration" / f"{slug}.json"


def load_cached(gpu: str) -> Ceilings | None:
    try:
        raw = json.loads(cache_file(gpu).read_text())
        return Ceilings(gpu=raw["gpu"], tflops=float(raw["tflops"]), tbps=float(raw["tbps"]),
                        measured_at=str(raw["measured_at"]), cached=True)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing or damaged: measure again


def store(ceilings: Ceilings) -> None:
    saved = {k: v for k, v in ceilings.to_dict().items() if k != "cached"}
    write_text_atomic(cache_file(ceilings.gpu), json.dumps(saved, indent=2))


def measure(gpu: str) -> Ceilings:
    """Runs on the GPU (child side); about a second."""
    import torch

    a = torch.randn(MATMUL_SIZE, MATMUL_SIZE, dtype=torch.float16, device="cuda")
    b = torch.randn(MATMUL_SIZE, MATMUL_SIZE, dtype=torch.float16, device="cuda")
    matmul_s = _best_time(lambda: torch.mm(a, b))
    src = torch.empty(COPY_BYTES, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    copy_s = _best_time(lambda: dst.copy_(src))
    del a, b, src, dst
    torch.cuda.empty_cache()
    return Ceilings(
        gpu=gpu,
        tflops=2 * MATMUL_SIZE**3 / matmul_s / 1e12,
        tbps=2 * COPY_BYTES / copy_s / 1e12,
        measured_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def _best_time(work: object) -> float:
    import torch

    for _ in range(WARM_REPEATS):
        work()  # type: ignore[operator]
    times = []
    for _ in range(TIMED_REPEATS):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        work()  # type: ignore[operator]
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end) * 1e-3)
    return min(times)


def ceilings_for(gpu: str, recalibrate: bool = False) -> Ceilings:
    cached = None if recalibrate else load_cached(gpu)
    if cached is not None:
        return cached
    fresh = measure(gpu)
    store(fresh)
    return fresh
