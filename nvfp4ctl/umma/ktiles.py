"""The MMAs a kernel prints after its first K tile, checked against that tile's pattern, and every
MMA's accumulate flag.

Every MMA of an output tile has K tile 0's K step 0 idesc and D (the MMAs of K tile 0 included: a K
step with another N reads and writes other columns, one with another D accumulates elsewhere).
An output tile's K tiles issue the same MMAs: each descriptor's fields but the start as the field check
expects them of K tile 0's same K step, and the scales at its lane (not as K tile 0 has them: a mistake
there would pass wherever repeated and blame a K tile that is right), each K step's start and scale
columns the same distance from their K tile's K step 0 as in K tile 0.
Each K tile's K step 0 may sit elsewhere (the stage ring's buffer), so its own addresses go through K
tile 0's placement checks: the simulation has one stage and moves them back onto K tile 0's.
An output tile with fewer MMAs than its K needs leaves K steps out of C: a mismatch naming them, unless
a line among them does not parse (the log is cut short there, so they may have been issued).
acc must be 0 on the output tile's very first MMA and non-zero on every later one (the MMA reads it as
a predicate, and so does the simulation: any non-zero value accumulates).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nvfp4ctl.umma import descriptors as d
from nvfp4ctl.umma import smem
from nvfp4ctl.umma import user_values as uv
from nvfp4ctl.umma.tmem import split_address

Record = dict[str, int]


@dataclass
class KTileReport:
    problems: list[str] = field(default_factory=list)  # findings: each makes the dump fail
    notes: list[str] = field(default_factory=list)  # what was checked, and what was not
    # descriptors and TMEM addresses checked here: K tile 0's K steps 1.. idesc and D, the later K tiles' words
    checked: int = 0


def _numbers(indices: list[int]) -> str:
    """"4", "4..7", "4,6"."""
    if len(indices) > 1 and indices == list(range(indices[0], indices[-1] + 1)):
        return f"{indices[0]}..{indices[-1]}"
    return ",".join(map(str, indices))


def mmas(indices: list[int]) -> str:
    """"MMA 4", "MMAs 4..7", "MMAs 4,6"."""
    return f"MMA{'s' if len(indices) > 1 else ''} {_numbers(indices)}"


def _where(index: int, k_steps: int) -> str:
    return f"MMA {index} (K tile {index // k_steps}, K step {index % k_steps})"


def accumulate_problems(tile: list[Record], k_steps: int) -> list[str]:
    problems = []
    for index, record in enumerate(tile):
        if "acc" not in record or (record["acc"] != 0) == (index > 0):
            continue
        if index == 0:
            problems.append(f"{_where(0, k_steps)}: acc={record['acc']} adds to what D held before (the previous"
                            " output tile's sum or uninitialised TMEM); an output tile's first MMA needs acc=0")
            continue
        k_tile, step = divmod(index, k_steps)
        if step:
            lost = f"the sum of {mmas(list(range(index)))}"
        else:
            lost = "K tile 0's sum" if k_tile == 1 else f"K tiles 0..{k_tile - 1}'s sum"
        problems.append(f"{_where(index, k_steps)}: acc={record['acc']} overwrites D, so {lost} is thrown away"
                        " (acc=1 on every MMA after an output tile's first)")
    return problems


def _offsets(words: list[int], of) -> list[int]:  # noqa: ANN001 (a field reader)
    return [of(word) - of(words[0]) for word in words]


def _column(addr: int) -> int:
    return split_address(addr)[1]


def _signed(offsets: list[int]) -> str:
    return ", ".join(f"{'-' if o < 0 else '+'}0x{abs(o):x}" for o in offsets)


def _columns(lane: int, column: int, rows: int, width: int, lane_shown: bool) -> str:
    span = f"columns {column}..{column + width - 1}"
    return f"lanes {lane}..{lane + rows - 1}, {span}" if lane_shown else span


def _n(idesc: int) -> int:
    return d.decode_instr(idesc)["n_dim"] << 3


def _k_tile_0_problems(first: list[Record], config: uv.MmaConfig) -> tuple[list[str], set[str], int]:
    """K tile 0's K steps 1.. against its K step 0 (the field check above has checked K step 0's idesc
    and D against the config): problems, the keys their lines lack where K step 0's carries them, and
    how many words were checked."""
    step0 = first[0]
    missing: set[str] = set()
    checked = 0
    groups: dict[tuple[str, str, int, int], list[int]] = {}
    for index, got in enumerate(first[1:], start=1):
        for name in ("idesc", "tmem_d"):
            if name not in step0:
                continue
            if name not in got:
                missing.add(name)
                continue
            checked += 1
            if name == "tmem_d" and got[name] != step0[name]:
                groups.setdefault((name, "", got[name], step0[name]), []).append(index)
            elif name == "idesc":
                have, should = d.decode_instr(got[name]), d.decode_instr(step0[name])
                for key in should:
                    if have[key] != should[key]:
                        groups.setdefault((name, key, have[key], should[key]), []).append(index)
    from nvfp4ctl.umma.diagnose import show_value

    problems = []
    for (name, key, have, should), where in groups.items():
        several = len(where) > 1
        at = (_where(where[0], config.k_steps) if not several
              else f"{mmas(where)} (K tile 0, K steps {_numbers(where)})")
        if name == "tmem_d":
            (lane, column), (d_lane, d_column) = split_address(have), split_address(should)
            shown = lane != d_lane
            width = _n(first[where[0]]["idesc"]) if "idesc" in first[where[0]] else config.n
            into = _columns(lane, column, config.m, width, shown)
            d_at = _columns(d_lane, d_column, config.m, config.n, shown)
            problems.append(f"{at}: tmem_d = 0x{have:08x}, K step 0's is 0x{should:08x}:"
                            f" {'these MMAs accumulate' if several else 'this MMA accumulates'} into {into}"
                            f" (D is {d_at}; one output tile accumulates into one D)")
        elif key == "n_dim":
            d_column = split_address(step0.get("tmem_d", 0))[1]
            column = split_address(first[where[0]].get("tmem_d", step0.get("tmem_d", 0)))[1]  # its own D
            problems.append(f"{at}: idesc.n_dim = {have} (N={have << 3}), K step 0's is {should} (N={should << 3}):"
                            f" an N={have << 3} MMA reads B's rows 0..{(have << 3) - 1} and writes TMEM columns"
                            f" {column}..{column + (have << 3) - 1} (D is columns"
                            f" {d_column}..{d_column + (should << 3) - 1})")
        else:
            problems.append(f"{at}: idesc.{key} = {show_value(name, key, have)}, K step 0's is"
                            f" {show_value(name, key, should)}: one output tile's MMAs share one idesc")
    return problems, missing, checked


def _tile_problems(k_tile: int, first: list[Record], lines: list[Record],
                   config: uv.MmaConfig) -> tuple[list[str], set[str], int]:
    """Problems of one later K tile, the keys its lines lack where K tile 0's carry them, and how many
    of its words were checked. idesc and D are held to K tile 0's K step 0 (a K step of K tile 0 that
    differs is blamed by _k_tile_0_problems, not this K tile); the descriptors' fields but the start, and
    the scales' lane, to what the field check holds K tile 0's same K step to, so a mistake K tile 0
    makes is not passed on as the pattern."""
    k_steps = config.k_steps
    problems: list[str] = []
    missing: set[str] = set()
    checked = 0
    indices = [k_tile * k_steps + s for s in range(len(lines))]
    ref = first[:len(lines)]
    groups: dict[tuple[str, str, int, int], list[int]] = {}
    unused = set() if smem.reads_lbo(config.layout) else {"lbo"}
    for step, (index, step_ref, got) in enumerate(zip(indices, ref, lines)):
        for name in ("idesc", "desc_a", "desc_b"):
            if name not in got:
                missing.add(name)
                continue
            checked += 1
            if name == "idesc":
                have, should = d.decode_instr(got[name]), d.decode_instr(first[0][name])
                skip: set[str] = set()
            else:
                have = d.decode_smem(got[name])
                should = uv.expected_desc(config, config.m if name == "desc_a" else config.n, 0, step)
                skip = {"start"} | unused
            for key in should:
                if key not in skip and have[key] != should[key]:
                    groups.setdefault((name, key, have[key], should[key]), []).append(index)
        for name in ("tmem_d", "tmem_sfa", "tmem_sfb"):
            want = first[0] if name == "tmem_d" else step_ref
            checked += name in want and name in got
            if name in want and name not in got:
                missing.add(name)
            elif name in want and name != "tmem_d" and (lane := split_address(got[name])[0]) != 0:
                groups.setdefault((name, "lane", lane, 0), []).append(index)  # check_tmem's lane
            elif name == "tmem_d" and name in want and got[name] != want[name]:
                groups.setdefault((name, "", got[name], want[name]), []).append(index)
    from nvfp4ctl.umma.diagnose import show_value

    for (name, key, have, should), where in groups.items():
        if name == "tmem_d":
            problems.append(f"K tile {k_tile}: tmem_d = 0x{have:08x}, K tile 0's is 0x{should:08x} ({mmas(where)}):"
                            " one output tile accumulates into one D")
        else:  # idesc is held to K tile 0's, the rest to what the config expects
            held_to = "K tile 0's is" if name == "idesc" else "expected"
            problems.append(f"K tile {k_tile}: {name}.{key} = {show_value(name, key, have)},"
                            f" {held_to} {show_value(name, key, should)} ({mmas(where)})")
    for name, of, unit in (("desc_a", d.smem_start, "start"), ("desc_b", d.smem_start, "start"),
                           ("tmem_sfa", _column, "column"), ("tmem_sfb", _column, "column")):
        if not all(name in record for record in lines + ref):
            continue
        have = _offsets([record[name] for record in lines], of)
        should = _offsets([record[name] for record in ref], of)
        if have != should:
            shown = _signed if unit == "start" else (lambda offsets: ", ".join(f"{o:+d}" for o in offsets))
            problems.append(f"K tile {k_tile}: {name}.{unit} advances {shown(have)} from its K step 0, K tile 0's"
                            f" {shown(should)} ({mmas(indices)})")
    return problems, missing, checked


def _placement_problems(config: uv.MmaConfig, k_tile: int, step0: Record, first: Record) -> list[str]:
    """K tile 0's placement checks on a later K tile's own K step 0 addresses, where they differ from K
    tile 0's (the same ones have been checked there): TMA-aligned starts, A and B apart, the scales
    clear of D, of each other and of TMEM's end."""
    problems: list[str] = []
    moved = lambda *names: any(name in step0 and step0[name] != first.get(name) for name in names)  # noqa: E731
    aligned = True
    for name in ("desc_a", "desc_b"):
        if name in step0 and (start := d.smem_start(step0[name])) % uv.TMA_ALIGN:
            aligned = False  # an overlap computed from a start no TMA box can have would advise nonsense
            if moved(name):
                problems.append(uv.misaligned(f"{name}[0].start", start))
    if aligned and {"desc_a", "desc_b"} <= set(step0) and moved("desc_a", "desc_b"):
        if (overlap := uv.tiles_overlap(config, step0["desc_a"], step0["desc_b"])) is not None:
            problems.append(overlap)
    for name in ("tmem_sfa", "tmem_sfb"):
        if name in step0 and moved(name) and (check := uv.check_tmem(name, step0[name], config, first.get("tmem_d"))):
            problems += check.problems
    if {"tmem_sfa", "tmem_sfb"} <= set(step0) and moved("tmem_sfa", "tmem_sfb"):
        if (overlap := uv.scales_overlap(config, step0["tmem_sfa"], step0["tmem_sfb"])) is not None:
            problems.append(overlap)
    return [f"K tile {k_tile}: {problem}" for problem in problems]


