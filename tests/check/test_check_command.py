"""`nvfp4ctl check` end to end on CPU (NVFP4CTL_DEVICE=cpu) with a fake problem and fake targets."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from check_fakes import FAKE_PROBLEM, TARGETS
from fake_problem import FakeCase
from load_margin import latency_bound, slowdown
from nvfp4ctl import runlog
from nvfp4ctl.cli import app
from nvfp4ctl.workspace import memory_path, user_folder


def check(*args: str):
    return CliRunner().invoke(app, ["check", *args])


def _last_log_entry() -> runlog.RunEntry:
    return runlog.read(memory_path())[-1]


def test_correct_target_passes_every_test(fake_task):
    fake_task()
    result = check("--submission", str(TARGETS / "good.py"))
    assert result.exit_code == 0, result.output
    assert "timeout 180 s (default) · load limit 600 s (default) · device cpu · scales generator · probe on" in result.output
    assert "3/3 pass" in result.output
    entry = _last_log_entry()
    assert entry.result == "3/3 pass" and entry.exit_code == "0"
    assert entry.target == runlog.describe_target(TARGETS / "good.py", user_folder(), "--submission",
                                                  runlog.log_folder_of(memory_path()))
    # outside the run log's folder (the tests' own, in a temporary folder): by its absolute path
    assert entry.target.startswith(f"{(TARGETS / 'good.py').resolve()}@")


def test_a_large_timeout_is_written_in_whole_seconds_in_the_header(fake_task):
    """`--timeout 1e9` read `timeout 1e+09 s`."""
    fake_task(tests=(FakeCase(128, 128, 32),))
    result = check("--submission", str(TARGETS / "good.py"), "--no-probe", "--timeout", "1e9")
    assert result.exit_code == 0, result.output
    assert "timeout 1000000000 s (--timeout) · load limit 1000000000 s (default) · device cpu" in result.output


def test_a_timeout_the_task_sets_to_180_is_named_as_the_task_files(fake_task):
    fake_task(tests=(FakeCase(128, 128, 32),), timeout_given=True)
    result = check("--submission", str(TARGETS / "good.py"), "--no-probe")
    assert result.exit_code == 0, result.output
    assert "timeout 180 s (task.yml timeout) · load limit 600 s (default) · device cpu" in result.output


def test_check_runs_under_the_task_files_test_limit_not_its_ranked_one(fake_task):
    """GPU MODE's grouped GEMM limits tests to 180 s and ranked runs to 300 s: check said 300 (task.yml)."""
    fake_task(tests=(FakeCase(128, 128, 32),), timeout_s=300.0, timeout_given=True,
              run_timeouts={"test_timeout": 180.0, "benchmark_timeout": 180.0, "ranked_timeout": 300.0})
    result = check("--submission", str(TARGETS / "good.py"), "--no-probe")
    assert result.exit_code == 0, result.output
    assert "timeout 180 s (task.yml test_timeout) · load limit 600 s (default) · device cpu" in result.output


def test_a_passing_submission_with_the_word_stream_is_warned(fake_task, tmp_path):
    fake_task()
    worded = tmp_path / "worded.py"
    worded.write_text("# keep the STREAM of work flowing\n" + (TARGETS / "good.py").read_text() + "# upstream\n")
    result = check("--submission", str(worded))
    assert result.exit_code == 0, result.output  # check judges the outputs; lint judges the rules
    assert "worded.py:1: the word 'stream' (2 times): the leaderboard refuses this file unread" in " ".join(result.output.split())
    assert "the word" not in check("--submission", str(TARGETS / "good.py")).output


def test_a_submission_whose_name_is_not_utf8_is_run_and_named_as_the_run_log_writes_it(fake_task, tmp_path):
    """Python holds b"\\xff" of a file's name as the lone surrogate \\udcff, which UTF-8 cannot encode: the
    child's load hashed the path's text and crashed (`UnicodeEncodeError`, exit 4) on a file that runs."""
    fake_task(tests=(FakeCase(128, 128, 32),))
    named = tmp_path / "good\udcff.py"
    named.write_text((TARGETS / "good.py").read_text())
    result = check("--submission", str(named), "--no-probe")
    assert result.exit_code == 0, result.output
    assert f"target {tmp_path}/good\\xff.py (--submission)" in result.output and "1/1 pass" in result.output


def test_hanging_target_is_killed_and_the_run_stops(fake_task):
    fake_task()
    load_before = slowdown()
    result = check("--submission", str(TARGETS / "sleeps_forever.py"), "--timeout", "1.5")
    assert result.exit_code == 3, result.output
    # From the job's start to the kill, as check's table reports it: the whole command's wall time
    # is mostly the child's start (torch's import), which says how busy the machine is, not how soon
    # a hang is killed. A latency, so wall time, with a margin that grows with the load.
    reported = re.search(r"timeout\W+-\W+([\d.]+) s", result.output)
    assert reported, result.output
    assert float(reported.group(1)) < latency_bound(1.5, 1.0, load_before, slowdown()), result.output
    assert (
        "possible deadlock in test 1 (m=128 n=256 k=32): no result after 1.5 s; the child was killed" in result.output
    )
    assert "2 remaining tests not run after the timeout: test 2, test 3" in result.output
    assert "timeout in test 1 (no result after 1.5 s)" in result.output
    assert _last_log_entry().result == "timeout in test 1 (no result after 1.5 s)"



