"""The line format a user's tcgen05 kernel prints under a debug macro, and what `check --dump` does
with those lines: decode every descriptor, check it against the config, and run the first output
tile's MMAs through the UMMA model on the very inputs of the test case.

Line format (one line per tcgen05.mma the issuing thread of CTA 0 issues, in issue order):

    nvfp4ctl:umma k=<i> idesc=0x<8 hex> desc_a=0x<16 hex> desc_b=0x<16 hex> [tmem_d=0x<8 hex>]
                  [tmem_sfa=0x<8 hex>] [tmem_sfb=0x<8 hex>] [acc=<0|1>]

k counts the MMAs of the first output tile from 0 (K step within the K tile, continuing across K
tiles). An optional config line states what the values are meant for (else it is inferred from the
first idesc and desc_a: M, N, swizzle; K tile 256):

    nvfp4ctl:umma config mma=128,128,64 swizzle=128B block_k=256 kind=mxf4nvf4 sf_vec=16

Unknown keys are ignored; a line that does not parse is reported, not fatal. The config line that goes
with the first output tile is the last one before it (else the first one after it: printf's order is
not the threads' order); a launch for a later test case may state another.

A saved output holds one run of `check --dump` (a file appended to twice holds two): a run starts at check's
first line (`check · ...`) or at the header above the lines it keeps (`dump: the kernel's 9 nvfp4ctl:umma
lines ...`, kept under -q), and such a line after MMA lines starts a second run. Lines with neither are
read as one run: a config line after MMAs there cannot be told from a later test case's launch (which
prints its own config, its own first tile's k=0 and the same k's after), so nothing in them marks a
second run, and the first output tile keeps the config line printed before it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from nvfp4ctl.errors import UsageError
from nvfp4ctl.umma import descriptors as d
from nvfp4ctl.umma import smem
from nvfp4ctl.umma.user_values import MmaConfig, UserValues, make_config

PREFIX = "nvfp4ctl:umma"
# how the lines of a run of `check --dump` open in its output: check's first line, then the header above
# the kernel's lines that it keeps (commands/check.py, commands/umma_view.py)
CHECK_RUN_START = "check · "
KEPT_LINES_HEADER = "dump: the kernel's "
_LINE = re.compile(r"nvfp4ctl:umma\s+(?P<rest>.*)$")
_PAIR = re.compile(r"(\w+)=(\S+)")
HEX_KEYS = {"idesc": 32, "desc_a": 64, "desc_b": 64, "tmem_d": 32, "tmem_sfa": 32, "tmem_sfb": 32}


@dataclass
class DumpLines:
    records: list[dict[str, int]] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    # where each record and each rejected line sits among the nvfp4ctl:umma lines, so that a line cut
    # short inside the first output tile can be told from MMAs the kernel never issued
    record_at: list[int] = field(default_factory=list)
    rejected_at: list[int] = field(default_factory=list)
    # every config line, with its place among the nvfp4ctl:umma lines
    configs: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    # (line number, line) where a second run's lines start, after the first run's MMA lines
    second_run: tuple[int, str] | None = None
    lines_read: int = 0


def parse(lines: Iterable[str]) -> DumpLines:
    out = DumpLines()
    position = -1
    for number, line in enumerate(lines, 1):
        out.lines_read = number
        if line.startswith((CHECK_RUN_START, KEPT_LINES_HEADER)):
            if out.records and out.second_run is None:
                out.second_run = (number, line.strip())
            continue
        match = _LINE.search(line)
        if not match:
            continue
        position += 1
        rest = match.group("rest").strip()
        pairs = dict(_PAIR.findall(rest))
        if rest.startswith("config"):
            out.configs.append((position, pairs))
            continue
        try:
            record = {key: int(value, 16) for key, value in pairs.items() if key in HEX_KEYS}
            record["k"] = int(pairs["k"])
            if "acc" in pairs:
                record["acc"] = int(pairs["acc"])
        except (KeyError, ValueError):
            out.rejected.append(line.strip())
            out.rejected_at.append(position)
            continue
        if not {"idesc", "desc_a", "desc_b"} <= set(record):
            out.rejected.append(line.strip())
            out.rejected_at.append(position)
            continue
        out.records.append(record)
        out.record_at.append(position)
    return out


def _record_index(dump: DumpLines, record: dict[str, int]) -> int:
    """Where `record` (one of dump.records itself, as first_tile hands them out) sits in dump.records."""
    return next(index for index, each in enumerate(dump.records) if each is record)


def unreadable_in_tile(dump: DumpLines, tile: list[dict[str, int]]) -> str | None:
    """The first nvfp4ctl:umma line that does not parse between the tile's first MMA line and the next
    line that does after its last (a line cut short by a truncated output, or garbled): the log is
    visibly damaged there, so the MMAs it lacks may have been issued. None where there is none."""
    if not tile:
        return None
    start = dump.record_at[_record_index(dump, tile[0])]
    after = _record_index(dump, tile[-1]) + 1
    end = dump.record_at[after] if after < len(dump.records) else None
    for text, at in zip(dump.rejected, dump.rejected_at):
        if at > start and (end is None or at < end):
            return text
    return None


def first_tile(dump: DumpLines) -> list[dict[str, int]]:
    """The records of the first output tile: from the first k=0 up to (not including) the next k=0."""
    tile: list[dict[str, int]] = []
    for record in dump.records:
        if record["k"] == 0 and tile:
            break
        if record["k"] == 0 or tile:
            tile.append(record)
    return tile


def tile_config(dump: DumpLines, tile: list[dict[str, int]]) -> dict[str, str]:
    """The config line of the first output tile's launch: the last one before its first MMA, else the
    first one after it (a later test case's launch may state another config); {} where none is printed."""
    if not dump.configs:
        return {}
    start = dump.record_at[_record_index(dump, tile[0])] if tile else 0
    before = [pairs for at, pairs in dump.configs if at < start]
    return before[-1] if before else dump.configs[0][1]


def infer_config(dump: DumpLines, tile: list[dict[str, int]]) -> tuple[MmaConfig, str]:
    """The config the values are for: the config line, else M and N of the first idesc and the swizzle of
    the first desc_a (then the check can only catch what is inconsistent with those)."""
    c = tile_config(dump, tile)
    if c:
        try:
            sf = int(c["sf_vec"]) if c.get("sf_vec") else None
            block_k = int(c.get("block_k", 256))
        except ValueError:
            raise UsageError(f"nvfp4ctl:umma config line {c}: sf_vec and block_k must be integers") from None
        return make_config(c.get("mma"), c.get("kind", "mxf4nvf4"), sf, c.get("major", "K"),
                           c.get("swizzle", "128B"), block_k, from_line=True), "the kernel's config line"
    if not tile:
        raise UsageError("no nvfp4ctl:umma lines with k=0 in the output")
    m, n = d.instr_mn(d.decode_instr(tile[0]["idesc"]))
    swizzle = smem.SWIZZLE_NAMES.get(d.decode_smem(tile[0]["desc_a"])["layout"], "128B")
    mma = f"{m},{n},64"
    return make_config(mma, "mxf4nvf4", None, "K", swizzle, 256), "inferred from the first idesc and desc_a"


def user_values(tile: list[dict[str, int]], k_steps: int) -> UserValues:
    """K tile 0's values for the field check: its per-K-step descriptors and scales, and K step 0's idesc
    and D, which ktiles.py holds every other MMA to (K tile 0's K steps 1.. included; later K tiles are
    checked against K tile 0's pattern there too); every line rides along for the simulation."""
    first = [record for record in tile if record["k"] < k_steps]
    pick = lambda key: tuple(record[key] for record in first if key in record)  # noqa: E731
    return UserValues(idesc=first[0]["idesc"], desc_a=pick("desc_a"), desc_b=pick("desc_b"),
                      tmem_d=first[0].get("tmem_d"), tmem_sfa=pick("tmem_sfa"), tmem_sfb=pick("tmem_sfb"),
                      printed=tuple(tile))
