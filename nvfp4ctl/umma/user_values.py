"""The user's own UMMA values (`dump --umma --idesc … --desc-a … --desc-b … --tmem-*`): decoded
field by field and, with a stated MMA config, checked against what the config implies.

What a config implies (K-major operands, the tile stored by TMA as in plan.py, M-first):
  idesc   formats of the kind, majors, N >> 3, M >> 4, scale format of the scale vector, scale ids 0
  desc    version 1, base offset 0 (TMA swizzles by the shared address itself, so the pattern repeats on
          absolute boundaries wherever the tile starts), LBO/SBO of the swizzle
          (swizzled: SBO = 8 rows x span, LBO unused; none: SBO = 128, LBO = rows x 16), the layout
          code of the swizzle; the start of K step s = step 0's start + the K-step advance
  tmem    D at lane 0 with N columns inside 512; scales at lane 0, not overlapping D
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems.fields import shape_fields
from nvfp4ctl.umma import descriptors as d
from nvfp4ctl.umma import plan, smem
from nvfp4ctl.umma.bits import BitField
from nvfp4ctl.umma.tmem import COLUMNS, split_address

KIND_K = {"mxf4nvf4": 64, "mxf4": 64, "mxf8f6f4": 32}
# CUTLASS's one-CTA block-scaled MMA atom per kind (cute/arch/mma_sm100_umma.hpp), whose static_asserts
# say which M and N the hardware takes
CUTLASS_SS_ATOM = {"mxf4nvf4": "SM100_MMA_MXF4_SS", "mxf4": "SM100_MMA_MXF4_SS", "mxf8f6f4": "SM100_MMA_MXF8F6F4_SS"}
SWIZZLES = tuple(smem.TMA_SWIZZLE)


@dataclass(frozen=True)
class MmaConfig:
    m: int = 128
    n: int = 128
    k: int = 64
    kind: str = "mxf4nvf4"
    sf_vec: int = 16
    a_major: str = "K"
    b_major: str = "K"
    swizzle: str = "128B"
    block_k: int = 256  # elements per K tile (the descriptors of K steps 0 .. block_k/k - 1)

    @property
    def layout(self) -> int:
        return smem.TMA_SWIZZLE[self.swizzle]

    @property
    def k_steps(self) -> int:
        return self.block_k // self.k

    def label(self) -> str:
        return (f"{self.m}x{self.n}x{self.k} kind::{self.kind} block{self.sf_vec} {self.a_major}/{self.b_major}-major"
                f" swizzle {self.swizzle}")


def parse_hex(text: str, what: str, bits: int) -> int:
    try:
        value = int(text, 16)
    except ValueError:
        value = -1
    if value < 0 or not text.strip():  # "-5" parses, but no descriptor is negative
        raise UsageError(f"{what} {text!r}: expected a hexadecimal value such as 0x08200480")
    if value >= 1 << bits:
        # no 0x and no a-f: the kernel may have printed it with %u
        decimal = f"; as a decimal it is 0x{int(text):x}" if text.strip().isdigit() and int(text) < 1 << bits else ""
        raise UsageError(f"{what} {text}: wider than {bits} bits (read as hexadecimal{decimal})")
    return value


def parse_mma(text: str) -> tuple[int, int, int]:
    # an empty field ("128,,128,64", "128,128,64,") is refused as --shape refuses it: dropping it would
    # check the values against an MMA other than the one written
    parts = shape_fields(text)
    try:
        m, n, k = (int(p) for p in parts)
    except ValueError:
        raise UsageError(f"--mma {text}: expected M,N,K, e.g. --mma 128,128,64") from None
    return m, n, k


# dump --umma's flags for the settings a config line also states, as `block_k=256`
_FLAGS = {"kind": "--kind", "sf_vec": "--sf-vec", "major": "--major", "swizzle": "--swizzle", "block_k": "--block-k"}


def make_config(mma: str | None, kind: str, sf_vec: int | None, major: str, swizzle: str, block_k: int,
                from_line: bool = False) -> MmaConfig:
    """The MMA config the flags state, or with `from_line` a logged `nvfp4ctl:umma config` line: a mistake names
    the setting as it was given (`block_k=0` for the line's field, not `--block-k 0`, a flag never typed)."""
    def given(setting: str, value: object) -> str:
        return f"{setting}={value}" if from_line else f"{_FLAGS[setting]} {value}"

    if kind not in KIND_K:
        raise UsageError(f"{given('kind', kind)}: expected one of {', '.join(KIND_K)}")
    m, n, k = parse_mma(mma) if mma else (128, 128, KIND_K[kind])
    vec = sf_vec if sf_vec is not None else (16 if kind == "mxf4nvf4" else 32)
    majors = [p.strip().upper() for p in major.split(",")]
    a_major, b_major = (majors * 2)[:2]
    problems = []
    if m != 128:  # the PTX ISA's block-scaled shapes; CUTLASS 4.2's cute/arch/mma_sm100_umma.hpp asserts it
        problems.append(f"M={m} (a block-scaled cta_group::1 MMA has M=128 alone: CUTLASS's"
                        f" {CUTLASS_SS_ATOM[kind]} static_asserts M == 128; M=256 is a cta_group::2 MMA of two CTAs)")
    if n % 8 or not 8 <= n <= 256:  # CUTLASS SM100_MMA_MXF4_SS / MXF8F6F4_SS static_asserts
        problems.append(f"N={n} (a multiple of 8 in 8..256)")
    if k != KIND_K[kind]:
        problems.append(f"K={k} (kind::{kind} dense MMAs have K={KIND_K[kind]})")
    if vec not in (16, 32) or (kind != "mxf4nvf4" and vec != 32):
        problems.append(f"{given('sf_vec', vec)} (kind::{kind} takes {'16 or 32' if kind == 'mxf4nvf4' else '32'})")
    if {a_major, b_major} - {"K", "MN"} or len(majors) > 2:
        problems.append(f"{given('major', major)} (K or MN, or A,B)")
    if swizzle not in SWIZZLES:
        problems.append(f"{given('swizzle', swizzle)} (one of {', '.join(SWIZZLES)})")
    if k > 0 and (block_k <= 0 or block_k % k):  # K <= 0 is reported above
        problems.append(f"{given('block_k', block_k)} (a positive multiple of the MMA K {k})")
    if problems:
        stated = "the kernel's config line" if from_line else "the stated config"
        raise UsageError(f"{stated} is not a valid block-scaled MMA: " + "; ".join(problems))
    return MmaConfig(m, n, k, kind, vec, a_major, b_major, swizzle, block_k)


def expected_idesc(config: MmaConfig) -> dict[str, int]:
    fp4 = config.kind in ("mxf4nvf4", "mxf4")
    fmt = d.MXF4_E2M1 if fp4 else 0  # kind::mxf8f6f4: E4M3 = 0 (the model's default operand type)
    return {"sparse_id2": 0, "sparse": 0, "b_sf_id": 0, "a_format": fmt, "b_format": fmt, "a_negate": 0, "b_negate": 0,
            "a_major": int(config.a_major == "MN"), "b_major": int(config.b_major == "MN"), "n_dim": config.n >> 3,
            "scale_format": d.SCALE_UE4M3 if config.sf_vec == 16 else d.SCALE_UE8M0, "m_dim": config.m >> 4,
            "a_sf_id": 0, "k_size": 0}


def expected_desc(config: MmaConfig, rows: int, step0_start: int, step: int) -> dict[str, int]:
    """K-major descriptor of K step `step` for a tile whose step-0 start is step0_start (bytes)."""
    tile = plan.TileConfig(block_n=config.n, block_k=config.block_k, swizzle=config.swizzle, block_m=config.m)
    # base offset stays 0: the PTX ISA asks for (pattern start >> 7) & 7 only where the swizzle pattern
    # itself starts off its 256/512/1024-byte boundary, and a TMA store's pattern is keyed to the
    # absolute address (smem.tma_store_box), so it starts on the boundary even for a tile at 0x480
    return d.decode_smem(plan.smem_desc(tile, step0_start, rows, step))


class FieldStatus(str, Enum):
    """A field's verdict; the value is the word the table and the JSON show (a str mixin, so JSON
    writes the word itself)."""

    OK = "ok"
    MISMATCH = "MISMATCH"
    UNUSED = "unused"  # the config leaves the field unused (LBO of a swizzled K-major operand)
    EXPECTED = "expected"  # no user value: the row shows what the config implies
    DECODED = "decoded"  # no config: nothing to check the value against


@dataclass(frozen=True)
class FieldCheck:
    descriptor: str
    field: str
    bits: str
    value: int | None
    expected: int | None
    meaning: str
    status: FieldStatus

    @property
    def bad(self) -> bool:
        return self.status is FieldStatus.MISMATCH


@dataclass(frozen=True)
class DescriptorCheck:
    """One descriptor checked field by field: the user's word, or without one the config's."""

    name: str  # idesc, desc_a, desc_b, tmem_d, tmem_sfa or tmem_sfb
    step: int | None  # the K step of a shared-memory descriptor; None for the others
    bits: int  # the word's width
    value: int | None  # the user's word; None: not given
    implied: int | None  # the word the config implies (idesc and desc); None without a config
    rows: list[FieldCheck]
    problems: list[str]


def _rows(name: str, fields: tuple[BitField, ...], actual: dict[str, int] | None, expected: dict[str, int] | None,
          meaning: dict[str, str], unused: set[str] = frozenset()) -> list[FieldCheck]:
    out = []
    for bit_field in fields:
        value = actual[bit_field.name] if actual is not None else None
        want = expected.get(bit_field.name) if expected is not None else None
        if value is None:
            status = FieldStatus.EXPECTED
        elif want is None:
            status = FieldStatus.DECODED
        elif bit_field.name in unused:
            status = FieldStatus.UNUSED
        else:
            status = FieldStatus.OK if value == want else FieldStatus.MISMATCH
        out.append(FieldCheck(name, bit_field.name, bit_field.span(), value, want,
                              meaning.get(bit_field.name, bit_field.meaning), status))
    return out


def check_idesc(word: int | None, config: MmaConfig | None) -> DescriptorCheck:
    actual = d.decode_instr(word) if word is not None else None
    expected = expected_idesc(config) if config is not None else None
    shown = d.describe_instr(actual if actual is not None else expected)  # type: ignore[arg-type]
    if actual is not None and config is not None and config.kind == "mxf8f6f4":
        shown["a_format"] = shown["b_format"] = "mxf8f6f4 code"
    problems = []
    if word is not None and (spare := d.instr_reserved(word)):
        problems.append(f"idesc: reserved bits set (0x{spare:x})")
    if word is not None and d.ptx_instr_as_cutlass(word) != actual:
        problems.append("idesc: the PTX ISA and CUTLASS tables read this value differently (a bit PTX reserves is set)")
    return DescriptorCheck("idesc", None, 32, word, None if expected is None else d.encode_instr(expected),
                           _rows("idesc", d.INSTR_FIELDS, actual, expected, shown), problems)


def check_desc(name: str, word: int | None, config: MmaConfig | None, step: int = 0,
               step0_start: int | None = None) -> DescriptorCheck:
    actual = d.decode_smem(word) if word is not None else None
    expected = None
    problems: list[str] = []
    if config is not None:
        rows = config.m if name.startswith("desc_a") else config.n
        base = step0_start if step0_start is not None else ((actual["start"] << 4) if actual else 0)
        expected = expected_desc(config, rows, base, step)
    unused = {"lbo"} if config is not None and not smem.reads_lbo(config.layout) else set()
    shown = d.describe_smem(actual if actual is not None else expected)  # type: ignore[arg-type]
    if "lbo" in unused:
        shown["lbo"] += " (unused)"
    if word is not None and (spare := d.smem_reserved(word)):
        problems.append(f"{name}: reserved bits set (0x{spare:x})")
    if config is not None and actual is not None and step == 0 and (start := actual["start"] << 4) % TMA_ALIGN:
        problems.append(misaligned(f"{name}[0].start", start))
    return DescriptorCheck(name, step, 64, word, None if expected is None else d.encode_smem(expected),
                           _rows(name, d.SMEM_FIELDS, actual, expected, shown, unused), problems)


TMA_ALIGN = 128  # a TMA store's shared-memory destination is 128-byte aligned


def misaligned(what: str, start: int) -> str:
    return f"{what} 0x{start:x} is not {TMA_ALIGN}-byte aligned, so no TMA box can start there"


def unplaceable_tiles(values: UserValues) -> list[str]:
    """The operands whose K step 0 start no TMA store can fill (the model stores tiles as TMA does)."""
    starts = ((name, d.smem_start(words[0])) for name, words in
              (("desc_a", values.desc_a), ("desc_b", values.desc_b)) if words)
    return [misaligned(f"{name}[0].start", start) for name, start in starts if start % TMA_ALIGN]


def tiles_overlap(config: MmaConfig, desc_a: int, desc_b: int) -> str | None:
    """plan.tiles_overlap of the A and B tiles whose K step 0 descriptors are desc_a and desc_b: one K
    tile of the config each (fp4 kinds pack two elements a byte, kind::mxf8f6f4 stores one a byte)."""
    row_bytes = config.block_k // 2 if config.kind in ("mxf4nvf4", "mxf4") else config.block_k
    return plan.tiles_overlap(d.smem_start(desc_a), config.m, d.smem_start(desc_b), config.n, row_bytes)


def scale_columns_per_step(config: MmaConfig, name: str) -> int:
    """plan.sf_columns_per_step of the operand's rows: M for tmem_sfa, N for tmem_sfb."""
    return plan.sf_columns_per_step(config.m if name == "tmem_sfa" else config.n)


def scales_overlap(config: MmaConfig, tmem_sfa: int, tmem_sfb: int) -> str | None:
    """plan.scales_overlap of the scale columns K step 0's addresses start, for every K step of the config."""
    return plan.scales_overlap(split_address(tmem_sfa)[1], scale_columns_per_step(config, "tmem_sfa"),
                               split_address(tmem_sfb)[1], scale_columns_per_step(config, "tmem_sfb"), config.k_steps)


def scale_step_problems(config: MmaConfig, name: str, addrs: tuple[int, ...]) -> list[str]:
    """K steps 1.. of one operand's scale addresses: the lane of K step 0 and its column plus the
    columns one K step's scales take, once per step."""
    if not addrs:
        return []
    lane0, column0 = split_address(addrs[0])
    per_step = scale_columns_per_step(config, name)
    problems = []
    for step, addr in enumerate(addrs[1:], start=1):
        lane, column = split_address(addr)
        if lane != lane0:
            problems.append(f"{name}[{step}].lane = {lane}, expected {lane0} (K step 0's)")
        if column != column0 + per_step * step:
            problems.append(f"{name}[{step}].column = {column}, expected {column0 + per_step * step}"
                            f" ({per_step} columns a K step from K step 0's {column0})")
    return problems


TMEM_FIELDS = (BitField("lane", 16, 16, "TMEM lane"), BitField("column", 0, 16, "TMEM column"))


def check_tmem(name: str, addr: int | None, config: MmaConfig | None, d_addr: int | None) -> DescriptorCheck | None:
    if addr is None:
        return None
    lane, column = split_address(addr)
    problems = []
    width = config.n if (config is not None and name == "tmem_d") else 0
    if config is not None:
        if name != "tmem_d":  # every K step of the K tile has its own scale columns
            width = scale_columns_per_step(config, name) * config.k_steps
        if column + width > COLUMNS:
            problems.append(f"{name}: columns {column}..{column + width - 1} run past TMEM's 512")
        if name != "tmem_d" and d_addr is not None and config is not None:
            d_col = split_address(d_addr)[1]
            if column < d_col + config.n and d_col < column + width:
                problems.append(f"{name}: columns {column}..{column + width - 1} overlap D's {d_col}..{d_col + config.n - 1}")
    expected = {"lane": 0} if config is not None else None
    rows = _rows(name, TMEM_FIELDS, {"lane": lane, "column": column}, expected, {})
    rows = [row if row.field == "lane" or config is None else replace(row, status=FieldStatus.DECODED) for row in rows]
    return DescriptorCheck(name, None, 32, addr, None, rows, problems)  # a config implies only the lane


@dataclass(frozen=True)
class UserValues:
    """What the user passed (or their kernel printed): per-K-step lists may hold one value (step 0)."""

    idesc: int | None = None
    desc_a: tuple[int, ...] = ()
    desc_b: tuple[int, ...] = ()
    tmem_d: int | None = None
    tmem_sfa: tuple[int, ...] = ()
    tmem_sfb: tuple[int, ...] = ()
    # every MMA line of the output tile as the kernel printed it (check --dump, --from-log): each MMA's
    # idesc, D and acc flag, and K tiles 1.., are simulated as printed
    printed: tuple[dict[str, int], ...] = ()


def _as_printed(issue, record: dict[str, int], k_tile_step0: dict[str, int], first: dict[str, int]):  # noqa: ANN001, ANN202
    """A later K tile's printed MMA on the model's single stage: its starts and scale columns moved by
    the distance between its K step 0 and K tile 0's, the rest as printed."""
    changes: dict[str, object] = {}
    if "idesc" in record:
        changes["idesc"] = record["idesc"]
    for name in ("desc_a", "desc_b"):
        if name in record:
            fields = d.decode_smem(record[name])
            moved = (fields["start"] - d.decode_smem(k_tile_step0[name])["start"] + d.decode_smem(first[name])["start"])
            changes[name] = d.encode_smem(fields | {"start": moved & 0x3FFF})
    if "tmem_d" in record:
        changes["tmem_d"] = record["tmem_d"]
    for name in ("tmem_sfa", "tmem_sfb"):
        if name in record and name in k_tile_step0 and name in first:
            changes[name] = (record[name] - k_tile_step0[name] + first[name]) & 0xFFFFFFFF
    return replace(issue, **changes)


def simulation_plan(config: MmaConfig, values: UserValues, k_tiles: int) -> tuple[plan.TileConfig, list, list[str]]:
    """The tile config at the user's addresses, the user's MMAs for every K step of every K tile, and
    notes on what was derived rather than given."""
    if (config.kind, config.sf_vec, config.m, config.a_major, config.b_major) != ("mxf4nvf4", 16, 128, "K", "K"):
        raise UsageError("--simulate covers kind::mxf4nvf4 block16, M=128, K-major A and B "
                         f"(the stated config is {config.label()})")
    tile = plan.TileConfig(block_n=config.n, block_k=config.block_k, swizzle=config.swizzle,
                           a_addr=d.smem_start(values.desc_a[0]) if values.desc_a else 0,
                           b_addr=d.smem_start(values.desc_b[0]) if values.desc_b else None,
                           d_addr=values.tmem_d or 0,
                           sfa_addr=values.tmem_sfa[0] if values.tmem_sfa else None,
                           sfb_addr=values.tmem_sfb[0] if values.tmem_sfb else None)
    for what, addr in (("desc_a", tile.a_addr), ("desc_b", tile.b_start)):
        if addr % TMA_ALIGN:  # the field check names it as the kernel's mismatch first (check_desc)
            raise UsageError(misaligned(f"{what}[0].start", addr))
    correct = plan.issues(tile, 1)
    notes = []
    steps = []
    for s, want in enumerate(correct):
        issue = want if values.idesc is None else replace(want, idesc=values.idesc)
        for name, given in (("desc_a", values.desc_a), ("desc_b", values.desc_b)):
            if len(given) > s:
                issue = replace(issue, **{name: given[s]})
            elif given:  # the user's step-0 fields with the config's K-step advance of the start
                fields = d.decode_smem(given[0]) | {"start": d.decode_smem(getattr(want, name))["start"]}
                issue = replace(issue, **{name: d.encode_smem(fields)})
        for name, given in (("tmem_sfa", values.tmem_sfa), ("tmem_sfb", values.tmem_sfb)):
            if len(given) > s:
                issue = replace(issue, **{name: given[s]})
        steps.append(issue)
    for name, given in (("desc_a", values.desc_a), ("desc_b", values.desc_b), ("tmem_sfa", values.tmem_sfa),
                        ("tmem_sfb", values.tmem_sfb)):
        if 0 < len(given) < tile.k_steps:
            notes.append(f"{name}: K steps {len(given)}..{tile.k_steps - 1} derived with the config's advance"
                         f" (pass --{name.replace('_', '-')} once per K step to check your own)")
        elif not given:
            notes.append(f"{name}: not given; the config's value is used")
    if values.idesc is None:
        notes.append("idesc: not given; the config's value is used")
    issues = [replace(issue, accumulate=kt > 0 or s > 0) for kt in range(k_tiles) for s, issue in enumerate(steps)]
    printed = values.printed
    moved: list[int] = []
    for index, issue in enumerate(issues[:len(printed)]):
        record = printed[index]
        if index >= tile.k_steps:
            step0 = printed[index - index % tile.k_steps]
            issue = _as_printed(issue, record, step0, printed[0])
            if index % tile.k_steps == 0 and any(step0.get(name) != printed[0].get(name) for name in _MOVED):
                moved.append(index // tile.k_steps)
        else:  # K tile 0's starts and scales are per K step already; its idesc and D are the line's own
            issue = replace(issue, **{name: record[name] for name in ("idesc", "tmem_d") if name in record})
        issues[index] = replace(issue, accumulate=bool(record["acc"])) if "acc" in record else issue
    if moved:
        which = f"K tile {moved[0]}" if len(moved) == 1 else "K tiles " + ", ".join(map(str, moved))
        notes.append(f"{which}: issued at K tile 0's addresses (the model has one stage); the field check above"
                     " places its own")
    return tile, issues, notes


_MOVED = ("desc_a", "desc_b", "tmem_sfa", "tmem_sfb")  # what _as_printed moves onto K tile 0's