def test_a_test_killed_while_its_inputs_were_made_is_no_possible_deadlock(fake_task, monkeypatch):
    """The kernel was never called: it was a possible deadlock in test 1, as if the kernel hung."""
    monkeypatch.setenv("COLUMNS", "300")
    fake_task(problem="fake_problem:SLOW_INPUTS")
    result = check("--submission", str(TARGETS / "good.py"), "--timeout", "1.5")
    assert result.exit_code == 3, result.output
    said = " ".join(result.output.split())
    # the task's three tests are of equal work (flops): none smaller to check instead
    assert ("test 1 (m=128 n=256 k=32): making its inputs ran past the 1.5 s timeout (not the kernel); the child was"
            " killed; give a larger --timeout") in said and "smaller --shape" not in said, said
    assert "possible deadlock" not in said
    assert "2 remaining tests not run after the timeout: test 2, test 3" in said
    assert _last_log_entry().result == "timeout in test 1 (making its inputs ran past 1.5 s)"
    assert _last_log_entry().exit_code == "3"


def test_a_test_killed_while_the_probe_inputs_were_made_gets_a_timeout_to_give(fake_task, monkeypatch):
    """The first making's pace says how long the test needs: a --timeout that would do, or --no-probe."""
    monkeypatch.setenv("COLUMNS", "300")
    fake_task(tests=(FakeCase(128, 128, 32),), problem="fake_problem:SLOW_PROBE_INPUTS")
    result = check("--submission", str(TARGETS / "good.py"), "--timeout", "3")
    assert result.exit_code == 3, result.output
    said = " ".join(result.output.split())
    assert re.search(r"test 1 \(m=128 n=128 k=32\): making the anti-cache probe's inputs ran past the 3 s timeout"
                     r" \(not the kernel\); the child was killed; its inputs took 0\.\d+ s to make, so the test needs"
                     r" about \d s at the pace seen: give --timeout 10 or more, or --no-probe", said), said


def test_a_test_killed_while_the_reference_was_computed_is_no_possible_deadlock(fake_task, monkeypatch):
    """The kernel was never called (nvfp4ctl's own reference ran): it was a possible deadlock in test 1."""
    monkeypatch.setenv("COLUMNS", "300")
    fake_task(tests=(FakeCase(128, 128, 32),), problem="fake_problem:SLOW_REFERENCE")
    result = check("--submission", str(TARGETS / "good.py"), "--timeout", "1.5")
    assert result.exit_code == 3, result.output
    said = " ".join(result.output.split())
    assert ("test 1 (m=128 n=128 k=32): computing the reference ran past the 1.5 s timeout (not the kernel); the child"
            " was killed; give a larger --timeout") in said and "smaller --shape" not in said, said
    assert "possible deadlock" not in said


def test_a_test_killed_in_the_harness_is_told_a_smaller_shape_only_where_the_task_lists_one(fake_task, monkeypatch):
    """check's "give a larger --timeout, or check a smaller --shape" was said of the task's smallest test too, where
    no smaller shape was there to check; as bench's advice, it is said only where the task lists one of less work."""
    monkeypatch.setenv("COLUMNS", "300")
    fake_task(tests=(FakeCase(128, 128, 32),), benchmarks=(FakeCase(64, 128, 32),), problem="fake_problem:SLOW_REFERENCE")
    result = check("--submission", str(TARGETS / "good.py"), "--timeout", "1.5")
    assert result.exit_code == 3, result.output
    said = " ".join(result.output.split())
    assert ("test 1 (m=128 n=128 k=32): computing the reference ran past the 1.5 s timeout (not the kernel); the child"
            " was killed; give a larger --timeout, or check a smaller --shape") in said, said


