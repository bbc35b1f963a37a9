"""`nvfp4ctl bench` end to end on CPU, with a fake Worker standing in for the GPU child."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli_streams import separate_streams_runner
from nvfp4ctl import runlog
from nvfp4ctl.cli import app
from nvfp4ctl.errors import KernelCrash, KernelTimeout
from nvfp4ctl.runner.worker import JobError

GPU = "NVIDIA H100 80GB HBM3 (sm_90)"
runner = CliRunner()


class FakeWorker:
    """Answers calibrate and bench_case like the child would; records every call."""

    calls: list[tuple[str, dict[str, Any]]] = []
    calibration_fails = False
    scale = 1.0  # multiplies every timing (to fake a faster or slower kernel)
    failure: str | None = None
    raised: list[str] | None = None  # the target's call raised: its headline and traceback lines
    unsupported: str | None = None  # with raised: the call refused the shape, naming this constraint
    raise_error: Exception | None = None
    host_stalls = 0  # repeats the child timed again after a host pause
    calibration_s = 0.0  # how long the calibration call blocks (the target's load and build run in it)
    only_at_k: int | None = None  # raised and raise_error apply only to the shapes of this k
    only_in_job: str | None = None  # raise_error applies only to this job ("device_time": the profile step)
    calibrated_gpu = GPU  # the GPU the calibration names (its arch decides the % of this GPU)

    def __init__(self, target: Any, timeout_s: float, device: str = "cuda", **_: Any) -> None:
        self.gpu = GPU
        FakeWorker.timeout_s = timeout_s

    def __enter__(self) -> FakeWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def call(self, job: str, *, label: str, timeout_s: float | None = None, **payload: Any) -> Any:
        FakeWorker.calls.append((job, payload))
        if job.endswith(":calibrate"):
            time.sleep(self.calibration_s)
            if self.calibration_fails:
                raise JobError("RuntimeError: CUBLAS_STATUS_NOT_INITIALIZED", "Traceback ...")
            return {"gpu": self.calibrated_gpu, "tflops": 750.0, "tbps": 3.0, "measured_at": "2026-11-25T00:00:00Z", "cached": True}
        case = payload["case"]
        here = (self.only_at_k is None or case.k == self.only_at_k) and (
            self.only_in_job is None or job.endswith(f":{self.only_in_job}"))
        if self.raise_error is not None and here:
            raise self.raise_error
        if self.failure is not None:
            return {"failure": self.failure}
        if self.raised is not None and job.endswith(":bench_case") and here:
            return {"raised": self.raised} | ({} if self.unsupported is None else {"unsupported": self.unsupported})
        base_ns = case.k * (case.n or 1024) / 1200.0 * self.scale  # ~98 µs for the first shape (the GEMV has no n)
        if job.endswith(":device_time"):
            device_us = base_ns * 1e-3 * (0.5 if case.k == 2048 else 0.97)
            return {"device_time": {"us_per_call": device_us, "kernels_per_call": 1.0,
                                    "top_kernels": [["nvfp4_gemm_kernel<128, 128>", 100]], "approximate": False},
                    "profiler_error": None, "profile_s": 0.2}
        samples = [base_ns * (1 + 0.001 * (i % 3 - 1)) for i in range(30)]
        return {
            "samples_ns": samples, "issue_ns": [9_000.0] * 30, "reason": "converged",
            "flush": {"l2_bytes": 52428800, "flush_bytes": 209715200, "head_start_s": 0.0007},
            "phases_s": {"generate": 0.5, "correctness": 0.4, "timing": 0.3},
            "host_stalls": self.host_stalls,
        }


@pytest.fixture
def submission(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    FakeWorker.calls = []
    FakeWorker.scale, FakeWorker.failure, FakeWorker.raise_error, FakeWorker.host_stalls = 1.0, None, None, 0
    FakeWorker.calibration_fails, FakeWorker.calibration_s, FakeWorker.raised = False, 0.0, None
    FakeWorker.unsupported = None
    FakeWorker.only_at_k, FakeWorker.only_in_job = None, None
    FakeWorker.calibrated_gpu = GPU
    # check binds Worker when check.run is first imported: a `check` run under this patch (the --only
    # tests below) would keep the fake for every later test of the process, check's own among them
    import nvfp4ctl.check.run  # noqa: F401

    monkeypatch.setattr("nvfp4ctl.runner.worker.Worker", FakeWorker)
    monkeypatch.setattr("nvfp4ctl.runner.gpu.run_device", lambda: "cuda")
    monkeypatch.setattr("nvfp4ctl.runner.gpu.gpu_present", lambda: True)
    monkeypatch.setenv("COLUMNS", "200")
    path = tmp_path / "submission.py"
    path.write_text("def custom_kernel(data):\n    return data[6]\n")
    return path


def _bench(*args: str, cli: CliRunner | None = None) -> Any:
    """A bench run; its --json document alone on stdout on every click (stderr holds the progress lines)."""
    cli = cli or (separate_streams_runner() if "--json" in args else runner)
    argv = ["bench", *args]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["nvfp4ctl", *argv])  # the run log records sys.argv
        return cli.invoke(app, argv, catch_exceptions=False)


def test_tables_and_run_log_line(submission: Path) -> None:
    result = _bench("--submission", str(submission))
    assert result.exit_code == 0, result.output
    for text in ("128x7168x16384", "128x4096x7168", "128x7168x2048", "geomean", "% SOL B200 @1.5 GHz",
                 "device µs", "is host-bound", "no earlier bench"):
        assert text in result.output
    entries = runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))
    assert entries[-1].result.startswith("geomean ") and entries[-1].gpu == GPU
    assert entries[-1].target.startswith(str(submission.resolve()))


def test_a_name_that_is_not_utf8_is_shown_as_the_run_log_writes_it(submission: Path) -> None:
    """Python holds b"\\xff" of a file's name as the lone surrogate \\udcff: the header and the table's title
    named `sub\\udcff.py`, where the run log writes `sub\\xff.py`."""
    named = submission.with_name("sub\udcff.py")
    named.write_text(submission.read_text())
    result = _bench("--submission", str(named), "--only", "2")
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # the title folds to the table's width
    assert f"target {named.parent}/sub\\xff.py (--submission)" in said and "udcff" not in said
    assert f"{named.parent}/sub\\xff.py (--submission) on NVIDIA H100" in said, said


def test_second_run_compares_with_the_first(submission: Path) -> None:
    assert _bench("--submission", str(submission)).exit_code == 0
    FakeWorker.scale = 0.9
    result = _bench("--submission", str(submission))
    assert result.exit_code == 0
    assert "vs the previous bench" in result.output and "same code" in result.output
    assert result.output.count("faster") == 4  # three shapes and the geomean
    FakeWorker.scale = 0.905
    data = json.loads(_bench("--submission", str(submission), "--json").stdout)
    verdicts = {d["name"]: d["verdict"] for d in data["comparison"]["deltas"]}
    assert set(verdicts.values()) == {"same"}


def test_a_previous_bench_by_another_nvfp4ctl_is_said_in_the_comparison(submission: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A step between two benches may be the tool's: the comparison's line names the nvfp4ctl of each."""
    def run_by(tool: str, *args: str) -> Any:
        monkeypatch.setattr("nvfp4ctl.tool_version.tool_version", lambda: tool)  # what bench compares with
        monkeypatch.setattr("nvfp4ctl.runlog.entry.tool_version", lambda: tool)  # what the line records
        return _bench("--submission", str(submission), *args)

    assert run_by("0.1.0 (abc1234)").exit_code == 0
    result = run_by("0.1.0 (def5678)")
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # the title folds to the table's width
    assert "same code; previous run by nvfp4ctl 0.1.0 (abc1234), this one by 0.1.0 (def5678))" in said
    data = json.loads(run_by("0.1.0 (def5678)", "--json").stdout)
    assert data["comparison"]["previous"]["nvfp4ctl"] == "0.1.0 (def5678)"
    again = run_by("0.1.0 (def5678)")
    assert "vs the previous bench" in again.output and "previous run by" not in again.output  # the same nvfp4ctl


