"""The sm_90a kernel's source layout (CPU only): knobs declared in its one config header, experiment
switches only in the benchmark header, every header inlined by export, and the shipped build's SASS
equal to the committed digest (tests/kernels/sm90_sass.json; scripts/sm90_sass_digest.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nvfp4ctl.build import build_kernel, toolchain
from nvfp4ctl.build.builder import build_mode
from nvfp4ctl.build.knobs import read_knobs
from nvfp4ctl.build.resources import sass_digest, saved_sass
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
    sass = saved_sass(report.entry) or ""
    assert sass.count("Function :") == record["functions"]
    assert sass_digest(sass) == record["sha256"], (
        "the shipped sm_90a SASS changed; if intended: python3 scripts/sm90_sass_digest.py --write"
    )


def _shipped_sass_functions() -> list[str]:
    """The shipped build's SASS, one listing per function (skips where the SASS tools are missing)."""
    if toolchain.sass_tools() is None:
        pytest.skip("cuobjdump/nvdisasm missing: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm")
    sass = saved_sass(build_kernel(KERNEL, "sm_90a").entry) or ""
    return sass.split("Function : ")[1:]


def test_no_main_loop_moves_a_wgmma_descriptor_out_of_vector_registers() -> None:
    """An R2UR among the 8 HGMMAs of a K tile's loop body means ptxas computes the wgmma descriptors
    in vector registers (code it treats as divergent): one per wgmma, ~15 % slower per K tile on an
    H100 (benchmarks/NOTES_sm90.md, v10 and v12). Any nvcc with SASS tools can check it."""
    functions = _shipped_sass_functions()
    assert functions
    for function in functions:
        lines = function.splitlines()
        wgmma = [i for i, line in enumerate(lines) if "HGMMA" in line]
        assert len(wgmma) % 8 == 0, lines[0][:100]
        for first, last in zip(wgmma[::8], wgmma[7::8]):  # one K tile's loop body each
            moves = sum("R2UR" in line for line in lines[first:last])
            assert moves == 0, f"{lines[0][:100]}: {moves} R2UR among one K tile's wgmmas"


_HGMMA_ACC = re.compile(r"HGMMA\.64x(128|192)x16\.F32 R(\d+),")  # n192: wide tiles (v20)
_REGISTER = re.compile(r"\bR(\d+)\b")