def test_a_test_killed_in_the_probe_s_reference_gets_a_timeout_to_give(fake_task, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    fake_task(tests=(FakeCase(128, 128, 32),), problem="fake_problem:SLOW_PROBE_REFERENCE")
    result = check("--submission", str(TARGETS / "good.py"), "--timeout", "3")
    assert result.exit_code == 3, result.output
    said = " ".join(result.output.split())
    assert re.search(r"test 1 \(m=128 n=128 k=32\): computing the reference of call 2 of 3 \(the anti-cache probe's\) ran"
                     r" past the 3 s timeout \(not the kernel\); the child was killed; the reference took 0\.\d+ s, so the"
                     r" test needs about \d s at the pace seen: give --timeout 10 or more, or --no-probe", said), said
    assert "possible deadlock" not in said


def test_a_probe_call_killed_after_the_first_returned_is_too_slow_not_stuck(fake_task, monkeypatch):
    """Each call takes 1.5 s: the first returned, the probe's second ran past 2.5 s. It was a possible deadlock."""
    monkeypatch.setenv("COLUMNS", "300")
    fake_task(tests=(FakeCase(128, 128, 32),))
    result = check("--submission", str(TARGETS / "slow_calls.py"), "--timeout", "2.5")
    assert result.exit_code == 3, result.output
    said = " ".join(result.output.split())
    assert re.search(r"test 1 \(m=128 n=128 k=32\): too slow for the 2\.5 s timeout, not stuck: 1\.\d+ s per call, and"
                     r" the anti-cache probe makes 3 calls per test \(call 2 was under way, the earlier returned\), about"
                     r" \d s in all at the pace seen; the child was killed; give --timeout 10 or more, or --no-probe",
                     said), said
    assert "possible deadlock" not in said

def test_crash_marks_the_test_and_the_rest_still_run(fake_task):
    fake_task()  # test 2 has m=256: the target exits there
    result = check("--submission", str(TARGETS / "exits_on_m256.py"))
    assert result.exit_code == 4, result.output
    assert "test 2 (m=256 n=128 k=32) crashed: the child died (exit code 1)" in result.output
    assert "kernel: about to die on m=256" in result.output
    assert "2/3 pass, 1 crash (test 2: exit code 1)" in result.output
    assert _last_log_entry().result == "2/3 pass, 1 crash (test 2: exit code 1)"


def _crashed_with_a_cuda_error(fake_task, target: str):
    """check of `target` on one test, which crashes with a CUDA error (exit 4)."""
    fake_task(tests=(FakeCase(128, 128, 32),))
    result = check("--submission", str(TARGETS / target))
    assert result.exit_code == 4, result.output
    assert "test 1 (m=128 n=128 k=32) crashed with a CUDA error: RuntimeError: CUDA error: an illegal" in result.output
    return result


def test_cuda_error_is_a_crash_whose_traceback_starts_in_the_submission_as_a_raised_ones_does(fake_task):
    """The traceback began in nvfp4ctl's check_case and _call_and_compare, above the submission's frame."""
    result = _crashed_with_a_cuda_error(fake_task, "cuda_error.py")
    assert re.search(r"Traceback \(most recent call last\):\n +File \".*cuda_error\.py\", line 2, in custom_kernel",
                     result.output), result.output
    assert "nvfp4ctl/check/job.py" not in result.output and "no frame of the target" not in result.output
    assert "full child log: " in result.output


def test_a_cuda_error_reported_at_checks_own_synchronize_keeps_the_trace_and_says_whose_kernel_failed(fake_task):
    result = _crashed_with_a_cuda_error(fake_task, "cuda_error_at_sync.py")
    assert "nvfp4ctl/check/job.py\", line" in result.output and "in _call_and_compare" in result.output
    assert re.search(r"RuntimeError: CUDA error: an illegal memory access was encountered\n +no frame of the target in "
                     r"this traceback: CUDA reports a kernel's fault at a later call, so the failing kernel is the "
                     r"target's last launch before it\n +full child log: ", result.output), result.output


def test_an_exception_raised_by_the_call_is_a_crash_of_that_test(fake_task):
    """custom_kernel raising (no CUDA error) is the target's code failing, as an exception at import or a
    CUDA error is: exit 4, its own verdict, its traceback once; a wrong output stays FAIL and exit 1."""
    fake_task()
    result = check("--submission", str(TARGETS / "raises_value_error.py"))
    assert result.exit_code == 4, result.output
    assert re.search(r"│ 1 +│ m=128 n=256 k=32 +│ raised +│", result.output), result.output
    assert "test 1 (m=128 n=256 k=32): custom_kernel raised ValueError: no tile config for m=128" in result.output
    assert result.output.count("Traceback (most recent call last)") == 2  # tests 1 and 2; not test 3
    assert "in _pick_tile" in result.output and "nvfp4ctl/check/job.py" not in result.output
    # another message is another exception: its own traceback; the same one again is said to be
    assert "test 2 (m=256 n=128 k=32): custom_kernel raised ValueError: no tile config for m=256" in result.output
    assert "test 3 (m=128 n=128 k=64 l=2): same exception as test 1" in result.output
    said = "0/3 pass, 3 raised (tests 1, 2, 3; test 1: ValueError: no tile config for m=128)"
    assert said in result.output
    entry = _last_log_entry()
    assert entry.result == said and entry.exit_code == "4"


_RAISES_WITH_ESCAPES = 'def custom_kernel(data):\n    raise RuntimeError("bad \\x1b[31m red \\u202e rev")\n'


def test_a_traceback_shows_an_escape_in_its_file_name_or_message_as_the_message_lines_do(fake_task, tmp_path):
    """A traceback's lines went to the terminal as the child wrote them: a submission named with ESC, or an
    exception's message holding ESC or U+202E, recoloured and reordered the terminal's text there."""
    fake_task(tests=(FakeCase(128, 128, 32),))
    named = tmp_path / "e\x1b[31mx.py"
    named.write_text(_RAISES_WITH_ESCAPES)
    result = check("--submission", str(named), "--no-probe")
    assert result.exit_code == 4, result.output
    assert "\x1b" not in result.output and "\u202e" not in result.output, result.output
    assert f'File "{tmp_path}/e\\x1b[31mx.py", line 2, in custom_kernel' in result.output, result.output
    assert "  RuntimeError: bad \\x1b[31m red \\u202e rev\n" in result.output, result.output


def test_a_raised_tests_cause_is_in_the_run_logs_cell_as_the_terminal_shows_it(fake_task, tmp_path):
    """The last line's cause went into the run log's cell with the exception's ESC and U+202E as they were:
    `cat MEMORY.md` recoloured and reordered the terminal's text."""
    fake_task(tests=(FakeCase(128, 128, 32),))
    named = tmp_path / "raises.py"
    named.write_text(_RAISES_WITH_ESCAPES)
    result = check("--submission", str(named), "--no-probe")
    assert result.exit_code == 4, result.output
    said = "0/1 pass, 1 raised (test 1: RuntimeError: bad \\x1b[31m red \\u202e rev)"
    assert said in result.output, result.output
    assert _last_log_entry().result == said


def test_a_shape_the_target_refuses_is_its_own_verdict_and_a_failure_not_a_crash(fake_task):
    """The project's bindings refuse a shape their kernel does not take with ValueError("unsupported shape
    (...): m must be ..."): check called that a crash (`raised`, its traceback, exit 4)."""
    fake_task()  # test 2 has m=256: the target refuses it
    result = check("--submission", str(TARGETS / "refuses_m256.py"))
    assert result.exit_code == 1, result.output
    assert re.search(r"│ 2 +│ m=256 n=128 k=32 +│ unsupported +│", result.output), result.output
    assert ("test 2 (m=256 n=128 k=32): the target does not take this shape: m must be a multiple of 384"
            " (the kernel's tile M)") in result.output
    assert "Traceback" not in result.output and "custom_kernel raised" not in result.output
    said = "2/3 pass, 1 unsupported (test 2: m must be a multiple of 384 (the kernel's tile M))"
    assert said in result.output
    entry = _last_log_entry()
    assert entry.result == said and entry.exit_code == "1"


def test_an_exception_raised_in_the_probe_is_a_crash_too(fake_task):
    fake_task(tests=(FakeCase(128, 128, 32),))
    result = check("--submission", str(TARGETS / "raises_in_probe.py"))
    assert result.exit_code == 4, result.output
    assert ("test 1 (m=128 n=128 k=32): custom_kernel raised KeyError: 'second call' in the anti-cache probe"
            " (same tensors refilled with new data)") in result.output


def _no_cuda_line() -> str:
    import torch

    from nvfp4ctl.build.loader import NO_CUDA_TORCH
    from nvfp4ctl.build.toolchain import NVCC_MISSING

    return NO_CUDA_TORCH if torch.version.cuda is None else NVCC_MISSING


def test_a_load_inline_that_finds_no_cuda_is_one_line_as_for_a_kernel(fake_task, monkeypatch):
    """torch's "CUDA_HOME environment variable is not set" at the submission's load_inline is this
    machine's setup (a CPU-only torch, no toolkit), as --kernel's refusal says: one line, exit 2."""
    from nvfp4ctl.build import toolchain

    fake_task()
    # the parent reads a CPU-only torch, so that a CUDA one's refusal of a CUDA kernel on the CPU does not come first
    monkeypatch.setattr(toolchain, "torch_build", lambda: toolchain.TorchBuild("2.13.0+cpu", None))
    result = check("--submission", str(TARGETS / "load_inline_without_cuda_home.py"))
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1] == (
        f"error: cannot load {TARGETS / 'load_inline_without_cuda_home.py'} (--submission): {_no_cuda_line()}")
    assert "Traceback" not in result.output and "OSError" not in result.output


