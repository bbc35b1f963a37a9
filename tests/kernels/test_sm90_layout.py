"""The sm_90a kernel's source layout (CPU only): knobs declared in its one config header, experiment
switches only in the benchmark header, every header inlined by export, and the shipped build's SASS
equal to the committed digest (tests/kernels/sm90_sass.json; scripts/sm90_sass_digest.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nvfp4ctl.build import build_kernel, toolchain
from nvfp4ctl.build.builder import SASS_FILE, build_mode
from nvfp4ctl.build.knobs import read_knobs
from nvfp4ctl.build.resources import sass_digest
from nvfp4ctl.build.sources import local_headers
from nvfp4ctl.export import inline_local_includes

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "kernels" / "sm90"
KERNEL = FOLDER / "nvfp4_gemm_sm90.cu"
CONFIG = FOLDER / "sm90_config.cuh"
EXPERIMENTS = REPO / "benchmarks" / "sm90_experiments.h"
RECORD = Path(__file__).with_name("sm90_sass.json")

SOURCES = sorted([*FOLDER.glob("*.cu"), *FOLDER.glob("*.cuh")])
_MACRO = re.compile(r"\bNVFP4_SM90_\w+")
_EXPERIMENT = re.compile(r"NVFP4_SM90_EXPERIMENT\((\w+)\)")


def _code(path: Path) -> str:
    """The file without its // comments (they may quote names)."""
    return "\n".join(line.split("//", 1)[0] for line in path.read_text().splitlines())


def test_knobs_are_declared_in_the_config_header_with_their_defaults_among_their_values() -> None:
    knobs = read_knobs(CONFIG)
    names = {knob.name for knob in knobs}
    assert {"NVFP4_SM90_BLOCK_N", "NVFP4_SM90_STAGES_SHARED_A", "NVFP4_SM90_MAX_CLUSTER_K",
            "NVFP4_SM90_SHARED_A_MIN_K_TILES"} <= names
    for knob in knobs:
        assert knob.default in knob.values and knob.doc, knob
    for path in SOURCES:
        if path != CONFIG:
            assert not read_knobs(path), f"{path.name} declares knobs: the config header is the one place"


def test_every_switch_the_kernel_reads_is_a_knob_or_an_experiment() -> None:
    knobs = {knob.name for knob in read_knobs(CONFIG)}
    shim = {"NVFP4_SM90_EXPERIMENT", "NVFP4_SM90_EXPERIMENTS"}
    for path in SOURCES:
        code = _code(path)
        stray = set(_MACRO.findall(_EXPERIMENT.sub("", code))) - knobs - shim
        assert not stray, f"{path.name} reads {sorted(stray)}: declare a knob in sm90_config.cuh or an experiment"


def test_experiments_are_declared_only_in_the_benchmark_header() -> None:
    declared = set(re.findall(r"#ifndef NVFP4_SM90_(\w+)", EXPERIMENTS.read_text()))
    used = {name for path in SOURCES for name in _EXPERIMENT.findall(_code(path))} - {"name"}  # the shim's parameter
    assert used and used <= declared, f"undeclared experiments: {sorted(used - declared)}"
    knobs = {knob.name.removeprefix("NVFP4_SM90_") for knob in read_knobs(CONFIG)}
    assert not (declared - {"SHARED_A"}) & knobs, "a switch is both a knob and an experiment"


def test_the_shipped_build_never_sees_the_benchmark_header() -> None:
    headers = local_headers(KERNEL)
    assert {path.name for path in headers} >= {path.name for path in SOURCES if path.suffix == ".cuh"}
    assert all(REPO / "kernels" in path.parents for path in headers), headers
    assert not any("sm90_experiments" in _code(path) for path in SOURCES)


def test_export_inlines_every_header_once() -> None:
    text, used = inline_local_includes(KERNEL)
    assert {path.name for path in used} == {path.name for path in local_headers(KERNEL)}
    left = [line for line in text.splitlines() if re.match(r'\s*#\s*include\s*"', line)]
    assert left == [], left
    assert "stream" not in text.lower()


def test_the_shipped_sass_matches_the_recorded_digest() -> None:
    """Fails when the machine code of the shipped build changes. Meant to: record the new SASS with
    `python3 scripts/sm90_sass_digest.py --write` and say why in the commit."""
    record = json.loads(RECORD.read_text())
    if toolchain.sass_tools() is None:
        pytest.skip("cuobjdump/nvdisasm missing: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm")
    if record["nvcc"] not in toolchain.nvcc_version() or build_mode() != record["mode"]:
        pytest.skip(f"digest recorded for nvcc {record['nvcc']} ({record['mode']} build)")
    report = build_kernel(KERNEL, "sm_90a")
    sass = (report.entry / SASS_FILE).read_text()
    assert sass.count("Function :") == record["functions"]
    assert sass_digest(sass) == record["sha256"], (
        "the shipped sm_90a SASS changed; if intended: python3 scripts/sm90_sass_digest.py --write"
    )
