"""CuTe DSL submissions: compiled for sm_100a by nvidia-cutlass-dsl without a GPU, reported from the
cubin; without the DSL, one clear line and exit 2. The child calls custom_kernel with the CPU tuple of
the task's problem: what the parent hands it is checked per problem with a stand-in interpreter, and
the child itself with a plain-Python probe (no DSL needed)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.build import cute_dsl, machine
from nvfp4ctl.build.cute_dsl import has_dsl, parse_res_usage, run_child, trace_inputs
from nvfp4ctl.cli import app
from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems import get_problem, problem_names

SUBMISSIONS = Path(__file__).parent / "submissions"
SUBMISSION = SUBMISSIONS / "cute_dsl_submission.py"
GROUP_SUBMISSION = SUBMISSIONS / "cute_dsl_group_submission.py"
PROBE = SUBMISSIONS / "tuple_probe_submission.py"
# an interpreter with nvidia-cutlass-dsl and torch (e.g. a venv made with --system-site-packages)
DSL_PYTHON = os.environ.get("NVFP4CTL_TEST_DSL_PYTHON", sys.executable)


def test_res_usage_lines_are_parsed() -> None:
    text = "Resource usage:\n Function kernel_x: REG:12 STACK:8 SHARED:1024 LOCAL:0 CONSTANT[0]:912 TEXTURE:0\n"
    (usage,) = parse_res_usage(text)
    assert (usage.name, usage.registers, usage.stack_bytes, usage.shared_bytes) == ("kernel_x", 12, 8, 1024)


def test_without_the_dsl_one_line_and_exit_2(tmp_path: Path) -> None:
    fake_python = tmp_path / "python"
    fake_python.write_text("#!/bin/sh\nexit 1\n")
    fake_python.chmod(0o755)
    result = CliRunner().invoke(app, ["build", str(SUBMISSION), "--python", str(fake_python)])
    assert result.exit_code == 2, result.output
    assert "has no nvidia-cutlass-dsl (pip install nvidia-cutlass-dsl" in result.output


@pytest.mark.skipif(not has_dsl(DSL_PYTHON), reason="needs nvidia-cutlass-dsl (set NVFP4CTL_TEST_DSL_PYTHON)")
def test_dsl_submission_compiles_for_sm100a_without_a_gpu() -> None:
    result = CliRunner().invoke(app, ["build", str(SUBMISSION), "--python", DSL_PYTHON], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "CUTE_DSL_ARCH=sm_100a" in result.output
    assert "tile_mma" in result.output
    assert "UTCOMMA.4X (fp4 block16: mxf4nvf4)" in result.output


# --- the parent: which problem and case the child gets -------------------------------------------------
# Each problem's trace_case (GEMM: the 128x128x256 build used before it knew problems).
TRACE_CASES = {
    "nvfp4_gemm": ({"m": 128, "n": 128, "k": 256, "l": 1, "seed": 1111}, "nvfp4_gemm 128x128x256"),
    "nvfp4_dual_gemm": ({"m": 256, "n": 512, "k": 256, "l": 1, "seed": 1111}, "nvfp4_dual_gemm 256x512x256"),
    "nvfp4_group_gemm": ({"m": [96, 128], "n": [128, 256], "k": [256, 512], "l": 1, "g": 2, "seed": 1111},
                         "nvfp4_group_gemm g2:m96+128:n128+256:k256+512"),
    "nvfp4_gemv": ({"m": 128, "k": 256, "l": 1, "seed": 1111}, "nvfp4_gemv 128x256"),
}


def test_every_problem_has_a_trace_case() -> None:
    assert set(TRACE_CASES) == set(problem_names())


@pytest.mark.parametrize("name", sorted(TRACE_CASES))
def test_trace_inputs_name_the_problem_and_its_small_case(name: str) -> None:
    inputs = trace_inputs(name)
    want, label = TRACE_CASES[name]
    assert inputs.problem == name
    assert {k: v for k, v in inputs.case.items() if v is not None} == want
    assert inputs.label == label
    assert json.loads(inputs.argument()) == {"problem": name, "case": inputs.case}


def _stand_in_python(tmp_path: Path, says: str = "") -> tuple[Path, Path]:
    """An interpreter that passes the DSL check and, as the child, records its request and prints `says`."""
    record = tmp_path / "request.json"
    python = tmp_path / "python"
    python.write_text('#!/bin/sh\ncase "$2" in *"import cutlass.cute"*) exit 0;; esac\n'
                      f'printf "%s" "$4" > "{record}"\n' + (f"echo '{says}'\n" if says else ""))
    python.chmod(0o755)
    return python, record


def _build(python: Path, problem: str, *extra: str):
    task = get_problem(problem).task_file
    return CliRunner().invoke(app, ["build", str(SUBMISSION), "--python", str(python), "--task", str(task), *extra],
                              env={"COLUMNS": "200"})


@pytest.mark.parametrize("name", sorted(TRACE_CASES))
def test_the_child_gets_the_task_problem_and_its_trace_case(tmp_path: Path, name: str) -> None:
    python, record = _stand_in_python(tmp_path)
    result = _build(python, name)
    assert json.loads(record.read_text()) == json.loads(trace_inputs(name).argument())
    # the stand-in writes no cubin: one line naming the inputs, exit 2
    assert result.exit_code == 2, result.output
    assert (f"no kernel reached cute.compile on CPU inputs of {TRACE_CASES[name][1]} (the child printed nothing)"
            in result.output)


def test_the_cubins_folder_is_in_the_caches_tmp_and_goes_when_the_build_ends(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every DSL build left a dsl-<stem>-XXXX/ folder in the cache folder, which nothing removed."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("NVFP4CTL_CACHE", str(cache))
    python, _ = _stand_in_python(tmp_path)
    dump_dir = tmp_path / "dump-dir.txt"
    python.write_text(python.read_text() + f'printf "%s" "$CUTE_DSL_DUMP_DIR" > "{dump_dir}"\n')
    result = _build(python, "nvfp4_gemm")
    assert result.exit_code == 2, result.output  # the stand-in writes no cubin
    used = Path(dump_dir.read_text())
    assert used.parent == cache / "tmp" and used.name.startswith("dsl-cute_dsl_submission.")
    assert not used.exists()
    assert [p.name for p in cache.iterdir() if p.name.startswith("dsl-")] == []


def test_a_submission_that_needs_a_gpu_first_is_refused_in_one_line(tmp_path: Path) -> None:
    python, _ = _stand_in_python(tmp_path, says="nvfp4ctl-dsl-child: RuntimeError: No CUDA GPUs are available")
    result = _build(python, "nvfp4_group_gemm")
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error")]
    assert errors == ["error: CuTe DSL submission: cute_dsl_submission.py needs a GPU before its first cute.compile"
                      " (RuntimeError: No CUDA GPUs are available); build calls custom_kernel on CPU tensors"
                      " (nvfp4_group_gemm g2:m96+128:n128+256:k256+512) and compiles only what it reaches there"]


def test_a_problem_without_a_trace_case_is_refused_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(get_problem("nvfp4_gemv"), "trace_case", {})
    with pytest.raises(UsageError, match="build cannot trace nvfp4_gemv submissions without a GPU"):
        trace_inputs("nvfp4_gemv")
    python, record = _stand_in_python(tmp_path)
    result = _build(python, "nvfp4_gemv")
    assert result.exit_code == 2, result.output
    assert "build cannot trace nvfp4_gemv submissions without a GPU" in result.output
    assert not record.exists()  # refused before any child ran


# --- the child: the tuple it builds, on CPU, without the DSL -----------------------------------------
def _probe_summary():
    """The probe's own summary function, to describe the tuple the parent side builds the same way."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tuple_probe_submission", PROBE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._summary


