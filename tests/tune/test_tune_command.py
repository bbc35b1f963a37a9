"""`nvfp4ctl tune` on CPU: compile-only on the tiny fixture (real nvcc, two knobs, one spilling
candidate rejected), resumable, and user mistakes as one line with exit 2."""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.cli import app
from nvfp4ctl.runner.gpu import gpu_present

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _tune(*args: str):
    return runner.invoke(app, ["tune", *args], env={"COLUMNS": "160"})


def test_compile_only_reports_resources_and_rejects_spills(tiny_copy: Path) -> None:
    table_before = tiny_copy.with_name("tiny_dispatch.cuh").read_text()
    result = _tune("--kernel", str(tiny_copy), "--compile-only", "--shapes", "benchmarks")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    row = next(line for line in lines if "LIVE=256" in line and "rejected: spills" in line)
    assert "64" in row and "3.9 KiB" in row  # 3952 B of spills, spelled as build spells them
    assert any("current table" in line and " ok" in line for line in lines)
    assert any("LIVE=256" in line and ("every shape" in line or "128x" in line) for line in lines)  # which shapes
    assert "LIVE=256: spills: tiny::chain spills 3.9 KiB (1.9 KiB stored, 1.9 KiB loaded)" in result.output
    assert "compile-only: 4 builds, 1 rejected" in result.output
    assert "compiling: 0 of 4, " in result.output  # no bar on a stderr that is no terminal: a plain line as it starts
    assert tiny_copy.with_name("tiny_dispatch.cuh").read_text() == table_before  # compile-only writes nothing
    assert "tiny_dispatch.cuh left as it was: compile-only times nothing, so it has no winners to write" in result.output
    entry = runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1]
    assert entry.result == "compile-only: 4 builds, 1 rejected"
    assert entry.target.endswith("[--kernel]")  # where the kernel came from (the default says "default for sm_90")
    again = _tune("--kernel", str(tiny_copy), "--compile-only", "--shapes", "benchmarks")
    assert again.exit_code == 0 and again.output.count("cached") == 4  # same defines: cache hits


@pytest.mark.parametrize("args, message", [
    (["--kernel", "missing.cu"], "--kernel missing.cu: no such file"),
    (["--kernel", str(REPO / "tests/build/fixtures/hgmma_probe.cu"), "--compile-only"], "declares no knobs"),
    (["--budget", "0"], "--budget: 0 is not a number of seconds > 0"),
    (["--budget", "nan"], "--budget: nan is not a number of seconds > 0"),
    (["--budget", "inf"], "--budget: inf is not a number of seconds > 0"),
    (["--gpus", "0"], "--gpus: 0 is not an integer ≥ 1"),
])
def test_usage_errors_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = _tune(*args)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("name", ["submission.py", "gemm.cuh"])
def test_a_kernel_that_is_no_cu_file_is_told_what_tune_tunes(tmp_path: Path, name: str) -> None:
    """It said "expected a CUDA source (.cu); use --submission for .py", check's and bench's advice: tune
    has no --submission."""
    (tmp_path / name).write_text("def custom_kernel(data):\n    return data[-1]\n" if name.endswith(".py") else "\n")
    result = _tune("--kernel", str(tmp_path / name), "--compile-only")
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert flat.startswith(f"error: --kernel {tmp_path / name}: tune tunes a CUDA kernel source (.cu) that declares knobs"
                           " (`// nvfp4ctl:knob NAME values=A,B scope=plan|kernel: doc` above `#ifndef NAME`); "), flat
    assert flat.endswith("a .py submission has none to tune: check or bench it with --submission" if name.endswith(".py")
                         else "gemm.cuh is not one"), flat
    assert "use --submission" not in flat


def test_a_bad_shape_set_is_exit_2() -> None:
    assert _tune("--shapes", "some").exit_code == 2


@pytest.mark.parametrize("args", [[], ["--compile-only"], ["--kernel", "default"]], ids=["kernel", "compile-only", "default"])
def test_without_torch_tune_says_so_before_any_worker(tiny_copy: Path, monkeypatch: pytest.MonkeyPatch,
                                                      args: list[str]) -> None:
    """A compile-only tune said it from a build; without a GPU, `tune --kernel default` said "no CUDA GPU
    here", which hid it."""
    import sys

    from nvfp4ctl.tune import setup

    monkeypatch.setattr(setup, "execute", lambda *a, **kw: pytest.fail("the tune started"))
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError, as without it
    kernel = [] if "--kernel" in args else ["--kernel", str(tiny_copy)]
    result = _tune(*kernel, *args)
    assert result.exit_code == 2, result.output
    assert result.output.strip() == "error: torch is not installed (pip install torch)"


@pytest.mark.skipif(gpu_present(), reason="a GPU machine has a default kernel")
def test_without_a_gpu_the_kernel_must_be_named() -> None:
    result = _tune()
    assert result.exit_code == 2 and "no CUDA GPU here: pass --kernel PATH" in result.output


@pytest.mark.skipif(gpu_present(), reason="a GPU machine picks the default kernel")
def test_without_a_gpu_the_default_by_name_names_the_kernels_to_pass() -> None:
    """It said "kernels/torch_dequant/submission.py (exact torch fallback: no nvfp4_gemm kernel for this
    GPU): tune needs a kernel source (.cu)", as if nvfp4ctl had no GEMM kernel."""
    result = _tune("--kernel", "default", "--compile-only")
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert flat.startswith("error: --kernel default: no CUDA GPU here to pick nvfp4ctl's kernel by; pass its path:")
    assert "kernels/sm90/nvfp4_gemm_sm90.cu (sm_90a)" in flat  # the one with knobs; sm100's have none
    assert "torch" not in flat and "nvfp4_gemm_sm100" not in flat


