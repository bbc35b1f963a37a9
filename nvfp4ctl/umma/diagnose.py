"""Run a kernel's UMMA issues through the model on real inputs, compare D with the exact reference,
and name the descriptor field that explains a wrong D.

The user's issues are compared, K step by K step, with the correct plan for the same tile config
(plan.py, at the user's own shared and TMEM addresses). Every field that differs is listed with the
value it should have; a field "explains" the result when putting back just its correct value makes
the model's D equal the reference. A swizzled operand's LBO is no field to compare: the hardware
never reads it (smem.reads_lbo), though one holding the SBO expected hints at a swap beside the SBO's
name. LBO/SBO swaps (no swizzle), K-step advances, N>>3, scale ids and swizzle mismatches get their own
names.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch

from nvfp4ctl.problems.nvfp4_gemm.reference import reference_gemm, round_to_fp16
from nvfp4ctl.umma import descriptors as d
from nvfp4ctl.umma import plan, smem
from nvfp4ctl.umma.model import MmaIssue
from nvfp4ctl.umma.smem import ModelError
from nvfp4ctl.umma.tmem import split_address

DESCRIPTORS = ("idesc", "desc_a", "desc_b", "tmem_d", "tmem_sfa", "tmem_sfb")
MAP_CELL = 8  # rows x columns of D per character of the error map


@dataclass(frozen=True)
class FieldDiff:
    step: int  # index of the MMA in the issue list
    descriptor: str
    field: str
    actual: int
    expected: int


@dataclass
class Simulation:
    config: plan.TileConfig
    d_model: torch.Tensor  # fp32 (block_m, block_n); NaN where the model refused the issue
    d_ref: torch.Tensor  # fp16 reference of the same tile
    model_error: str | None
    error_field: str | None
    diffs: list[FieldDiff] = field(default_factory=list)
    explanations: list[str] = field(default_factory=list)

    @property
    def bad(self) -> torch.Tensor:
        got = round_to_fp16(self.d_model.double())
        return ~((got == self.d_ref) | (got.isnan() & self.d_ref.isnan()))

    @property
    def ok(self) -> bool:
        return not bool(self.bad.any())


def issue_fields(issue: MmaIssue, name: str) -> dict[str, int]:
    value = getattr(issue, name)
    if name == "idesc":
        return d.decode_instr(value)
    if name.startswith("desc_"):
        return d.decode_smem(value)
    lane, column = split_address(value)
    return {"lane": lane, "column": column}


def compare_issues(actual: list[MmaIssue], expected: list[MmaIssue]) -> list[FieldDiff]:
    """The fields that differ from the plan's, leaving out an LBO the plan's layout has no use for (a
    swizzled operand's): the hardware ignores it, as `dump --umma`'s field check does."""
    diffs = []
    for step, (got, want) in enumerate(zip(actual, expected)):
        for name in DESCRIPTORS:
            have, should = issue_fields(got, name), issue_fields(want, name)
            ignored = {"lbo"} if name.startswith("desc_") and not smem.reads_lbo(should["layout"]) else set()
            diffs.extend(FieldDiff(step, name, key, have[key], should[key]) for key in should
                         if key not in ignored and have[key] != should[key])
        if got.accumulate != want.accumulate:
            diffs.append(FieldDiff(step, "mma", "accumulate", int(got.accumulate), int(want.accumulate)))
    return diffs


def set_field(issue: MmaIssue, name: str, key: str, value: int) -> MmaIssue:
    if name == "mma":
        return replace(issue, accumulate=bool(value))
    fields = issue_fields(issue, name) | {key: value}
    if name == "idesc":
        return replace(issue, idesc=d.encode_instr(fields))
    if name.startswith("desc_"):
        return replace(issue, **{name: d.encode_smem(fields)})
    return replace(issue, **{name: (fields["lane"] << 16) | fields["column"]})


def _fix(issues: list[MmaIssue], diffs: list[FieldDiff]) -> list[MmaIssue]:
    fixed = list(issues)
    for diff in diffs:
        fixed[diff.step] = set_field(fixed[diff.step], diff.descriptor, diff.field, diff.expected)
    return fixed


def tile_reference(inputs: plan.TileInputs) -> torch.Tensor:
    """fp16 (block_m, block_n): the exact reference of one tile's rows and columns."""
    a, b = inputs.a.unsqueeze(-1), inputs.b.unsqueeze(-1)
    return reference_gemm(a, b, inputs.sfa.unsqueeze(-1).view(torch.float8_e4m3fn),
                          inputs.sfb.unsqueeze(-1).view(torch.float8_e4m3fn))[:, :, 0]


def run_model(config: plan.TileConfig, inputs: plan.TileInputs, issues: list[MmaIssue]) -> tuple[torch.Tensor, ModelError | None]:
    try:
        return plan.run_tile(config, inputs, issues), None
    except ModelError as error:
        return torch.full((config.block_m, config.block_n), float("nan")), error


def show_value(descriptor: str, key: str, value: int) -> str:
    """Byte fields in bytes (the descriptor stores them >> 4), the rest as they are."""
    if descriptor.startswith("desc_") and key in ("start", "lbo", "sbo"):
        return f"0x{value << 4:x} ({value << 4} B)" if key == "start" else f"{value << 4} B"
    return str(value)


def _advance(descriptor: str, first_step: int, k_steps: int, issues: list[MmaIssue], expected: list[MmaIssue],
             where: str) -> str:
    """A K-step advance gone wrong, with every K step's start of the K tile it first shows in: "missed"
    only where the start never moves."""
    k_tile = first_step // k_steps
    mmas = range(k_tile * k_steps, min((k_tile + 1) * k_steps, len(issues), len(expected)))
    have = [issue_fields(issues[i], descriptor)["start"] << 4 for i in mmas]
    want = [issue_fields(expected[i], descriptor)["start"] << 4 for i in mmas]
    listed = lambda starts: ", ".join(f"0x{start:x}" for start in starts)  # noqa: E731
    if len(set(have)) == 1:
        return (f"{descriptor}.start: missed K-step advance: the start stays 0x{have[0]:x} in every K step,"
                f" expected {listed(want)} ({where})")
    steps = lambda starts: {b - a for a, b in zip(starts, starts[1:])}  # noqa: E731
    signed = lambda step: f"{'-' if step < 0 else '+'}0x{abs(step):x}"  # noqa: E731
    per_step = ""
    if len(steps(have)) == 1 and len(steps(want)) == 1:
        per_step = f": {signed(steps(have).pop())} per step, expected {signed(steps(want).pop())}"
    return f"{descriptor}.start: wrong K-step advance{per_step} — starts {listed(have)}, expected {listed(want)} ({where})"


def _name(descriptor: str, key: str, diffs: list[FieldDiff], issues: list[MmaIssue], expected: list[MmaIssue],
          k_steps: int) -> str:
    steps = sorted({diff.step for diff in diffs})
    first = diffs[0]
    where = f"MMA{'s' if len(steps) > 1 else ''} {','.join(map(str, steps))}"
    shown = (f"{descriptor}.{key} = {show_value(descriptor, key, first.actual)},"
             f" expected {show_value(descriptor, key, first.expected)} ({where})")
    if descriptor.startswith("desc_") and key == "start" and all(step % k_steps for step in steps):
        return _advance(descriptor, steps[0], k_steps, issues, expected, where)
    if descriptor == "idesc" and key == "n_dim":
        return f"idesc.n_dim (N>>3) = {first.actual} (N={first.actual << 3}), expected {first.expected} (N={first.expected << 3})"
    if descriptor == "idesc" and key in ("a_sf_id", "b_sf_id"):
        return f"idesc.{key}: wrong scale id — {shown}"
    if descriptor.startswith("desc_") and key == "layout":
        return (f"{descriptor}.layout: swizzle mismatch — the descriptor says {d.LAYOUTS.get(first.actual, first.actual)},"
                f" the tile was stored {d.LAYOUTS.get(first.expected, first.expected)} ({where})")
    return shown


def _swap_hint(descriptor: str, key: str, diffs: list[FieldDiff], issues: list[MmaIssue],
               expected: list[MmaIssue]) -> str:
    """Where a swizzled operand's SBO is wrong and its LBO holds exactly the SBO expected, the two fields
    were most likely written the other way round: the LBO is still no difference (the hardware ignores it),
    but its value points at the fix."""
    if not descriptor.startswith("desc_") or key != "sbo":
        return ""
    layout = issue_fields(expected[diffs[0].step], descriptor)["layout"]
    if smem.reads_lbo(layout):  # there the LBO is a difference of its own, and a swap is named as such
        return ""
    if any(issue_fields(issues[diff.step], descriptor)["lbo"] != diff.expected for diff in diffs):
        return ""
    sbo = show_value(descriptor, "sbo", diffs[0].expected)
    return (f"; LBO and SBO look swapped: lbo = {sbo} is the SBO expected (LBO is ignored for"
            f" {d.LAYOUTS.get(layout, layout)}, SBO must be {sbo})")


def explain(config: plan.TileConfig, inputs: plan.TileInputs, issues: list[MmaIssue], expected: list[MmaIssue],
            reference: torch.Tensor) -> tuple[list[FieldDiff], list[str]]:
    """Differing fields, and the names of those whose correct value alone makes D right."""
    diffs = compare_issues(issues, expected)
    groups: dict[tuple[str, str], list[FieldDiff]] = {}
    for diff in diffs:
        groups.setdefault((diff.descriptor, diff.field), []).append(diff)
    names = []

    def fixes(selected: list[FieldDiff]) -> bool:
        model_d, error = run_model(config, inputs, _fix(issues, selected))
        return error is None and torch.equal(round_to_fp16(model_d.double()), reference)

    for descriptor in ("desc_a", "desc_b"):  # a swap needs both fields put back at once
        lbo, sbo = groups.get((descriptor, "lbo")), groups.get((descriptor, "sbo"))
        if lbo and sbo and lbo[0].actual == sbo[0].expected and sbo[0].actual == lbo[0].expected and fixes(lbo + sbo):
            names.append(f"{descriptor}: LBO and SBO swapped — lbo={lbo[0].actual << 4} B, sbo={sbo[0].actual << 4} B;"
                         f" expected lbo={lbo[0].expected << 4} B, sbo={sbo[0].expected << 4} B")
            groups.pop((descriptor, "lbo"))
            groups.pop((descriptor, "sbo"))
    for (descriptor, key), selected in groups.items():
        if fixes(selected):
            names.append(_name(descriptor, key, selected, issues, expected, config.k_steps) + _swap_hint(descriptor, key, selected, issues, expected))
    if not names and diffs and fixes(diffs):
        names.append("only all differing fields together: " + ", ".join(sorted({f"{g[0]}.{g[1]}" for g in groups})))
    return diffs, names


def simulate(config: plan.TileConfig, inputs: plan.TileInputs, issues: list[MmaIssue] | None = None) -> Simulation:
    """The model's D for `issues` (default: the correct plan) against the reference, explained."""
    k_tiles = inputs.a.shape[1] // config.k_tile_bytes
    expected = plan.issues(config, k_tiles)
    issues = issues if issues is not None else expected
    reference = tile_reference(inputs)
    model_d, error = run_model(config, inputs, issues)
    result = Simulation(config, model_d, reference, str(error) if error else None, error.field if error else None)
    if not result.ok:
        result.diffs, result.explanations = explain(config, inputs, issues, expected, reference)
        # the plan is laid out at the user's own addresses: tiles that overlap there are wrong with every
        # field right, and no difference can explain them
        for overlap in (config.scales_overlap(), config.tiles_overlap()):
            if overlap is not None:
                result.explanations.insert(0, overlap)
    return result


def error_map(bad: torch.Tensor, cell: int = MAP_CELL) -> list[str]:
    """One character per cell x cell block of D: '.' all right, 'x' some wrong, '#' all wrong."""
    rows, cols = bad.shape
    lines = []
    for r in range(0, rows, cell):
        chars = []
        for c in range(0, cols, cell):
            block = bad[r:r + cell, c:c + cell]
            chars.append("#" if bool(block.all()) else "x" if bool(block.any()) else ".")
        lines.append("".join(chars))
    return lines


def grouped_diffs(diffs: list[FieldDiff]) -> list[str]:
    """One line per (field, wrong value, right value), with the MMAs it occurs in."""
    groups: dict[tuple[str, str, int, int], list[int]] = {}
    for diff in diffs:
        groups.setdefault((diff.descriptor, diff.field, diff.actual, diff.expected), []).append(diff.step)
    return [f"{name}.{key} = {show_value(name, key, actual)}, expected {show_value(name, key, expected)}"
            f" (MMA {','.join(map(str, steps))})" for (name, key, actual, expected), steps in groups.items()]
