"""The sm_100a kernel's dispatch configs and, computed from each config alone, the UMMA descriptor
fields and TMEM columns the kernel must use.

The table is read from the kernel source itself (its `ConfigById<N> : GemmConfig<M, N, K>` lines),
so `dump --umma` always describes the file that gets built. The expected values are derived here
from the tile shape and the operand formats, independently of CuTe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from nvfp4ctl.errors import UsageError, os_reason
from nvfp4ctl.not_text import utf8_text
from nvfp4ctl.project import byo_kernel_doc, kernels_dir, shipped
from nvfp4ctl.umma import descriptors as d

SCALE_VEC = 16  # one e4m3 scale per 16 K-elements (kind::mxf4nvf4 block16)
UMMA_K = 64  # K of one tcgen05.mma kind::mxf4nvf4 (dense)
FP4_BITS = 4
SWIZZLE_BYTES = 128  # K-major rows of a 256-deep fp4 tile are 128 bytes: the 128-byte swizzle atom
CORE_ROWS = 8  # a swizzle atom spans 8 rows
SF_ROWS_PER_BLOCK = 128  # scale factors travel in blocks of 128 rows x 4 k-blocks (32-bit TMEM words)

_CONFIG_RE = re.compile(
    r"struct\s+ConfigById<(?P<id>\d+)>\s*:\s*GemmConfig<(?P<m>\d+),\s*(?P<n>\d+),\s*(?P<k>\d+)>\s*\{"
    r"(?P<body>.*?)\};",
    re.DOTALL,
)
_STRING_RE = r'static constexpr const char\* {}\s*=\s*"([^"]*)"'


KERNEL_FILE = Path("sm100") / "nvfp4_gemm_sm100.cu"


def default_kernel() -> Path:
    """The CUTLASS kernel of your kernels/ folder when you have one, else nvfp4ctl's."""
    return kernels_dir() / KERNEL_FILE


def shipped_kernel() -> Path:
    """nvfp4ctl's own CUTLASS kernel (`--kernel default`), whatever kernels/ folder you are in."""
    return shipped("kernels") / KERNEL_FILE


@dataclass(frozen=True)
class KernelConfig:
    id: int
    name: str
    use: str  # which shapes the dispatch sends here
    block_m: int
    block_n: int
    block_k: int

    def label(self) -> str:
        return f"{self.id}:{self.name} {self.block_m}x{self.block_n}x{self.block_k}"

    @property
    def acc_stages(self) -> int:
        """CUTLASS double-buffers the accumulator unless one N=256 tile fills TMEM's 512 columns."""
        return 1 if self.block_n == 256 else 2


def parse_configs(source: Path) -> tuple[KernelConfig, ...]:
    try:
        text = utf8_text(source, "dump --umma reads its ConfigById table as text: save it as UTF-8")
    except OSError as error:
        raise UsageError(f"cannot read kernel {source}: {os_reason(error, source)}") from error
    configs = []
    for match in _CONFIG_RE.finditer(text):
        body = match.group("body")
        name = re.search(_STRING_RE.format("kName"), body)
        use = re.search(_STRING_RE.format("kUse"), body)
        configs.append(KernelConfig(int(match.group("id")), name.group(1) if name else f"config{match.group('id')}",
                                    use.group(1) if use else "", int(match.group("m")), int(match.group("n")),
                                    int(match.group("k"))))
    if not configs:
        # A hand-written kernel has no CuTe dispatch table: its own values are checked another way.
        raise UsageError(f"{source}: no `struct ConfigById<N> : GemmConfig<M, N, K>` dispatch entries found"
                         " (a CUTLASS kernel's table); for a hand-written kernel give the values it uses"
                         " (--mma M,N,K --idesc HEX --desc-a HEX --desc-b HEX) or the lines it printed"
                         f" (--from-log FILE), {byo_kernel_doc()}")
    return tuple(sorted(configs, key=lambda config: config.id))


def expected_instr(config: KernelConfig) -> dict[str, int]:
    """kind::mxf4nvf4 block16, A and B E2M1 K-major, UE4M3 scales, M x N of the tile, K64, dense."""
    return {
        "sparse_id2": 0, "sparse": 0, "b_sf_id": 0,
        "a_format": d.MXF4_E2M1, "b_format": d.MXF4_E2M1, "a_negate": 0, "b_negate": 0,
        "a_major": d.MAJOR_K, "b_major": d.MAJOR_K,
        "n_dim": config.block_n >> 3, "scale_format": d.SCALE_UE4M3, "m_dim": config.block_m >> 4,
        "a_sf_id": 0, "k_size": 0,
    }


def expected_smem(config: KernelConfig, k_step: int = 0) -> dict[str, int]:
    """A or B tile of stage 0 (at shared offset 0), MMA k-step `k_step`: K-major, 128-byte swizzle.

    Each row of the 256-deep fp4 tile is 128 bytes, so 8 rows form one 1024-byte swizzle atom (SBO);
    LBO is unused by swizzled K-major layouts and set to 16 bytes; one k-step advances the start by
    64 fp4 = 32 bytes. The same values hold for A and B (they differ only in row count).
    """
    row_bytes = config.block_k * FP4_BITS // 8
    if row_bytes != SWIZZLE_BYTES:
        raise ValueError(f"{config.label()}: a {row_bytes}-byte K row needs another swizzle than 128B")
    return {
        "start": (k_step * UMMA_K * FP4_BITS // 8) >> 4,
        "lbo": 16 >> 4,
        "sbo": (CORE_ROWS * SWIZZLE_BYTES) >> 4,
        "version": d.SMEM_DESC_VERSION_SM100,
        "base_offset": 0,
        "lbo_mode": 0,
        "layout": d.SWIZZLE_128B,
    }


def expected_tmem(config: KernelConfig) -> dict[str, int]:
    """TMEM columns (of 512, 32 bits x 128 lanes each) per CTA.

    Accumulator: one fp32 column per N, per accumulator stage. Scales: per MMA k-step each block of
    128 rows needs 4 columns (UTCCP 4x32dp128bit writes 128 bits per lane), so a K tile takes
    (K / 64) * 4 columns per 128-row block; B's rows are rounded up to a 128-row block.
    """
    sf_cols_per_block = (config.block_k // UMMA_K) * 4
    return {
        "acc_cols": config.acc_stages * config.block_n,
        "sfa_cols": -(-config.block_m // SF_ROWS_PER_BLOCK) * sf_cols_per_block,
        "sfb_cols": -(-config.block_n // SF_ROWS_PER_BLOCK) * sf_cols_per_block,
    }


NO_CONFIG = -1


def select_config(m: int, n: int, k: int, l: int) -> int:
    """The config id the kernel's `select_config` picks (mirror of the C++; tests/sm100 compares the
    two on every task shape and on the edges), or NO_CONFIG for an unsupported shape."""
    if min(m, n, k, l) <= 0 or k % 256 or m % 128:
        return NO_CONFIG
    if m == 128 and n % 64 == 0:
        return 0
    if n % 128 == 0:
        return 1
    return NO_CONFIG