@pytest.fixture
def fake_gpus(monkeypatch: pytest.MonkeyPatch, tiny_copy: Path):
    """The command's timed path with its pools faked: two 'GPUs' answering from test_session.timing,
    builds that only carry their defines; the shipped build (no defines) reads the tiny table."""
    from concurrent.futures import ThreadPoolExecutor

    from nvfp4ctl.build import toolchain
    from nvfp4ctl.runner import gpu
    from nvfp4ctl.tune import compile_pool, devices, gpu_pool

    from tune_fakes import FakeWorker, fake_compile
    from test_session import timing

    from nvfp4ctl.tune.knobs import discover
    from nvfp4ctl.tune.table import read_table

    def compile_shipped_with_its_table(source, arch, defines):
        """A candidate carries its defines; the shipped build the table as it was when it was built."""
        built = fake_compile(source, arch, defines)
        if defines:
            return built
        knobs = discover(tiny_copy)
        table = read_table(knobs.dispatch, knobs)
        plan = [[list(shape), values] for shape, values in table.plan.items()]  # JSON-ready (the resume state)
        return replace(built, artifact={"kind": "fake", "table": [table.kernel, plan]})

    class ShippedWorker(FakeWorker):
        def call(self, job, *, label, timeout_s=None, **payload):
            shape = (payload["case"].m, payload["case"].n, payload["case"].k, payload["case"].l)
            for side in ("artifact", "challenger"):
                if payload.get(side) and "table" in payload[side]:
                    kernel, plan = payload[side]["table"]
                    entry = next((values for at, values in plan if tuple(at) == shape), {})
                    payload[side] = {"values": {**kernel, **entry}}
            return super().call(job, label=label, timeout_s=timeout_s, **payload)

    real_pool = compile_pool.CompilePool
    monkeypatch.setattr(toolchain, "torch_build", lambda: toolchain.TorchBuild("2.11.0+cu130", "13.0"))
    monkeypatch.setattr(gpu, "gpu_present", lambda: True)
    monkeypatch.setattr(gpu, "first_gpu", lambda: gpu.GpuInfo("Fake H100", "9.0"))
    monkeypatch.setattr(devices, "visible_gpus", lambda: ["0", "1"])
    monkeypatch.setattr(compile_pool, "CompilePool", lambda source, arch, jobs=None: real_pool(
        source, arch, compile_fn=compile_shipped_with_its_table, executor=ThreadPoolExecutor(2)))
    monkeypatch.setattr(gpu_pool, "make_workers", lambda gpus, device, timeout_s, problem="nvfp4_gemm": [
        gpu_pool.NamedWorker(f"GPU {g}", ShippedWorker(timing, name="Fake H100 (sm_90)")) for g in gpus])


def test_timed_tune_ranks_summarises_writes_and_logs(tiny_copy: Path, tmp_path: Path, fake_gpus: None) -> None:
    task = tmp_path / "task.yml"
    task.write_text("tests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\n"
                    "benchmarks:\n  - {m: 128, n: 7168, k: 16384, l: 1, seed: 1111}\n")
    # --fresh: a cache kept from an earlier test session (NVFP4CTL_CACHE) would resume this very tune
    result = _tune("--kernel", str(tiny_copy), "--task", str(task), "--fresh")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "128x256x256" in out and "128x7168x16384" in out and "current table" in out
    assert "winners" in out and "GPU time: GPU 0" in out
    line = ("2 shapes, 5 builds (0 rejected somewhere): geomean 1.675x over the current table, written to "
            "tiny_dispatch.cuh; 3 of 3 leads held in rematches")  # SPLIT on each shape, LIVE once
    assert line in out, out  # ((11 / 7) * (10 / 5.6)) ** 0.5: the new table re-timed against the old
    assert "rematches: each lead timed again" in out and "dropped" not in out
    assert runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1].result == line
    dispatch = tiny_copy.with_name("tiny_dispatch.cuh").read_text()
    assert "{128, 7168, 16384, 1, PlanKnob::SPLIT, 2}," in dispatch and "#define TINY_LIVE 256" in dispatch
    again = _tune("--kernel", str(tiny_copy), "--task", str(task), "--json", "--no-write")
    assert again.exit_code == 0, again.output
    import json

    report = json.loads(again.stdout[again.stdout.index("{"):])
    assert [s["key"] for s in report["shapes"]] == ["128x256x256", "128x7168x16384"]
    assert report["shapes"][0]["current"]["us"] == pytest.approx(7.0)  # the new table is now the current one
    assert report["result"].endswith("geomean 1.000x over the current table") and report["written"] == []
    assert report["rematches"] == []  # nothing led: the table is already the winners


