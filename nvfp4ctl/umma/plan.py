"""A correct block-scaled UMMA plan for one output tile, built from real inputs: where TMA puts the
A/B tiles (boxes, swizzle), where the scales go in TMEM, and the descriptors of every K step, the
way CuTe builds them for K-major operands. The model (model.py) runs it; tests and
`dump --umma --simulate` compare its D with the exact reference, and mutate single fields of it to
show what a descriptor bug does.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from nvfp4ctl.umma import descriptors as d
from nvfp4ctl.umma import smem
from nvfp4ctl.umma.model import MmaIssue
from nvfp4ctl.umma.tmem import Tmem, place_scales, tmem_address

FP4_PER_BYTE = 2
SF_VEC = 16
MMA_K = 64  # fp4 elements per kind::mxf4nvf4 MMA
KBLOCKS_PER_MMA = MMA_K // SF_VEC
SF_ROWS_PER_ATOM = 128


@dataclass(frozen=True)
class TileConfig:
    """One CTA tile of a kind::mxf4nvf4 block16 kernel: M=128, N, a K tile, K-major A and B with one
    swizzle, stage 0 of A at a_addr and of B at b_addr (shared addresses), D at TMEM column 0,
    scales after the accumulator (as CUTLASS lays TMEM out)."""

    block_n: int
    block_k: int = 256
    swizzle: str = "128B"
    block_m: int = 128
    a_addr: int = 0
    b_addr: int | None = None  # None: right after A, 1024-aligned
    d_addr: int = 0  # TMEM address of D
    sfa_addr: int | None = None  # TMEM address of K step 0's A scales; None: right after D
    sfb_addr: int | None = None  # ... B scales; None: right after A's scales

    @property
    def layout(self) -> int:
        return smem.TMA_SWIZZLE[self.swizzle]

    @property
    def span(self) -> int:
        return smem.SWIZZLE_SPAN[self.layout]

    @property
    def k_tile_bytes(self) -> int:
        return self.block_k // FP4_PER_BYTE

    @property
    def b_start(self) -> int:
        if self.b_addr is not None:
            return self.b_addr
        end = self.a_addr + self.block_m * self.k_tile_bytes
        return -(-end // 1024) * 1024

    @property
    def k_steps(self) -> int:
        return self.block_k // MMA_K

    @property
    def sfa_col(self) -> int:
        return (self.sfa_addr & 0xFFFF) if self.sfa_addr is not None else (self.d_addr & 0xFFFF) + self.block_n

    @property
    def sf_cols_per_step_b(self) -> int:
        return sf_columns_per_step(self.block_n)

    @property
    def sfb_col(self) -> int:
        return (self.sfb_addr & 0xFFFF) if self.sfb_addr is not None else self.sfa_col + 4 * self.k_steps

    def label(self) -> str:
        return f"{self.block_m}x{self.block_n}x{self.block_k} swizzle {self.swizzle}"

    def tiles_overlap(self) -> str | None:
        """tiles_overlap() of stage 0's A and B tiles, one K tile each."""
        return tiles_overlap(self.a_addr, self.block_m, self.b_start, self.block_n, self.k_tile_bytes)

    def scales_overlap(self) -> str | None:
        """scales_overlap() of A's and B's scale columns, every K step of a K tile."""
        return scales_overlap(self.sfa_col, 4, self.sfb_col, self.sf_cols_per_step_b, self.k_steps)