def test_no_accumulator_is_read_before_the_last_wgmma_wait() -> None:
    """Between a loop's last HGMMA and the `wgmma.wait_group 0` after it (WARPGROUP.DEPBAR.LE gsb0,
    0x0) no instruction may touch the accumulators: the wgmmas still write them. The wait names no
    registers, so only sm90::fence_accumulators keeps the compiler from moving reads above it; v18's
    first two-decoder build scaled 16 accumulators for C before the wait (a quarter of every tile's
    rows wrong, sometimes). Every one of the shipped build's kernels is checked."""
    wgmma_functions = 0
    for function in _shipped_sass_functions():
        lines = [line.split(";")[0] for line in function.splitlines()]
        if not any("HGMMA" in line for line in lines):
            continue  # the direct kernel (mma.sync)
        wgmma_functions += 1
        checked = 0
        for i, line in enumerate(lines):
            if "WARPGROUP.DEPBAR.LE gsb0, 0x0" not in line:
                continue
            last = max((j for j in range(i) if "HGMMA" in lines[j]), default=None)
            if last is None:
                continue
            wgmma_n, first_acc = (int(g) for g in _HGMMA_ACC.search(lines[last]).groups())
            accumulators = set(range(first_acc, first_acc + wgmma_n // 2))
            for between in lines[last + 1:i]:
                touched = {int(r) for r in _REGISTER.findall(between)} & accumulators
                assert not touched, f"{function.splitlines()[0][:90]}: {between.strip()} before the wait"
            checked += 1
        assert checked, f"{function.splitlines()[0][:90]}: no wait after its wgmmas found"
    assert wgmma_functions >= 16, wgmma_functions


def test_per_cta_a_kernels_start_with_the_registers_setmaxnreg_moves() -> None:
    """With two decode warpgroups the per-CTA-A kernels move registers between roles: the math
    warpgroups' setmaxnreg.inc waits until the producer and decoders have given theirs back, and the
    budgets in Plan (sm90_config.cuh) add up only from 96 registers per thread at launch (640
    threads). A kernel ptxas allocated fewer would make that wait spin forever: a hang."""
    knobs = {knob.name: knob.default for knob in read_knobs(CONFIG)}
    if knobs["NVFP4_SM90_A_DECODE_WARPGROUPS"] != 2:
        pytest.skip("one decode warpgroup: no registers move")
    report = build_kernel(KERNEL, "sm_90a")
    per_cta = [f for f in report.functions if f.entry and re.search(r"nvfp4_gemm_sm90_kernelILi\dELb0E", f.name)]
    assert len(per_cta) >= 6, [f.name for f in report.functions]
    for function in per_cta:
        assert function.registers == 65536 // 640 // 8 * 8, (function.name, function.registers)


def test_the_dispatch_table_names_every_plan_knob_and_holds_the_tune_of_every_task_shape() -> None:
    from nvfp4ctl.build.knobs import read_dispatch
    from nvfp4ctl.task import load_task

    table = FOLDER / "sm90_dispatch.cuh"
    enum = re.search(r"enum class PlanKnob \{([^}]*)\}", table.read_text())
    assert enum is not None
    names = {name.strip() for name in enum.group(1).split(",") if name.strip()}
    plan = {knob.name.removeprefix("NVFP4_SM90_") for knob in read_knobs(CONFIG) if knob.scope == "plan"}
    assert names == plan
    # `nvfp4ctl tune --shapes all` (H100, 2026-11-26; docs/sm90_performance.md): every plan knob of
    # every task.yml shape, each a declared value; the table is host code, so the SASS digest holds
    task = load_task(REPO / "task.yml")
    shapes = {(c.m, c.n, c.k, c.l) for c in (*task.tests, *task.benchmarks)}
    entries = read_dispatch(table)
    assert {(e.m, e.n, e.k, e.l, e.knob) for e in entries} == {(*shape, name) for shape in shapes for name in names}
    declared = {knob.name.removeprefix("NVFP4_SM90_"): knob.values for knob in read_knobs(CONFIG)}
    assert all(e.value in declared[e.knob] for e in entries)


def test_a_written_dispatch_table_reads_back_and_compiles(tmp_path: Path) -> None:
    import shutil
    import subprocess

    from nvfp4ctl.build.knobs import DispatchEntry, read_dispatch, write_dispatch
    from nvfp4ctl.errors import UsageError
    from nvfp4ctl.tune.entry_names import knobs_named

    def named(entries: list[DispatchEntry]) -> dict:
        """The knob each entry's name stands for, as tune hands them to the writer."""
        return knobs_named([entry.knob for entry in entries], tuple(read_knobs(CONFIG)))

    table = tmp_path / "sm90_dispatch.cuh"
    shutil.copy(FOLDER / "sm90_dispatch.cuh", table)
    entries = [DispatchEntry(128, 7168, 2048, 1, "SHARED_A_MIN_K_TILES", 4), DispatchEntry(128, 4096, 7168, 1, "MAX_CLUSTER_K", 2)]
    write_dispatch(table, entries, named(entries))
    assert set(read_dispatch(table)) == set(entries)
    with pytest.raises(UsageError):
        refused = [DispatchEntry(128, 256, 256, 1, "STAGES_SHARED_A", 4)]
        write_dispatch(table, refused, named(refused))
    with pytest.raises(UsageError):
        refused = [DispatchEntry(128, 256, 256, 1, "MAX_CLUSTER_K", 5)]
        write_dispatch(table, refused, named(refused))
    written = table.read_text()
    table.chmod(0o444)  # the owner's chmod a-w is kept: the new copy would need only the folder's permission
    with pytest.raises(UsageError, match="sm90_dispatch.cuh is read-only$"):
        write_dispatch(table, entries[:1], named(entries[:1]))
    assert table.read_text() == written
    table.chmod(0o644)
    probe = tmp_path / "probe.cpp"
    probe.write_text('#include "sm90_dispatch.cuh"\nstatic_assert(sizeof(nvfp4_sm90::kDispatchTable) / '
                     "sizeof(nvfp4_sm90::DispatchEntry) == 3, \"two entries and the end marker\");\n")
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no host C++ compiler")
    done = subprocess.run([compiler, "-std=c++17", "-fsyntax-only", str(probe)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_the_exported_submission_compiles_to_the_recorded_sass(tmp_path: Path) -> None:
    """Every header inlined into one submission.py: its CUDA source, compiled as load_inline would,
    is the shipped machine code (the digest ignores the source path)."""
    import ast
    import subprocess

    from nvfp4ctl.build.resources import dump_sass
    from nvfp4ctl.export import export_submission

    record = json.loads(RECORD.read_text())
    if toolchain.sass_tools() is None or record["nvcc"] not in toolchain.nvcc_version():
        pytest.skip("needs cuobjdump/nvdisasm and the nvcc the digest was recorded with")
    from torch.utils.cpp_extension import COMMON_NVCC_FLAGS

    submission = tmp_path / "submission.py"
    export_submission(KERNEL, submission)
    tree = ast.parse(submission.read_text())
    strings = {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
               if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id.isupper()}
    source = tmp_path / "exported.cu"
    source.write_text(strings["CUDA_SOURCE"])
    from nvfp4ctl.build.torch_nvcc import appended_standard

    cuda_flags = strings["CUDA_FLAGS"]  # then the standard load_inline's torch appends: CUDA_FLAGS name none
    command = [str(toolchain.nvcc_path()), *COMMON_NVCC_FLAGS, *cuda_flags, *appended_standard(cuda_flags, cuda_flags[0]),
               "-c", str(source), "-o", str(tmp_path / "exported.o")]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sass_digest(dump_sass(tmp_path / "exported.o") or "") == record["sha256"]