@pytest.mark.skipif(__import__("torch").version.cuda is not None, reason="needs a CPU-only torch")
def test_a_real_load_inline_on_a_cpu_only_torch_is_one_line(fake_task):
    fake_task()
    result = check("--submission", str(TARGETS / "load_inline_cuda.py"))
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1].endswith(
        ": this torch has no CUDA: kernel modules load only with a CUDA build of torch")
    # torch wrote the extension's sources before it failed: into the tests' folder, not ~/.cache/torch_extensions
    assert list(Path(os.environ["TORCH_EXTENSIONS_DIR"]).glob("**/nvfp4ctl_test_cuda_only/main.cpp")), result.output


def test_an_os_error_at_import_elsewhere_stays_a_crash(fake_task, tmp_path):
    fake_task()
    raising = tmp_path / "reads_a_missing_file.py"
    raising.write_text("raise OSError('CUDA_HOME environment variable is not set')\n\ndef custom_kernel(data):\n    pass\n")
    result = check("--submission", str(raising))
    assert result.exit_code == 4, result.output
    assert "OSError: CUDA_HOME environment variable is not set" in result.output


def test_import_error_in_the_submission_is_a_crash(fake_task):
    fake_task()
    result = check("--submission", str(TARGETS / "import_error.py"))
    assert result.exit_code == 4, result.output
    assert "cannot load " in result.output and "ImportError" in result.output
    assert "helper_that_does_not_exist" in result.output
    assert "3 tests not run: the target could not be loaded" in result.output
    # the tail is the last lines only (a load_inline build says more): the kept log is named
    kept = [line.split("full child log: ", 1)[1] for line in result.output.splitlines() if "full child log: " in line]
    assert len(kept) == 1 and Path(kept[0]).is_file(), result.output
    assert "helper_that_does_not_exist" in Path(kept[0]).read_text()