def test_a_timed_tune_takes_the_tasks_benchmark_timeout_as_bench_does(tiny_copy: Path, tmp_path: Path, fake_gpus: None,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Each candidate is timed on a shape by bench's method, under bench's limit: task.yml's benchmark_timeout,
    named on the first line, where tune took 180 s whatever the task said. --timeout still comes first."""
    from nvfp4ctl.tune import gpu_pool

    limits: list[float] = []
    faked = gpu_pool.make_workers
    monkeypatch.setattr(gpu_pool, "make_workers", lambda gpus, device, timeout_s, problem="nvfp4_gemm": (
        limits.append(timeout_s), faked(gpus, device, timeout_s, problem))[1])
    task = tmp_path / "task.yml"
    task.write_text("tests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\n"
                    "benchmarks:\n  - {m: 128, n: 7168, k: 16384, l: 1, seed: 1111}\n"
                    "test_timeout: 50\nbenchmark_timeout: 77\nranked_timeout: 300\n")
    result = _tune("--kernel", str(tiny_copy), "--task", str(task), "--fresh", "--no-write")
    assert result.exit_code == 0, result.output
    assert limits == [77.0]
    assert f" · timeout 77 s per candidate and shape ({task} benchmark_timeout)" in " ".join(result.output.split())
    result = _tune("--kernel", str(tiny_copy), "--task", str(task), "--no-write", "--timeout", "20")
    assert result.exit_code == 0, result.output
    assert limits == [77.0, 20.0] and "timeout 20 s per candidate and shape (--timeout)" in result.output


def test_a_changed_shape_is_timed_back_to_back_with_the_old_shipped_build(tiny_copy: Path, tmp_path: Path,
                                                                          fake_gpus: None) -> None:
    """The new table's speed-up comes from the old and the new shipped build timed as a pair (each
    built with the table it had), not from two timings minutes apart."""
    import json

    task = tmp_path / "task.yml"
    task.write_text("tests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\n"
                    "benchmarks:\n  - {m: 128, n: 7168, k: 16384, l: 1, seed: 1111}\n")
    result = _tune("--kernel", str(tiny_copy), "--task", str(task), "--json")
    assert result.exit_code == 0, result.output
    shapes = json.loads(result.stdout[result.stdout.index("{"):])["shapes"]
    assert [(s["old_table_back_to_back"]["us"], s["new_table"]["us"]) for s in shapes] == [
        (pytest.approx(11.0), pytest.approx(7.0)), (pytest.approx(10.0), pytest.approx(5.6))]


def test_a_gpu_with_a_cpu_only_torch_tunes_compile_only(tiny_copy: Path, fake_gpus: None,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """No candidate could be imported to time: say so in one line and build them instead."""
    from nvfp4ctl.build import toolchain

    monkeypatch.setattr(toolchain, "torch_build", lambda: toolchain.TorchBuild("2.13.0+cpu", None))
    result = _tune("--kernel", str(tiny_copy), "--shapes", "benchmarks")
    assert result.exit_code == 0, result.output
    assert "warning: this torch has no CUDA (2.13.0+cpu): compile-only" in result.output
    assert "Traceback" not in result.output and "compile-only:" in result.output


@pytest.mark.parametrize("hidden", ["", "-1"])
def test_cuda_visible_devices_that_hides_every_gpu_tunes_compile_only(tiny_copy: Path, fake_gpus: None, hidden: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """nvidia-smi still lists the GPUs the user hid from CUDA: tune timed on GPU 0 all the same."""
    from nvfp4ctl.tune import devices

    monkeypatch.setattr(devices, "visible_gpus", lambda: [])
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", hidden)
    result = _tune("--kernel", str(tiny_copy), "--shapes", "benchmarks")
    assert result.exit_code == 0, result.output
    assert f"warning: CUDA_VISIBLE_DEVICES={hidden!r} shows no GPU: compile-only" in result.output


def test_a_dispatch_directive_naming_a_folder_says_so(tiny_copy: Path) -> None:
    config = tiny_copy.with_name("tiny_config.cuh")
    config.write_text(config.read_text().replace("file=tiny_dispatch.cuh", "file=dd"))
    tiny_copy.with_name("dd").mkdir()
    result = _tune("--kernel", str(tiny_copy), "--compile-only")
    assert result.exit_code == 2, result.output
    assert "names the dispatch file" in result.output and "which is a folder" in result.output
    assert "does not exist" not in result.output


def test_budget_and_gpus_with_compile_only_warn_once_that_they_do_not_apply(tiny_copy: Path) -> None:
    result = _tune("--kernel", str(tiny_copy), "--compile-only", "--shapes", "benchmarks", "--budget", "5",
                   "--gpus", "2")
    assert result.exit_code == 0, result.output
    assert result.output.count("--budget 5 applies to the timed search only") == 1, result.output
    # without a GPU (compile-only by default) --gpus 2 was taken without a word
    assert result.output.count("--gpus 2 applies to the timed search only") == 1, result.output


def test_fresh_with_compile_only_warns_once_that_it_does_not_apply(tiny_copy: Path) -> None:
    """compile-only never reads a resume state, and --fresh was taken without a word where --budget warned."""
    result = _tune("--kernel", str(tiny_copy), "--compile-only", "--shapes", "benchmarks", "--fresh")
    assert result.exit_code == 0, result.output
    assert result.output.count("warning: --fresh applies to the timed search only: compile-only resumes nothing,"
                               " it builds the whole round again") == 1, result.output


def test_rounds_with_compile_only_warns_once_that_it_does_not_apply(tiny_copy: Path) -> None:
    """compile-only builds one round whatever --rounds says, and --rounds 3 was taken without a word where
    --budget, --gpus and --fresh warned."""
    from nvfp4ctl.commands.tune import timed_search_only

    result = _tune("--kernel", str(tiny_copy), "--compile-only", "--shapes", "benchmarks", "--rounds", "3")
    assert result.exit_code == 0, result.output
    assert result.output.count("warning: --rounds 3 applies to the timed search only: compile-only builds one"
                               " round") == 1, result.output
    assert timed_search_only(None, None, False, 1) == []  # the default round is no option given


def test_a_mistyped_knob_mark_stops_the_tune_naming_its_line(tiny_copy: Path) -> None:
    """`// nvfp4ctl:knbo TINY_LIVE ...` dropped the knob: one knob fewer in the header, and `--knobs LIVE`
    said the kernel had no such knob."""
    config = tiny_copy.with_name("tiny_config.cuh")
    config.write_text(config.read_text().replace("nvfp4ctl:knob TINY_LIVE", "nvfp4ctl:knbo TINY_LIVE"))
    result = _tune("--kernel", str(tiny_copy), "--compile-only", "--knobs", "LIVE")
    assert result.exit_code == 2, result.output
    assert "tiny_config.cuh:10: `nvfp4ctl:knbo` is no knob declaration; write `// nvfp4ctl:knob NAME" in result.output
    assert "no knob named" not in result.output and "Traceback" not in result.output


def test_an_invalid_table_entry_stops_even_a_compile_only_tune_before_it_builds(tiny_copy: Path) -> None:
    dispatch = tiny_copy.with_name("tiny_dispatch.cuh")
    dispatch.write_text(dispatch.read_text().replace("PlanKnob::SPLIT, 2}", "PlanKnob::SPLIT, 7}"))
    result = _tune("--kernel", str(tiny_copy), "--compile-only", "--shapes", "benchmarks")
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "tiny_dispatch.cuh:11: SPLIT=7 is not among its declared values 1,2" in errors[0]
    assert "builds" not in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("read_only, message", [("file", "tiny_dispatch.cuh is read-only"),
                                                ("folder", "is read-only: tune replaces tiny_dispatch.cuh there"),
                                                ("chmod", "tiny_dispatch.cuh is read-only")])
def test_a_read_only_table_is_refused_before_the_tune(tiny_copy: Path, tmp_path: Path, fake_gpus: None,
                                                      monkeypatch: pytest.MonkeyPatch, read_only: str,
                                                      message: str) -> None:
    """One line and exit 2 up front, not a traceback after the whole tune. (os.access is faked for a file
    or folder it denies; "chmod" is a real chmod a-w, which os.access allows root but the mode bits tell.)"""
    dispatch = tiny_copy.with_name("tiny_dispatch.cuh").resolve()
    before = dispatch.read_text()
    if read_only == "chmod":
        dispatch.chmod(0o444)
    else:
        denied = dispatch if read_only == "file" else dispatch.parent
        real_access = os.access
        monkeypatch.setattr(os, "access", lambda path, mode, **kw: False if Path(path) == denied and mode & os.W_OK
                            else real_access(path, mode, **kw))
    result = _tune("--kernel", str(tiny_copy), "--shapes", "benchmarks")
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], result.output
    assert "Traceback" not in result.output and "winners (" not in result.output  # refused before any timing
    assert runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1].exit_code == "2"
    assert dispatch.read_text() == before
    assert _tune("--kernel", str(tiny_copy), "--shapes", "benchmarks", "--no-write").exit_code == 0  # nothing to write


@pytest.fixture
def installed_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A wheel's layout: nvfp4ctl's kernels under site-packages/nvfp4ctl/_shipped, run from a project folder
    that has no kernels/ of its own."""
    from nvfp4ctl import project

    shipped = tmp_path / "site-packages" / "nvfp4ctl" / "_shipped"
    shutil.copytree(REPO / "kernels", shipped / "kernels")
    shutil.copy(REPO / "task.yml", shipped / "task.yml")
    monkeypatch.setattr(project, "SHIPPED_DIR", shipped)
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    return shipped