def test_json_has_everything(submission: Path) -> None:
    result = _bench("--submission", str(submission), "--json", "--only", "2")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["gpu"] == GPU and data["mode"] == "benchmark" and data["ceilings"]["tflops"] == 750.0
    assert next(iter(data)) == "version" and data["version"] == 1  # as lint's and dump's documents
    (shape,) = data["shapes"]
    assert shape["shape"] == "128x4096x7168" and shape["us"]["runs"] == 30
    assert shape["pct_sol"] == pytest.approx(100 * 2.354 / shape["us"]["mean"])
    assert shape["bound_by"] in ("compute", "memory") and shape["device_us_per_call"] > 0
    assert shape["phases_s"]["profile"] == 0.2 and shape["flush"]["head_start_s"] == 0.0007
    assert data["geomean_us"] == pytest.approx(shape["us"]["mean"])


def test_retimed_host_pauses_are_reported(submission: Path) -> None:
    FakeWorker.host_stalls = 2
    result = _bench("--submission", str(submission), "--only", "3")
    assert result.exit_code == 0
    assert "128x7168x2048: 2 repeat(s) timed again: the CPU paused while issuing the batch" in result.output
    shape = json.loads(_bench("--submission", str(submission), "--json", "--only", "3").stdout)["shapes"][0]
    assert shape["host_stalls"] == 2


def test_benchmark_mode_warms_the_first_shape_only(submission: Path) -> None:
    assert _bench("--submission", str(submission)).exit_code == 0
    jobs = [job.rpartition(":")[2] for job, _ in FakeWorker.calls]
    assert jobs == ["calibrate"] + ["bench_case"] * 3 + ["device_time"] * 3  # profiles only after all timing
    payloads = [p for job, p in FakeWorker.calls if job.endswith(":bench_case")]
    assert [p["warmup"] is not None for p in payloads] == [True, False, False]
    assert all(p["criterion"]["max_repeats"] == 200 and not p["recheck"] for p in payloads)
    assert payloads[0]["warmup"]["budget_s"] == pytest.approx(0.1)


def test_every_timed_shape_settles_first_unless_told_not_to(submission: Path) -> None:
    from nvfp4ctl.bench.session import DEFAULT_SETTLE_S

    assert _bench("--submission", str(submission)).exit_code == 0
    payloads = [p for job, p in FakeWorker.calls if job.endswith(":bench_case")]
    assert [p["settle_s"] for p in payloads] == [DEFAULT_SETTLE_S] * 3
    FakeWorker.calls = []
    assert _bench("--submission", str(submission), "--settle", "0", "--mode", "leaderboard").exit_code == 0
    assert [p["settle_s"] for job, p in FakeWorker.calls if job.endswith(":bench_case")] == [0.0] * 6


def test_a_large_timeout_is_written_in_whole_seconds_in_the_header(submission: Path) -> None:
    """`--timeout 1e9` read `timeout 1e+09 s per shape`."""
    result = _bench("--submission", str(submission), "--only", "1", "--timeout", "1e9")
    assert result.exit_code == 0, result.output
    assert "timeout 1000000000 s per shape (--timeout)" in result.output


