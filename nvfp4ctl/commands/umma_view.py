"""Views shared by `dump --umma` (the user's values) and `check --dump` (values the kernel printed):
descriptor tables checked against a config, and the UMMA model's verdict on real inputs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.text import Text

from nvfp4ctl.console import get_console
from nvfp4ctl.errors import UsageError
from nvfp4ctl.options import parse_shape
from nvfp4ctl.project import byo_kernel_doc
from nvfp4ctl.words import first_few, plural

if TYPE_CHECKING:
    from nvfp4ctl.umma.user_values import DescriptorCheck


def hexes(values: list[str] | None, what: str, bits: int) -> tuple[int, ...]:
    from nvfp4ctl.umma.user_values import parse_hex

    return tuple(parse_hex(value, what, bits) for value in values or [])


def _title(check: DescriptorCheck) -> str:
    """The JSON name: "desc_a (K step 1)", "idesc"."""
    return check.name if check.step is None else f"{check.name} (K step {check.step})"


def _label(check: DescriptorCheck) -> str:
    """The table's name: "desc_a[1]", "idesc"."""
    return check.name if check.step is None else f"{check.name}[{check.step}]"


def show_user_umma(values: Any, config: Any, simulate: bool, shape: str | None, seed: int, payload: dict[str, Any],
                    as_json: bool, more_problems: tuple[str, ...] = (), more_checked: int = 0) -> tuple[str, bool]:
    """`more_problems`: findings beyond the descriptor fields (check --dump's later K tiles and acc flags);
    `more_checked`: the descriptors those findings come from (the later K tiles' words)."""
    from nvfp4ctl.umma import descriptors as d
    from nvfp4ctl.umma import user_values as uv

    console = get_console()
    # a shape the simulation cannot take is said before the tables, not under them
    simulated = _simulation_shape(config, shape) if simulate else None
    checks: list[uv.DescriptorCheck] = []
    if values.idesc is not None or config is not None:
        checks.append(uv.check_idesc(values.idesc, config))
    for name, words in (("desc_a", values.desc_a), ("desc_b", values.desc_b)):
        step0 = d.smem_start(words[0]) if words else None
        for step, word in enumerate(words or ([None] if config is not None else [])):
            checks.append(uv.check_desc(name, word, config, step, step0))
    for name, addr in (("tmem_d", values.tmem_d), ("tmem_sfa", (values.tmem_sfa or (None,))[0]),
                       ("tmem_sfb", (values.tmem_sfb or (None,))[0])):
        if (tmem := uv.check_tmem(name, addr, config, values.tmem_d)) is not None:
            checks.append(tmem)
    from nvfp4ctl.umma.diagnose import show_value

    bad = [f"{_label(c)}.{row.field} = {show_value(c.name, row.field, row.value)},"
           f" expected {show_value(c.name, row.field, row.expected)}"
           for c in checks for row in c.rows if row.bad]
    problems = [problem for c in checks for problem in c.problems] + list(more_problems)
    if config is not None:
        problems += uv.scale_step_problems(config, "tmem_sfa", values.tmem_sfa)
        problems += uv.scale_step_problems(config, "tmem_sfb", values.tmem_sfb)
    unplaceable = uv.unplaceable_tiles(values)
    # an overlap reckoned from a start no TMA box can have would advise a buffer from a start just as wrong
    if config is not None and values.desc_a and values.desc_b and not unplaceable:
        if (overlap := uv.tiles_overlap(config, values.desc_a[0], values.desc_b[0])) is not None:
            problems.append(overlap)
    if config is not None and values.tmem_sfa and values.tmem_sfb:
        if (overlap := uv.scales_overlap(config, values.tmem_sfa[0], values.tmem_sfb[0])) is not None:
            problems.append(overlap)
    payload["umma_values"] = {
        "config": None if config is None else vars(config),
        "descriptors": [{"name": _title(c), "value": c.value, "problems": c.problems,
                         "fields": [vars(row) for row in c.rows]} for c in checks]}
    if not as_json:
        if config is not None:
            console.info(f"config {config.label()}, K tile {config.block_k} = {config.k_steps} K steps", style="dim")
        console.info("  ".join(f"{_label(c)} " + (
            f"0x{c.value:0{c.bits // 4}x}" if c.value is not None else f"0x{c.implied:0{c.bits // 4}x} (implied)")
            for c in checks), style="bold")
        styles = {uv.FieldStatus.OK: "green", uv.FieldStatus.MISMATCH: "bold red"}  # the other verdicts: dim
        table = [(_label(c), r.field, r.bits, r.meaning, "-" if r.value is None else r.value,
                  "-" if r.expected is None else r.expected, Text(r.status.value, style=styles.get(r.status, "dim")))
                 for c in checks for r in c.rows]
        console.table(["desc", "field", "bits", "meaning", "value", "expected", "status"], table, right_align_from=4)
        for problem in problems:
            console.fail(f"  {problem}")
    given = sum(c.value is not None for c in checks) + more_checked
    if config is not None:  # K steps 1.. of the scales: no row of their own, checked by scale_step_problems
        given += len(values.tmem_sfa[1:]) + len(values.tmem_sfb[1:])
    count = len(bad) + len(problems)
    if given == 0:  # only the config's own fields: comparing them with themselves proves nothing
        summary = "umma values: none given (--idesc, --desc-a, --desc-b, --tmem-*), the config's fields listed"
    else:
        checked = "checked against the config" if config is not None else "decoded (no --mma: nothing to check against)"
        summary = f"umma values: {plural(given, 'descriptor')} {checked}, {plural(count, 'mismatch', 'mismatches')}"
    if bad or problems:  # each by name: -q drops the table, and the run log keeps this line alone
        summary += f" ({first_few(bad + problems)})"
    ok = not bad and not problems
    if simulated is not None and unplaceable:  # the model stores the tiles as TMA does: there it cannot
        summary += f"; simulate: not run ({unplaceable[0]})"
        if not as_json:
            console.fail(f"simulate: not run: {unplaceable[0]}")
    elif simulated is not None:
        result, sim_ok = _simulate(values, config, simulated, seed, payload, as_json)
        summary += "; " + result
        ok &= sim_ok
    return summary, ok


