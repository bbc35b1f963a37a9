"""An exact CPU model of one CTA's block-scaled UMMA:
`tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16` (also .block32, kind::mxf4 and
kind::mxf8f6f4 with e4m3/e5m2 operands), reading its operands the way the hardware does: A and B
bytes from a shared-memory image through the smem descriptors (smem.py), scales from a TMEM image
through the TMEM addresses and the instruction descriptor's scale ids (tmem.py), D into TMEM.

Arithmetic: each MMA forms sum_k (a*sfa)(b*sfb) over its K in float64 (every product of an e2m1 or
e4m3 value with its scale is exact there) and adds it to D in float32: one rounding per MMA. On
GPU MODE's inputs every partial sum is exactly representable in fp32, so D rounded to fp16 equals
problems/nvfp4_gemm/reference.py bit for bit; the hardware's internal order for sums that need more
than 24 bits is not modelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from nvfp4ctl.problems.nvfp4_gemm.formats import E2M1_VALUES, E4M3_VALUES
from nvfp4ctl.umma import descriptors as d
from nvfp4ctl.umma.smem import MMA_K_BYTES, ModelError, gather, operand_addresses
from nvfp4ctl.umma.tmem import Tmem, scale_bytes

KINDS = ("mxf4nvf4", "mxf4", "mxf8f6f4")
M_MODELLED = 128  # cta_group::1 with M=128: D row i in TMEM lane i

# kind::mxf8f6f4 operand type codes (PTX ISA Table 43); e4m3 and e5m2 are modelled (8 bits each)
MXF8_E4M3, MXF8_E5M2 = 0, 1


@dataclass(frozen=True)
class MmaIssue:
    """One tcgen05.mma as issued: its operands exactly as the kernel passes them."""

    idesc: int
    desc_a: int
    desc_b: int
    tmem_d: int
    tmem_sfa: int
    tmem_sfb: int
    accumulate: bool
    kind: str = "mxf4nvf4"
    sf_vec: int = 16


@dataclass(frozen=True)
class Shape:
    m: int
    n: int
    k: int  # elements per MMA
    sf_per_row: int  # scale factors per row per MMA (4X / 2X / 1X)
    a_sf_id: int
    b_sf_id: int


_E2M1 = torch.tensor(E2M1_VALUES, dtype=torch.float64)
_E4M3 = torch.tensor(E4M3_VALUES, dtype=torch.float64)
_E5M2 = torch.arange(256, dtype=torch.int16).to(torch.uint8).view(torch.float8_e5m2).double()
_UE8M0 = torch.tensor([2.0 ** (code - 127) for code in range(255)] + [float("nan")], dtype=torch.float64)


def shape_of(issue: MmaIssue) -> Shape:
    """Check the instruction descriptor against the kind and return the MMA's shape. A field the
    model (or the hardware) does not accept raises ModelError naming it."""
    return _decode(issue)[0]


def _decode(issue: MmaIssue) -> tuple[Shape, dict[str, int]]:
    """shape_of, with the instruction descriptor's fields it checked: one decode serves the shape
    and the operands' formats and negations."""
    if issue.kind not in KINDS:
        raise ModelError(f"kind {issue.kind!r}: expected one of {', '.join(KINDS)}")
    if issue.sf_vec not in (16, 32) or (issue.kind != "mxf4nvf4" and issue.sf_vec != 32):
        raise ModelError(f"kind::{issue.kind} with block{issue.sf_vec} scales does not exist")
    f = d.decode_instr(issue.idesc)
    if spare := d.instr_reserved(issue.idesc):
        raise ModelError(f"reserved idesc bits set (0x{spare:x})", "reserved")
    if f["sparse"] or f["sparse_id2"]:
        raise ModelError("sparse MMA is not modelled", "sparse")
    if f["a_major"] != d.MAJOR_K or f["b_major"] != d.MAJOR_K:
        raise ModelError("MN-major (transposed) operands are not modelled (fp4 is K-major only)",
                         "a_major" if f["a_major"] else "b_major")
    if f["k_size"]:
        raise ModelError("K=96 (dense mxf4 K96) is not modelled", "k_size")
    m, n = d.instr_mn(f)
    if m != M_MODELLED:
        raise ModelError(f"M={m}: the model covers cta_group::1 M=128 (m_dim=8)", "m_dim")
    if not 8 <= n <= 256 or n % 8:  # CUTLASS SM100_MMA_MXF4_SS: N % 8 == 0, 8 <= N <= 256
        raise ModelError(f"N={n}: N must be a multiple of 8 in 8..256", "n_dim")
    fp4 = issue.kind in ("mxf4nvf4", "mxf4")
    for side in ("a", "b"):
        fmt = f[f"{side}_format"]
        if fp4 and fmt != d.MXF4_E2M1:
            raise ModelError(f"{side.upper()} format code {fmt}: kind::{issue.kind} needs E2M1 (1)", f"{side}_format")
        if not fp4 and fmt not in (MXF8_E4M3, MXF8_E5M2):
            raise ModelError(f"{side.upper()} format code {fmt}: the model covers e4m3 (0) and e5m2 (1)",
                             f"{side}_format")
    want_scale = d.SCALE_UE4M3 if issue.sf_vec == 16 else d.SCALE_UE8M0
    if f["scale_format"] != want_scale:
        name = "UE4M3 (0)" if want_scale == d.SCALE_UE4M3 else "UE8M0 (1)"
        raise ModelError(f"block{issue.sf_vec} scales are {name}, the idesc says {f['scale_format']}", "scale_format")
    k = MMA_K_BYTES * (2 if fp4 else 1)
    sf_per_row = k // issue.sf_vec
    for side in ("a", "b"):
        sf_id = f[f"{side}_sf_id"]
        if sf_id % sf_per_row:  # 4X: 0 only; 2X: 0 or 2; 1X: 0..3 (PTX ISA Tables 43/44)
            raise ModelError(f"{side.upper()} scale id {sf_id}: with {sf_per_row} scales per row per MMA it must"
                             f" be a multiple of {sf_per_row} (0 for block16 K64)", f"{side}_sf_id")
    return Shape(m, n, k, sf_per_row, f["a_sf_id"], f["b_sf_id"]), f


