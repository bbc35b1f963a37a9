"""The child-side job on CPU (host clock, no flush): correctness pass, recheck, raw samples."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from typer.testing import CliRunner

from nvfp4ctl.bench import jobs
from nvfp4ctl.cli import app
from nvfp4ctl.problems import get_problem
from nvfp4ctl.task import Case

PROBLEM = get_problem("nvfp4_gemm")
CASE = Case(m=128, n=128, k=256, l=1, seed=1111)
# max_noise 0: three repeats always stop at max-repeats (on a quiet CPU, 32 ms calls 0.1 % apart had converged)
FEW = {"max_repeats": 3, "min_time_s": 0.0, "max_noise": 0.0}


def _right(data: tuple) -> Any:
    data[6].copy_(PROBLEM.reference(data))
    return data[6]


def _bench(target: Any, **overrides: Any) -> dict[str, Any]:
    options: dict[str, Any] = dict(case=CASE, problem="nvfp4_gemm", rtol=1e-3, atol=1e-3, criterion=FEW,
                                   device="cpu", input_sets=3)
    return jobs.bench_case(target, **(options | overrides))


def test_returns_raw_samples_per_call() -> None:
    reply = _bench(_right)
    assert "failure" not in reply
    assert len(reply["samples_ns"]) == len(reply["issue_ns"]) == 3 and reply["reason"] == "max-repeats"
    assert all(sample > 0 for sample in reply["samples_ns"])
    assert set(reply["phases_s"]) == {"generate", "correctness", "warm-up", "settle", "timing"}


def test_settle_runs_the_loop_untimed_before_the_samples() -> None:
    reply = _bench(_right, settle_s=0.05)
    assert reply["phases_s"]["settle"] >= 0.05 and len(reply["samples_ns"]) == 3


def test_correctness_pass_names_the_input_set_and_seed() -> None:
    def wrong(data: tuple) -> Any:
        out = _right(data)
        out[0, 1, 0] += 100
        return out

    reply = _bench(wrong)
    assert reply["failure"].startswith("input set 1 of 3 (seed 1153): 1 of 16384 elements differ; first at (m=0, n=1, l=0)")


def test_correctness_pass_names_a_gemv_miss_in_its_own_dimensions() -> None:
    gemv = get_problem("nvfp4_gemv")

    def zeroes_rows(data: tuple) -> Any:
        out = data[-1]
        out.copy_(gemv.reference(data))
        out[:128] = 0
        return out

    reply = _bench(zeroes_rows, case=Case(m=256, n=1, k=512, l=1, seed=1111), problem="nvfp4_gemv", input_sets=1)
    assert "first at (m=0, 0, l=0)" in reply["failure"], reply["failure"]  # c is (m, 1, l): no n


def test_correctness_pass_calls_the_target_on_clones() -> None:
    seen: list[int] = []

    def spy(data: tuple) -> Any:
        seen.append(data[0].data_ptr())
        return _right(data)

    inputs = [PROBLEM.generate_input(CASE, device="cpu")]
    jobs.correctness_pass(spy, PROBLEM, inputs, [1111], 1e-3, 1e-3)
    assert seen and seen[0] != inputs[0][0].data_ptr()


@pytest.mark.parametrize("raises_from_call", [1, 4], ids=["correctness-pass", "timed-loop"])
def test_an_exception_raised_by_the_target_comes_back_raised(raises_from_call: int) -> None:
    calls = [0]

    def raising(data: tuple) -> Any:
        calls[0] += 1
        if calls[0] >= raises_from_call:
            raise ValueError("no tile config")
        return _right(data)

    reply = _bench(raising)
    assert "failure" not in reply and "samples_ns" not in reply
    headline, *trace = reply["raised"]
    assert headline == "custom_kernel raised ValueError: no tile config"
    assert trace[-1] == "ValueError: no tile config" and "in raising" in trace[-3]
    assert not any("nvfp4ctl/bench/" in line for line in trace)  # the harness's frames are left out


def test_a_shape_the_target_refuses_comes_back_with_its_constraint() -> None:
    def refusing(data: tuple) -> Any:
        raise ValueError("unsupported shape (m=128, n=128, k=256, l=1): k must be a multiple of 512")

    reply = _bench(refusing)
    assert reply["unsupported"] == "k must be a multiple of 512"
    assert reply["raised"][0].startswith("custom_kernel raised ValueError: unsupported shape")
    assert "unsupported" not in _bench(lambda data: (_ for _ in ()).throw(ValueError("no tile config")))


def test_a_refused_shape_is_said_after_one_input_set_not_all_of_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """bench made all 50 input sets of a shape (31 s on the CPU for the GEMM's largest) before the first call
    refused it, where check said it at once: the pass's first call now comes right after the first set."""
    made: list[int] = []
    make_input = PROBLEM.make_input

    def counted(case: Any, device: str) -> Any:
        made.append(case.seed)
        return make_input(case, device=device)

    def refusing(data: tuple) -> Any:
        raise ValueError("unsupported shape (m=128, n=128, k=256, l=1): k must be a multiple of 512")

    monkeypatch.setattr(PROBLEM, "make_input", counted)
    assert _bench(refusing, input_sets=50)["unsupported"] == "k must be a multiple of 512"
    assert made == [CASE.seed + 42]
    made.clear()
    calls: list[int] = []

    def right(data: tuple) -> Any:
        calls.append(len(made))  # the sets made by the time of each call
        return _right(data)

    reply = _bench(right, input_sets=4)
    assert "failure" not in reply and len(made) == 4 and calls[:5] == [1, 4, 4, 4, 4]  # the pass's 4 calls, then the loop's


def test_recheck_catches_a_result_that_goes_wrong_later() -> None:
    calls = [0]

    def decays(data: tuple) -> Any:
        calls[0] += 1
        out = _right(data)
        if calls[0] > 3:  # right in the correctness pass (3 calls), wrong once timed
            out.zero_()
        return out

    assert _bench(decays, recheck=False).get("failure") is None
    calls[0] = 0
    assert _bench(decays, recheck=True)["failure"].startswith("recheck: input set 1 of 3")


def test_whole_command_through_the_real_child_on_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's child, the job and the report together (CPU, one small shape, 3 repeats)."""
    submission = tmp_path / "submission.py"
    submission.write_text(  # right answers, cached by input bytes (a test stub, not a kernel) so it is quick
        "from nvfp4ctl.problems import get_problem\n"
        "_P, _SEEN = get_problem('nvfp4_gemm'), {}\n"
        "def custom_kernel(data):\n"
        "    key = b''.join(t.contiguous().view(-1).view(__import__('torch').uint8).numpy().tobytes() for t in data[:4])\n"
        "    if key not in _SEEN:\n"
        "        _SEEN[key] = _P.reference(data)\n"
        "    return data[6].copy_(_SEEN[key])\n"
    )
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    argv = ["bench", "--submission", str(submission), "--shape", "128,64,256", "--max-repeats", "3", "--json"]
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", *argv])
    result = CliRunner().invoke(app, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (shape,) = data["shapes"]
    assert shape["shape"] == "128x64x256" and shape["us"]["runs"] == 3 and data["ceilings"] is None
    assert Path(os.environ["NVFP4CTL_MEMORY"]).read_text().count("geomean ") == 1


CHECK_TARGETS = Path(__file__).parent.parent / "check" / "targets"


@pytest.mark.parametrize("target, first_frame, note", [
    # raised in custom_kernel: the lines began in jobs.py (three frames, one a <listcomp>) and the call counter
    ("cuda_error.py", "cuda_error.py\", line 2, in custom_kernel", False),
    # reported at the outputs' check after the calls: no frame of the target to start at
    ("cuda_error_at_sync.py", "nvfp4ctl/bench/jobs.py\", line", True),
])
def test_a_cuda_errors_traceback_starts_in_the_target_where_it_has_a_frame(
        monkeypatch: pytest.MonkeyPatch, target: str, first_frame: str, note: bool) -> None:
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    argv = ["bench", "--submission", str(CHECK_TARGETS / target), "--shape", "128,64,256", "--max-repeats", "1"]
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", *argv])
    result = CliRunner().invoke(app, argv, catch_exceptions=False)
    assert result.exit_code == 4, result.output
    trace = result.output.split("Traceback (most recent call last):\n", 1)[1].splitlines()
    assert first_frame in trace[0], result.output
    assert ("nvfp4ctl/bench/" in result.output) is note and ("no frame of the target in this traceback" in result.output) is note
    assert "full child log: " in trace[-1]


def test_input_sets_that_fit_one_by_one_but_not_together_are_this_gpus_limit(monkeypatch) -> None:
    """The leaderboard's loop holds all 50 sets at once: where the third does not fit, the shape cannot be
    benched on this GPU (exit 2 with what torch said), which is no failure of the kernel; the first set
    not fitting stays make_input's to judge."""
    import torch

    from nvfp4ctl.errors import UsageError

    made = []

    def make_input(case: Any, device: str = "cuda", scales: str = "generator") -> Any:
        if len(made) == 2:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 7.00 GiB. GPU 0 has a total"
                                         " capacity of 79.19 GiB of which 1.00 GiB is free.\nmore")
        made.append(case.seed)
        return (case.seed,)

    monkeypatch.setattr(PROBLEM, "make_input", make_input)
    with pytest.raises(UsageError) as caught:  # the pass's first call, on the first set, takes these sets as they are
        _bench(lambda data: data, input_sets=4)
    assert str(caught.value) == ("m=128 n=128 k=256: its 4 input sets do not fit in cpu memory together (2 did; the"
                                 " leaderboard's loop holds all of them): CUDA out of memory. Tried to allocate"
                                 " 7.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.00 GiB is free.")
    made.clear()
    made.extend([0, 0])  # the first set itself: raised as it came
    with pytest.raises(torch.OutOfMemoryError):
        jobs.make_input_sets(PROBLEM, CASE, [1, 2], "cpu")


def test_a_cpu_job_reports_each_call_returning_and_each_batch(reports: list[Any]) -> None:
    """The watchdog's parent hears of the calls that returned (runner/progress.py): on the CPU each call of
    the correctness pass, then each batch, with the least number of calls the job needs."""
    from nvfp4ctl.bench.call_progress import CallProgress

    _bench(_right)
    assert all(isinstance(value, CallProgress) for value in reports)
    returned = [r.calls for r in reports if r.phase == "correctness pass"]
    # the pass's first call on the first set (before the rest are made), then the pass resumes, one per call, then
    # the three outputs are checked
    assert returned[:5] == [0, 1, 1, 2, 3]
    assert reports[-1].phase == "timing" and reports[-1].calls == 3 + 3 * 3
    assert reports[-1].calls_needed == 3 * (1 + 3) and reports[-1].per_call_s > 0


def test_a_gpu_job_counts_the_pass_s_calls_but_takes_its_pace_from_batches(monkeypatch: pytest.MonkeyPatch,
                                                                          reports: list[Any]) -> None:
    """On a GPU the correctness pass's seconds (references, checks, a first call's JIT) were counted as call
    time: its slowness set the pace and let a kernel stuck in its first batch be said too slow, not stuck.
    The GPU's path, run here with the host's clock and no flush."""
    import time

    from nvfp4ctl.bench.clock import HostClock
    from nvfp4ctl.bench.flush import NoFlush

    monkeypatch.setattr(jobs, "CudaClock", HostClock)
    monkeypatch.setattr(jobs, "CudaFlush", lambda device: NoFlush())
    make_input_sets = jobs.make_input_sets
    monkeypatch.setattr(jobs, "make_input_sets",
                        lambda spec, case, seeds, device, **options: make_input_sets(spec, case, seeds, "cpu", **options))
    calls = []

    def slow_first_pass(data: tuple) -> Any:
        calls.append(1)
        if len(calls) > 3:
            return data[6]  # the timed calls: quick (their outputs are not checked again)
        time.sleep(0.1)  # the pass's calls: a JIT, say
        return _right(data)

    assert "failure" not in _bench(slow_first_pass, device="cuda", warmup=FEW)
    after_pass = next(r for r in reports if r.calls == 3)
    assert after_pass.paced_calls == 0 and not after_pass.still_running(5.0)
    entered = next(r for r in reports if r.phase == "warm-up")
    assert not entered.still_running(5.0)  # no batch has returned: a kernel stuck now is not slow
    assert reports[-1].calls == 3 + 6 * 3 and reports[-1].paced_calls == 6 * 3
    assert reports[-1].per_call_s < 0.005  # the batches' pace alone (the pass's 0.1 s calls made it 14 ms or more)


def test_a_gpu_job_synchronizes_its_first_call_before_making_the_next_input_set(monkeypatch: pytest.MonkeyPatch,
                                                                               reports: list[Any]) -> None:
    """On a GPU the pass's first call returns once launched: the phase went back to making the input sets, the
    second set's making blocked behind a kernel that deadlocked, and the kill said "too slow ... not stuck"; a
    fault in that call came out of the input making. The device is synchronized while the phase is the first
    call's, and a CUDA error there is the kernel's crash. The GPU's path, run with stand-ins for its clock."""
    from nvfp4ctl.bench.call_progress import PASS
    from nvfp4ctl.bench.clock import HostClock
    from nvfp4ctl.bench.flush import NoFlush

    synced: list[tuple[str, int, Any]] = []
    faults = [False]

    class RecordingClock(HostClock):
        def synchronize(self) -> None:
            synced.append((reports[-1].phase, reports[-1].sets_made, reports[-1].first_call_s))
            if faults[0]:
                raise RuntimeError("CUDA error: an illegal memory access was encountered")

    monkeypatch.setattr(jobs, "CudaClock", RecordingClock)
    monkeypatch.setattr(jobs, "CudaFlush", lambda device: NoFlush())
    make_input_sets = jobs.make_input_sets
    monkeypatch.setattr(jobs, "make_input_sets",
                        lambda spec, case, seeds, device, **options: make_input_sets(spec, case, seeds, "cpu", **options))
    assert "failure" not in _bench(_right, device="cuda")
    assert synced[0] == (PASS, 1, None), synced  # after the first call, before it is said returned and set 2 made
    synced.clear()
    faults[0] = True
    with pytest.raises(RuntimeError, match="illegal memory access"):
        _bench(_right, device="cuda")
    assert len(synced) == 1 and synced[0][:2] == (PASS, 1)


def test_a_job_whose_inputs_are_slow_to_make_counts_them_in_its_time(monkeypatch: pytest.MonkeyPatch,
                                                                      reports: list[Any]) -> None:
    """The watchdog's timeout runs from the job's start, input generation included; the job's time (the
    least it needs, the most it may take, and so the --timeout suggested) ran from its first call: a shape
    whose 50 input sets took a minute to make was told a --timeout that the generation alone used up."""
    import math
    import time

    make_input_sets = jobs.make_input_sets

    def slow_to_make(spec: Any, case: Any, seeds: list[int], device: str, **options: Any) -> list[Any]:
        time.sleep(1.5)
        return make_input_sets(spec, case, seeds, device, **options)

    monkeypatch.setattr(jobs, "make_input_sets", slow_to_make)
    reply = _bench(_right)
    assert "failure" not in reply and reply["phases_s"]["generate"] >= 1.5
    assert all(report.elapsed_s >= 1.5 and report.inputs_s >= 1.5 for report in reports[1:])  # past the making's start
    checked = [r for r in reports if r.phase == "correctness pass" and r.checks == 3][-1]
    assert checked.expected_s() >= reply["phases_s"]["generate"] + reply["phases_s"]["correctness"] - 0.01
    assert checked.most_s(math.inf) >= reply["phases_s"]["generate"] + reply["phases_s"]["correctness"] - 0.01


def test_a_cpu_job_counts_the_checks_left_after_its_calls(monkeypatch: pytest.MonkeyPatch, reports: list[Any]) -> None:
    """The correctness pass calls the target on every input set, then checks every output against a reference
    computed on the CPU: the checks left counted nothing, and a shape killed during 0.5 s checks was told a
    --timeout its references alone used up."""
    import time

    reference = PROBLEM.reference

    def right(data: tuple) -> Any:
        data[6].copy_(reference(data))
        return data[6]

    def slow_reference(data: tuple) -> Any:
        time.sleep(0.5)
        return reference(data)

    monkeypatch.setattr(PROBLEM, "reference", slow_reference)
    assert "failure" not in _bench(right)
    first_checked = next(r for r in reports if r.checks == 1)
    assert first_checked.calls == 3 and first_checked.checked_s >= 0.5
    assert first_checked.expected_s() >= first_checked.elapsed_s + 2 * 0.5
    assert first_checked.most_s(1000.0) >= first_checked.elapsed_s + 2 * 0.5


def test_a_job_reports_each_input_set_it_makes_before_its_first_call(monkeypatch: pytest.MonkeyPatch,
                                                                      reports: list[Any]) -> None:
    """No report came before the first call: a shape killed while its input sets were made was said a possible
    deadlock, the watchdog knowing nothing of what the job did."""
    from nvfp4ctl.bench.call_progress import INPUTS, PASS

    make_input = PROBLEM.make_input
    monkeypatch.setattr(PROBLEM, "make_input", lambda case, device: make_input(case, device=device))
    assert "failure" not in _bench(_right)
    # the first set, the pass's first call on it (a refusal of the shape comes then), then the other two
    phases = [(r.phase, r.sets_made, r.calls) for r in reports][:7]
    assert phases == [(INPUTS, 0, 0), (INPUTS, 1, 0), (PASS, 1, 0), (PASS, 1, 1), (INPUTS, 1, 1), (INPUTS, 2, 1),
                      (INPUTS, 3, 1)], phases
    making = [r for r in reports if r.phase == INPUTS]
    assert making[-2].describe() == "making its input sets, 2 of 3"
    after = reports[len(making) + 2]
    assert after.phase == PASS and after.calls == 1 and after.inputs_s >= making[-1].inputs_s


def test_a_shape_killed_while_making_its_input_sets_is_too_slow_not_a_deadlock(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the runner's child on the CPU: 50 input sets at 0.3 s each, a 6 s timeout (the sets need 15 s; the
    child's start, import torch included, must fit before it on a loaded machine). The kill came while the
    input sets were made (after the kernel's first call, on the first), and was said a possible deadlock."""
    submission = tmp_path / "submission.py"
    submission.write_text(  # makes the child's input sets slow; its kernel is never called
        "import time\n"
        "from nvfp4ctl.problems import get_problem\n"
        "_P = get_problem('nvfp4_gemm')\n"
        "_make = _P.make_input\n"
        "def _slow(case, device):\n"
        "    time.sleep(0.3)\n"
        "    return _make(case, device=device)\n"
        "_P.make_input = _slow\n"
        "def custom_kernel(data):\n"
        "    return data[6]\n"
    )
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    argv = ["bench", "--submission", str(submission), "--shape", "128,64,256", "--timeout", "6"]
    result = CliRunner().invoke(app, argv, env={"COLUMNS": "400"})
    assert result.exit_code == 3, result.output
    said = " ".join(result.output.split())
    assert "deadlock" not in said, said
    assert "bench 128x64x256 is too slow for the 6 s timeout, not stuck: it was still making" in said, said
    assert "after the kernel's first call, on the first set (" in said and "the child was killed" in said


def test_a_cpu_shape_that_cannot_end_in_its_timeout_stops_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the runner's child on the CPU: 0.2 s calls, at least 200 of them, a 10 s timeout. The shape ran
    to the watchdog's kill, then was said too slow; its pace says so a second (a tenth of the timeout) after its
    first call."""
    import time

    submission = tmp_path / "submission.py"
    submission.write_text("import time\n"
                          "def custom_kernel(data):\n"
                          "    time.sleep(0.2)\n"
                          "    return data[6]\n")
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    argv = ["bench", "--submission", str(submission), "--shape", "128,64,256", "--timeout", "10"]
    began = time.monotonic()
    result = CliRunner().invoke(app, argv, env={"COLUMNS": "400"})
    took = time.monotonic() - began
    assert result.exit_code == 3, result.output
    said = " ".join(result.output.split())
    assert "bench 128x64x256 is too slow for the 10 s timeout, not stuck: 0.20 s per call (" in said, said
    assert "the child was killed" not in said and took < 9, (took, said)
    # 128x64x256 is smaller than any shape of the task's: --timeout is the one advice that applies
    assert said.endswith(" or more") and "smaller --shape" not in said and "; give --timeout " in said, said


def test_the_profile_job_reports_each_input_set_it_makes_as_bench_case_does(monkeypatch: pytest.MonkeyPatch,
                                                                            reports: list[Any]) -> None:
    """device_time made its 50 input sets without a word: a profile step killed then was a possible deadlock."""
    from nvfp4ctl.bench.call_progress import INPUTS, PROFILE
    from nvfp4ctl.bench.flush import NoFlush

    monkeypatch.setattr(jobs, "CudaFlush", lambda device: NoFlush())
    profiled: list[int] = []
    monkeypatch.setattr(jobs, "profile_device_time",
                        lambda target, inputs, flush, head_start_s: profiled.append(len(inputs)))  # needs CUDA
    reply = jobs.device_time(_right, case=CASE, problem="nvfp4_gemm", head_start_s=0.0, device="cpu", input_sets=3)
    assert reply["profiler_error"] is None and profiled == [3]
    making = [r for r in reports if r.phase == INPUTS]
    assert [r.sets_made for r in making] == [0, 1, 2, 3] and making[0].calls == 0
    assert making[2].describe() == "making its input sets, 2 of 3"
    assert [r.phase for r in reports[len(making):]] == [PROFILE]
    assert reports[-1].describe() == "profiling" and not reports[-1].still_running(0.0)  # a kill now: possible deadlock


GEMV_CASE = Case(m=128, n=1, k=256, l=1, seed=1111)


def _gemv_leaderboard(target: Any) -> dict[str, Any]:
    return _bench(target, case=GEMV_CASE, problem="nvfp4_gemv", input_sets=1, recheck=True,
                  criterion={"max_repeats": 6, "min_time_s": 0.0, "max_noise": 0.0})


def test_gemv_leaderboard_draws_a_fresh_input_before_every_repeat_and_checks_it() -> None:
    """eval.py's leaderboard loop: seed += 13 before each repeat, that output checked. A target answering with
    its previous call's output passed while every repeat reused the one input set."""
    gemv = get_problem("nvfp4_gemv")
    last: list[Any] = []

    def previous_answer(data: tuple) -> Any:
        out = data[6]
        out.copy_(last[0] if last else gemv.reference(data))
        last[:] = [out.clone()]
        return out

    failure = _gemv_leaderboard(previous_answer)["failure"]
    assert failure.startswith(f"recheck: repeat 1's fresh input set (seed {GEMV_CASE.seed + 13}): ")


def test_gemv_leaderboard_times_a_data_ptr_cache_on_new_inputs() -> None:
    """A target caching its result by the input's address answered each repeat from its cache when the
    repeats reused the input set; on fresh inputs it computes (a miss) or answers stale (a hit) and fails."""
    gemv = get_problem("nvfp4_gemv")
    cache: dict[int, Any] = {}
    seen: list[int] = []
    hits = 0

    def cached(data: tuple) -> Any:
        nonlocal hits
        key = data[0].data_ptr()
        seen.append(int(data[0].view(torch.uint8).sum()))  # the input's bytes, to tell new data from old
        if key in cache:
            hits += 1
        else:
            cache[key] = gemv.reference(data)
        return cache[key]

    reply = _gemv_leaderboard(cached)
    assert "failure" in reply or hits == 0, (hits, reply.get("failure"))
    timed = seen[-6:]
    assert len(set(timed)) == len(timed)  # every timed repeat saw new data