@pytest.mark.parametrize("text, message", [
    ("import torch\n\ndef custom_kernel(data)\n    return data[2]\n", "bad.py:3: not valid Python (expected ':')"),
    ("def custom_kernal(data):\n    return data[2]\n",
     "bad.py:1: defines custom_kernal(), not custom_kernel(): GPU MODE calls custom_kernel(data)"),
])
def test_a_submission_that_is_not_python_or_lacks_custom_kernel_is_exit_2_before_any_gpu(
        fake_task, tmp_path, monkeypatch, text, message):
    """The user's Python, not a crashed kernel: one line, FILE:LINE, exit 2, read from the text before a
    GPU is looked for (here there is none, which would otherwise be the error)."""
    fake_task()
    monkeypatch.delenv("NVFP4CTL_DEVICE")
    monkeypatch.setattr("nvfp4ctl.runner.gpu.gpu_present", lambda: False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.py").write_text(text)
    result = check("--submission", "bad.py")
    assert result.exit_code == 2, result.output
    assert result.output == f"error: {message}\n"
    entry = _last_log_entry()
    assert entry.exit_code == "2" and entry.result == f"error: {message}" and entry.problem == FAKE_PROBLEM


@pytest.mark.parametrize("files, message", [
    ({"bad.py": "import torch\ncustom_kernel = None\n"},
     "bad.py:2: custom_kernel is not a function (it is None): GPU MODE calls custom_kernel(data)"),
    ({"bad.py": "from my_helpers import *\n", "my_helpers.py": "def kernel(data):\n    return data[2]\n"},
     "bad.py: defines no custom_kernel(data) function, which GPU MODE calls"),
    ({"bad.py": "from my_helpers import custom_kernel\n", "my_helpers.py": "def custom_kernel(data)\n    return data[2]\n"},
     "my_helpers.py:1: not valid Python (expected ':')"),
])
def test_what_only_the_import_can_tell_is_exit_2_too(fake_task, tmp_path, monkeypatch, files, message):
    """A custom_kernel that is no function, a star import that brings none, a helper of the user's that
    is not Python: the same one line and exit 2, from the child, with no traceback."""
    fake_task()
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    result = check("--submission", "bad.py")
    assert result.exit_code == 2, result.output
    error = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert error == [f"error: {message}"], result.output
    assert "Traceback" not in result.output and "crash" not in result.output


def test_cpu_only_torch_is_one_line_and_exit_2(fake_task):
    fake_task()
    result = check("--submission", str(TARGETS / "cpu_only_torch.py"))
    assert result.exit_code == 2, result.output
    error = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and error[0].startswith("error: cannot load "), result.output
    assert error[0].endswith("cpu_only_torch.py (--submission): this torch has no CUDA: kernel modules load only"
                             " with a CUDA build of torch"), result.output
    assert "Traceback" not in result.output and "UsageError" not in result.output
    assert _last_log_entry().exit_code == "2"


def test_cpu_only_torch_traceback_shows_under_verbose(fake_task):
    fake_task()
    result = CliRunner().invoke(app, ["-v", "check", "--submission", str(TARGETS / "cpu_only_torch.py")])
    assert result.exit_code == 2, result.output
    assert "[child] Traceback (most recent call last):" in result.output


def test_mismatch_shows_diagnostics_and_exits_1(fake_task):
    fake_task(tests=(FakeCase(128, 128, 32), FakeCase(384, 256, 32)))
    result = check("--submission", str(TARGETS / "wrong_tile.py"))
    assert result.exit_code == 1, result.output
    assert "test 2 (m=384 n=256 k=32, seed 1111): FAIL" in result.output
    assert "16384 of 98304 outputs differ (16.7%)" in result.output
    assert "wrong 128x128 tiles (3 m-tiles x 2 n-tiles; X all wrong, x some, . ok)\n    ..\n    .X\n    ..\n" in result.output
    # the summary, which the run log keeps, says what was wrong where the details scroll away
    assert result.output.endswith("1/2 pass, 1 fail (test 2: max abs err 1, first wrong at (128, 128, 0))\n")
    assert _last_log_entry().result == "1/2 pass, 1 fail (test 2: max abs err 1, first wrong at (128, 128, 0))"


def test_probe_failure_is_reported_as_result_reuse(fake_task):
    fake_task(tests=(FakeCase(128, 128, 32),))
    result = check("--submission", str(TARGETS / "caches_by_shape.py"))
    assert result.exit_code == 1, result.output
    assert "FAIL in the anti-cache probe (same tensors refilled with new data)" in result.output
    assert "result reused across calls" in result.output


@pytest.mark.parametrize("target", ["caches_by_shape.py", "returns_cached_c.py"])
def test_a_reused_result_shows_no_error_size(fake_task, target):
    """The probe reads an old result against new data: its verdict is the reuse, not the values. The row read
    `nan` (a cached c, poisoned again) or 119 next to `max abs err 0, max rel err 0 (over the finite ones…)`
    or `max abs err 119`; now `-` in the table and the outputs that differ without an error size."""
    fake_task(tests=(FakeCase(128, 128, 32),))
    result = check("--submission", str(TARGETS / target))
    assert result.exit_code == 1, result.output
    assert "result reused across calls" in result.output
    row = next(line for line in result.output.splitlines() if "m=128 n=128 k=32 │ FAIL" in line)
    assert row.split("│")[4].strip() == "-", row
    assert result.output.count("max abs err") == 1, result.output  # the table's heading alone
    assert re.search(r"\n  [0-9]+ of 16384 outputs differ \([0-9.]+%\)\n", result.output), result.output


def test_only_and_shape_pick_the_cases(fake_task):
    fake_task()
    result = check("--submission", str(TARGETS / "good.py"), "--only", "3", "--only", "1", "--shape", "128,128,64,2",
                   "--seed", "7", "--no-probe")
    assert result.exit_code == 0, result.output
    assert "(2 of 3 tests + 1 --shape)" in result.output
    assert "3/3 pass" in result.output
    assert " s1 " in result.output and "m=128 n=128 k=64 l=2" in result.output


def test_only_takes_a_comma_separated_list_as_lint_select_does(fake_task):
    """`check --only 1,2` was "--only: 1,2 is not an integer", with no word of repeating --only."""
    fake_task()
    result = check("--submission", str(TARGETS / "good.py"), "--only", "3,1", "--only", "1", "--no-probe")
    assert result.exit_code == 0, result.output
    assert "(2 of 3 tests)" in result.output and "2/2 pass" in result.output
    rows = [line.split("│")[1].strip() for line in result.output.splitlines() if line.startswith("│")]
    assert rows == ["3", "1"], result.output
    for value, message in (("1,x", "--only: 1,x is not an integer or a comma-separated list of them (1,3)"),
                           ("1,", "--only: 1, is not an integer or a comma-separated list of them (1,3)"),
                           ("x", "--only: x is not an integer"), ("1,4", "--only 4: task.yml has 3 tests (1-3)")):
        refused = check("--submission", str(TARGETS / "good.py"), "--only", value)
        assert (refused.exit_code, refused.output) == (2, f"error: {message}\n"), refused.output



@pytest.mark.parametrize(
    "args, message",
    [
        (["--only", "4"], "--only 4: task.yml has 3 tests (1-3)"),
        (["--only", "0"], "--only 0: task.yml has 3 tests (1-3)"),
        (["--shape", "128,256"], "--shape 128,256: expected M,N,K or M,N,K,L as positive integers"),
        (["--shape", "a,b,c"], "--shape a,b,c: expected M,N,K or M,N,K,L"),
        (["--timeout", "0"], "--timeout: 0 is not a number of seconds > 0"),
        (["--submission", "nope.py"], "--submission nope.py: no such file"),
        (["--submission", "x.py", "--kernel", "y.cu"], "--submission and --kernel are exclusive"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(fake_task, args, message):
    fake_task()
    result = check(*args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_bad_timeout_in_the_environment(fake_task, monkeypatch):
    fake_task()
    monkeypatch.setenv("NVFP4CTL_TIMEOUT", "soon")
    result = check("--submission", str(TARGETS / "good.py"))
    assert result.exit_code == 2
    assert "NVFP4CTL_TIMEOUT=soon: expected a finite number of seconds > 0" in result.output


def test_no_gpu_is_one_line_and_exit_2(monkeypatch):
    from nvfp4ctl.commands import check as check_command

    monkeypatch.delenv("NVFP4CTL_DEVICE", raising=False)
    monkeypatch.setattr(check_command, "first_gpu", lambda: None)
    monkeypatch.setattr(check_command, "gpu_present", lambda: False)
    result = check()
    assert result.exit_code == 2
    assert " ".join(result.output.split()) == ("error: no CUDA GPU found: nvfp4ctl check runs kernels on a GPU;"
                                               " NVFP4CTL_DEVICE=cpu nvfp4ctl check runs a torch submission on the"
                                               " CPU instead (a kernel needs a GPU)")


def test_no_gpu_suggests_the_users_own_command_line_on_the_cpu(monkeypatch, tmp_path):
    """`check --only 3` was told to run `NVFP4CTL_DEVICE=cpu nvfp4ctl check`, which drops --only 3 (and any
    --submission): the line typed stays whole, shell-quoted, with the setting in front."""
    from nvfp4ctl.commands import check as check_command

    monkeypatch.delenv("NVFP4CTL_DEVICE", raising=False)
    monkeypatch.setattr(check_command, "first_gpu", lambda: None)
    monkeypatch.setattr(check_command, "gpu_present", lambda: False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my sub.py").write_text("def custom_kernel(data):\n    return data[-1]\n")
    result = CliRunner().invoke(app, ["-q", "check", "--only", "1", "--submission", "my sub.py"], env={"COLUMNS": "400"})
    assert result.exit_code == 2, result.output
    assert result.output.strip() == ("error: no CUDA GPU found: nvfp4ctl check runs kernels on a GPU;"
                                     " NVFP4CTL_DEVICE=cpu nvfp4ctl -q check --only 1 --submission 'my sub.py' runs a"
                                     " torch submission on the CPU instead (a kernel needs a GPU)")


@pytest.mark.parametrize("device, has_gpu", [("cuda", True), ("cuda", False), ("cpu", False)],
                         ids=["a-card", "no-card", "cpu"])
def test_without_torch_check_says_so_before_any_child(tmp_path, monkeypatch, device, has_gpu):
    """It said "cannot load submission.py ... ModuleNotFoundError" with the child's traceback, then "1 test not
    run", exit 4; without a GPU only "no CUDA GPU found", which hid it."""
    import sys

    from nvfp4ctl.check import run as check_run
    from nvfp4ctl.commands import check as check_command

    monkeypatch.chdir(tmp_path)
    (tmp_path / "submission.py").write_text("def custom_kernel(data):\n    return data[-1]\n")
    monkeypatch.setenv("NVFP4CTL_DEVICE", device)
    monkeypatch.setattr(check_command, "gpu_present", lambda: has_gpu)
    monkeypatch.setattr(check_run, "run_check", lambda *args, **kwargs: pytest.fail("a child was started"))
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError, as without it
    result = check("--only", "1")
    assert result.exit_code == 2, result.output
    assert result.output.strip() == "error: torch is not installed (pip install torch)"


def test_without_a_gpu_option_mistakes_are_said_first(monkeypatch):
    from nvfp4ctl.commands import check as check_command
    from nvfp4ctl.runner import gpu

    monkeypatch.delenv("NVFP4CTL_DEVICE", raising=False)
    monkeypatch.setattr(check_command, "gpu_present", lambda: False)
    monkeypatch.setattr(gpu, "gpu_present", lambda: False)  # bench imports it at call time
    for command, args, message in (("check", ["--only", "99"], "--only 99"), ("check", ["--shape", "abc"], "--shape abc"),
                                   ("bench", ["--shape", "128,256,100"], "--shape 128,256,100"),
                                   ("check", ["--timeout", "nan"], "--timeout: nan")):
        result = CliRunner().invoke(app, [command, "--kernel", "default", *args])
        assert result.exit_code == 2, result.output
        assert message in result.output and "no CUDA GPU" not in result.output, result.output


def test_a_run_stopped_by_an_error_logs_its_target(fake_task):
    fake_task()
    result = check("--submission", str(TARGETS / "good.py"), "--only", "99")
    assert result.exit_code == 2, result.output
    entry = _last_log_entry()
    assert entry.target == runlog.describe_target(TARGETS / "good.py", user_folder(), "--submission",
                                                  runlog.log_folder_of(memory_path()))
    assert entry.result.startswith("error: --only 99")


def test_a_crash_on_every_test_prints_its_traceback_once(fake_task):
    fake_task()
    result = check("--submission", str(TARGETS / "cuda_error.py"))
    assert result.exit_code == 4, result.output
    assert result.output.count("Traceback (most recent call last)") == 1
    assert "test 1 (m=128 n=256 k=32) crashed with a CUDA error" in result.output
    assert "test 2 (m=256 n=128 k=32): same crash as test 1" in result.output
    assert "test 3 (m=128 n=128 k=64 l=2): same crash as test 1" in result.output
    assert result.output.count("full child log:") == 3  # each test's own log is still named
    assert "0/3 pass, 3 crash (tests 1, 2, 3; test 1: RuntimeError: CUDA error: an illegal" in result.output


@pytest.mark.parametrize("signum", ["SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("command", [["check", "--no-probe"], ["bench", "--max-repeats", "3"]])
def test_sigterm_ends_the_run_like_ctrl_c(tmp_path, command, signum):
    """`kill PID` (a CI timeout, a job scheduler) or a lost terminal (SIGHUP) on a check or bench whose
    kernel hangs: the child's whole group is killed, the run log gets its line ("interrupted", exit
    130), as for Ctrl-C."""
    import os
    import signal
    import subprocess
    import sys
    import textwrap

    from nvfp4ctl.errors import ExitCode
    from tests.runner.test_worker import _wait_dead

    helper_pid = tmp_path / "helper.pid"
    submission = tmp_path / "submission.py"
    submission.write_text(textwrap.dedent(f"""
        import subprocess, time
        _helper = subprocess.Popen(["sleep", "3600"])
        open({str(helper_pid)!r}, "w").write(str(_helper.pid))

        def custom_kernel(data):
            time.sleep(3600)
    """))
    env = dict(os.environ, NVFP4CTL_DEVICE="cpu", PYTHONPATH=os.pathsep.join(sys.path))
    env.pop("NVFP4CTL_TIMEOUT", None)
    parent = subprocess.Popen([sys.executable, "-m", "nvfp4ctl", *command, "--shape", "128,128,256",
                               "--submission", str(submission)], cwd=tmp_path, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        while not helper_pid.is_file() or not helper_pid.read_text():
            assert parent.poll() is None and time.monotonic() < deadline, parent.stderr.read() if parent.poll() else "no child"
            time.sleep(0.1)
        helper = int(helper_pid.read_text())
        time.sleep(2.0)  # the target is loaded; the job is on its way into custom_kernel
        parent.send_signal(getattr(signal, signum))
        assert parent.wait(timeout=30) == ExitCode.INTERRUPTED, parent.stderr.read()
    finally:
        if parent.poll() is None:
            parent.kill()
    dead = _wait_dead(helper, 5.0)
    if not dead:
        os.kill(helper, signal.SIGKILL)  # not left running by the test either
    assert dead, "the child's helper process outlived the run"
    entry = _last_log_entry()
    assert (entry.result, entry.exit_code) == ("interrupted", "130")
    assert entry.command.startswith(f"nvfp4ctl {command[0]}")


def test_without_a_terminal_each_step_is_a_line_on_stderr_and_stdout_is_unchanged(fake_task):
    """stderr a log file or a pipe (as under CliRunner): no bar is drawn, and a load or a test under
    its watchdog printed nothing there until the table; -q says nothing."""
    from cli_streams import separate_streams_runner

    fake_task()
    result = separate_streams_runner().invoke(app, ["check", "--submission", str(TARGETS / "good.py")])
    assert result.exit_code == 0, result.output
    steps = [line.rsplit(",", 1)[0] for line in result.stderr.splitlines()]
    assert steps == ["loading the target: 0 of 3", "test 1 (m=128 n=256 k=32): 0 of 3",
                     "test 2 (m=256 n=128 k=32): 1 of 3", "test 3 (m=128 n=128 k=64 l=2): 2 of 3"], result.stderr
    assert "loading the target" not in result.stdout and ": 0 of 3, " not in result.stdout and "3/3 pass" in result.stdout
    quiet = separate_streams_runner().invoke(app, ["-q", "check", "--submission", str(TARGETS / "good.py")])
    assert quiet.exit_code == 0 and quiet.stderr == "", quiet.stderr


def test_a_test_after_a_crash_says_it_loads_the_target_first(fake_task, monkeypatch):
    """The crash took the child with it, and the next test loads the target in a fresh one (a load_inline
    build: minutes): its line and its bar named the test alone, where bench says "(loading the target first)"."""
    from cli_streams import separate_streams_runner

    fake_task()  # test 2 has m=256: the target exits there
    result = separate_streams_runner().invoke(app, ["check", "--submission", str(TARGETS / "exits_on_m256.py")])
    assert result.exit_code == 4, result.output
    steps = [line.rsplit(",", 1)[0] for line in result.stderr.splitlines()]
    test_3 = "test 3 (m=128 n=128 k=64 l=2)"
    assert steps == ["loading the target: 0 of 3", "test 1 (m=128 n=256 k=32): 0 of 3",
                     "test 2 (m=256 n=128 k=32): 1 of 3", f"{test_3} (loading the target first): 2 of 3",
                     f"{test_3}: 2 of 3"], result.stderr
    bar = _RecordingBar()
    monkeypatch.setattr("nvfp4ctl.console.Console.progress", lambda console, transient=True: bar)
    assert check("--submission", str(TARGETS / "exits_on_m256.py")).exit_code == 4
    assert f"{test_3} (loading the target first)" in bar.descriptions, bar.descriptions
    after_load = bar.descriptions[bar.descriptions.index(f"{test_3} (loading the target first)") + 1:]
    assert after_load[0] == test_3 and all("loading" not in text for text in after_load), bar.descriptions
    assert not any("loading the target first" in text for text in bar.descriptions if not text.startswith(test_3))


def test_without_a_terminal_a_test_that_runs_on_is_said_again(fake_task, monkeypatch):
    monkeypatch.setattr("nvfp4ctl.progress_lines.PLAIN_LINE_EVERY_S", 0.3)
    fake_task()
    result = check("--submission", str(TARGETS / "sleeps_forever.py"), "--timeout", "1.5")
    assert result.exit_code == 3, result.output
    said = [line for line in result.output.splitlines() if line.startswith("test 1 (m=128 n=256 k=32)")]
    assert len(said) >= 3, result.output  # its start, then again while the watchdog waits, with the phase under way
    assert said[0].startswith("test 1 (m=128 n=256 k=32): 0 of 3, "), result.output
    # the last line may come as the watchdog's kill counts test 1 done (a loaded machine's heartbeat), so 1 of 3 there
    waiting = "test 1 (m=128 n=256 k=32) (calling the kernel): "
    assert all(line.startswith(waiting + "0 of 3, ") for line in said[1:-1]), said
    assert said[-1].startswith((waiting + "0 of 3, ", waiting + "1 of 3, ")), said


class _RecordingBar:
    """console.progress()'s bar as a terminal draws it: the descriptions it was given, in their order."""

    def __init__(self) -> None:
        self.descriptions: list[str] = []

    def __enter__(self) -> _RecordingBar:
        return self

    def __exit__(self, *exc: object) -> None: ...

    def add_task(self, description: str, total: int) -> int:
        self.descriptions.append(description)
        return 0

    def update(self, task_id: int, description: str) -> None:
        self.descriptions.append(description)

    def advance(self, task_id: int) -> None: ...


def test_on_a_terminal_the_bar_says_a_test_is_making_its_inputs(fake_task, monkeypatch):
    """Large shapes take seconds to generate: the bar said "test 1 (...)" alone until the test ended or its
    watchdog's message named the phase; now each phase follows the test's name, as bench's news does."""
    bar = _RecordingBar()
    monkeypatch.setattr("nvfp4ctl.console.Console.progress", lambda console, transient=True: bar)
    fake_task(problem="fake_problem:SLOW_INPUTS")
    result = check("--submission", str(TARGETS / "good.py"), "--timeout", "1.5")
    assert result.exit_code == 3, result.output
    assert bar.descriptions == ["loading the target", "test 1 (m=128 n=256 k=32)",
                                "test 1 (m=128 n=256 k=32) (making its inputs)"], bar.descriptions


def test_on_a_terminal_the_bar_follows_each_phase_of_the_anti_cache_probe(fake_task, monkeypatch):
    bar = _RecordingBar()
    monkeypatch.setattr("nvfp4ctl.console.Console.progress", lambda console, transient=True: bar)
    fake_task(tests=(FakeCase(128, 128, 32),))
    result = check("--submission", str(TARGETS / "good.py"))
    assert result.exit_code == 0, result.output
    test = "test 1 (m=128 n=128 k=32)"
    assert bar.descriptions[:7] == ["loading the target", test, f"{test} (making its inputs)",
                                    f"{test} (computing the reference)", f"{test} (calling the kernel)",
                                    f"{test} (comparing the output)", f"{test} (making the anti-cache probe's inputs)"]
    assert f"{test} (calling the kernel again, call 3 of 3 (the anti-cache probe's))" in bar.descriptions


def test_without_a_terminal_a_test_making_its_inputs_says_so_in_the_next_line_only(fake_task, monkeypatch):
    """The phase reaches the heartbeat's next plain line, as bench's news does; its start is no line of its own."""
    from cli_streams import separate_streams_runner

    monkeypatch.setattr("nvfp4ctl.progress_lines.PLAIN_LINE_EVERY_S", 0.3)
    fake_task(problem="fake_problem:SLOW_INPUTS")
    result = separate_streams_runner().invoke(app, ["check", "--submission", str(TARGETS / "good.py"),
                                                    "--timeout", "1.5"])
    assert result.exit_code == 3, result.output
    lines = [line.rsplit(",", 1)[0] for line in result.stderr.splitlines()]
    test = lines.index("test 1 (m=128 n=256 k=32): 0 of 3")  # said at once as it starts (the load's lines above)
    assert set(lines[:test]) == {"loading the target: 0 of 3"}, result.stderr
    making = "test 1 (m=128 n=256 k=32) (making its inputs): 0 of 3"
    assert lines[-1] == making and set(lines[test:]) == {lines[test], making}, result.stderr


def test_a_hang_after_a_slow_first_call_is_paced_by_the_second(fake_task, monkeypatch):
    """The first call takes 2 s (a compile), the second returns at once, the third hangs: it was "too slow, not
    stuck" within 3 x 2 s + the slack; the second call's pace makes it a possible deadlock. The least slack
    is cut to 0.5 s (from 2) so that a 5 s timeout tells them apart on a busy host."""
    monkeypatch.setattr("nvfp4ctl.bench.call_progress.MIN_SLACK_S", 0.5)
    monkeypatch.setenv("COLUMNS", "300")
    fake_task(tests=(FakeCase(128, 128, 32),))
    result = check("--submission", str(TARGETS / "compiles_then_hangs.py"), "--timeout", "5")
    assert result.exit_code == 3, result.output
    said = " ".join(result.output.split())
    assert re.search(r"possible deadlock in test 1 \(m=128 n=128 k=32\): no result after 5 s; call 3 of 3 \(the"
                     r" anti-cache probe's\) ran \d\.\d+ s, where call 2 returned in [\d.]+ [µm]?s \(the first, with any"
                     r" compile, in 2\.\d+ s\); the child was killed", said), said
    assert "not stuck" not in said
