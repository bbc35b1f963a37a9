"""The child-side check job, run in-process on CPU: verdicts, diagnostics, output mistakes, probe."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from check_fakes import FAKE_PROBLEM, TARGETS
from fake_problem import FakeCase
from nvfp4ctl.check.job import FIRST_CALL, PROBE_FRESH, PROBE_REFILLED, REUSED, check_case
from nvfp4ctl.check.render import comparison_lines
from nvfp4ctl.runner.targets import import_submission


def _check(kernel, case=FakeCase(256, 256, 32), probe=True):
    return check_case(kernel, problem=FAKE_PROBLEM, case=case, rtol=1e-3, atol=1e-3, probe=probe, device="cpu")


def _kernel(tmp_path: Path, body: str):
    path = tmp_path / "submission.py"
    path.write_text("import torch\n\ndef custom_kernel(data):\n    a, b, c = data\n" + textwrap.indent(textwrap.dedent(body), "    "))
    return import_submission(path)


def test_correct_target_passes_and_is_probed():
    result = _check(import_submission(TARGETS / "good.py"))
    assert result.passed and result.probed and result.phase == FIRST_CALL
    assert result.comparison.mismatched == 0 and result.comparison.unwritten == 0


def test_wrong_tile_is_mapped():
    result = _check(import_submission(TARGETS / "wrong_tile.py"), FakeCase(384, 384, 32))
    assert not result.passed
    comparison = result.comparison
    assert comparison.mismatched == 128 * 128
    assert comparison.first[0].index == (128, 128, 0)
    assert comparison.first[0].got == comparison.first[0].want + 1
    lines = comparison_lines(comparison)
    assert lines[0].startswith("16384 of 147456 outputs differ (11.1%); max abs err 1")
    assert "first mismatches (m, n, l): got vs want" in lines
    map_start = next(i for i, line in enumerate(lines) if line.startswith("wrong 128x128 tiles"))
    assert lines[map_start + 1 : map_start + 4] == ["  ...", "  .X.", "  ..."]


def test_unwritten_elements_are_reported(tmp_path):
    kernel = _kernel(tmp_path, """
        c[: c.shape[0] // 2].copy_(torch.einsum("mkl,nkl->mnl", a, b)[: c.shape[0] // 2])
        return c
    """)
    result = _check(kernel, FakeCase(256, 128, 32))
    assert result.comparison.unwritten == 128 * 128
    lines = comparison_lines(result.comparison)
    assert "16384 elements never written (still NaN poison)" in lines
    assert "output has 16384 NaN, 0 Inf; the reference has 0 NaN, 0 Inf" in lines
    assert lines[-3:] == ["wrong 128x128 tiles (2 m-tiles x 1 n-tiles; X all wrong, x some, . ok)", "  .", "  X"]


def test_a_new_tensor_with_nan_is_not_called_unwritten(tmp_path):
    kernel = _kernel(tmp_path, """
        out = torch.einsum("mkl,nkl->mnl", a, b).half()
        out[0, 0, 0] = float("nan")
        return out
    """)
    result = _check(kernel, FakeCase(128, 128, 32))
    assert result.comparison.unwritten is None
    assert result.comparison.nan_got == 1 and result.comparison.mismatched == 1


@pytest.mark.parametrize(
    "body, message",
    [
        ('return torch.einsum("mkl,nkl->mnl", a, b).to(torch.int32)', "custom_kernel returned int32, expected float16"),
        ('return c[:, :, 0]', "custom_kernel returned shape (128, 256), expected (128, 256, 1) (m, n, l): the l dimension is missing; return c itself"),
        ('return c.permute(1, 0, 2)', "custom_kernel returned shape (256, 128, 1), expected (128, 256, 1) (m, n, l): m and n are swapped (transposed output?)"),
        ("return None", "custom_kernel returned NoneType, expected a torch.Tensor (the c of the input tuple)"),
    ],
    ids=["dtype", "missing-l", "transposed", "none"],
)
def test_output_mistakes_are_named(tmp_path, body, message):
    result = _check(_kernel(tmp_path, body), FakeCase(128, 256, 32))
    assert not result.passed and result.comparison is None
    assert message in result.problems


def test_an_fp32_output_is_compared_in_fp32_as_the_leaderboard_does(tmp_path):
    exact = _check(_kernel(tmp_path, 'return torch.einsum("mkl,nkl->mnl", a, b)'), FakeCase(128, 256, 32), probe=False)
    assert exact.passed and exact.problems == ()
    # 1.4 parts in 2**10 up (an fp16 ulp is 1 to 2 of them): past rtol 1e-3 in GPU MODE's fp32 difference
    (tmp_path / "off").mkdir()
    off = _check(_kernel(tmp_path / "off", 'return torch.einsum("mkl,nkl->mnl", a, b) * (1 + 1.4 * 2**-10)'),
                 FakeCase(128, 256, 32), probe=False)
    assert not off.passed and off.problems == () and off.comparison.mismatched > 0


def test_wrong_device_is_named():
    from nvfp4ctl.check.output import output_mistakes

    want = torch.empty((4, 4, 1), dtype=torch.float16, device="meta")
    assert output_mistakes(torch.zeros((4, 4, 1), dtype=torch.float16), want) == [
        "custom_kernel returned a CPU tensor, expected one on meta"
    ]


def test_exception_in_target_is_raised_with_its_traceback(tmp_path):
    result = _check(_kernel(tmp_path, 'raise ValueError("k must be a multiple of 256")'))
    assert not result.passed and result.problems == ()
    assert result.raised[0] == "custom_kernel raised ValueError: k must be a multiple of 256"
    assert result.raised[1] == "Traceback (most recent call last):"
    assert "submission.py\", line 5, in custom_kernel" in result.raised[2]  # the harness's own frame is left out
    assert result.raised[-1] == "ValueError: k must be a multiple of 256"


def test_cuda_error_in_target_propagates(tmp_path):
    with pytest.raises(RuntimeError, match="CUDA error"):
        _check(import_submission(TARGETS / "cuda_error.py"))


@pytest.mark.parametrize(
    "target, phase",
    [
        ("caches_by_shape.py", PROBE_REFILLED),
        ("caches_by_pointer.py", PROBE_REFILLED),
        ("replays_first_inputs.py", PROBE_FRESH),  # right on refilled tensors, wrong on new ones
    ],
)
def test_probe_catches_result_reuse(target, phase):
    # a fresh module per target: caches must start empty
    result = _check(import_submission(TARGETS / target), FakeCase(128, 128, 32))
    assert not result.passed and result.probed and result.phase == phase
    assert result.problems[0].startswith(f"{REUSED}: ")
    assert "the first call passed" in result.problems[0]


@pytest.mark.parametrize("target", ["caches_by_shape.py", "replays_first_inputs.py"])
def test_a_probe_call_is_not_explained(target, monkeypatch):
    """A probe call's wrong result is an old answer read against new data: the problem's reading of it (the
    grouped GEMM's compares whole outputs between groups) is never run, where it ran and was dropped."""
    import fake_problem

    explained = []
    monkeypatch.setattr(fake_problem.FakeProblem, "explain", lambda self, *args, **kwargs: explained.append(args) or [])
    result = _check(import_submission(TARGETS / target), FakeCase(128, 128, 32))
    assert not result.passed and result.probed and result.comparison.notes == ()
    assert explained == []


def test_caching_target_passes_without_the_probe():
    result = _check(import_submission(TARGETS / "caches_by_shape.py"), FakeCase(128, 384, 32), probe=False)
    assert result.passed and not result.probed


def test_an_output_never_written_is_no_error_of_zero(tmp_path):
    """Every wrong element NaN (c returned as the poison left it): the table's max abs err says nan, and
    the line gives no error size, since there is no finite pair to measure one on."""
    from nvfp4ctl.check.render import error_cell

    result = _check(_kernel(tmp_path, "return c"), FakeCase(128, 128, 32), probe=False)
    comparison = result.comparison
    assert comparison.mismatched == comparison.nonfinite_wrong == 128 * 128
    assert error_cell(comparison) == "nan"
    assert comparison_lines(comparison)[0] == "16384 of 16384 outputs differ (100.0%); all 16384 wrong are NaN or Inf"
    wrong_tile = _check(import_submission(TARGETS / "wrong_tile.py"), FakeCase(384, 384, 32)).comparison
    assert wrong_tile.nonfinite_wrong == 0 and error_cell(wrong_tile) == "1"


def test_each_phase_of_each_call_is_reported_as_it_begins(monkeypatch):
    """The watchdog's parent hears what runs (check/progress.py): inputs, reference, call, comparison, for the
    first call and the probe's two; each report carries the phases that ended before it."""
    from nvfp4ctl.check.progress import CALLING, COMPARING, MAKING_INPUTS, REFERENCE
    from nvfp4ctl.runner import progress

    sent = []

    class Channel:
        def send(self, message):
            sent.append(message[1])

    monkeypatch.setattr(progress, "_channel", Channel())
    assert _check(import_submission(TARGETS / "good.py")).passed
    phases = (MAKING_INPUTS, REFERENCE, CALLING, COMPARING)
    assert [(r.phase, r.call, r.calls) for r in sent] == [(p, call, 3) for call in (1, 2, 3) for p in phases]
    assert [phase for phase, _ in sent[-1].took] == list(phases * 2 + phases[:3])
    assert [r.elapsed_s for r in sent] == sorted(r.elapsed_s for r in sent)