def _refused_as_the_package_kernel(result, shipped: Path, folder: str, kernel: str, into: str = "kernels") -> None:
    assert result.exit_code == 2, result.output
    errors = " ".join(result.output.split()).split("error: ")[1:]
    assert len(errors) == 1, result.output
    assert "is inside nvfp4ctl's installed package: tune would write its winners into" in errors[0]
    assert "changing `--kernel default` for every project using this Python environment" in errors[0]
    assert f"(`mkdir -p {into} && cp -r {shipped.resolve() / 'kernels' / folder} {into}/`)" in errors[0]
    assert f"(`--kernel {into}/{folder}/{kernel}`), or pass --no-write" in errors[0]
    assert "Traceback" not in result.output and "winners (" not in result.output  # refused before any timing


def test_the_default_kernel_of_an_installed_package_is_not_tuned_in_place(installed_package: Path, fake_gpus: None,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A default tune on an H100 wrote its winners into the package's sm90_dispatch.cuh: `--kernel default`
    changed for every project of the environment, a reinstall dropped them, a read-only install failed after
    the whole tune."""
    from nvfp4ctl.runner import gpu, targets

    monkeypatch.setenv("NVFP4CTL_DEVICE", "cuda")
    monkeypatch.setattr(targets, "first_gpu", gpu.first_gpu)  # fake_gpus' H100 picks the default kernel too
    dispatch = installed_package / "kernels" / "sm90" / "sm90_dispatch.cuh"
    before = dispatch.read_text()
    result = _tune("--shapes", "benchmarks")
    _refused_as_the_package_kernel(result, installed_package, "sm90", "nvfp4_gemm_sm90.cu")
    assert str(dispatch.resolve()) in " ".join(result.output.split())
    assert dispatch.read_text() == before


def test_the_copy_suggested_does_not_nest_in_a_kernels_folder_of_the_same_name(installed_package: Path,
                                                                               fake_gpus: None,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """With kernels/sm90 of the user's own already there, `cp -r .../sm90 kernels/` would make kernels/sm90/sm90
    and the --kernel named after it would point at the user's own file: the copy goes to tuned/ instead."""
    from nvfp4ctl.runner import gpu, targets

    monkeypatch.setenv("NVFP4CTL_DEVICE", "cuda")
    monkeypatch.setattr(targets, "first_gpu", gpu.first_gpu)
    kernel = installed_package / "kernels" / "sm90" / "nvfp4_gemm_sm90.cu"
    (Path("kernels") / "sm90").mkdir(parents=True)
    result = _tune("--kernel", str(kernel), "--shapes", "benchmarks")
    _refused_as_the_package_kernel(result, installed_package, "sm90", "nvfp4_gemm_sm90.cu", into="tuned")


def test_a_kernel_named_inside_an_installed_package_is_refused_unless_no_write(installed_package: Path,
                                                                               tiny_copy: Path,
                                                                               fake_gpus: None) -> None:
    inside = installed_package / "kernels" / "tiny"
    inside.mkdir()
    for name in ("tiny_knobs.cu", "tiny_config.cuh", "tiny_dispatch.cuh"):
        shutil.copy(tiny_copy.with_name(name), inside / name)
    before = (inside / "tiny_dispatch.cuh").read_text()
    result = _tune("--kernel", str(inside / "tiny_knobs.cu"), "--shapes", "benchmarks", "--fresh")
    _refused_as_the_package_kernel(result, installed_package, "tiny", "tiny_knobs.cu")
    quiet = _tune("--kernel", str(inside / "tiny_knobs.cu"), "--shapes", "benchmarks", "--fresh", "--no-write")
    assert quiet.exit_code == 0, quiet.output
    assert (inside / "tiny_dispatch.cuh").read_text() == before


def test_sigterm_ends_a_tune_like_ctrl_c(tiny_copy: Path, tmp_path: Path, fake_gpus: None,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """`kill PID` mid-tune: exit 130 and "interrupted" in the run log (the pools closed on the way out),
    and the handler before the tune is back afterwards."""
    import signal

    from nvfp4ctl.tune import gpu_pool

    from tune_fakes import FakeWorker

    class KilledWhileTiming(FakeWorker):
        def call(self, job, *, label, timeout_s=None, **payload):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)  # the main thread is interrupted meanwhile (the pool then waits for this fake task)
            return {"status": "ok", "us": 1.0, "err_us": 0.0, "runs": 1}

    caught: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda number, frame: caught.append(number))  # never the test's death
    try:
        monkeypatch.setattr(gpu_pool, "make_workers", lambda gpus, device, timeout_s, problem="nvfp4_gemm": [
            gpu_pool.NamedWorker("GPU 0", KilledWhileTiming(lambda values, case: {}))])
        result = _tune("--kernel", str(tiny_copy), "--shapes", "benchmarks", "--fresh")
        assert result.exit_code == 130, result.output
        assert "error: interrupted" in result.output and "Traceback" not in result.output
        assert runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1].result == "interrupted"
        assert caught == []  # the tune's own handler took it
        os.kill(os.getpid(), signal.SIGTERM)
        assert caught == [signal.SIGTERM]  # and gave the previous one back
    finally:
        signal.signal(signal.SIGTERM, previous)