def _simulation_shape(config: Any, shape: str | None) -> tuple[int, int, int, int]:
    """The M, N, K, L --simulate runs the values on (--shape, else one tile of the config, two K tiles deep,
    one batch); a UsageError where there is no config or the tile does not fit the shape."""
    if config is None:
        raise UsageError("--simulate needs the config the values are meant for: --mma M,N,K (and --swizzle)")
    m, n, k, batches = parse_shape(shape or f"{config.m},{config.n},{config.block_k * 2}")
    if m < config.m or n < config.n or k % config.block_k:
        raise UsageError(f"--shape {m},{n},{k}: the tile needs M >= {config.m}, N >= {config.n}, K a multiple of"
                         f" the K tile {config.block_k}")
    return m, n, k, batches


def _simulate(values: Any, config: Any, shape: tuple[int, int, int, int], seed: int, payload: dict[str, Any],
              as_json: bool) -> tuple[str, bool]:
    """Batch 0's output tile (0, 0) of the inputs check makes for the shape, L included: every batch runs the
    same MMAs (the batch moves the TMA coordinates, not a descriptor), so the others would say the same."""
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.problems.base import make_case
    from nvfp4ctl.umma import diagnose, plan
    from nvfp4ctl.umma.user_values import simulation_plan

    console = get_console()
    m, n, k, batches = shape
    tile, issues, notes = simulation_plan(config, values, k // config.block_k)
    problem = get_problem("nvfp4_gemm")
    data = problem.make_input(make_case(m=m, n=n, k=k, l=batches, seed=seed), device="cpu")  # too big: one line, exit 2
    result = diagnose.simulate(tile, plan.tile_inputs(data, tile, 0, 0), issues)
    bad = result.bad  # a property that rounds the tile: once
    emap = diagnose.error_map(bad)
    wrong = int(bad.sum())
    payload["simulate"] = {"shape": [m, n, k], "l": batches, "batch": 0, "seed": seed, "tile": [tile.block_m, tile.block_n], "wrong": wrong,
                           "model_error": result.model_error, "notes": notes, "explanations": result.explanations,
                           "differences": [vars(diff) for diff in result.diffs],
                           "error_map": emap}
    total = bad.numel()
    # the counts are one batch's tile: where there are more batches the summary says whose
    of_batch = f" in batch 0 of {batches}" if batches > 1 else ""
    if not as_json:
        l_text = f" l={batches}" if batches > 1 else ""
        console.info(f"simulate: m={m} n={n} k={k}{l_text} seed {seed}, output tile (0, 0) {tile.block_m}x{tile.block_n},"
                     f" {k // config.block_k} K tiles of {config.block_k}, A at 0x{tile.a_addr:x}, B at 0x{tile.b_start:x}",
                     style="bold")
        if batches > 1:
            console.info(f"  batch 0 only of {batches}: every batch runs the same MMAs, each on its own data",
                         style="dim")
        for note in notes:
            console.info(f"  {note}", style="dim")
        if result.model_error:
            console.fail(f"  the model refuses the MMA: {result.model_error}")
        if wrong:
            console.fail(f"  model D differs from the reference in {wrong} of {total} values{of_batch}; error map"
                         f" ({diagnose.MAP_CELL}x{diagnose.MAP_CELL} blocks, rows down, '#' all wrong, 'x' some, '.' right):")
            console.raw("\n".join("    " + line for line in emap))
            for line in diagnose.grouped_diffs(result.diffs)[:12]:
                console.info(f"  differs: {line}")
            for line in result.explanations or [_unexplained(result)]:
                console.fail(f"  explained by: {line}")
        else:
            console.ok(f"  model D equals the exact reference ({total} values{of_batch})")
    if wrong:
        return (f"simulate: {wrong} of {total} wrong{of_batch}"
                + (f" ({result.explanations[0]})" if result.explanations else "")), False
    return f"simulate: D equals the reference ({total} values{of_batch})", True


def _keep_printed_lines(lines: list[str]) -> None:
    """The kernel's nvfp4ctl:umma lines as printed, so that `check --dump > log` can be read back by
    `dump --umma --from-log log`: the child's output otherwise reaches the screen only under -v, and
    there it is printed already (each line as [child] ...). The header is kept under -q too: it marks
    where this run's lines start (dumplines.parse tells runs apart by it)."""
    from nvfp4ctl.console import VERBOSE
    from nvfp4ctl.umma.dumplines import KEPT_LINES_HEADER, PREFIX

    console = get_console()
    kept = [line.strip() for line in lines if PREFIX in line]
    if not kept or console.verbosity >= VERBOSE:
        return
    console.info(f"{KEPT_LINES_HEADER}{plural(len(kept), f'{PREFIX} line')} (`nvfp4ctl dump --umma --from-log`"
                 " reads them back from this output):", style="dim", result=True)
    console.raw("\n".join(kept))


def _unexplained(result: Any) -> str:
    """The verdict where no field alone explains D: it points at what is printed above it."""
    if result.diffs:
        return "no single field explains it (see the differences above)"
    if result.model_error:
        return "the model's refusal above: no field differs from the plan laid out at your own addresses"
    return ("no field differs from the plan laid out at your own addresses (the tiles, D and the scales where"
            " you put them): the addresses themselves are at fault (see the field check above)")


def _cut(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def show_dump_lines(lines: Iterable[str], m: int, n: int, k: int, seed: int, origin: str = "--dump",
                    saved: bool = False, why_none: str | None = None, batches: int = 1) -> tuple[str, bool]:
    """`check --dump` / `dump --umma --from-log`: the kernel's nvfp4ctl:umma lines, decoded, checked and
    simulated on the case's inputs; `origin` names the option they came through. `saved`: the lines
    come from a file the user named, so one without them is an input error (UsageError), not a
    kernel that failed to print them; `why_none`: what the file is where it may hold no text lines (gzip,
    UTF-16), said where none is found. Saved lines are read once, as they come."""
    from nvfp4ctl.umma import dumplines
    from nvfp4ctl.umma.ktiles import check_later_k_tiles

    console = get_console()
    if not saved:
        lines = list(lines)  # kept as printed below, as well as parsed
        _keep_printed_lines(lines)
    dump = dumplines.parse(lines)
    if saved and dump.second_run is not None:  # the first run's MMAs would be read with the other's config
        number, text = dump.second_run
        raise UsageError(f"{origin}: more than one run in it: a second starts at line {number} ({_cut(text)});"
                         " keep one run's output in the file (`check --dump ... > log`, not `>>`)")
    for line in dump.rejected[:3]:
        console.warn(f"unparsed {dumplines.PREFIX} line: {line}")
    tile = dumplines.first_tile(dump)
    if not tile and saved and why_none is not None:
        raise UsageError(f"{origin}: no `{dumplines.PREFIX} k=0 ...` line in it: {why_none}")
    if not tile and saved:
        raise UsageError(f"{origin}: no `{dumplines.PREFIX} k=0 ...` line in it ({plural(dump.lines_read, 'line')} read); run a"
                         f" kernel that prints them ({byo_kernel_doc()} has the macro) with `nvfp4ctl check --dump`"
                         " on a B200 first and save its output")
    if not tile:
        console.fail(f"{origin}: the kernel printed no `{dumplines.PREFIX} k=0 ...` line ({byo_kernel_doc()} has the macro)")
        return "dump: no nvfp4ctl:umma lines", False
    config, source = dumplines.infer_config(dump, tile)
    console.info(f"dump: {plural(len(tile), 'MMA')} of the first output tile; config {config.label()} ({source})", style="bold")
    values = dumplines.user_values(tile, config.k_steps)
    later = check_later_k_tiles(tile, config, k // config.k, dumplines.unreadable_in_tile(dump, tile))
    for note in later.notes:
        console.info(f"  {note}", style="dim")
    payload: dict[str, Any] = {}
    summary, ok = show_user_umma(values, config, True, f"{m},{n},{k},{batches}", seed, payload, as_json=False,
                                 more_problems=tuple(later.problems), more_checked=later.checked)
    (console.ok if ok else console.fail)(summary)
    return summary, ok
