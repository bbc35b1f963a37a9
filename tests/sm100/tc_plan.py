"""The tcgen05 kernel's data-path plan, as the kernel itself computes it.

tests/sm100/host/sm100_tc_plan.cu includes kernels/sm100/nvfp4_gemm_sm100_tc.cu and prints, from the
kernel's own constexpr functions, its tile config, instruction descriptor, per-stage/per-K-step
shared-memory descriptors, TMEM columns, TMA boxes and launch plan (CTAs, segments, every stage load).
This module builds that program once into the nvfp4ctl cache (a few seconds) and returns the JSON as
a `TcPlan`; the UMMA-model test and the pipeline model read it, so there is one source of truth.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from nvfp4ctl.build import cache, toolchain
from nvfp4ctl.errors import FailuresFound
from nvfp4ctl.project import REPO_DIR
from nvfp4ctl.umma.host_proof import _run, host_binary

KERNEL = REPO_DIR / "kernels" / "sm100" / "nvfp4_gemm_sm100_tc.cu"
PRINTER = REPO_DIR / "tests" / "sm100" / "host" / "sm100_tc_plan.cu"
COMMON = REPO_DIR / "kernels" / "common"
FLAGS = ("-gencode=arch=compute_100a,code=sm_100a", "-O1", "-std=c++17", "--expt-relaxed-constexpr")
RUN_TIMEOUT_S = 60.0
B200_SMS = 148



@dataclass(frozen=True)
class StageLoad:
    stage: int
    x: int  # byte offset along K of the TMA box (A and B alike)
    a_row: int  # first row of the A box in the batch-stacked (l*m, k/2) operand
    b_row: int
    sfa_offset: int  # byte offset of the 2 KB scale run of A (bulk copy source)
    sfb_offset: int


@dataclass(frozen=True)
class Segment:
    tile: int
    batch: int
    m_block: int
    n_block: int
    m_sub: int  # which 64-row half of its 128-row scale chunk the A tile is (0 for 128-row tiles)
    k_begin: int
    k_end: int
    owner: bool
    reduce: bool
    first_contributor: int
    loads: tuple[StageLoad, ...]


@dataclass(frozen=True)
class TcPlan:
    raw: dict[str, Any]

    @property
    def config(self) -> dict[str, int]:
        return self.raw["config"]

    @property
    def config_id(self) -> int:
        return int(self.raw["config_id"])

    @property
    def tma(self) -> dict[str, dict[str, Any]]:
        return self.raw["tma"]

    @property
    def idesc(self) -> int:
        return int(self.raw["idesc"])

    @property
    def accumulators(self) -> list[int]:
        return [int(a) for a in self.raw["accumulators"]]

    @property
    def stages(self) -> list[dict[str, Any]]:
        return self.raw["stages"]

    @property
    def ctas(self) -> int:
        return int(self.raw["plan"]["ctas"])

    @property
    def tiles(self) -> int:
        return int(self.raw["plan"]["tiles"])

    @property
    def k_tiles(self) -> int:
        return int(self.raw["plan"]["k_tiles"])

    def segments(self, cta: int) -> list[Segment]:
        out = []
        for s in self.raw["ctas"][cta]["segments"]:
            loads = tuple(StageLoad(*row) for row in s.get("loads", []))
            out.append(Segment(s["tile"], s["batch"], s["m_block"], s["n_block"], s["m_sub"], s["k_begin"],
                               s["k_end"], s["owner"], s["reduce"], s["first_contributor"], loads))
        return out


def _key() -> str:
    digest = hashlib.sha256()
    for path in (PRINTER, KERNEL, *sorted(COMMON.glob("*.cuh")), *sorted(COMMON.glob("*.h"))):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    digest.update(" ".join(FLAGS).encode())
    digest.update(toolchain.nvcc_version().encode())
    return digest.hexdigest()[:16]


def printer_binary() -> Path:
    """The plan printer, built on first use into the nvfp4ctl cache (locked, landed atomically)."""
    return host_binary(cache.cache_root() / "sm100-tc-plan" / _key(), "sm100_tc_plan",
                       [*FLAGS, f"-I{COMMON}", str(PRINTER)], "the sm100_tc plan printer")


@lru_cache(maxsize=64)
def load_plan(m: int, n: int, k: int, l: int = 1, sms: int = B200_SMS, loads: bool = False) -> TcPlan:
    """The kernel's plan for one shape on a GPU with `sms` SMs (with every stage load if asked)."""
    args = [str(v) for v in (m, n, k, l, sms)] + (["loads"] if loads else [])
    done = _run([str(printer_binary()), *args], RUN_TIMEOUT_S)
    if done.returncode != 0:
        raise FailuresFound(f"sm100_tc_plan {' '.join(args)} failed ({done.returncode}): {done.stdout[-300:]}")
    return TcPlan(json.loads(done.stdout))