def _missing(tile: list[Record], mma_count: int) -> list[int]:
    """The MMAs of the K the tile lacks: by the lines' own k where they rise (a kernel that skips a K
    step and prints its loop's k leaves a gap), else the ones past the last line."""
    ks = [record.get("k", -1) for record in tile]
    if all(0 <= a < b for a, b in zip(ks, ks[1:])) and ks and ks[0] == 0:
        return sorted(set(range(mma_count)) - set(ks))
    return list(range(len(tile), mma_count))


def missing_problem(missing: list[int], config: uv.MmaConfig, mma_count: int) -> str:
    """"fewer MMAs than K needs ...", naming each K tile's missing K steps (a whole K tile by itself)."""
    k_steps = config.k_steps
    parts = []
    for k_tile in sorted({index // k_steps for index in missing}):
        indices = [index for index in missing if index // k_steps == k_tile]
        steps = [index % k_steps for index in indices]
        whole = len(steps) == min(k_steps, mma_count - k_tile * k_steps)
        which = "" if whole else f", K step{'s' if len(steps) > 1 else ''} {_numbers(steps)}"
        parts.append(f"K tile {k_tile}{which} ({mmas(indices)})")
    return (f"fewer MMAs than K needs ({mma_count - len(missing)} printed, K={mma_count * config.k} needs"
            f" {mma_count}): {'; '.join(parts)} missing, so C leaves out their share of K")


def check_later_k_tiles(tile: list[Record], config: uv.MmaConfig, mma_count: int,
                        unreadable: str | None = None) -> KTileReport:
    """`tile`: the output tile's MMA lines in issue order; `mma_count`: how many the case's K needs;
    `unreadable`: a line of the tile that did not parse (dumplines.unreadable_in_tile), where MMAs the
    tile lacks may hide, so they are a note rather than a mismatch."""
    k_steps = config.k_steps
    report = KTileReport(problems=accumulate_problems(tile, k_steps))
    if not all("acc" in record for record in tile):
        report.notes.append("acc of MMAs not checked where a line has no acc= (print it: acc must be 0 only on"
                            " an output tile's first MMA)")
    first = tile[:min(k_steps, mma_count)]
    later = tile[k_steps:mma_count]
    problems, lacking, report.checked = _k_tile_0_problems(first, config)
    report.problems += problems
    if lacking:
        report.notes.append(f"K steps 1.. of K tile 0 not checked: {', '.join(sorted(lacking))} (not on their lines;"
                            " the simulation issues K step 0's there)")
    k_tiles = -(-len(later) // k_steps)
    missing: set[str] = set()
    for k_tile in range(1, k_tiles + 1):
        lines = later[(k_tile - 1) * k_steps:k_tile * k_steps]
        problems, lacking, checked = _tile_problems(k_tile, first, lines, config)
        report.checked += checked
        report.problems += problems + _placement_problems(config, k_tile, lines[0], first[0])
        missing |= lacking
    if later:
        tiles = "K tile 1" if k_tiles == 1 else f"K tiles 1..{k_tiles}"
        report.notes.append(f"{tiles} ({mmas(list(range(k_steps, k_steps + len(later))))}) checked against K tile"
                            " 0's pattern: same idesc and D, descriptor fields as the config expects apart from each"
                            " K tile's K step 0 start (the stage ring's: placed as K tile 0's must be), starts and"
                            " scale columns advancing as in K tile 0")
    if missing:
        report.notes.append(f"MMAs of K tiles 1.. not checked: {', '.join(sorted(missing))} (not on their lines)")
    if skipped := _missing(tile, mma_count):
        if unreadable is None:  # nothing in the log hides them: the kernel skipped them
            report.problems.append(missing_problem(skipped, config, mma_count))
            report.notes.append(f"the simulation issues the {len(tile)} printed MMAs in order and K tile 0's values"
                                f" for {mmas(list(range(len(tile), mma_count)))}, so its D is that of a kernel that"
                                " issues every K step")
        else:
            report.notes.append(f"{mmas(skipped)} not printed ({mma_count} for this K), but the log has a line it"
                                f" cannot read among them ({unreadable}): not checked; the simulation issues K tile"
                                " 0's values there")
    if len(tile) > mma_count:
        report.notes.append(f"MMAs {mma_count}..{len(tile) - 1} not checked: this K needs {mma_count} MMAs")
    return report
