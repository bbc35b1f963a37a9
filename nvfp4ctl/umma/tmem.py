"""Tensor memory as the block-scaled UMMA sees it: 128 lanes x 512 columns of 32 bits, the TMEM
address (lane << 16 | column, PTX ISA 9.7.16.2.1 "Tensor Memory addressing"), the scale-factor
placement that `tcgen05.cp` makes, and where the MMA reads the scale of (row, k-block).

Scale layout (PTX ISA 9.7.16.10.7 "Scale factor A/B" figures for M=128, and CUTLASS's
Sm1xxBlkScaledConfig 512-byte atom copied by SM100_UTCCP_4x32dp128bit = tcgen05.cp.32x128b.warpx4):
for one MMA, row i's scale factors sit in column col + i // 32 of lane i % 32 (replicated to the
four lane quarters), one byte per k-block: byte sf_id + kb. block16 with K=64 (scale_vec::4X) uses
all four bytes, so sf_id must be 0; block32 (2X) uses bytes sf_id, sf_id+1 (sf_id 0 or 2); 1X uses
byte sf_id. tests/umma/test_model.py checks this placement against CuTe's scale layout.
"""

from __future__ import annotations

import torch

from nvfp4ctl.umma.smem import ModelError, gather

LANES, COLUMNS = 128, 512
LANE_QUARTER = 32


def tmem_address(lane: int, column: int) -> int:
    return (lane << 16) | column


def split_address(addr: int) -> tuple[int, int]:
    """(lane, column) of a TMEM address."""
    return (addr >> 16) & 0xFFFF, addr & 0xFFFF


class Tmem:
    """The CTA's tensor memory: uint8 (lanes, columns, 4), little-endian 32-bit cells."""

    def __init__(self) -> None:
        self.data = torch.zeros((LANES, COLUMNS, 4), dtype=torch.uint8)

    def _check(self, lane: int, column: int, rows: int, cols: int, what: str) -> None:
        if lane < 0 or column < 0 or lane + rows > LANES or column + cols > COLUMNS:
            raise ModelError(f"{what}: lanes {lane}..{lane + rows - 1}, columns {column}..{column + cols - 1}"
                             f" fall outside TMEM (128 x 512)", what)

    def read_f32(self, addr: int, rows: int, cols: int) -> torch.Tensor:
        lane, column = split_address(addr)
        self._check(lane, column, rows, cols, "tmem_d")
        cells = self.data[lane:lane + rows, column:column + cols].contiguous()
        return cells.view(torch.float32).reshape(rows, cols)

    def write_f32(self, addr: int, values: torch.Tensor) -> None:
        lane, column = split_address(addr)
        rows, cols = values.shape
        self._check(lane, column, rows, cols, "tmem_d")
        self.data[lane:lane + rows, column:column + cols] = values.to(torch.float32).contiguous().view(
            torch.uint8).reshape(rows, cols, 4)


def place_scales(tmem: Tmem, addr: int, scales: torch.Tensor) -> None:
    """Scales of one MMA, uint8 (rows <= 128, kblocks <= 4), placed as tcgen05.cp.32x128b.warpx4 of
    CUTLASS's 512-byte atom places them: row i -> column col + i//32, byte kb, lanes i%32 + 32q."""
    rows, kblocks = scales.shape
    if rows > LANES or kblocks > 4:
        raise ValueError(f"place_scales: at most 128 rows x 4 k-blocks per call, got {rows} x {kblocks}")
    lane0, column = split_address(addr)
    tmem._check(lane0, column, LANES, -(-rows // LANE_QUARTER), "tmem_sf")
    for i in range(rows):
        for quarter in range(4):
            tmem.data[quarter * LANE_QUARTER + i % LANE_QUARTER, column + i // LANE_QUARTER, :kblocks] = scales[i]


def tcgen05_cp(tmem: Tmem, image: torch.Tensor, addr: int, desc: int, shape: str = "32x128b.warpx4",
               base: int = 0) -> None:
    """tcgen05.cp from a (non-swizzled) smem matrix described by `desc`: rows of 16 bytes, row r at
    start + (r // 8) * SBO + (r % 8) * 16. 32x128b.warpx4: 32 rows, each to lanes r + 32q, q=0..3;
    128x128b: 128 rows to lanes r. Byte j of a row lands in column col + j // 4, byte j % 4."""
    from nvfp4ctl.umma import descriptors as d

    fields = d.decode_smem(desc)
    if fields["layout"] != 0:
        raise ModelError("tcgen05.cp of scale factors: only the non-swizzled layout is modelled", "layout")
    rows = {"32x128b.warpx4": 32, "128x128b": 128}.get(shape)
    if rows is None:
        raise ValueError(f"tcgen05.cp shape {shape!r}: expected 32x128b.warpx4 or 128x128b")
    start, sbo = fields["start"] << 4, fields["sbo"] << 4
    r = torch.arange(rows, dtype=torch.int64).unsqueeze(1)
    addresses = start + (r // 8) * sbo + (r % 8) * 16 + torch.arange(16, dtype=torch.int64).unsqueeze(0)
    data = gather(image, addresses, base).reshape(rows, 4, 4)
    lane0, column = split_address(addr)
    tmem._check(0, column, LANES, 4, "tmem_sf")
    if rows == 32:
        for quarter in range(4):
            tmem.data[quarter * 32:(quarter + 1) * 32, column:column + 4] = data
    else:
        tmem.data[lane0:lane0 + 128, column:column + 4] = data


def scale_bytes(tmem: Tmem, addr: int, rows: int, kblocks: int, sf_id: int, own_lanes: bool) -> torch.Tensor:
    """uint8 (rows, kblocks): the scale the MMA uses for (row, k-block). A reads row i from its own
    lane i (`own_lanes`); B reads lane i % 32. Both see column col + i // 32, byte sf_id + kb."""
    if sf_id + kblocks > 4:
        raise ModelError(f"scale id {sf_id} with {kblocks} scales per row reads past the 32-bit cell", "sf_id")
    _, column = split_address(addr)
    row = torch.arange(rows)
    lanes = row if own_lanes else row % LANE_QUARTER
    cols = column + row // LANE_QUARTER
    if int(cols.max()) >= COLUMNS:
        raise ModelError(f"scale columns {column}..{int(cols.max())} fall outside TMEM", "tmem_sf")
    return tmem.data[lanes, cols, sf_id:sf_id + kblocks]