def test_a_settle_given_on_the_cpu_is_said_to_apply_on_a_gpu_only(submission: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """NVFP4CTL_DEVICE=cpu: `--settle 5` read `settle 0 s` in the header, and nothing said the option was
    dropped. Now one warning names it, and the header says there is no settle on the CPU."""
    monkeypatch.setattr("nvfp4ctl.runner.gpu.run_device", lambda: "cpu")
    result = _bench("--submission", str(submission), "--settle", "5", cli=separate_streams_runner())
    assert result.exit_code == 0, result.output
    assert result.stderr.count("--settle 5: settling applies on a GPU only") == 1, result.stderr
    assert "· settle none (GPU only) ·" in result.stdout
    assert [p["settle_s"] for job, p in FakeWorker.calls if job.endswith(":bench_case")] == [0.0] * 3
    FakeWorker.calls = []
    quiet = _bench("--submission", str(submission), cli=separate_streams_runner())  # the default is no one's choice
    assert quiet.exit_code == 0 and "--settle" not in quiet.stderr, quiet.stderr


def test_leaderboard_mode_warms_every_shape_then_rechecks(submission: Path) -> None:
    assert _bench("--submission", str(submission), "--mode", "leaderboard").exit_code == 0
    payloads = [p for job, p in FakeWorker.calls if job.endswith(":bench_case")]
    assert len(payloads) == 6
    warm, timed = payloads[:3], payloads[3:]
    assert all(p["criterion"]["budget_s"] == 0.5 and not p["recheck"] for p in warm)
    assert all(p["criterion"]["max_repeats"] == 1000 and p["criterion"]["budget_s"] == 30.0 and p["recheck"]
               for p in timed)


def test_ad_hoc_shape(submission: Path) -> None:
    result = _bench("--submission", str(submission), "--shape", "256,512,1024,2", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["shapes"][0]["shape"] == "256x512x1024x2"


@pytest.mark.parametrize("args, message", [
    (["--only", "4"], "--only 4: task.yml has 3 benchmarks (1-3)"),
    (["--only", "4", "--shape", "128,128,256"], "--only 4: task.yml has 3 benchmarks (1-3)"),
    (["--shape", "128,128"], "expected M,N,K"),
    (["--shape", "128,128,100"], "multiple of 16"),
    (["--mode", "fast"], "'fast' is not one of"),
    (["--max-noise", "0"], "--max-noise"),
    (["--timeout", "0"], "--timeout: 0 is not a number of seconds > 0"),
    (["--settle", "-1"], "--settle"),
    (["--max-noise", "nan"], "--max-noise: nan is not a percentage > 0"),  # would never converge
    (["--max-noise", "inf"], "--max-noise: inf is not a percentage > 0"),
    (["--settle", "inf"], "--settle: inf is not a number of seconds ≥ 0"),  # the watchdog would call it a deadlock
    (["--settle", "nan"], "--settle"),
])
def test_usage_errors_exit_2(submission: Path, args: list[str], message: str) -> None:
    result = _bench("--submission", str(submission), *args)
    assert result.exit_code == 2 and message in result.output


# GPU MODE's task.yml of one problem with its three limits (the grouped GEMM's sets ranked_timeout: 300)
TIMED_TASK = ('tests:\n  - {"m": 128, "n": 256, "k": 256, "l": 1, "seed": 1111}\n'
              'benchmarks:\n  - {"m": 128, "n": 256, "k": 256, "l": 1, "seed": 1111}\n'
              "test_timeout: 120\nbenchmark_timeout: 150\nranked_timeout: 300\n")


@pytest.mark.parametrize("text, mode, seconds, source", [
    (TIMED_TASK, "leaderboard", 300, "timed.yml ranked_timeout"),
    (TIMED_TASK, "benchmark", 150, "timed.yml benchmark_timeout"),
    (TIMED_TASK.replace("benchmark_timeout: 150\n", "timeout: 90\n"), "benchmark", 90, "timed.yml timeout"),
    (TIMED_TASK.replace("ranked_timeout: 300\n", ""), "leaderboard", 180, "default"),
], ids=["leaderboard-ranked", "benchmark", "benchmark-timeout", "leaderboard-default"])
def test_each_mode_runs_under_its_own_limit_from_the_task_file(submission: Path, monkeypatch: pytest.MonkeyPatch,
                                                               text: str, mode: str, seconds: int, source: str) -> None:
    """The leaderboard mode is GPU MODE's ranked run: ranked_timeout, where the header said 180 s whatever
    the file set; the benchmark mode its benchmark_timeout; the file's `timeout:` where it sets neither."""
    monkeypatch.chdir(submission.parent)
    (submission.parent / "timed.yml").write_text(text)
    result = _bench("--task", "timed.yml", "--submission", str(submission), "--mode", mode)
    assert result.exit_code == 0, result.output
    assert f"timeout {seconds} s per shape ({source})" in " ".join(result.output.split())
    assert FakeWorker.timeout_s == seconds


def test_a_bench_past_gpu_modes_whole_run_limit_says_so(submission: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """GPU MODE limits a whole benchmark run with benchmark_timeout, where bench gives it to each shape."""
    monkeypatch.chdir(submission.parent)
    (submission.parent / "timed.yml").write_text(TIMED_TASK.replace("benchmark_timeout: 150", "benchmark_timeout: 2"))
    assert "GPU MODE gives a whole" not in _bench("--task", "timed.yml", "--submission", str(submission)).output
    FakeWorker.calibration_s = 2.2
    result = _bench("--task", "timed.yml", "--submission", str(submission))
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "this bench ran 2.2" in said
    assert "s, past the 2 s GPU MODE gives a whole benchmark run (timed.yml benchmark_timeout)" in said
    assert said.count("GPU MODE gives a whole") == 1


def test_only_out_of_range_reads_as_checks(submission: Path) -> None:
    """check --only and bench --only are the same mistake: the same words, task.yml's count and range."""
    checked = runner.invoke(app, ["check", "--submission", str(submission), "--only", "99"])
    benched = _bench("--submission", str(submission), "--only", "99")
    assert checked.exit_code == benched.exit_code == 2
    assert checked.output == "error: --only 99: task.yml has 10 tests (1-10)\n"
    assert benched.output == "error: --only 99: task.yml has 3 benchmarks (1-3)\n"


def test_only_out_of_range_names_the_task_file_in_use(submission: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--task other.yml: the count is other.yml's, and so is the name (it said task.yml whatever the file)."""
    from nvfp4ctl.project import shipped_task_path

    monkeypatch.chdir(submission.parent)
    (submission.parent / "other.yml").write_text(shipped_task_path().read_text(encoding="utf-8"))
    checked = runner.invoke(app, ["check", "--task", "other.yml", "--submission", str(submission), "--only", "99"])
    benched = _bench("--task", "other.yml", "--submission", str(submission), "--only", "99")
    assert checked.exit_code == benched.exit_code == 2
    assert checked.output == "error: --only 99: other.yml has 10 tests (1-10)\n"
    assert benched.output == "error: --only 99: other.yml has 3 benchmarks (1-3)\n"


def test_wrong_result_exits_1_with_the_first_mismatch(submission: Path) -> None:
    FakeWorker.failure = "input set 3 of 50 (seed 1237): 5 of 917504 elements differ; first at (m=0, n=1, l=0)"
    result = _bench("--submission", str(submission))
    assert result.exit_code == 1
    assert "bench 128x7168x16384: input set 3 of 50 (seed 1237)" in result.output


def test_a_shape_timed_at_zero_exits_1_with_one_line(submission: Path) -> None:
    """A target that launches no GPU work times 0 µs: no mean to rank and no geomean, said in a line."""
    FakeWorker.scale = 0.0
    result = _bench("--submission", str(submission))
    assert result.exit_code == 1, result.output
    assert "bench 128x7168x16384 timed 0.0 µs per call: the call launched no GPU work?" in result.output
    assert "Traceback" not in result.output


def test_an_exception_raised_by_the_target_exits_4_with_its_traceback(submission: Path) -> None:
    """As check says it: the target's own code failing is a crash (exit 4), not a wrong result (exit 1)."""
    FakeWorker.raised = ["custom_kernel raised ValueError: no tile config", "Traceback (most recent call last):",
                         '  File "submission.py", line 9, in custom_kernel', "ValueError: no tile config"]
    result = _bench("--submission", str(submission))
    assert result.exit_code == 4, result.output
    assert "bench 128x7168x16384: custom_kernel raised ValueError: no tile config" in result.output
    assert '    File "submission.py", line 9, in custom_kernel' in result.output
    assert result.output.count("Traceback (most recent call last)") == 1


def test_an_exceptions_escape_is_in_the_run_logs_error_cell_as_the_terminal_shows_it(submission: Path) -> None:
    """The run log's error cell kept the exception's ESC and U+202E: `cat MEMORY.md` recoloured the terminal."""
    FakeWorker.raised = ["custom_kernel raised RuntimeError: bad \x1b[31m red \u202e rev", "RuntimeError: bad"]
    result = _bench("--submission", str(submission))
    assert result.exit_code == 4, result.output
    said = "error: bench 128x7168x16384: custom_kernel raised RuntimeError: bad \\x1b[31m red \\u202e rev"
    assert said in result.output and "\x1b" not in result.output and "\u202e" not in result.output, result.output
    assert runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1].result == said


@pytest.mark.parametrize("how, code, verdict", [("raised", 4, "raised"), ("timeout", 3, "timeout")])
def test_an_error_at_a_later_shape_keeps_the_shapes_timed_before_it(submission: Path, how: str, code: int,
                                                                    verdict: str) -> None:
    """The second shape raises (or times out): the first's figures stand, in text and JSON, the second is
    marked, and no geomean is taken over one shape of three; the exit code stays the error's."""
    FakeWorker.only_at_k = 7168
    if how == "raised":
        FakeWorker.raised = ["custom_kernel raised ValueError: no tile config", "ValueError: no tile config"]
        message = "bench 128x4096x7168: custom_kernel raised ValueError: no tile config"
    else:
        message = "possible deadlock: bench 128x4096x7168 ran past 180 s"
        FakeWorker.raise_error = KernelTimeout(message)
    result = _bench("--submission", str(submission), cli=separate_streams_runner())
    assert result.exit_code == code, result.output
    rows = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if line.count("│") > 2}
    assert "97.87" in rows["128x7168x16384"]  # its mean
    assert verdict in rows["128x4096x7168"] and "128x7168x2048" not in rows and "geomean" not in rows
    assert "1 of 3 shapes timed, no geomean over a partial set" in result.stderr
    assert f"error: {message}" in result.stderr
    assert runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1].result == f"error: {message}"

    result = _bench("--submission", str(submission), "--json")
    assert result.exit_code == code
    data = json.loads(result.stdout)
    assert [shape["shape"] for shape in data["shapes"]] == ["128x7168x16384"]
    assert data["shapes"][0]["us"]["mean"] == pytest.approx(97.87, abs=0.01)
    assert data["geomean_us"] is None and data["sol_geomean_us"] is None
    assert data["stopped"] == {"shape": "128x4096x7168", "step": "time", "verdict": verdict, "message": message,
                               "planned_shapes": 3}
    assert data["error"].startswith(message) and data["exit_code"] == code


REFUSAL = "m must be a multiple of 256 (the kernel's tile M)"


def _refuse_shapes_of_k(k: int) -> None:
    FakeWorker.only_at_k = k
    FakeWorker.raised = [f"custom_kernel raised ValueError: unsupported shape (m=128, n=4096, k={k}, l=1): {REFUSAL}",
                         "Traceback (most recent call last):", "ValueError: unsupported shape"]
    FakeWorker.unsupported = REFUSAL


def test_a_shape_the_target_refuses_is_an_input_error_naming_the_constraint(submission: Path) -> None:
    """The project's bindings refuse a shape their kernel does not take (ValueError "unsupported shape (...):
    m must be ..."): bench said "custom_kernel raised ...", its traceback, exit 4 (kernel crashed)."""
    _refuse_shapes_of_k(16384)  # the first shape
    result = _bench("--submission", str(submission), cli=separate_streams_runner())
    assert result.exit_code == 2, result.output
    message = f"bench 128x7168x16384: the target does not take this shape: {REFUSAL}"
    assert result.stderr.strip().splitlines()[-1] == f"error: {message}"
    assert "Traceback" not in result.output and "custom_kernel raised" not in result.output
    assert runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1].result == f"error: {message}"


