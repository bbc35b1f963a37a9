"""Field-by-field comparison of CuTe's descriptors (host proof) with the values expected per config."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from nvfp4ctl.errors import ToolTimeout, UsageError
from nvfp4ctl.umma import descriptors as d
from nvfp4ctl.umma import host_proof
from nvfp4ctl.umma.bits import BitField
from nvfp4ctl.umma.configs import KernelConfig, expected_instr, expected_smem, expected_tmem, parse_configs
from nvfp4ctl.umma.host_proof import CuteFacts

# descriptor name -> (field table, decoder, describer, expected values)
_Spec = tuple[tuple[BitField, ...], Callable[[int], dict[str, int]], Callable[[Mapping[str, int]], dict[str, str]],
              Callable[[KernelConfig], dict[str, int]]]
DESCRIPTORS: dict[str, _Spec] = {
    "idesc": (d.INSTR_FIELDS, d.decode_instr, d.describe_instr, expected_instr),
    "smem_a": (d.SMEM_FIELDS, d.decode_smem, d.describe_smem, expected_smem),
    "smem_b": (d.SMEM_FIELDS, d.decode_smem, d.describe_smem, expected_smem),
    "smem_a_k1": (d.SMEM_FIELDS, d.decode_smem, d.describe_smem, lambda config: expected_smem(config, k_step=1)),
}
ENCODERS: dict[str, Callable[[Mapping[str, int]], int]] = {
    "idesc": d.encode_instr, "smem_a": d.encode_smem, "smem_b": d.encode_smem, "smem_a_k1": d.encode_smem,
}


@dataclass(frozen=True)
class FieldRow:
    descriptor: str  # idesc | smem_a | smem_b | smem_a_k1 | tmem
    field: str
    bits: str
    actual: int | None  # None: not cross-checked (no CuTe facts)
    expected: int
    meaning: str = ""

    @property
    def ok(self) -> bool:
        return self.actual is None or self.actual == self.expected


@dataclass(frozen=True)
class ConfigCheck:
    config: KernelConfig
    raw: dict[str, int]  # descriptor -> 32/64-bit value (CuTe's when checked, else our encoding)
    rows: tuple[FieldRow, ...]
    problems: tuple[str, ...]  # mismatches that are not one field (tile, reserved bits)
    checked: bool  # True when CuTe's values were compared
    stages: int | None = None  # shared-memory pipeline stages CUTLASS chose (known from CuTe only)
    smem_bytes: int | None = None  # dynamic shared memory per CTA (known from CuTe only)

    @property
    def mismatches(self) -> int:
        return sum(not row.ok for row in self.rows) + len(self.problems)


def check_config(config: KernelConfig, facts: CuteFacts | None) -> ConfigCheck:
    rows: list[FieldRow] = []
    raw: dict[str, int] = {}
    problems: list[str] = []
    for name, (fields, decode, describe, expect) in DESCRIPTORS.items():
        try:
            expected = expect(config)
        except ValueError as error:  # a tile the expectations do not cover is itself a finding
            problems.append(f"{name}: {error}")
            continue
        actual_word = getattr(facts, name) if facts is not None else None
        raw[name] = actual_word if actual_word is not None else ENCODERS[name](expected)
        actual = decode(actual_word) if actual_word is not None else None
        shown = describe(actual if actual is not None else expected)
        for bit_field in fields:
            rows.append(FieldRow(name, bit_field.name, bit_field.span(),
                                 actual[bit_field.name] if actual is not None else None,
                                 expected[bit_field.name], shown.get(bit_field.name, bit_field.meaning)))
        if actual_word is not None:
            width = 32 if name == "idesc" else 64
            spare = d.instr_reserved(actual_word) if width == 32 else d.smem_reserved(actual_word)
            if spare:
                problems.append(f"{name}: reserved bits set (0x{spare:x})")
    for column, expected_cols in expected_tmem(config).items():
        actual_cols = facts.tmem.get(column) if facts is not None else None
        rows.append(FieldRow("tmem", column, "cols", actual_cols, expected_cols, "TMEM columns"))
    if facts is None:
        return ConfigCheck(config, raw, tuple(rows), tuple(problems), checked=False)
    tile = (config.block_m, config.block_n, config.block_k)
    if facts.tile != tile or facts.name != config.name:
        problems.append(f"CuTe sees config {facts.id} as {facts.name} {facts.tile}, the source says {config.name} {tile}")
    return ConfigCheck(config, raw, tuple(rows), tuple(problems), True, facts.stages, facts.smem_bytes)


def check_kernel(kernel: Path, use_cute: bool = True,
                 proof_entry: Path | None = None) -> tuple[tuple[ConfigCheck, ...], str | None]:
    """Every dispatch config of `kernel`, checked against CuTe's host evaluation when nvcc and CUTLASS
    are available (`proof_entry`: the proof's cache folder where the caller has found it already).
    Returns the checks and, when CuTe could not be consulted (no nvcc, no CUTLASS, --no-cute), why. A
    proof that cannot run otherwise is no pass: its error is raised, with the way around it."""
    configs = parse_configs(kernel)
    facts: dict[int, CuteFacts] = {}
    note = None
    missing = host_proof.toolchain_missing() if use_cute else None
    if not use_cute:
        note = "CuTe's encoder not consulted (--no-cute); showing the expected encoding only"
    elif missing is not None:  # no nvcc / no CUTLASS here: the expected encoding is all there is to show
        note = f"CuTe's encoder not consulted ({missing}); showing the expected encoding only"
    else:
        try:
            facts = host_proof.cute_umma_facts(kernel, proof_entry)
        except ToolTimeout as error:  # a timeout stays one (exit 3), with the way around it
            raise ToolTimeout(f"{error}: --no-cute shows the expected encoding without CuTe's") from error
        except UsageError as error:  # a program that will not start, a cache folder gone: nothing was proved
            raise UsageError(f"the CuTe host proof could not run ({error}): --no-cute shows the expected encoding"
                             " without CuTe's") from error
    checks = []
    for config in configs:
        fact = facts.get(config.id)
        if use_cute and note is None and fact is None:
            checks.append(ConfigCheck(config, {}, (), (f"CuTe reported nothing for config {config.id}",), True))
        else:
            checks.append(check_config(config, fact))
    return tuple(checks), note


def to_json(check: ConfigCheck) -> dict[str, object]:
    return {
        "id": check.config.id, "name": check.config.name, "use": check.config.use,
        "tile": [check.config.block_m, check.config.block_n, check.config.block_k],
        "checked_against_cute": check.checked, "stages": check.stages, "smem_bytes": check.smem_bytes,
        "mismatches": check.mismatches, "problems": list(check.problems),
        "raw": {name: f"0x{value:0{8 if name == 'idesc' else 16}x}" for name, value in check.raw.items()},
        "fields": [{"descriptor": row.descriptor, "field": row.field, "bits": row.bits, "value": row.actual,
                    "expected": row.expected, "meaning": row.meaning, "ok": row.ok} for row in check.rows],
    }