def sf_columns_per_step(rows: int) -> int:
    """TMEM columns one K step's scales of `rows` rows take: a 128-row atom per 4 columns, N=64 rounded up."""
    return 4 * -(-rows // SF_ROWS_PER_ATOM)


SWIZZLE_ATOM_ALIGN = 1024  # the 128B swizzle's pattern: a tile starting on it suits every swizzle


def tiles_overlap(a_start: int, a_rows: int, b_start: int, b_rows: int, row_bytes: int) -> str | None:
    """Where A's tile (a_rows rows of row_bytes from a_start) and B's share shared-memory bytes, what
    the user sees: both ranges, and where B could start instead (TMA's load of one overwrites the
    other, so the MMA reads one operand twice while no field of either descriptor is wrong); else None."""
    a_end, b_end = a_start + a_rows * row_bytes, b_start + b_rows * row_bytes
    if not (a_start < b_end and b_start < a_end):
        return None
    apart = -(-a_end // SWIZZLE_ATOM_ALIGN) * SWIZZLE_ATOM_ALIGN
    return (f"A's and B's tiles overlap in shared memory: desc_a's 0x{a_start:x}..0x{a_end - 1:x} ({a_rows} rows x"
            f" {row_bytes} B) and desc_b's 0x{b_start:x}..0x{b_end - 1:x} ({b_rows} rows x {row_bytes} B), so the"
            f" load of one overwrites the other; give each its own buffer (B from 0x{apart:x}, past A's end)")


def scales_overlap(sfa_col: int, sfa_step: int, sfb_col: int, sfb_step: int, k_steps: int) -> str | None:
    """Where A's scale columns (sfa_step a K step, k_steps of them from sfa_col) share TMEM columns with
    B's: the scale copy of one overwrites the other though every address field is well formed; else None."""
    a_end, b_end = sfa_col + sfa_step * k_steps, sfb_col + sfb_step * k_steps
    if not (sfa_col < b_end and sfb_col < a_end):
        return None
    return (f"A's and B's scales overlap in TMEM: tmem_sfa's columns {sfa_col}..{a_end - 1} ({k_steps} K steps x"
            f" {sfa_step}) and tmem_sfb's {sfb_col}..{b_end - 1} ({k_steps} K steps x {sfb_step}), so the copy of"
            f" one overwrites the other; give each its own columns (B's from {a_end}, past A's end)")


def idesc(config: TileConfig) -> int:
    return d.encode_instr({"a_format": d.MXF4_E2M1, "b_format": d.MXF4_E2M1, "a_major": d.MAJOR_K,
                           "b_major": d.MAJOR_K, "n_dim": config.block_n >> 3, "m_dim": config.block_m >> 4,
                           "scale_format": d.SCALE_UE4M3})


def smem_desc(config: TileConfig, tile_addr: int, rows: int, k_step: int) -> int:
    """The K-major descriptor of one operand for MMA k-step `k_step` of the K tile at tile_addr."""
    kbyte = k_step * smem.MMA_K_BYTES
    if config.layout == smem.SWIZZLE_NONE:
        # core matrices 8 rows x 16 B; K-adjacent ones rows*16 apart (LBO), M-adjacent 128 apart (SBO)
        start, lbo, sbo = tile_addr + (kbyte // 16) * rows * 16, rows * 16, 128
    else:
        # swizzle atoms 8 rows x span; the K tile is k_tile_bytes/span atom columns of `rows` rows each;
        # a K step inside an atom advances the start address (the XOR uses address bits)
        span = config.span
        start, lbo, sbo = tile_addr + (kbyte // span) * rows * span + kbyte % span, 16, 8 * span
    return d.encode_smem({"start": (start & 0x3FFFF) >> 4, "lbo": lbo >> 4, "sbo": sbo >> 4,
                          "version": d.SMEM_DESC_VERSION_SM100, "layout": config.layout})


def tma_boxes(config: TileConfig, tile: torch.Tensor, tile_addr: int) -> list[tuple[int, torch.Tensor]]:
    """(dst shared address, box) per TMA copy of one K tile of an operand: tile uint8 (rows, k_tile_bytes).
    Swizzled: one box of (rows, span) per span of K; none: (rows, 16) per 16-byte core-matrix column."""
    rows = tile.shape[0]
    width = config.span
    return [(tile_addr + j * rows * width, tile[:, j * width:(j + 1) * width])
            for j in range(config.k_tile_bytes // width)]


def issues(config: TileConfig, k_tiles: int) -> list[MmaIssue]:
    """Every MMA of the tile, K tile after K tile, all on stage 0's buffers."""
    word = idesc(config)
    out = []
    for kt in range(k_tiles):
        for s in range(config.k_steps):
            out.append(MmaIssue(
                idesc=word,
                desc_a=smem_desc(config, config.a_addr, config.block_m, s),
                desc_b=smem_desc(config, config.b_start, config.block_n, s),
                tmem_d=config.d_addr,
                tmem_sfa=tmem_address(0, config.sfa_col + 4 * s),
                tmem_sfb=tmem_address(0, config.sfb_col + config.sf_cols_per_step_b * s),
                accumulate=kt > 0 or s > 0,
            ))
    return out


@dataclass
class TileInputs:
    """Bytes of one output tile's operands: A (128, k/2), B (n, k/2) packed fp4, scales (rows, k/16)."""

    a: torch.Tensor
    b: torch.Tensor
    sfa: torch.Tensor
    sfb: torch.Tensor


def tile_inputs(data: tuple[torch.Tensor, ...], config: TileConfig, m0: int, n0: int, batch: int = 0) -> TileInputs:
    a, b, sfa_ref, sfb_ref = data[:4]
    rows_a, rows_b = slice(m0, m0 + config.block_m), slice(n0, n0 + config.block_n)
    return TileInputs(a[rows_a, :, batch].view(torch.uint8).contiguous(), b[rows_b, :, batch].view(torch.uint8).contiguous(),
                      sfa_ref[rows_a, :, batch].view(torch.uint8).contiguous(),
                      sfb_ref[rows_b, :, batch].view(torch.uint8).contiguous())


def load_k_tile(config: TileConfig, inputs: TileInputs, kt: int, image: torch.Tensor, tmem: Tmem) -> None:
    """What the producer and the scale copy do for K tile kt: TMA the A/B tiles into stage 0 and put
    each K step's scales where the MMA of that step reads them."""
    cols = slice(kt * config.k_tile_bytes, (kt + 1) * config.k_tile_bytes)
    for addr, tile in ((config.a_addr, inputs.a[:, cols]), (config.b_start, inputs.b[:, cols])):
        for dst, box in tma_boxes(config, tile, addr):
            smem.tma_store_box(image, dst, box, config.layout)
    blocks = config.block_k // SF_VEC
    for s in range(config.k_steps):
        kb = slice(kt * blocks + s * KBLOCKS_PER_MMA, kt * blocks + (s + 1) * KBLOCKS_PER_MMA)
        place_scales(tmem, tmem_address(0, config.sfa_col + 4 * s), inputs.sfa[:, kb])
        for atom in range(0, config.block_n, SF_ROWS_PER_ATOM):
            place_scales(tmem, tmem_address(0, config.sfb_col + config.sf_cols_per_step_b * s + atom // 32),
                         inputs.sfb[atom:atom + SF_ROWS_PER_ATOM, kb])


def run_tile(config: TileConfig, inputs: TileInputs, tile_issues: list[MmaIssue] | None = None,
             loader=load_k_tile) -> torch.Tensor:
    """Model D (fp32, block_m x block_n) of one tile: per K tile, load it, then issue its K steps."""
    from nvfp4ctl.umma import model

    k_tiles = inputs.a.shape[1] // config.k_tile_bytes
    plan = tile_issues if tile_issues is not None else issues(config, k_tiles)
    per_tile = len(plan) // k_tiles
    image, tmem = smem.new_image(), Tmem()
    for kt in range(k_tiles):
        loader(config, inputs, kt, image, tmem)
        model.run(image, plan[kt * per_tile:(kt + 1) * per_tile], tmem)
    first = plan[0]
    return model.read_d(tmem, first.tmem_d, config.block_m, config.block_n)