def test_a_later_shape_the_target_refuses_keeps_the_shapes_timed_before_it(submission: Path) -> None:
    _refuse_shapes_of_k(7168)  # the second shape
    result = _bench("--submission", str(submission), cli=separate_streams_runner())
    assert result.exit_code == 2, result.output
    rows = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if line.count("│") > 2}
    assert "97.87" in rows["128x7168x16384"] and "unsupported" in rows["128x4096x7168"] and "geomean" not in rows
    assert "stopped at 128x4096x7168 (unsupported while timing it): 1 of 3 shapes timed" in result.stderr
    message = f"bench 128x4096x7168: the target does not take this shape: {REFUSAL}"
    assert result.stderr.strip().splitlines()[-1] == f"error: {message}"
    assert "Traceback" not in result.output

    result = _bench("--submission", str(submission), "--json")
    assert result.exit_code == 2
    data = json.loads(result.stdout)
    assert [shape["shape"] for shape in data["shapes"]] == ["128x7168x16384"]
    assert data["stopped"] == {"shape": "128x4096x7168", "step": "time", "verdict": "unsupported", "message": message,
                               "planned_shapes": 3}
    assert data["error"] == message and data["exit_code"] == 2


def test_a_crash_while_profiling_keeps_every_timing_and_the_geomean(submission: Path) -> None:
    """Bench profiles the shapes after timing them all: a crash there leaves every shape timed, so the
    geomean over the whole set stands (in text and JSON), with the device times taken before the crash."""
    FakeWorker.only_at_k, FakeWorker.only_in_job = 7168, "device_time"
    message = "bench 128x4096x7168 crashed: illegal memory access"
    FakeWorker.raise_error = KernelCrash(message)
    result = _bench("--submission", str(submission), cli=separate_streams_runner())
    assert result.exit_code == 4, result.output
    rows = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if line.count("│") > 2}
    assert {"128x7168x16384", "128x4096x7168", "128x7168x2048", "geomean"} <= set(rows), result.stdout
    assert "crash" not in rows["128x4096x7168"]  # timed: its row holds its figures, not a verdict
    assert "stopped at 128x4096x7168 (crash while profiling it): 3 of 3 shapes timed; no device time from there on" \
        in result.stderr
    assert f"error: {message}" in result.stderr and "earlier bench" not in result.output
    assert runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1].result == f"error: {message}"

    result = _bench("--submission", str(submission), "--json")
    assert result.exit_code == 4
    data = json.loads(result.stdout)
    assert len(data["shapes"]) == 3 and data["geomean_us"] is not None and data["sol_geomean_us"] is not None
    assert [shape["device_us_per_call"] is not None for shape in data["shapes"]] == [True, False, False]
    assert data["stopped"] == {"shape": "128x4096x7168", "step": "profile", "verdict": "crash", "message": message,
                               "planned_shapes": 3}


def test_an_error_at_the_first_shape_is_the_error_alone(submission: Path) -> None:
    FakeWorker.raise_error = KernelCrash("bench 128x7168x16384 crashed: illegal memory access")
    result = _bench("--submission", str(submission), "--json")
    assert result.exit_code == 4
    assert json.loads(result.stdout) == {"version": 1, "error": "bench 128x7168x16384 crashed: illegal memory access",
                                         "exit_code": 4}