@pytest.mark.parametrize("name", sorted(TRACE_CASES))
def test_the_child_calls_custom_kernel_with_the_problem_cpu_tuple(tmp_path: Path, name: str) -> None:
    inputs = trace_inputs(name)
    said, _, _ = run_child(sys.executable, PROBE, "sm_100a", tmp_path, inputs)
    assert said == "nvfp4ctl-dsl-child: RuntimeError: probe done"
    problem = get_problem(name)
    want = problem.generate_input(problem.parse_case(problem.trace_case, "trace_case"), device="cpu")
    got = json.loads((tmp_path / "tuple_probe.json").read_text())
    assert got == _probe_summary()(want)
    assert len(got) == len(problem.layout.names) and '"cpu"' in json.dumps(got)  # the summary says something


@pytest.mark.skipif(not has_dsl(DSL_PYTHON), reason="needs nvidia-cutlass-dsl (set NVFP4CTL_TEST_DSL_PYTHON)")
def test_dsl_group_submission_compiles_with_the_group_tuple() -> None:
    task = get_problem("nvfp4_group_gemm").task_file
    result = CliRunner().invoke(app, ["build", str(GROUP_SUBMISSION), "--python", DSL_PYTHON, "--task", str(task)],
                                env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "UTCOMMA.4X (fp4 block16: mxf4nvf4)" in result.output


def test_the_child_sees_nvfp4ctl_but_not_the_rest_of_our_site_packages(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """In a wheel install the package's parent is site-packages: the user's DSL interpreter (--python,
    maybe another Python) must keep its own torch/numpy/cutlass, so only nvfp4ctl may come from ours."""
    import nvfp4ctl
    from nvfp4ctl.build import cute_dsl

    site = tmp_path / "site-packages"  # what a wheel install puts around the package
    site.mkdir()
    (site / "nvfp4ctl").symlink_to(Path(nvfp4ctl.__file__).resolve().parent, target_is_directory=True)
    (site / "shadow_probe.py").write_text("")  # stands for our torch, numpy, cutlass...
    monkeypatch.setattr(cute_dsl, "PACKAGE_DIR", site / "nvfp4ctl")
    submission = tmp_path / "user" / "submission.py"
    submission.parent.mkdir()
    # sys.path: the submission's folder, the problem's harness stand-ins, then the folder holding nvfp4ctl alone
    submission.write_text("import importlib.util, os, sys\n"
                          "root = os.environ['NVFP4CTL_IMPORT_ROOT']\n"
                          "raise RuntimeError(f\"shadow={importlib.util.find_spec('shadow_probe') is not None}"
                          " listing={sorted(os.listdir(root))} first={sys.path[2] == root}\")\n")
    said, _, _ = run_child(sys.executable, submission, "sm_100a", tmp_path / "out", trace_inputs("nvfp4_gemm"))
    assert said == "nvfp4ctl-dsl-child: RuntimeError: shadow=False listing=['nvfp4ctl'] first=True", said


def test_without_a_terminal_the_dsl_run_is_a_line_on_stderr(tmp_path: Path) -> None:
    """stderr no terminal (CliRunner's): no spinner, and the run until cute.compile (minutes) printed nothing."""
    from cli_streams import separate_streams_runner

    python, _ = _stand_in_python(tmp_path)
    task = get_problem("nvfp4_gemm").task_file
    result = separate_streams_runner().invoke(app, ["build", str(SUBMISSION), "--python", str(python), "--task",
                                                    str(task)], env={"COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    said = [line for line in result.stderr.splitlines() if line.startswith("running the submission on CPU inputs")]
    assert len(said) == 1 and said[0].endswith(" until cute.compile writes its cubins: 0 s"), result.stderr
    assert "running the submission" not in result.stdout



def _waiting_python(tmp_path: Path, work: str) -> Path:
    """An interpreter that passes the DSL check and, as the child, runs `work` (shell) and writes a cubin."""
    python = tmp_path / "python"
    python.write_text('#!/bin/sh\ncase "$2" in *"import cutlass.cute"*) exit 0;; esac\n'
                      f'{work}\n: > "$CUTE_DSL_DUMP_DIR/kernel.sm_100a.cubin"\n')
    python.chmod(0o755)
    return python


@pytest.fixture()
def dsl_run_of(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """`build -v` of a CuTe DSL submission whose child runs `work` (shell) before it writes a cubin."""
    monkeypatch.setattr(cute_dsl.resources, "dump_sass", lambda binary: None)
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    return lambda work: _build(_waiting_python(tmp_path, work), "nvfp4_gemv", "-v")


def test_a_dsl_run_that_waited_for_the_cpu_gives_its_cpu_time_beside_the_wall_time(dsl_run_of) -> None:
    """The DSL compiles in the child: its CPU time (its tools' included) against its wall time, as nvcc's."""
    result = dsl_run_of("sleep 1.5")
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "for the whole `python submission.py`, inflated by load here: the run's CPU time 0." in said
    assert ", inflated by load: 0." in runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1].result


def test_a_dsl_run_is_said_inflated_exactly_where_its_cpu_time_fell_short_of_its_wall_time(dsl_run_of) -> None:
    result = dsl_run_of(f"{sys.executable} -c 'import time\nwhile time.process_time() < 1.5: pass'")
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    wall, cpu = map(float, re.search(r"the run took ([\d.]+) s, ([\d.]+) s of CPU", said).groups())
    assert cpu >= 1.4  # the stand-in's own CPU time, measured through its rusage
    # a neighbour taking the core meanwhile (pytest -n) may still inflate this run's wall time: then it says so
    assert ("inflated by load" in said) == machine.busy_while(wall, cpu)


def test_a_dsl_build_ends_with_its_result_line_as_a_load_inline_build_does(tmp_path: Path, monkeypatch) -> None:
    """The result went to the run log alone: the terminal's last line was the budget line, and -q showed nothing."""
    monkeypatch.setattr(cute_dsl.resources, "dump_sass", lambda binary: None)
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    python = _waiting_python(tmp_path, "true")
    for extra in ((), ("-q",)):
        result = _build(python, "nvfp4_gemv", *extra)
        assert result.exit_code == 0, result.output
        last = result.output.strip().splitlines()[-1]
        assert last == runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1].result, result.output
        assert re.fullmatch(r"CuTe DSL: 1 cubin for sm_100a in [\d.]+ s", last), last


def test_a_dsl_run_past_its_limit_is_a_timeout_in_one_line_and_ends_what_it_started(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    """It was a usage error (exit 2), 'the child ran past 600 s', and a tool the child started ran on."""
    from process_tree import wait_dead

    monkeypatch.setattr(cute_dsl, "CHILD_TIMEOUT_S", 1.0)
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    tool_pid = tmp_path / "tool.pid"
    python = _waiting_python(tmp_path, f"sleep 60 & echo $! > {tool_pid}; wait")
    result = _build(python, "nvfp4_gemv")
    assert result.exit_code == 3, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error")]
    assert errors == ["error: CuTe DSL submission: the run of cute_dsl_submission.py on CPU inputs of nvfp4_gemv 128x256"
                      " (until cute.compile writes its cubins) ran past 1 s and was stopped (the limit is fixed)"]
    assert "Traceback" not in result.output
    assert wait_dead(int(tool_pid.read_text()), 5)


# the SASS of a cubin without a tensor-core op
PLAIN_SASS = "        code for sm_100a\n        Function : kernel\n        /*0000*/                   FFMA R1, R2, R3, R4 ;\n"


@pytest.mark.parametrize("marked", [False, True])
def test_a_dsl_kernel_without_the_mma_gets_the_no_tensor_op_hint_and_honours_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marked: bool) -> None:
    """The failure read "no UTCOMMA.4X in the SASS (found: none)", without the hint a .cu's or load_inline's
    gives; the hint names the mark as Python writes it, and a submission with that line passes."""
    monkeypatch.setattr(cute_dsl.resources, "dump_sass", lambda binary: PLAIN_SASS)
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    submission = tmp_path / "submission.py"
    submission.write_text(("# nvfp4ctl: no-tensor-op (a plain baseline)\n" if marked else "") + SUBMISSION.read_text())
    task = get_problem("nvfp4_gemm").task_file
    result = CliRunner().invoke(app, ["build", str(submission), "--python", str(_waiting_python(tmp_path, "true")),
                                      "--task", str(task)], env={"COLUMNS": "200"})
    said = " ".join(result.output.split())
    if marked:
        assert result.exit_code == 0 and "no UTCOMMA.4X" not in said, said
        assert "none (declared)" in said, said
        return
    assert result.exit_code == 1, said
    assert ("error: no UTCOMMA.4X in the sm_100a SASS (found: no tensor-core op at all; a kernel without tensor cores"
            " on purpose says so with a line `# nvfp4ctl: no-tensor-op`)") in said, said


# GPU MODE's submissions open with `from task import input_t, output_t` (and often import reference/utils)
HARNESS_PROBE = ("import reference, task, utils\n"
                 "from task import input_t, output_t\n"
                 "def custom_kernel(data: input_t) -> output_t:\n"
                 "    raise RuntimeError(' '.join(m.__name__ + '=' + m.__file__.split('/')[-2] for m in (task, utils, reference)))\n")


def test_the_child_gives_the_submission_the_harness_stand_ins_check_gives(tmp_path: Path) -> None:
    """The import of task failed in the child ("No module named 'task'", exit 2), where check provides it."""
    submission = tmp_path / "user" / "submission.py"
    submission.parent.mkdir()
    submission.write_text(HARNESS_PROBE)
    said, _, _ = run_child(sys.executable, submission, "sm_100a", tmp_path / "out", trace_inputs("nvfp4_gemv"))
    assert said == "nvfp4ctl-dsl-child: RuntimeError: task=harness utils=harness reference=harness", said


def test_a_harness_module_beside_the_submission_wins_over_the_stand_in(tmp_path: Path) -> None:
    submission = tmp_path / "user" / "submission.py"
    submission.parent.mkdir()
    submission.write_text(HARNESS_PROBE)
    (submission.parent / "task.py").write_text("input_t = output_t = tuple\n")
    said, _, _ = run_child(sys.executable, submission, "sm_100a", tmp_path / "out", trace_inputs("nvfp4_gemm"))
    assert said == "nvfp4ctl-dsl-child: RuntimeError: task=user utils=harness reference=harness", said


def test_submission_option_names_the_file_as_source_does(tmp_path: Path) -> None:
    """check's and bench's spelling: it was "No such option: --submission (Possible options: --submission-time)"."""
    python, record = _stand_in_python(tmp_path)
    as_source = _build(python, "nvfp4_gemv")
    record.unlink()
    task = get_problem("nvfp4_gemv").task_file
    result = CliRunner().invoke(app, ["build", "--submission", str(SUBMISSION), "--python", str(python), "--task",
                                      str(task)], env={"COLUMNS": "200"})
    assert result.exit_code == as_source.exit_code == 2, result.output  # the stand-in writes no cubin
    assert json.loads(record.read_text()) == json.loads(trace_inputs("nvfp4_gemv").argument())
    assert result.output.replace("1 s", "0 s") == as_source.output.replace("1 s", "0 s")


def test_submission_option_and_source_together_are_refused_in_one_line(tmp_path: Path) -> None:
    python, record = _stand_in_python(tmp_path)
    result = CliRunner().invoke(app, ["build", str(SUBMISSION), "--submission", str(PROBE), "--python", str(python)],
                                env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"error: build takes the file to build as SOURCE or as --submission PATH, not both (got {SUBMISSION} and"
        f" --submission {PROBE})"], result.output
    assert not record.exists()