HUGE_TASK = ("tests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\n"
             "benchmarks:\n  - {m: 1048576, n: 1048576, k: 1048576, l: 1, seed: 1111}\n")
TOO_LARGE = ("m=1048576 n=1048576 k=1048576: too large: its inputs and output need at least 3200.0 GiB, more than"
             " the 16.0 GiB of cuda memory")


def test_a_shape_too_large_for_the_gpus_is_refused_before_any_candidate_is_built(
        tiny_copy: Path, tmp_path: Path, fake_gpus: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each candidate's check refused the shape in its worker: every candidate failed with the same line
    and the tune went on. The GPUs' memory (nvidia-smi's) is known before anything is built or timed."""
    from nvfp4ctl.tune import compile_pool, devices, gpu_pool

    def nothing(*args: object, **kwargs: object) -> None:
        raise AssertionError("a candidate was built or timed for a shape too large for the GPUs")

    asked: list[list[str]] = []
    monkeypatch.setattr(devices, "smallest_memory", lambda gpus: asked.append(gpus) or 16.0 * 2**30)
    monkeypatch.setattr(compile_pool, "CompilePool", nothing)
    monkeypatch.setattr(gpu_pool, "make_workers", nothing)
    task = tmp_path / "task.yml"
    task.write_text(HUGE_TASK)
    result = _tune("--kernel", str(tiny_copy), "--task", str(task), "--fresh")
    assert result.exit_code == 2, result.output
    assert asked == [["0", "1"]]
    assert result.output.count("error: ") == 1, result.output
    assert f"error: {task}: {TOO_LARGE}" in " ".join(result.output.split()), result.output


def test_a_usage_error_in_a_gpu_worker_ends_the_tune_once_with_exit_2(
        tiny_copy: Path, tmp_path: Path, fake_gpus: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where nvidia-smi cannot tell the GPUs' memory, a worker's check refuses the shape (make_input): that
    came back as an error of every candidate in turn, exit 0 or 1, where it is the shape's, said once."""
    from nvfp4ctl.runner.worker import JobError
    from nvfp4ctl.tune import devices, gpu_pool

    from tune_fakes import FakeWorker

    class RefusingWorker(FakeWorker):
        def call(self, job, *, label, timeout_s=None, **payload):
            raise JobError(f"UsageError: {TOO_LARGE}", "Traceback (most recent call last): ...", "UsageError")

    monkeypatch.setattr(devices, "smallest_memory", lambda gpus: None)
    monkeypatch.setattr(gpu_pool, "make_workers", lambda gpus, device, timeout_s, problem="nvfp4_gemm": [
        gpu_pool.NamedWorker(f"GPU {g}", RefusingWorker(lambda values, case: {})) for g in gpus])
    task = tmp_path / "task.yml"
    task.write_text(HUGE_TASK)
    result = _tune("--kernel", str(tiny_copy), "--task", str(task), "--fresh")
    assert result.exit_code == 2, result.output
    assert result.output.count("error: ") == 1 and result.output.count("too large") == 1, result.output
    assert f"error: {TOO_LARGE}" in " ".join(result.output.split()), result.output
    assert "Traceback" not in result.output


def test_no_shapes_to_tune_names_the_task_file_as_other_messages_do(tmp_path, monkeypatch) -> None:
    from types import SimpleNamespace

    from nvfp4ctl.errors import UsageError
    from nvfp4ctl.tune.setup import select_cases

    monkeypatch.chdir(tmp_path)
    task = SimpleNamespace(tests=(), benchmarks=(), path=tmp_path / "other.yml")
    with pytest.raises(UsageError, match=r"^other\.yml: no benchmarks shapes to tune for$"):
        select_cases(task, "benchmarks")