# a crash as the child's log tells it: the line, the traceback's last lines, the log's path
CRASH_WITH_LOG = ("bench 128x4096x7168 crashed: illegal memory access\n  Traceback (most recent call last):\n"
                  "  RuntimeError: CUDA error: an illegal memory access was encountered\n  full child log: /tmp/c/child-1.log")


@pytest.mark.parametrize("only_at_k", [None, 7168], ids=["first-shape", "later-shape"])
def test_a_crash_s_json_error_is_its_line_without_the_child_s_log(submission: Path, only_at_k: int | None) -> None:
    """"error" held the traceback and the log's path below the line, where docs/commands.md promises the error line."""
    FakeWorker.raise_error, FakeWorker.only_at_k = KernelCrash(CRASH_WITH_LOG), only_at_k
    result = _bench("--submission", str(submission), "--json")
    assert result.exit_code == 4
    data = json.loads(result.stdout)
    assert data["error"] == "bench 128x4096x7168 crashed: illegal memory access", data
    assert "full child log: /tmp/c/child-1.log" in result.stderr  # still said, on stderr


@pytest.mark.parametrize("error, code", [(KernelTimeout("possible deadlock: bench x ran past 1 s"), 3),
                                         (KernelCrash("bench x crashed: illegal memory access"), 4)])
def test_timeouts_and_crashes_keep_their_exit_codes(submission: Path, error: Exception, code: int) -> None:
    FakeWorker.raise_error = error
    result = _bench("--submission", str(submission))
    assert result.exit_code == code and str(error) in result.output


