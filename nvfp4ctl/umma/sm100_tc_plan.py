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
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from nvfp4ctl.build import cache, toolchain
from nvfp4ctl.errors import FailuresFound, UsageError
from nvfp4ctl.project import REPO_DIR

KERNEL = REPO_DIR / "kernels" / "sm100" / "nvfp4_gemm_sm100_tc.cu"
PRINTER = REPO_DIR / "tests" / "sm100" / "host" / "sm100_tc_plan.cu"
COMMON = REPO_DIR / "kernels" / "common"
FLAGS = ("-gencode=arch=compute_100a,code=sm_100a", "-O1", "-std=c++17", "--expt-relaxed-constexpr")
COMPILE_TIMEOUT_S = 300.0
RUN_TIMEOUT_S = 60.0
B200_SMS = 148

LOAD_FIELDS = ("stage", "x", "a_row", "b_row", "sfa_offset", "sfb_offset")


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
    entry = cache.cache_root() / "sm100-tc-plan" / _key()
    binary = entry / "sm100_tc_plan"
    if binary.is_file():
        return binary
    with cache.locked(entry):
        if binary.is_file():
            return binary
        with cache.staging(entry) as folder:
            command = [str(toolchain.nvcc_path()), *FLAGS, f"-I{COMMON}", str(PRINTER), "-o", str(folder / binary.name)]
            done = _run(command, COMPILE_TIMEOUT_S)
            if done.returncode != 0:
                errors = [line for line in done.stdout.splitlines() if "error" in line]
                raise FailuresFound(f"the sm100_tc plan printer did not compile: {(errors or ['see nvcc output'])[0]}")
            entry.parent.mkdir(parents=True, exist_ok=True)
            cache.land(folder, entry)
    return binary


def _run(command: list[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UsageError(f"could not run {Path(command[0]).name}: {error}") from error


@lru_cache(maxsize=64)
def load_plan(m: int, n: int, k: int, l: int = 1, sms: int = B200_SMS, loads: bool = False) -> TcPlan:
    """The kernel's plan for one shape on a GPU with `sms` SMs (with every stage load if asked)."""
    args = [str(v) for v in (m, n, k, l, sms)] + (["loads"] if loads else [])
    done = _run([str(printer_binary()), *args], RUN_TIMEOUT_S)
    if done.returncode != 0:
        raise FailuresFound(f"sm100_tc_plan {' '.join(args)} failed ({done.returncode}): {done.stdout[-300:]}")
    return TcPlan(json.loads(done.stdout))