def _values(raw: torch.Tensor, kind: str, fmt: int) -> torch.Tensor:
    """Operand bytes (rows, 32) -> float64 (rows, K). fp4: element 2i is the low nibble of byte i."""
    codes = raw.to(torch.int64)
    if kind in ("mxf4nvf4", "mxf4"):
        return _E2M1[torch.stack((codes & 0xF, codes >> 4), dim=-1).flatten(-2)]
    return (_E4M3 if fmt == MXF8_E4M3 else _E5M2)[codes]


def _scales(raw: torch.Tensor, sf_vec: int) -> torch.Tensor:
    """Scale codes (rows, sf_per_row) -> float64, each repeated over its sf_vec elements."""
    table = _E4M3 if sf_vec == 16 else _UE8M0
    return table[raw.to(torch.int64)].repeat_interleave(sf_vec, dim=1)


def _operands(image: torch.Tensor, tmem: Tmem, issue: MmaIssue, shape: Shape, f: dict[str, int],
              base: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(A, B) of one MMA as float64 (M, K) and (N, K), each element times its scale."""
    a_raw = gather(image, _addresses(issue.desc_a, shape.m, "a"), base)
    b_raw = gather(image, _addresses(issue.desc_b, shape.n, "b"), base)
    sfa = scale_bytes(tmem, issue.tmem_sfa, shape.m, shape.sf_per_row, shape.a_sf_id, own_lanes=True)
    sfb = scale_bytes(tmem, issue.tmem_sfb, shape.n, shape.sf_per_row, shape.b_sf_id, own_lanes=False)
    a = _values(a_raw, issue.kind, f["a_format"]) * _scales(sfa, issue.sf_vec)
    b = _values(b_raw, issue.kind, f["b_format"]) * _scales(sfb, issue.sf_vec)
    return (-a if f["a_negate"] else a), (-b if f["b_negate"] else b)


def _addresses(desc: int, rows: int, side: str) -> torch.Tensor:
    try:
        return operand_addresses(desc, rows)
    except ModelError as error:  # name the operand whose descriptor is at fault
        raise ModelError(f"desc_{side}: {error}", f"desc_{side}.{error.field}" if error.field else None) from error


def mma(image: torch.Tensor, tmem: Tmem, issue: MmaIssue, base: int = 0) -> None:
    """One tcgen05.mma: D (fp32 in TMEM) = A . B^T (+ D when accumulate)."""
    shape, f = _decode(issue)
    a, b = _operands(image, tmem, issue, shape, f, base)
    product = a @ b.T
    if issue.accumulate:
        product = tmem.read_f32(issue.tmem_d, shape.m, shape.n).to(torch.float64) + product
    tmem.write_f32(issue.tmem_d, product.to(torch.float32))


def run(image: torch.Tensor, issues: Sequence[MmaIssue], tmem: Tmem | None = None, base: int = 0) -> Tmem:
    """Issue the MMAs in order (as one thread would); returns the TMEM they wrote."""
    tmem = tmem if tmem is not None else Tmem()
    for issue in issues:
        mma(image, tmem, issue, base)
    return tmem


def read_d(tmem: Tmem, tmem_d: int, m: int, n: int) -> torch.Tensor:
    return tmem.read_f32(tmem_d, m, n).clone()