def test_no_gpu_is_a_usage_error(submission: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("nvfp4ctl.runner.gpu.gpu_present", lambda: False)
    result = _bench("--submission", str(submission))
    assert result.exit_code == 2 and "no CUDA GPU found" in result.output


@pytest.mark.parametrize("options, suggested", [
    (["--only", "1"], "--shape 128,256,256 times a torch submission on the CPU instead (a small shape: CPU times,"),
    (["--only=1,2", "--max-repeats", "3"],
     "--max-repeats 3 --shape 128,256,256 times a torch submission on the CPU instead (a small shape: CPU times,"),
    (["--only", "1", "--shape", "64,128,256"],
     "--shape 64,128,256 times a torch submission on the CPU instead (CPU times,"),
], ids=["only", "only-joined", "own-shape"])
def test_no_gpu_suggests_the_users_own_line_on_the_cpu(submission: Path, monkeypatch: pytest.MonkeyPatch,
                                                       options: list[str], suggested: str) -> None:
    """It suggested `NVFP4CTL_DEVICE=cpu nvfp4ctl bench --shape 128,256,256` whatever was typed, dropping the
    --submission and -q: the line typed stays but for its --only, with the small shape added where it names none
    (the task's benchmark shapes take minutes per call on a CPU, and a --only beside --shape times them too)."""
    monkeypatch.setattr("nvfp4ctl.runner.gpu.gpu_present", lambda: False)
    monkeypatch.chdir(submission.parent)
    (submission.parent / "my sub.py").write_text(submission.read_text())
    result = runner.invoke(app, ["-q", "bench", "--submission", "my sub.py", *options])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert said == ("error: no CUDA GPU found: nvfp4ctl bench times kernels on a GPU; NVFP4CTL_DEVICE=cpu nvfp4ctl -q"
                    f" bench --submission 'my sub.py' {suggested} not the leaderboard's; a kernel needs a GPU)")


@pytest.mark.parametrize("device, has_gpu", [("cuda", True), ("cuda", False), ("cpu", False)],
                         ids=["a-card", "no-card", "cpu"])
def test_without_torch_bench_says_so_before_any_child(submission: Path, monkeypatch: pytest.MonkeyPatch, device: str,
                                                      has_gpu: bool) -> None:
    """It said "cannot load submission.py ... ModuleNotFoundError", exit 4; without a GPU only "no CUDA GPU
    found", which hid it."""
    monkeypatch.setattr("nvfp4ctl.runner.gpu.run_device", lambda: device)
    monkeypatch.setattr("nvfp4ctl.runner.gpu.gpu_present", lambda: has_gpu)
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError, as without it
    result = _bench("--submission", str(submission))
    assert result.exit_code == 2, result.output
    assert result.output.strip() == "error: torch is not installed (pip install torch)"
    assert FakeWorker.calls == []


@pytest.mark.parametrize("args, code, message", [
    (["--only", "4"], 2, "--only 4: task.yml has 3 benchmarks (1-3)"),
    ([], 2, "no CUDA GPU found: nvfp4ctl bench times kernels on a GPU; NVFP4CTL_DEVICE=cpu nvfp4ctl bench --submission"
            " {submission} --json --shape 128,256,256 times a torch submission on the CPU instead (a small shape: CPU"
            " times, not the leaderboard's; a kernel needs a GPU)"),
    (["--crash"], 4, "bench x crashed: illegal memory access"),
])
def test_json_failures_are_a_json_document_on_stdout(submission: Path, monkeypatch: pytest.MonkeyPatch, args: list[str],
                                                     code: int, message: str) -> None:
    """A script reading --json's stdout gets one parseable document on failure too; the exit code is the error's
    and the error line still goes to stderr."""
    if args == ["--crash"]:
        FakeWorker.raise_error, args = KernelCrash(message), []
    else:
        monkeypatch.setattr("nvfp4ctl.runner.gpu.gpu_present", lambda: False)
    result = _bench("--submission", str(submission), "--json", *args, cli=separate_streams_runner())
    assert result.exit_code == code
    message = message.replace("{submission}", shlex.quote(str(submission)))  # no GPU: the line typed, to paste
    assert json.loads(result.stdout) == {"version": 1, "error": message, "exit_code": code}
    assert f"error: {message}" in result.stderr


def test_without_json_a_failure_writes_nothing_to_stdout(submission: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("nvfp4ctl.runner.gpu.gpu_present", lambda: False)
    result = _bench("--submission", str(submission), cli=separate_streams_runner())
    assert result.exit_code == 2 and result.stdout == ""


def test_no_percent_of_the_fp16_ceiling_off_sm_90(submission: Path) -> None:
    """sm_100's fp4 rate is several times the fp16 cuBLAS ceiling: a share of it would flatter the kernel."""
    on_h100 = json.loads(_bench("--submission", str(submission), "--json").stdout)
    assert on_h100["roofline_withheld"] is None and on_h100["shapes"][0]["pct_ceiling"] > 0
    FakeWorker.calibrated_gpu = "NVIDIA B200 (sm_100)"
    result = _bench("--submission", str(submission))
    assert result.exit_code == 0, result.output
    assert "no % of this GPU on sm_100: its fp4 tensor cores outrun the 750 TFLOP/s fp16 cuBLAS ceiling" in result.output
    assert "(compute)" not in result.output and "(memory)" not in result.output
    data = json.loads(_bench("--submission", str(submission), "--json").stdout)
    assert data["roofline_withheld"].startswith("no % of this GPU on sm_100")
    assert all(s["pct_ceiling"] is None and s["bound_by"] is None for s in data["shapes"])


def test_a_failed_calibration_only_costs_the_ceiling_column(submission: Path) -> None:
    FakeWorker.calibration_fails = True
    result = _bench("--submission", str(submission))
    assert result.exit_code == 0
    assert "no ceilings for this GPU: calibration: RuntimeError: CUBLAS_STATUS_NOT_INITIALIZED" in result.output


def test_a_host_bound_submission_hears_about_its_o0_binding(submission: Path) -> None:
    submission.write_text("from torch.utils.cpp_extension import load_inline\n"
                          'mod = load_inline(name="g", cpp_sources="", cuda_sources="", functions=["gemm"])\n'
                          "def custom_kernel(data):\n    return mod.gemm(data)\n")
    result = _bench("--submission", str(submission))
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "is host-bound" in output and "submission.py:2: load_inline(name='g') compiles its C++" in output
    data = json.loads(_bench("--submission", str(submission), "--json").stdout)
    assert len(data["binding_hints"]) == 1 and "submission.py:2:" in data["binding_hints"][0]
    submission.write_text(submission.read_text().replace('functions=["gemm"]', 'functions=["gemm"], extra_cflags=["-O3"]'))
    result = _bench("--submission", str(submission))
    assert "is host-bound" in " ".join(result.output.split()) and "at -O0" not in result.output


def test_an_unreadable_run_log_costs_the_comparison_not_the_results(submission: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """NVFP4CTL_MEMORY naming a link in a loop: the bench's numbers are still shown, with one warning, no traceback.
    (A folder is refused before the bench runs.)"""
    memory, other = tmp_path / "MEMORY.md", tmp_path / "OTHER.md"
    memory.symlink_to(other)
    other.symlink_to(memory)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    result = _bench("--submission", str(submission))
    assert result.exit_code == 0, result.output
    assert "geomean" in result.output and "128x7168x16384" in result.output
    output = " ".join(result.output.split())
    assert f"cannot read the run log {memory}" in output
    assert "no earlier bench" not in output  # it could not look
    assert "Traceback" not in result.output


def test_only_and_shape_repeat_as_for_check(submission: Path) -> None:
    """bench_method.md: `--only N`, `--shape` "as for check", where both repeat. Given twice they used
    to keep the last one silently: `--only 1 --only 3` timed benchmark 3 alone."""
    data = json.loads(_bench("--submission", str(submission), "--json", "--only", "1", "--only", "3").stdout)
    assert [s["shape"] for s in data["shapes"]] == ["128x7168x16384", "128x7168x2048"]
    data = json.loads(_bench("--submission", str(submission), "--json", "--shape", "256,512,1024",
                             "--shape", "128,256,512,2").stdout)
    assert [s["shape"] for s in data["shapes"]] == ["256x512x1024", "128x256x512x2"]
    data = json.loads(_bench("--submission", str(submission), "--json", "--only", "2", "--only", "2").stdout)
    assert [s["shape"] for s in data["shapes"]] == ["128x4096x7168"]


def test_only_takes_a_comma_separated_list_as_lint_select_does(submission: Path) -> None:
    """`--only 1,3` was "--only: 1,3 is not an integer", with no word of repeating --only."""
    data = json.loads(_bench("--submission", str(submission), "--json", "--only", "3,1", "--only", "2").stdout)
    assert [s["shape"] for s in data["shapes"]] == ["128x7168x2048", "128x7168x16384", "128x4096x7168"]
    bad = _bench("--submission", str(submission), "--only", "1,x")
    assert bad.exit_code == 2, bad.output
    assert bad.output == "error: --only: 1,x is not an integer or a comma-separated list of them (1,3)\n"
    beyond = _bench("--submission", str(submission), "--only", "1,4")
    assert (beyond.exit_code, beyond.output) == (2, "error: --only 4: task.yml has 3 benchmarks (1-3)\n")


def test_only_and_shape_together_time_the_benchmarks_named_then_the_shapes_as_check_runs_them(
        submission: Path) -> None:
    """check ran `--only 2 --shape 256,512,256` (the test, then the shape); bench said the two were exclusive."""
    data = json.loads(_bench("--submission", str(submission), "--json", "--only", "2", "--shape", "256,512,256",
                             "--shape", "128,4096,7168").stdout)
    # the second --shape is benchmark 2's own: timed once, as the benchmark with its task.yml seed
    assert [s["shape"] for s in data["shapes"]] == ["128x4096x7168", "256x512x256"]


def test_the_same_shape_twice_is_timed_once(submission: Path) -> None:
    data = json.loads(_bench("--submission", str(submission), "--json", "--shape", "256,512,1024",
                             "--shape", "256x512x1024").stdout)
    assert [s["shape"] for s in data["shapes"]] == ["256x512x1024"]


@pytest.mark.parametrize("kind", ["crash", "timeout"])
def test_a_crash_or_timeout_names_the_kept_child_log(submission: Path, tmp_path: Path, kind: str) -> None:
    """The worker keeps the child's log after a crash or timeout; the message shows its last lines and
    where the whole of it is (check does the same per test)."""
    from nvfp4ctl.runner.worker import ChildCrashed, ChildTimeout

    log = tmp_path / "child-1.log"
    log.write_text("printf from the kernel\n")
    FakeWorker.raise_error = (ChildCrashed("bench 128x7168x16384 crashed: the child died (killed by SIGSEGV)\n"
                                           "  printf from the kernel", ["printf from the kernel"], log)
                              if kind == "crash" else
                              ChildTimeout("possible deadlock: bench 128x7168x16384 ran past 1 s; the child was killed",
                                           ["printf from the kernel"], log))
    result = _bench("--submission", str(submission))
    assert result.exit_code == (4 if kind == "crash" else 3), result.output
    output = " ".join(result.output.split())
    assert "printf from the kernel" in output and f"full child log: {log}" in output
    assert output.count("printf from the kernel") == 1
    entry = runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1]
    assert "full child log" not in entry.result  # the run log keeps the headline


@pytest.mark.parametrize("text, message", [
    ("def custom_kernel(data)\n    return data[6]\n", "submission.py:1: not valid Python (expected ':')"),
    ("def kernel(data):\n    return data[6]\n", "submission.py: defines no custom_kernel(data) function, which GPU MODE calls"),
])
def test_a_submission_that_cannot_be_python_or_has_no_custom_kernel_is_exit_2_before_the_gpu(
        submission: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str) -> None:
    """As check says it: the user's input (exit 2, FILE:LINE), not a crash (4), said before "no GPU" and
    with no child started; --json's document carries the same line."""
    monkeypatch.setattr("nvfp4ctl.runner.gpu.gpu_present", lambda: False)
    monkeypatch.chdir(submission.parent)
    submission.write_text(text)
    result = _bench("--submission", "submission.py", "--json", cli=separate_streams_runner())
    assert result.exit_code == 2, result.output
    assert json.loads(result.stdout) == {"version": 1, "error": message, "exit_code": 2}
    assert result.stderr == f"error: {message}\n"
    assert FakeWorker.calls == []


@pytest.mark.parametrize("command, option_mistake, message", [
    ("check", ["--only", "99"], "has 10 tests (1-10)"),
    ("check", ["--timeout", "0"], "--timeout: 0 is not a number of seconds > 0"),
    ("bench", ["--only", "99"], "has 3 benchmarks (1-3)"),
    ("bench", ["--only", "1", "--shape", "128,128"], "--shape 128,128"),
])
def test_an_option_mistake_is_said_before_the_submission_that_is_not_python(
        submission: Path, monkeypatch: pytest.MonkeyPatch, command: str, option_mistake: list[str], message: str) -> None:
    """Both are exit 2, but the command line is what the user fixes first: a submission with a syntax error
    is read only once the options are known to be right."""
    monkeypatch.chdir(submission.parent)
    submission.write_text("def custom_kernel(data)\n    return data[6]\n")
    result = runner.invoke(app, [command, "--submission", "submission.py", *option_mistake])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: --") and message in result.output, result.output
    assert "not valid Python" not in result.output


def test_two_folders_sharing_a_run_log_are_not_compared_with_each_other(submission: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """gemm_a/ and gemm_b/ share one run log (NVFP4CTL_MEMORY), each with its own submission.py: gemm_b's
    first bench was compared with gemm_a's, another kernel, both logged as "submission.py"."""
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    for name in ("gemm_a", "gemm_b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "submission.py").write_text(submission.read_text())
    monkeypatch.chdir(tmp_path / "gemm_a")
    assert _bench().exit_code == 0
    monkeypatch.chdir(tmp_path / "gemm_b")
    first = _bench()
    assert first.exit_code == 0, first.output
    assert "no earlier bench" in first.output and "vs the previous bench" not in first.output
    assert runlog.read(tmp_path / "MEMORY.md")[-1].target.startswith("./gemm_b/submission.py@")
    assert "vs the previous bench" in _bench().output  # its own second bench is compared with its first


def test_without_a_terminal_each_step_is_a_line_on_stderr_and_stdout_is_unchanged(submission: Path) -> None:
    """stderr a log file or a pipe (as here): no bar is drawn, and a load_inline build in the first call or
    a shape's timing printed nothing there until the tables; --json's stdout stays the document alone."""
    result = _bench("--submission", str(submission), "--only", "2", cli=separate_streams_runner())
    assert result.exit_code == 0, result.output
    steps = [line.rsplit(",", 1)[0] for line in result.stderr.splitlines()]
    assert steps == ["calibration (loading the target first): 0 of 3", "timing 128x4096x7168: 1 of 3",
                     "profiling 128x4096x7168: 2 of 3"], result.stderr
    assert "calibration" not in result.stdout and "geomean" in result.stdout
    document = _bench("--submission", str(submission), "--only", "2", "--json", cli=separate_streams_runner())
    assert json.loads(document.stdout)["geomean_us"] > 0 and "timing 128x4096x7168: 1 of 3" in document.stderr
    quiet = _bench("-q", "--submission", str(submission), "--only", "2", cli=separate_streams_runner())
    assert quiet.exit_code == 0 and quiet.stderr == "", repr(quiet.stderr)  # rich 13 ended its bar with a blank line


def test_without_a_terminal_a_step_that_runs_on_is_said_again(submission: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("nvfp4ctl.progress_lines.PLAIN_LINE_EVERY_S", 0.1)
    FakeWorker.calibration_s = 0.6
    result = _bench("--submission", str(submission), "--only", "2", cli=separate_streams_runner())
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if line.startswith("calibration (loading the target first): ")]
    assert len(said) >= 3, result.stderr


def _progress(calls: int, per_call_s: float = 1.8) -> Any:
    from nvfp4ctl.bench.call_progress import CallProgress

    from nvfp4ctl.bench.call_progress import LoopBound
    from nvfp4ctl.bench.stopping import StoppingCriterion

    loops = (LoopBound.of("warm-up", StoppingCriterion(budget_s=0.1, max_wall_s=120.0), wall_from_timeout=True),
             LoopBound.of("timing", StoppingCriterion(budget_s=10.0, max_wall_s=120.0), wall_from_timeout=True))
    return CallProgress("warm-up", calls, calls, calls * per_call_s, 50, 350, elapsed_s=calls * per_call_s + 5.0,
                        next_within_s=50 * per_call_s, sample_wall_s=50 * per_call_s,
                        phase_began_s=50 * per_call_s + 5.0, loops=loops)


def test_a_timeout_while_calls_still_return_is_too_slow_not_a_deadlock(submission: Path) -> None:
    """A correct but slow submission (1.8 s a call on the CPU, 90 s a sample): the watchdog's kill said
    "possible deadlock". Calls had returned: it is said too slow, with its pace and what to change, exit 3."""
    from nvfp4ctl.runner.worker import ChildTimeout

    FakeWorker.raise_error = ChildTimeout("possible deadlock: bench 128x7168x16384 ran past 180 s; the child was killed",
                                          [], None, _progress(60), progress_age_s=40.0)
    result = _bench("--submission", str(submission))
    assert result.exit_code == 3, result.output
    output = " ".join(result.output.split())
    assert "deadlock" not in output
    assert ("bench 128x7168x16384 is too slow for the 180 s timeout, not stuck: 1.80 s per call (60 calls returned);"
            " a sample is 50 calls (90 s), and the shape needs at least 350 calls") in output
    # the pass (95 s), then the warm-up's 3 samples (270 s) and the timed loop's up to its 120 s cap and one
    # sample more (300 s): 665 s, × 1.25
    assert "up to about 665 s; time a smaller --shape, or give --timeout 840 or more" in output


def test_a_shape_too_slow_with_no_smaller_one_in_the_task_is_told_the_timeout_alone(submission: Path) -> None:
    """The task's smallest shape (128x256x256) was told "time a smaller --shape": no shape of the task's is smaller."""
    from nvfp4ctl.runner.worker import ChildTimeout

    FakeWorker.raise_error = ChildTimeout("possible deadlock: bench 128x256x256 ran past 180 s; the child was killed",
                                          [], None, _progress(60), progress_age_s=40.0)
    result = _bench("--submission", str(submission), "--shape", "128,256,256")
    assert result.exit_code == 3, result.output
    output = " ".join(result.output.split())
    assert "bench 128x256x256 is too slow for the 180 s timeout, not stuck" in output, output
    assert "up to about 665 s; give --timeout 840 or more; the child was killed" in output, output
    assert "smaller --shape" not in output, output


def test_a_timeout_long_after_the_last_call_returned_is_still_a_possible_deadlock(submission: Path) -> None:
    from nvfp4ctl.runner.worker import ChildTimeout

    FakeWorker.raise_error = ChildTimeout("possible deadlock: bench 128x7168x16384 ran past 180 s; the child was killed",
                                          [], None, _progress(60, per_call_s=0.01), progress_age_s=170.0)
    result = _bench("--submission", str(submission))
    assert result.exit_code == 3 and "possible deadlock: bench 128x7168x16384 ran past 180 s" in result.output


class LoadingWorker(FakeWorker):
    """Loads the target in its first call, then reports calls returning, as the real worker's child does."""

    def __init__(self, target: Any, timeout_s: float, device: str = "cuda", **hooks: Any) -> None:
        super().__init__(target, timeout_s, device)
        self.hooks, self.loaded = hooks, False

    def call(self, job: str, *, label: str, timeout_s: float | None = None, **payload: Any) -> Any:
        if not self.loaded:
            time.sleep(0.3)
            self.loaded = True
            self.hooks["on_loaded"]()
        self.hooks["on_progress"](_progress(12))
        time.sleep(0.3)
        return super().call(job, label=label, timeout_s=timeout_s, **payload)


def test_the_progress_line_stops_saying_the_target_loads_once_it_has(submission: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """It said "timing ... (loading the target first)" through the whole first shape; now the load's end and
    then the calls returned are said. On the CPU there is no calibration step: 1 step, not "of 2"."""
    monkeypatch.setattr("nvfp4ctl.runner.worker.Worker", LoadingWorker)
    monkeypatch.setattr("nvfp4ctl.runner.gpu.run_device", lambda: "cpu")
    monkeypatch.setattr("nvfp4ctl.progress_lines.PLAIN_LINE_EVERY_S", 0.1)
    result = _bench("--submission", str(submission), "--only", "2", cli=separate_streams_runner())
    assert result.exit_code == 0, result.output
    lines = [line.rsplit(",", 1)[0] for line in result.stderr.splitlines()]
    assert lines[0] == "timing 128x4096x7168 (loading the target first): 0 of 1"
    loaded = lines.index("timing 128x4096x7168: 0 of 1")  # said at once as the load ends
    assert all("loading" not in line for line in lines[loaded:]), result.stderr


def test_the_jobs_news_is_said_by_the_next_plain_line() -> None:
    """The step's news (calls returned, time per call) reaches the heartbeat's next line; a fake clock and
    direct ticks, where the command's test waited 0.3 s on a 0.1 s heartbeat thread and could miss it."""
    from nvfp4ctl.commands.bench import _Steps
    from nvfp4ctl.progress_lines import ProgressLines

    class Bar:
        def add_task(self, description: str, total: int) -> int:
            return 0

        def update(self, task_id: int, description: str) -> None: ...

        def advance(self, task_id: int) -> None: ...

    said: list[str] = []
    now = [0.0]
    lines = ProgressLines(said.append, 1, clock=lambda: now[0], every_s=30.0)
    steps = _Steps()
    steps.show_on(Bar(), 1, lines)
    steps.step("timing 128x4096x7168")
    steps.loaded()
    steps.news(_progress(12))
    lines.tick()  # not yet due: the news waits for the next line
    assert said == ["timing 128x4096x7168 (loading the target first): 0 of 1, 0 s", "timing 128x4096x7168: 0 of 1, 0 s"]
    now[0] = 30.0
    lines.tick()
    assert said[-1] == "timing 128x4096x7168 (warm-up, 12 of at least 350 calls, 1.80 s per call): 0 of 1, 30 s"


def test_cpu_times_are_not_read_as_a_gpus(submission: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NVFP4CTL_DEVICE=cpu: two benches of the same code printed "-59.01% ±30.19% faster", "% this GPU"
    and "TFLOP/s 0". Now one caveat, CPU columns, no speed-of-light, no verdict; and the CPU runs are
    logged as such whatever GPU the worker names, so a GPU bench is never compared with them."""
    from nvfp4ctl.bench.render import CPU_CAVEAT

    monkeypatch.setattr("nvfp4ctl.runner.gpu.run_device", lambda: "cpu")
    assert _bench("--submission", str(submission)).exit_code == 0
    FakeWorker.scale = 0.4
    result = _bench("--submission", str(submission))
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert CPU_CAVEAT in output and output.count("CPU times") == 1
    for text in ("faster", "slower", "vs the previous", "% SOL", "this GPU", "TFLOP/s", "TB/s", "no earlier bench"):
        assert text not in output.replace(CPU_CAVEAT, ""), text
    assert "CPU mean µs" in output and "CPU geomean" in output
    data = json.loads(_bench("--submission", str(submission), "--json").stdout)
    assert data["device"] == "cpu" and data["comparison"] is None
    rates = ("tflops", "tbps", "sol_us", "pct_sol")
    assert all(shape[key] is None for shape in data["shapes"] for key in rates), data["shapes"]
    assert data["sol_geomean_us"] is None
    entries = runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))
    assert {entry.gpu for entry in entries} == {runlog.CPU_DEVICE_LABEL}
    monkeypatch.setattr("nvfp4ctl.runner.gpu.run_device", lambda: "cuda")
    on_gpu = _bench("--submission", str(submission))
    assert on_gpu.exit_code == 0 and "no earlier bench" in on_gpu.output and "vs the previous" not in on_gpu.output
    assert "% SOL" in on_gpu.output and "CPU times" not in on_gpu.output


def test_a_gemv_shape_in_json_says_what_its_key_is(submission: Path) -> None:
    """"256x512x2" read as a GEMM's M×N×K: the key stays, dims and label say it is the GEMV's m, k, l."""
    from nvfp4ctl.problems import get_problem

    task = get_problem("nvfp4_gemv").task_file
    result = _bench("--submission", str(submission), "--task", str(task), "--shape", "256,512,2", "--json",
                    cli=separate_streams_runner())
    assert result.exit_code == 0, result.stderr
    shape = json.loads(result.stdout)["shapes"][0]
    assert (shape["shape"], shape["dims"], shape["label"]) == ("256x512x2", ["m", "k", "l"], "256x512 l=2")
    assert (shape["m"], shape["k"], shape["l"]) == (256, 512, 2)