@pytest.fixture
def fake_builds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """compile-only with builds that only carry their defines (LIVE=256 spills as the real one does), a
    second build of the same defines a cache hit as the build cache makes it, in a cache of this test's own."""
    from concurrent.futures import ThreadPoolExecutor

    from nvfp4ctl.tune import compile_pool
    from nvfp4ctl.tune.results import SPILLS, spill_reason

    from tune_fakes import fake_compile

    built: set[tuple[str, ...]] = set()

    def spilling_compile(source: str, arch: str, defines: tuple[str, ...]):
        result = replace(fake_compile(source, arch, defines), cache_hit=defines in built)
        built.add(defines)
        if "TINY_LIVE=256" not in defines:
            return result
        spilled = (("tiny::chain", 1976, 1976),)
        return replace(result, status=SPILLS, spill_bytes=3952, spilled=spilled, message=spill_reason(spilled))

    real_pool = compile_pool.CompilePool
    monkeypatch.setattr(compile_pool, "CompilePool", lambda source, arch, jobs=None: real_pool(
        source, arch, compile_fn=spilling_compile, executor=ThreadPoolExecutor(2)))
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))


STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"


def _interrupted_after(monkeypatch: pytest.MonkeyPatch, step: str) -> None:
    """session's `step` (compile_only, or the timed search: coordinate_descent) runs whole, then Ctrl-C
    arrives before the run ends."""
    from nvfp4ctl.tune import session

    real = getattr(session, step)

    def interrupted(*args, **kwargs):
        real(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(session, step, interrupted)


def test_a_finished_run_is_reused_an_interrupted_one_resumed(tiny_copy: Path, tmp_path: Path, fake_gpus: None,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A finished run's state is kept and its results reused, but the rerun said "resumed: ... from the
    interrupted run" although nothing was interrupted."""
    import json
    import re

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    args = ("--kernel", str(tiny_copy), "--shapes", "benchmarks", "--no-write")
    with monkeypatch.context() as patch:
        _interrupted_after(patch, "coordinate_descent")
        cut = _tune(*args)
    assert cut.exit_code == 130, cut.output
    resumed = _tune(*args)
    assert resumed.exit_code == 0, resumed.output
    found = r"\d+ \(candidate, shape\) results"
    assert re.search(rf"resumed: {found} from an interrupted run, saved {STAMP}\n", resumed.output), resumed.output
    again = _tune(*args)
    assert re.search(rf"reused: {found} from a finished run, saved {STAMP} \(--fresh times them again\)\n",
                     again.output), again.output
    assert "resumed:" not in again.output and "interrupted" not in again.output
    document = json.loads((doc := _tune(*args, "--json")).stdout[doc.stdout.index("{"):])
    assert document["resumed"] > 0 and document["resumed_from"]["finished"] is True
    assert next(iter(document)) == "version" and document["version"] == 1  # as lint's and dump's documents
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", document["resumed_from"]["saved_at"])
    fresh = _tune(*args, "--fresh")
    assert fresh.exit_code == 0 and "resumed:" not in fresh.output and "reused:" not in fresh.output


def test_a_resumed_run_counts_the_builds_whose_results_it_reused(tiny_copy: Path, tmp_path: Path, fake_gpus: None,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A rerun answered from the resume state said "2 shapes, 0 builds (0 rejected somewhere)" and --json
    listed no builds: only those compiled in the run were counted."""
    import json
    import re

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    args = ("--kernel", str(tiny_copy), "--shapes", "benchmarks", "--no-write")
    first = _tune(*args)
    assert first.exit_code == 0, first.output
    counted = re.search(r"(\d+ shapes?, \d+ builds) \(0 rejected somewhere\)", first.output)
    assert counted is not None, first.output
    again = _tune(*args, "--json")
    document = json.loads(again.stdout[again.stdout.index("{"):])
    assert document["resumed"] > 0
    assert document["result"].startswith(f"{counted.group(1)} (0 rejected somewhere)")
    assert f"{len(document['builds'])} builds" in counted.group(1) and all(b["resumed"] for b in document["builds"])


def test_a_state_an_older_nvfp4ctl_wrote_loads_and_says_so(tiny_copy: Path, tmp_path: Path, fake_gpus: None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A state without "finished" (written before runs were marked) loads: its results come "from an
    earlier run"."""
    import json

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    args = ("--kernel", str(tiny_copy), "--shapes", "benchmarks", "--no-write")
    assert _tune(*args).exit_code == 0
    [path] = (tmp_path / "cache" / "tune").glob("*.json")
    saved = json.loads(path.read_text())
    del saved["finished"], saved["saved_at"], saved["stopped_by_budget_s"]
    path.write_text(json.dumps(saved))
    again = _tune(*args)
    assert again.exit_code == 0, again.output
    assert f"reused: {len(saved['measurements'])} (candidate, shape) results from an earlier run of this tune\n" in again.output


def test_a_compile_only_rerun_says_its_builds_came_from_the_build_cache(tiny_copy: Path,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        fake_builds: None) -> None:
    """Its rerun said "reused: 4 builds from a finished run" (or "resumed ... from an interrupted run"), but
    compile-only reads no build back from the resume state: it builds every candidate again, and the
    table showed each as "cached"."""
    import json

    args = ("--kernel", str(tiny_copy), "--compile-only", "--shapes", "benchmarks")
    first = _tune(*args)
    assert first.exit_code == 0 and "build cache" not in first.output, first.output
    with monkeypatch.context() as patch:
        _interrupted_after(patch, "compile_only")
        assert _tune(*args).exit_code == 130
    for again in (_tune(*args), _tune(*args, "--fresh")):
        assert again.exit_code == 0, again.output
        assert "4 of 4 builds from the build cache (built before with the same sources and -D values)\n" in again.output
        assert again.output.count("cached") == 4
        assert "reused:" not in again.output and "resumed:" not in again.output
    document = json.loads((doc := _tune(*args, "--json")).stdout[doc.stdout.index("{"):])
    assert document["resumed"] == 0 and document["resumed_from"] is None


def test_a_compile_only_tune_writes_no_resume_state(tiny_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    fake_builds: None) -> None:
    """It wrote <cache>/tune/<key>.json, finished or interrupted, which nothing read: its rerun builds every
    candidate again (build-cache hits)."""
    args = ("--kernel", str(tiny_copy), "--compile-only", "--shapes", "benchmarks")
    assert _tune(*args).exit_code == 0
    with monkeypatch.context() as patch:
        _interrupted_after(patch, "compile_only")
        assert _tune(*args).exit_code == 130
    assert not list((tmp_path / "cache").glob("tune/*"))


def test_a_run_stopped_by_its_budget_is_resumed_as_such(tiny_copy: Path, tmp_path: Path, fake_gpus: None,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """It was marked finished, so the rerun said "reused ... from a finished run" and carried on searching."""
    import json
    import re

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    args = ("--kernel", str(tiny_copy), "--shapes", "benchmarks", "--no-write")
    cut = _tune(*args, "--budget", "0.001")  # spent by the time the start is timed: stopped before the first knob
    assert cut.exit_code == 0 and "budget of 0.001 s spent before" in cut.output, cut.output
    again = _tune(*args)
    assert again.exit_code == 0, again.output
    assert re.search(rf"resumed: \d+ \(candidate, shape\) results from a run stopped by its --budget of 0.001 s,"
                     rf" saved {STAMP} \(--fresh times them again\)", again.output), again.output
    assert "finished run" not in again.output
    whole = _tune(*args, "--json")  # the rerun's search got to its end: a finished run's results now
    document = json.loads(whole.stdout[whole.stdout.index("{"):])
    assert document["resumed_from"]["finished"] is True and document["resumed_from"]["stopped_by_budget_s"] is None


def test_a_run_whose_table_could_not_be_written_is_reused_not_resumed(tiny_copy: Path, tmp_path: Path,
                                                                      fake_gpus: None,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Its search was done, but the table, made read-only meanwhile, stopped the run before it was marked
    finished: the rerun said "resumed: ... from an interrupted run"."""
    import re

    from nvfp4ctl.tune import session

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    dispatch = tiny_copy.with_name("tiny_dispatch.cuh").resolve()
    before = dispatch.read_text()
    real = session.coordinate_descent

    def search_then_table_made_read_only(*args, **kwargs):
        outcome = real(*args, **kwargs)
        dispatch.chmod(0o444)
        return outcome

    args = ("--kernel", str(tiny_copy), "--shapes", "benchmarks")
    with monkeypatch.context() as patch:
        patch.setattr(session, "coordinate_descent", search_then_table_made_read_only)
        refused = _tune(*args)
    assert refused.exit_code == 2, refused.output
    assert "tiny_dispatch.cuh is read-only: the winners were not written" in refused.output
    assert dispatch.read_text() == before  # the key of the state is the same
    dispatch.chmod(0o644)
    again = _tune(*args, "--no-write")
    assert again.exit_code == 0, again.output
    assert re.search(rf"reused: \d+ \(candidate, shape\) results from a finished run, saved {STAMP}", again.output), again.output
    assert "interrupted" not in again.output


def test_a_state_file_of_format_1_is_reused_and_its_successor_written(tiny_copy: Path, tmp_path: Path,
                                                                      fake_gpus: None,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The file an nvfp4ctl of format 1 left (under its own key) is read where the current one has none."""
    import json

    from nvfp4ctl.tune import state

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    material: list[tuple] = []
    real_key = state.state_key
    monkeypatch.setattr(state, "state_key", lambda *a, **kw: material.append(a) or real_key(*a, **kw))
    args = ("--kernel", str(tiny_copy), "--shapes", "benchmarks", "--no-write")
    assert _tune(*args).exit_code == 0
    [path] = (tmp_path / "cache" / "tune").glob("*.json")
    saved = json.loads(path.read_text())
    key_1 = real_key(*material[0], state_format=1)
    del saved["format"]
    path.unlink()
    (tmp_path / "cache" / "tune" / f"{key_1[:24]}.json").write_text(json.dumps(saved | {"key": key_1}))
    again = _tune(*args)
    assert again.exit_code == 0, again.output
    assert f"reused: {len(saved['measurements'])} (candidate, shape) results from a finished run" in again.output
    assert path.is_file() and json.loads(path.read_text())["format"] == state.STATE_FORMAT
    newer = json.dumps({"format": state.STATE_FORMAT + 1, "key": "another shape of key", "results": []})
    path.write_text(newer)  # a newer nvfp4ctl's, where this one's would be
    third = _tune(*args)
    assert third.exit_code == 0, third.output
    flat = " ".join(third.output.split())
    assert "warning: " in flat and (f"resume state of a newer nvfp4ctl (format {state.STATE_FORMAT + 1}, this one reads"
                                    f" {state.STATE_FORMAT} and earlier)") in flat
    assert "reused:" not in third.output and "Traceback" not in third.output
    assert path.read_text() == newer


def test_nvidia_smi_is_asked_for_the_gpus_and_their_memory_once(tiny_copy: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPUs tune spreads over and the smallest one's memory come from one listing: tune ran nvidia-smi's
    query for the list, then the same query again for the memory."""
    from nvfp4ctl.build import toolchain
    from nvfp4ctl.runner import gpu

    calls = tmp_path / "nvidia-smi-calls"
    fake = tmp_path / "bin" / "nvidia-smi"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "$@" >> "{calls}"\n'
                    'echo "0, GPU-1111aaaa-0000-0000-0000-000000000000, 16384"\n'
                    'echo "1, GPU-2222bbbb-0000-0000-0000-000000000000, 16384"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(toolchain, "torch_build", lambda: toolchain.TorchBuild("2.11.0+cu130", "13.0"))
    monkeypatch.setattr(gpu, "gpu_present", lambda: True)
    monkeypatch.setattr(gpu, "first_gpu", lambda: gpu.GpuInfo("Fake H100", "9.0"))
    task = tmp_path / "task.yml"
    task.write_text(HUGE_TASK)
    result = _tune("--kernel", str(tiny_copy), "--task", str(task), "--fresh")
    assert result.exit_code == 2, result.output
    assert f"error: {task}: {TOO_LARGE}" in " ".join(result.output.split()), result.output
    assert calls.read_text().splitlines() == ["--query-gpu=index,uuid,memory.total --format=csv,noheader,nounits"]


def test_a_kernel_is_tuned_on_the_task_yml_of_its_folder_from_the_folder_above(
        tmp_path: Path, fake_builds: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """`tune --kernel gemm/kernels/k.cu` from the folder above took nvfp4ctl's shipped task, where from gemm/ it
    took gemm/task.yml: other shapes for one kernel. The task beside the kernel is used, named on the first line
    and in --json, and the run is logged beside it."""
    import json

    from tune_fakes import FIXTURES

    kernels = tmp_path / "gemm" / "kernels"
    kernels.mkdir(parents=True)
    for name in ("tiny_knobs.cu", "tiny_config.cuh", "tiny_dispatch.cuh"):
        shutil.copy(FIXTURES / name, kernels / name)
    (tmp_path / "gemm" / "task.yml").write_text("problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 7}\n"
                                                "benchmarks: []\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    monkeypatch.delenv("NVFP4CTL_MEMORY", raising=False)
    result = _tune("--kernel", "gemm/kernels/tiny_knobs.cu", "--compile-only")
    assert result.exit_code == 0, result.output
    first = " ".join(result.output.split("\n")[0].split())
    assert " · task gemm/task.yml (beside the kernel) · 2 knobs, 2 with a choice · 1 shape · compile-only" in first, first
    assert runlog.read(tmp_path / "gemm" / "MEMORY.md")[-1].target.startswith("./kernels/tiny_knobs.cu@")
    doc = _tune("--kernel", "gemm/kernels/tiny_knobs.cu", "--compile-only", "--json").stdout
    report = json.loads(doc[doc.index("{"):])  # click 8.1 mixes stderr's lines into stdout
    assert report["task"] == "gemm/task.yml (beside the kernel)"


def test_the_run_log_names_the_problem_tuned_for(tiny_copy: Path, tmp_path: Path, fake_builds: None,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """tune's run-log line had no problem cell, where check's, bench's and build's name the problem they ran: now
    the task's, for a tune that stops at a usage error too."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    memory = Path(os.environ["NVFP4CTL_MEMORY"])
    result = _tune("--kernel", str(tiny_copy), "--compile-only")
    assert result.exit_code == 0, result.output
    assert runlog.read(memory)[-1].problem == "nvfp4_gemm"
    (tmp_path / "my_gemv.cu").write_text('#include "nvfp4_gemv_api.h"\n')
    result = _tune("--kernel", "my_gemv.cu", "--compile-only")
    assert result.exit_code == 2 and "declares no knobs" in result.output, result.output
    entry = runlog.read(memory)[-1]
    assert (entry.exit_code, entry.problem) == ("2", "nvfp4_gemv")


def test_a_gemv_tune_names_its_shapes_by_their_labels(tiny_copy: Path, tmp_path: Path, fake_gpus: None,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The ranked tables' titles, the winners table and the progress named a GEMV shape by tune's key,
    4096x1x7168x8, read as a GEMM's M×N×K×L; now by the label bench's tables give it, 4096x7168 l=8. --json
    keeps the key beside it."""
    import json

    gemv = tmp_path / "gemv"
    gemv.mkdir()
    monkeypatch.chdir(gemv)
    made = runner.invoke(app, ["init", "--problem", "nvfp4_gemv"])
    assert made.exit_code == 0, made.output
    monkeypatch.chdir(tmp_path)
    tiny_copy.write_text(tiny_copy.read_text().replace("nvfp4_gemm_", "nvfp4_gemv_").replace("Nvfp4GemmArgs", "Nvfp4GemvArgs"))
    args = ("--kernel", str(tiny_copy), "--task", "gemv/task.yml", "--fresh", "--no-write", "--shapes", "benchmarks")
    result = _tune(*args)
    assert result.exit_code == 0, result.output
    titles = [line.strip() for line in result.output.splitlines()]
    assert "4096x7168 l=8" in titles and "7168x16384" in titles and "7168x2048 l=4" in titles, result.output
    assert "│ 4096x7168 l=8 │      10.00 │" in result.output, result.output  # the winners table's row
    assert "│ SPLIT │ 4096x7168 l=8 │" in result.output, result.output  # the rematches'
    assert "x1x" not in result.output, result.output
    doc = _tune(*args, "--json").stdout
    shapes = json.loads(doc[doc.index("{"):])["shapes"]
    assert [(s["key"], s["label"]) for s in shapes] == [("7168x1x16384", "7168x16384"), ("4096x1x7168x8", "4096x7168 l=8"),
                                                         ("7168x1x2048x4", "7168x2048 l=4")]
