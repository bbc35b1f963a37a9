"""Lint rules that speak of tuple indices use the task's problem (dual, grouped, GEMV tuples)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nvfp4ctl.lint.config import LintConfig
from nvfp4ctl.lint.engine import lint_text
from nvfp4ctl.lint.targets import plan

DUAL = LintConfig(problem="nvfp4_dual_gemm")


def _found(text: str, config: LintConfig) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in lint_text(text, config=config)]


def test_dual_reference_scale_names_the_dual_permuted_index() -> None:
    text = "def custom_kernel(data):\n    scales = data[4].float()\n    return run(data[0], scales, data[9])\n"
    assert ("NV401", "data[4] is the reference scale sfb1_ref (input index 4): use index 7 (sfb1_permuted)") in _found(text, DUAL)
    # the GEMM's reading of index 4 is the permuted sfa: nothing to say there
    assert not [f for f in _found(text, LintConfig()) if f[0] == "NV401"]


def test_dual_unpacked_reference_scales_and_to_blocked() -> None:
    text = ("from reference import to_blocked\n"
            "def custom_kernel(data):\n"
            "    a, b1, b2, sfa, sfb1, sfb2, sfa_p, sfb1_p, sfb2_p, c = data\n"
            "    return run(a, b1, b2, to_blocked(sfb2), c)\n")
    found = _found(text, DUAL)
    assert ("NV402", "to_blocked() in the timed path: use sfa_permuted/sfb1_permuted/sfb2_permuted "
                     "(data[6], data[7], data[8])") in found
    assert any(code == "NV401" and "sfb2_ref (input index 5): use index 8 (sfb2_permuted)" in message
               for code, message in found)



def test_an_unpacking_into_the_tuple_gpu_modes_task_text_describes_says_so() -> None:
    """GPU MODE's grouped GEMM task text and template unpack `abc_tensors, sfasfb_tensors, problem_sizes = data`,
    and the GEMM's and GEMV's texts describe (a, b, sfa, sfb, c): NV007 said "(no problem's input has 3)", as if
    the count were the user's own invention."""
    group = "def custom_kernel(data):\n    abc_tensors, sfasfb_tensors, problem_sizes = data\n    return run(abc_tensors)\n"
    (message,) = [message for code, message in _found(group, LintConfig(problem="nvfp4_group_gemm")) if code == "NV007"]
    assert message == (
        "unpacks 3 names from the nvfp4_group_gemm input, which has 4 (abc_tensors, sfasfb_tensors,"
        " sfasfb_reordered_tensors, problem_sizes) on every call, so it cannot take nvfp4_group_gemm's input (GPU"
        " MODE's task text"
        " describes 3, (abc_tensors, sfasfb_tensors, problem_sizes), but generate_input returns these 4): unpack the"
        " task's 4, or gather the rest with a starred name")
    five = "def custom_kernel(data):\n    a, b, sfa, sfb, c = data\n    return run(a, b, sfa, sfb, c)\n"
    for problem in ("nvfp4_gemm", "nvfp4_gemv"):
        (message,) = [message for code, message in _found(five, LintConfig(problem=problem)) if code == "NV007"]
        assert "(GPU MODE's task text describes 5, (a, b, sfa, sfb, c), but generate_input returns these 7)" in message
    six = "def custom_kernel(data):\n    a, b, sfa, sfb, sfa_p, c = data\n    return run(a, b, sfa_p, c)\n"
    (message,) = [message for code, message in _found(six, LintConfig()) if code == "NV007"]
    assert "(no problem's input has 6)" in message and "task text" not in message

def test_an_unpacking_into_the_dual_gemms_described_tuple_says_the_task_text_describes_it() -> None:
    """GPU MODE's dual GEMM task text describes (a, b1, b2, sfa, sfb1, sfb2, c): unpacking those 7 names was NV006
    "this looks like another problem's submission (7 names fit the input of nvfp4_gemm and nvfp4_gemv)", which
    sent a dual GEMM written from its own task's text to the GEMM's task.yml."""
    seven = "def custom_kernel(data):\n    a, b1, b2, sfa, sfb1, sfb2, c = data\n    return run(a, b1, b2, c)\n"
    assert _found(seven, DUAL) == [("NV006", (
        "unpacks 7 names from the nvfp4_dual_gemm input, which has 10 (a, b1, b2, sfa_ref, sfb1_ref, sfb2_ref,"
        " sfa_permuted, sfb1_permuted, sfb2_permuted, c) on every call, so it cannot take nvfp4_dual_gemm's input"
        " (GPU MODE's task text"
        " describes 7, (a, b1, b2, sfa, sfb1, sfb2, c), but generate_input returns these 10): unpack the task's 10,"
        " or gather the rest with a starred name"))]
    # another count that fits another problem's input still says whose
    four = "def custom_kernel(data):\n    a, b, c, d = data\n    return run(a, b, c, d)\n"
    (message,) = [message for code, message in _found(four, DUAL) if code == "NV006"]
    assert "this looks like a nvfp4_group_gemm submission" in message and "task text" not in message


def test_another_problems_unpacking_after_a_length_assert_says_it_cannot_take_the_input() -> None:
    """A grouped GEMM submission that asserts len(data) == 4 before unpacking raises AssertionError under the
    GEMM's task, never reaching the unpacking: NV006 said "that raises ValueError on every call", and its rule
    "raises ValueError on every test". Both now say what is true whichever it raises, as check's refusal does."""
    from nvfp4ctl.lint.rule_words import rules_for

    text = "def custom_kernel(data):\n    assert len(data) == 4\n    abc, s, r, z = data\n    return run(abc)\n"
    (message,) = [message for code, message in _found(text, LintConfig()) if code == "NV006"]
    assert message.startswith("unpacks 4 names from the nvfp4_gemm input, which has 7 (a, b, sfa_ref, sfb_ref,"
                              " sfa_permuted, sfb_permuted, c) on every call, so it cannot take nvfp4_gemm's input;"
                              " this looks like a nvfp4_group_gemm submission"), message
    assert "ValueError" not in message
    why = {rule.code: rule.why for rule in rules_for(None) if rule.code in ("NV006", "NV007")}
    for rationale in why.values():
        assert "so it cannot take the task's input: every test fails (ValueError at the unpacking, or" \
               " AssertionError where an assert on len(data) comes first)" in rationale, rationale
        assert "raises ValueError on every test" not in rationale


def test_a_gemm_shaped_unpacking_in_a_dual_file_gets_the_dual_positions_or_none() -> None:
    # Positions come from the dual GEMM's own tuple, never the GEMM's (whose 2 and 3 are b2 and sfa_ref
    # here): a GEMM-shaped tuple built from the dual's elements carries theirs into the helper, a slice
    # its own, and a 7-name unpacking of the 10-element input, which raises, is reported as unreadable.
    text = ("import torch\n"
            "def gemm(inputs):\n"
            "    a, b, sfa, sfb, sfa_p, sfb_p, c = inputs\n"
            "    return torch.mul(sfa, sfb)\n"
            "def custom_kernel(data):\n"
            "    a, b1, b2, sfa_r, sfb1_r, sfb2_r, sfa_p, sfb1_p, sfb2_p, c = data\n"
            "    gemm((a, b1, sfa_p, sfb1_r, sfa_p, sfb1_p, c))\n"
            "    x, y, z, w, *_ = data[:7]\n"
            "    torch.mul(z, w)\n"
            "    a, b, sfa, sfb, sfa_p, sfb_p, c = data\n"
            "    return torch.mul(sfa, sfb)\n")
    found = [(d.line, d.code, d.message) for d in lint_text(text, config=DUAL)]
    # every call reaches line 10 (custom_kernel's own body, no return before it): NV006, an error
    assert [(line, code) for line, code, _ in found] == [(4, "NV401"), (9, "NV401"), (10, "NV006")]
    assert "sfb is the reference scale sfb1_ref (input index 4): use index 7 (sfb1_permuted)" in found[0][2]
    assert "w is the reference scale sfa_ref (input index 3)" in found[1][2]
    assert found[2][2].startswith("unpacks 7 names from the nvfp4_dual_gemm input, which has 10 (a, b1, b2, ")
    # 7 is the count the dual GEMM's task text describes too: said as that, not as another problem's submission
    assert found[2][2].endswith("(GPU MODE's task text describes 7, (a, b1, b2, sfa, sfb1, sfb2, c), but generate_input"
                                " returns these 10): unpack the task's 10, or gather the rest with a starred name")


def test_the_problems_own_unpackings_are_fine() -> None:
    dual = ("def custom_kernel(data):\n    a, b1, b2, _, _, _, sfa, sfb1, sfb2, c = data\n"
            "    x, y, *rest = data\n    return run(a, b1, b2, sfa, sfb1, sfb2, c)\n")
    gemm = "def custom_kernel(data):\n    a, b, _, _, sfa, sfb, c = data\n    return run(a, b, sfa, sfb, c)\n"
    assert _found(dual, DUAL) == []
    assert _found(gemm, LintConfig()) == []
    assert [code for code, _ in _found(dual, LintConfig())] == ["NV006"]  # 10 names: the dual's, not the GEMM's
    assert "this looks like a nvfp4_dual_gemm submission (10 names are its input)" in _found(dual, LintConfig())[0][1]


def test_an_unpacking_into_a_count_no_problem_has_fails_where_every_call_reaches_it(tmp_path: Path,
                                                                                     monkeypatch) -> None:
    """`a, b, c = data` in custom_kernel's own body raises ValueError on every call of the GEMM's 7 members,
    as another problem's count does (NV006), and lint said nothing: no problem's tuple has 3."""
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app
    from nvfp4ctl.lint.diagnostic import Severity

    double = "def custom_kernel(data):\n    a, b, c = data\n    return run(a, b, c)\n"
    (found,) = lint_text(double, config=LintConfig())
    assert (found.line, found.col, found.code, found.severity) == (2, 5, "NV007", Severity.ERROR)
    assert found.message == (
        "unpacks 3 names from the nvfp4_gemm input, which has 7 (a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted,"
        " c) on every call, so it cannot take nvfp4_gemm's input (no problem's input has 3): unpack the task's 7,"
        " or gather the"
        " rest with a starred name")
    five = "def custom_kernel(data):\n    a, b1, b2, sfa, c = data\n    return run(a, b1, b2, sfa, c)\n"
    (message,) = [message for code, message in _found(five, DUAL) if code == "NV007"]
    assert message.startswith("unpacks 5 names from the nvfp4_dual_gemm input, which has 10 (a, b1, b2, ")
    assert "(no problem's input has 5): unpack the task's 10" in message
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "task.yml").write_text("problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\n")
    (tmp_path / "submission.py").write_text(double)
    result = CliRunner().invoke(app, ["lint", "--task", "task.yml", "submission.py"])
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"submission.py:2:5: NV007 {found.message}\n"), result.output


@pytest.mark.parametrize("text", [
    "def custom_kernel(data):\n    if len(data) == 3:\n        a, b, c = data\n        return run(a, b, c)\n"
    "    return data[6]\n",  # a branch: it need never run
    "def _impl(inputs):\n    a, b, c = inputs\n    return run(a, b, c)\n"
    "def custom_kernel(data):\n    return _impl(data)\n",  # a helper, a test double's
    "def custom_kernel(data):\n    a, b, *rest = data\n    return run(a, b, rest[-1])\n",  # a starred name fits any
])
def test_an_unpacking_into_a_count_no_problem_has_that_a_call_may_skip_is_left_alone(text: str) -> None:
    assert _found(text, LintConfig()) == [] and _found(text, DUAL) == []


@pytest.mark.parametrize("where", [
    "    if len(data) > 1:\n        {unpack}\n        return run(a, c)\n    return data[6]\n",  # a branch
    "    try:\n        {unpack}\n    except ValueError:\n        return data[6]\n    return run(a, c)\n",
    "    if data[0] is None:\n        return data[6]\n    {unpack}\n    return run(a, c)\n",  # a return before it
])
def test_another_problems_unpacking_a_call_may_skip_stays_a_warning(where: str) -> None:
    unpack = "a, b1, b2, s1, s2, s3, p1, p2, p3, c = data"
    text = "def custom_kernel(data):\n" + where.format(unpack=unpack)
    found = _found(text, LintConfig(problem="nvfp4_gemv"))
    assert [code for code, _ in found] == ["NV403"], found
    assert found[0][1].endswith("; 10 names fit the input of nvfp4_dual_gemm")


def test_another_problems_unpacking_in_a_helper_stays_a_warning() -> None:
    text = ("def _impl(inputs):\n    a, b, s1, s2, p1, p2, c = inputs\n    return run(a, b, p1, p2, c)\n"
            "def custom_kernel(data):\n    return _impl(data)\n")
    assert [code for code, _ in _found(text, LintConfig(problem="nvfp4_group_gemm"))] == ["NV403"]


def test_a_folder_with_another_problems_submission_fails_lint(tmp_path: Path, monkeypatch) -> None:
    """GPU MODE's GEMV task.yml beside the dual GEMM's starter: its unpacking raises on every call, and bare
    lint said so as a warning, exit 0; the grouped GEMM's task with a 7-name unpacking likewise."""
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.scaffold import init_project

    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    for task_problem, file_problem, words in (
            ("nvfp4_gemv", "nvfp4_dual_gemm", "this looks like a nvfp4_dual_gemm submission (10 names are its input):"
                                              " lint it as one, nvfp4ctl lint --task PATH FILE with nvfp4_dual_gemm's"
                                              " task.yml"),
            ("nvfp4_group_gemm", "nvfp4_gemv", "this looks like another problem's submission (7 names fit the input"
                                               " of nvfp4_gemm and nvfp4_gemv)")):
        task_folder, file_folder, mixed = (tmp_path / name for name in (task_problem, file_problem, f"mixed-{task_problem}"))
        for problem, folder in ((task_problem, task_folder), (file_problem, file_folder)):
            if not folder.exists():
                init_project(get_problem(problem), folder)
        mixed.mkdir()
        (mixed / "task.yml").write_bytes((task_folder / "task.yml").read_bytes())
        (mixed / "submission.py").write_bytes((file_folder / "submission.py").read_bytes())
        monkeypatch.chdir(mixed)
        result = CliRunner().invoke(app, ["lint"])
        assert result.exit_code == 1, result.output
        assert " NV006 unpacks " in result.output and words in " ".join(result.output.split()), result.output
        # the task.yml the message points at, with the file named, lints it clean
        result = CliRunner().invoke(app, ["lint", "--task", str(file_folder / "task.yml"), "submission.py"])
        assert result.exit_code == 0 and "All checks passed (1 file checked)" in result.output, result.output


def test_copy_transpose_rule_covers_b1_and_b2() -> None:
    text = ("def custom_kernel(data):\n    b1, b2 = data[1], data[2]\n"
            "    x = b1.t().contiguous()\n    y = data[2].T.contiguous()\n    return run(x, y)\n")
    assert [code for code, _ in _found(text, DUAL)].count("NV501") == 2


def test_group_reference_list_is_named() -> None:
    text = ("def custom_kernel(data):\n    abc, sfasfb, reordered, sizes = data\n"
            "    return [run(a, b, s, c) for (a, b, c), s in zip(abc, sfasfb)]\n")
    found = _found(text, LintConfig(problem="nvfp4_group_gemm"))
    assert ("NV401", "sfasfb is the reference scale sfasfb_tensors (input index 1): use index 2 "
                     "(sfasfb_reordered_tensors)") in found


def test_gemv_uses_the_gemm_like_indices() -> None:
    text = "def custom_kernel(data):\n    scales = data[2].float()\n    return run(data[0], data[1], scales, data[6])\n"
    found = _found(text, LintConfig(problem="nvfp4_gemv"))
    assert ("NV401", "data[2] is the reference scale sfa_ref (input index 2): use index 4 (sfa_permuted)") in found


def test_plan_takes_the_problem_from_the_task(tmp_path: Path, monkeypatch) -> None:
    from nvfp4ctl.problems import get_problem

    (tmp_path / "task.yml").write_text(get_problem("nvfp4_group_gemm").task_file.read_text())
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    config = plan([tmp_path]).config
    assert config.problem == "nvfp4_group_gemm"
    assert (80, 4096, 7168) in config.benchmark_shapes  # each group's shape of the first benchmark


GROUP = LintConfig(problem="nvfp4_group_gemm")
GROUP_COMPILED_CACHE = """\
import cute
_compiled = {}
def compile_kernel(problem_sizes):
    key = f"{len(problem_sizes)}"
    if key in _compiled:
        return _compiled[key]
    compiled_func = cute.compile(my_kernel, problem_sizes)
    _compiled[key] = compiled_func
    return compiled_func
def custom_kernel(data):
    abc, _, reordered, sizes = data
    compile_kernel(sizes)(abc, reordered)
    return [g[2] for g in abc]
"""


def test_group_compiled_kernel_cache_is_fine() -> None:
    # The grouped layout has no top-level output index: an unbound name must not count as the output.
    assert not [f for f in _found(GROUP_COMPILED_CACHE, GROUP) if f[0].startswith("NV30")]


def test_unknown_value_cache_is_not_an_output_in_any_problem() -> None:
    text = ("_cache = {}\ndef helper(key):\n    if key in _cache:\n        return _cache[key]\n"
            "    value = lookup_table(key)\n    _cache[key] = value\n    return value\n"
            "def custom_kernel(data):\n    helper(1)\n    return data[-1]\n")
    for problem in ("nvfp4_gemm", "nvfp4_dual_gemm", "nvfp4_group_gemm", "nvfp4_gemv"):
        assert not [f for f in _found(text, LintConfig(problem=problem)) if f[0] == "NV301"], problem


def _group_cache(store: str, prelude: str = "") -> str:
    return ("_cache = {}\ndef custom_kernel(data):\n    abc, _, reordered, sizes = data\n    key = len(sizes)\n"
            "    if key in _cache:\n        return _cache[key]\n    run(abc, reordered)\n" + prelude
            + f"    _cache[key] = {store}\n    return [g[2] for g in abc]\n")


def test_group_cached_outputs_are_caught() -> None:
    for store, prelude in (("[g[2] for g in abc]", ""), ("[c for a, b, c in abc]", ""),
                           ("abc[0][2]", ""), ("data[0][0][2]", ""), ("abc", ""), ("data", ""),
                           ("c", "    for a, b, c in abc:\n        pass\n"),
                           ("[c for i, (a, b, c) in enumerate(abc)]", ""),
                           ("[g[2] for g, s in zip(abc, sizes)]", ""),
                           ("c", "    for i, (a, b, c) in enumerate(abc):\n        pass\n"),
                           ("c", "    for (a, b, c), s in zip(abc, sizes):\n        pass\n"),
                           ("outs", "    outs = []\n    for a, b, c in abc:\n        outs.append(c)\n"),
                           ("outs", "    outs = []\n    for g in abc:\n        outs += [g[2]]\n")):
        found = _found(_group_cache(store, prelude), GROUP)
        assert ("NV301", "returns a result from _cache (holding an earlier output) instead of computing it every call") \
            in found, store


def test_group_cached_inputs_are_not_outputs() -> None:
    # custom_kernel returning anything cached is still NV301 ("kept across calls"), but not as an output
    for store, prelude in (("[g[0] for g in abc]", ""), ("[a for i, (a, b, c) in enumerate(abc)]", ""),
                           ("[s for g, s in zip(abc, sizes)]", ""),
                           ("outs", "    outs = []\n    for a, b, c in abc:\n        outs.append(a)\n")):
        assert not [f for f in _found(_group_cache(store, prelude), GROUP) if "earlier output" in f[1]], store


def test_group_names_that_only_look_like_outputs_are_not_outputs() -> None:
    # A comprehension's c is local to it; a name given something else after its loop or its appends
    # no longer holds the groups' outputs.
    helper = "_cfg = {}\ndef pick(abc, sizes):\n    key = len(sizes)\n    if key in _cfg:\n        return _cfg[key]\n"
    call = "def custom_kernel(data):\n    abc, _, sfr, sizes = data\n    launch(pick(abc, sizes), abc)\n    return [g[2] for g in abc]\n"
    for body in ("    widths = [c.shape[1] for i, (a, b, c) in enumerate(abc)]\n    c = choose_tile(len(sizes))\n"
                 "    _cfg[key] = c\n    return c\n",
                 "    ks = [g[0].shape[1] for g in abc]\n    g = TILE_TABLE[key]\n    _cfg[key] = g[2]\n    return g[2]\n",
                 "    bufs = []\n    for a, b, c in abc:\n        bufs.append(c)\n    n = sum(t.numel() for t in bufs)\n"
                 "    bufs = torch.empty(n, device='cuda')\n    _cfg[key] = bufs\n    return bufs\n"):
        assert not [f for f in _found(helper + body + call, GROUP) if f[0].startswith("NV30")], body


def test_gemm_and_dual_cached_outputs_are_still_caught() -> None:
    gemm = ("_cache = {}\ndef custom_kernel(data):\n    key = data[0].shape\n    if key in _cache:\n"
            "        return _cache[key]\n    c = data[6]\n    _cache[key] = c\n    return c\n")
    dual = gemm.replace("data[6]", "data[9]")
    assert [f[0] for f in _found(gemm, LintConfig())].count("NV301") == 1
    assert [f[0] for f in _found(dual, DUAL)].count("NV301") == 1


def _exported(kernel: str, output: Path) -> Path:
    from nvfp4ctl.export import export_submission
    from nvfp4ctl.project import kernels_dir

    export_submission(kernels_dir() / "naive" / kernel, output)
    return output


@pytest.mark.parametrize("kernel, problem", [
    ("nvfp4_dual_gemm_naive.cu", "nvfp4_dual_gemm"),
    ("nvfp4_gemv_naive.cu", "nvfp4_gemv"),
    ("nvfp4_group_gemm_naive.cu", "nvfp4_group_gemm"),
])
def test_an_export_header_names_its_problem(tmp_path: Path, kernel: str, problem: str) -> None:
    from nvfp4ctl.export_header import exported_problem

    assert exported_problem(_exported(kernel, tmp_path / "submission.py").read_text()) == problem


@pytest.mark.parametrize("text", [
    "# GPU MODE nvfp4_dual_gemm submission: mine\ndef custom_kernel(data):\n    return data[9]\n",
    '"""GPU MODE nvfp4_dual_gemm submission: notes on the dual GEMM."""\n',
    '\n"""GPU MODE nvfp4_dual_gemm submission: k.cu for sm_100a, exported by `nvfp4ctl export` (kernel hash 0a: x)."""\n',
    '"""GPU MODE nvfp4_quad_gemm submission: k.cu for sm_100a, exported by `nvfp4ctl export` (kernel hash 0a: x)."""\n',
])
def test_anything_but_a_real_export_header_keeps_the_tasks_problem(text: str) -> None:
    from nvfp4ctl.export_header import exported_problem

    assert exported_problem(text) is None


PREAMBLES = ["\ufeff", "#!/usr/bin/env python3\n", "\ufeff#!/usr/bin/env python3\r\n"]


@pytest.mark.parametrize("preamble", PREAMBLES)
def test_an_export_and_a_starter_saved_with_a_bom_or_a_shebang_keep_their_problem(tmp_path: Path, preamble: str) -> None:
    """The docstring is still the module's after a byte order mark or a `#!` line, where both headers were
    looked for at the file's very first character, and the file was judged as the task's problem."""
    from nvfp4ctl.export_header import exported_problem
    from nvfp4ctl.lint.submission import starter_problem
    from nvfp4ctl.project import kernels_dir

    exported = _exported("nvfp4_dual_gemm_naive.cu", tmp_path / "submission.py").read_text()
    starter = (kernels_dir() / "torch_dequant" / "nvfp4_gemv_submission.py").read_text()
    assert exported_problem(preamble + exported) == "nvfp4_dual_gemm"
    assert starter_problem(preamble + starter) == "nvfp4_gemv"
    assert exported_problem(f"# {preamble}\n{exported}") is None and starter_problem(f"\n{preamble}{starter}") is None


def test_an_exported_dual_gemm_is_judged_as_the_dual_gemm_in_a_gemm_task(tmp_path: Path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    (tmp_path / "task.yml").write_text("problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\n")
    _exported("nvfp4_dual_gemm_naive.cu", tmp_path / "dual.py")
    result = CliRunner().invoke(app, ["lint", "dual.py"])
    assert result.exit_code == 0, result.output
    assert "NV403" not in result.output and "sfa_ref" not in result.output
    assert "warning: dual.py: checked as nvfp4_dual_gemm (its nvfp4ctl export header), not as the task's nvfp4_gemm" \
        in result.output
    config = LintConfig(problem="nvfp4_dual_gemm")
    assert not [d for d in lint_text((tmp_path / "dual.py").read_text(), "dual.py", config)]


def test_a_plain_torch_export_is_judged_by_the_problem_its_first_line_names_in_a_gemm_task(
        tmp_path: Path, monkeypatch) -> None:
    """A plain-torch export's first line (`# GPU MODE nvfp4_gemv submission: ..., exported by ...`) named no problem
    to lint, check and build, where export itself read it as the GEMV's; its code names none, so the GEMM task's
    tests were run on it."""
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app
    from nvfp4ctl.export import export_plain_torch
    from nvfp4ctl.lint.submission import HEADER_REASON, names_its_problem
    from nvfp4ctl.project import kernels_dir

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    (tmp_path / "task.yml").write_text("problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\n")
    output = tmp_path / "gemv.py"
    text = export_plain_torch(kernels_dir() / "torch_dequant" / "nvfp4_gemv_submission.py", output, "nvfp4_gemv")
    assert names_its_problem(text, output) == ("nvfp4_gemv", HEADER_REASON)
    result = CliRunner().invoke(app, ["lint", "gemv.py"])
    assert "warning: gemv.py: checked as nvfp4_gemv (its nvfp4ctl export header), not as the task's nvfp4_gemm" \
        in " ".join(result.output.split()), result.output


def test_with_no_task_yml_the_warning_names_the_shipped_task_that_stands_in(tmp_path: Path, monkeypatch) -> None:
    """With no task.yml anywhere above, "not as the task's nvfp4_gemm" named a task the folder does not have."""
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app
    from nvfp4ctl.workspace import SHIPPED, locate_task

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    assert locate_task(None).source == SHIPPED  # no task.yml above
    _exported("nvfp4_dual_gemm_naive.cu", tmp_path / "my_try.py")
    result = CliRunner().invoke(app, ["lint", "my_try.py"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert ("warning: my_try.py: checked as nvfp4_dual_gemm (its nvfp4ctl export header), not as nvfp4_gemm, the"
            " problem of the shipped task that stands in for a task.yml") in said
    assert "the task's" not in said


@pytest.mark.parametrize("name, problem", [
    ("nvfp4_dual_gemm_submission.py", "nvfp4_dual_gemm"),
    ("nvfp4_gemv.py", "nvfp4_gemv"),
    ("NVFP4_GROUP_GEMM_mine.py", "nvfp4_group_gemm"),
    ("nvfp4_gemm_v2.py", "nvfp4_gemm"),
    ("nvfp4_gemmx.py", None),  # a longer word, not the problem's name
    ("submission.py", None),
    ("my_nvfp4_gemv.py", None),
])
def test_a_file_name_that_starts_with_a_problem_names_it(name: str, problem: str | None) -> None:
    from nvfp4ctl.lint.submission import named_problem

    assert named_problem(Path(name)) == problem


def test_a_starter_named_for_another_problem_is_judged_as_that_problem(tmp_path: Path, monkeypatch) -> None:
    """A GEMM project keeps the other problems' starters (kernels/torch_dequant): each is checked
    with its own tuple, so its 10-name unpack is right and its sfb1_ref is index 4."""
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    (tmp_path / "task.yml").write_text("problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\n")
    clean = "def custom_kernel(data):\n    a, b1, b2, _sa, _s1, _s2, sa, s1, s2, c = data\n    return run(a, b1, b2, sa, s1, s2, c)\n"
    (tmp_path / "nvfp4_dual_gemm_submission.py").write_text(clean)
    result = CliRunner().invoke(app, ["-v", "lint", "nvfp4_dual_gemm_submission.py"])
    assert result.exit_code == 0, result.output
    assert "NV403" not in result.output and "warning" not in result.output
    assert "checked as nvfp4_dual_gemm (its file name), not as the task's nvfp4_gemm" in result.output
    (tmp_path / "nvfp4_dual_gemm_submission.py").write_text(
        "def custom_kernel(data):\n    return run(data[0], data[1], data[2], data[4], data[9])\n")
    result = CliRunner().invoke(app, ["lint", "nvfp4_dual_gemm_submission.py"])
    assert result.exit_code == 1 and "NV401 data[4] (the reference scale sfb1_ref)" in result.output


INLINE_GEMV = '''"""My GEMV, compiled inline."""
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include "nvfp4_gemv_api.h"
"""
_module = load_inline("mine", cpp_sources="", cuda_sources=CUDA)


def custom_kernel(data):
    return _module.nvfp4_gemv(data[0], data[1], data[4], data[5], data[6])
'''


@pytest.mark.parametrize("text, found", [
    (INLINE_GEMV, ("nvfp4_gemv", "it includes nvfp4_gemv_api.h")),
    ('CUDA = "#include <kernels/common/nvfp4_dual_gemm_api.h>\\n"\n', ("nvfp4_dual_gemm", "it includes nvfp4_dual_gemm_api.h")),
    ("def custom_kernel(data):\n    return ext.nvfp4_group_gemm(data)\n",
     ("nvfp4_group_gemm", "it calls nvfp4_group_gemm(), that problem's C ABI entry point")),
    # prose, a comment, a bare name and a longer word are no use of the C ABI
    ('"""Like #include "nvfp4_gemv_api.h" but faster: nvfp4_gemv()."""\n# _module.nvfp4_gemv(a)\nnvfp4_gemv(a)\n', None),
    ('CUDA = \'#include "my_nvfp4_gemv_api.h"\'\nx.nvfp4_gemv2(a)\n', None),
    # two problems' ABIs in one file: which one it is for is not told here
    ('CUDA = \'#include "nvfp4_gemv_api.h"\\n#include "nvfp4_gemm_api.h"\'\n', None),
    ("def custom_kernel(data:\n    return m.nvfp4_gemv(data)\n", None),  # no parse: its own rules say so
    # an include the CUDA has commented out or under #if 0 is no use either
    ('CUDA = "// #include <nvfp4_gemv_api.h>\\n#if 0\\n#include <nvfp4_gemv_api.h>\\n#endif\\n"\n', None),
])  # fmt: skip
def test_a_use_of_one_problems_c_abi_names_it(text: str, found: tuple[str, str] | None) -> None:
    from nvfp4ctl.lint.submission import api_problem

    assert api_problem(text) == found


def test_a_submission_using_another_problems_c_abi_is_warned_with_both_problems(tmp_path: Path, monkeypatch) -> None:
    """A hand-written load_inline submission for the GEMV in a GEMM folder passed lint in silence (both
    tuples have 7 elements); only check found it, failing every test."""
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    (tmp_path / "task.yml").write_text("problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\n")
    (tmp_path / "submission.py").write_text(INLINE_GEMV)
    result = CliRunner().invoke(app, ["lint", "submission.py"])
    assert result.exit_code == 0, result.output
    assert ("warning: submission.py: checked as nvfp4_gemv (it includes nvfp4_gemv_api.h), not as the task's"
            " nvfp4_gemm") in " ".join(result.output.split())
    (tmp_path / "task.yml").write_text("problem: nvfp4_gemv\ntests:\n  - {m: 128, k: 256, l: 1, seed: 1111}\n")
    result = CliRunner().invoke(app, ["lint", "submission.py"])
    assert result.exit_code == 0 and "warning" not in result.output, result.output


LOADED_GEMV = '''"""My GEMV, its CUDA in a file beside it."""
import torch.utils.cpp_extension

SOURCES = ["kernels/gemv.cu"]
_module = torch.utils.cpp_extension.load("mine", sources=SOURCES + ["binding.cpp"])


def custom_kernel(data):
    return _module.run(data[0], data[1], data[4], data[5], data[6])
'''


def test_a_load_source_beside_the_submission_that_includes_an_api_header_names_its_problem(tmp_path: Path) -> None:
    """load(sources=[...]) compiles files beside the submission: a GEMV kernel loaded into a GEMM folder's
    submission passed lint as a GEMM one, its API header being in the .cu, not in the .py."""
    from nvfp4ctl.lint.submission import api_problem

    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "gemv.cu").write_text('// #include "nvfp4_gemm_api.h"\n#include "nvfp4_gemv_api.h"\n')
    (tmp_path / "binding.cpp").write_text("#include <torch/extension.h>\n")
    assert api_problem(LOADED_GEMV, tmp_path) == ("nvfp4_gemv",
                                                  "its load() source kernels/gemv.cu includes nvfp4_gemv_api.h")
    assert api_problem(LOADED_GEMV) is None  # no folder: nothing is read
    bare = LOADED_GEMV.replace("import torch.utils.cpp_extension", "from torch.utils.cpp_extension import load")
    assert api_problem(bare.replace("torch.utils.cpp_extension.load(", "load("), tmp_path)[0] == "nvfp4_gemv"
    # torch.load, or a load() whose files another problem's header is no evidence of this one
    assert api_problem("import torch\nw = torch.load('kernels/gemv.cu')\n# cpp_extension\n", tmp_path) is None
    (tmp_path / "binding.cpp").write_text('#include "nvfp4_gemm_api.h"\n')
    assert api_problem(LOADED_GEMV, tmp_path) is None  # two problems' headers: judged as the task's


@pytest.mark.parametrize("make", [
    lambda folder: None,  # missing
    lambda folder: (folder / "kernels" / "gemv.cu").mkdir(parents=True),  # a folder
    lambda folder: (folder / "kernels").mkdir() or os.mkfifo(folder / "kernels" / "gemv.cu"),  # would block a read
    lambda folder: (folder / "kernels").mkdir() or (folder / "kernels" / "gemv.cu").write_bytes(b"\xff\xfe#include"),
])  # fmt: skip
def test_a_load_source_that_cannot_be_read_is_no_evidence_and_no_crash(tmp_path: Path, make) -> None:
    from nvfp4ctl.lint.submission import api_problem

    make(tmp_path)
    assert api_problem(LOADED_GEMV, tmp_path) is None
    assert api_problem(LOADED_GEMV.replace('"kernels/gemv.cu"', '"a\\x00b.cu"'), tmp_path) is None


def test_lint_warns_of_a_load_source_of_another_problem(tmp_path: Path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    (tmp_path / "task.yml").write_text("problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\n")
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "gemv.cu").write_text("#include <nvfp4_gemv_api.h>\n")
    (tmp_path / "sub").mkdir()  # linted from elsewhere: the files are found beside the submission
    (tmp_path / "sub" / "submission.py").write_text(LOADED_GEMV.replace("kernels/gemv.cu", "../kernels/gemv.cu"))
    result = CliRunner().invoke(app, ["lint", "sub/submission.py"])
    assert result.exit_code == 0, result.output
    assert ("warning: sub/submission.py: checked as nvfp4_gemv (its load() source ../kernels/gemv.cu includes"
            " nvfp4_gemv_api.h), not as the task's nvfp4_gemm") in " ".join(result.output.split())


def test_slices_of_the_rest_paired_in_one_assignment_keep_their_positions() -> None:
    # `refs, perms = rest[:3], rest[3:6]` binds each name to its own slice, as two assignments would
    text = ("def launch(a, b1, b2, scales, c):\n"
            "    return mod.dual(a, b1, b2, scales[0], scales[1], scales[2], c)\n"
            "def custom_kernel(data):\n"
            "    a, b1, b2, *rest = data\n"
            "    refs, perms, c = rest[:3], rest[3:6], rest[-1]\n"
            "    return launch(a, b1, b2, refs, c)\n")
    found = [code for code, _ in _found(text, DUAL)]
    assert found.count("NV401") == 3
    good = text.replace("launch(a, b1, b2, refs, c)", "launch(a, b1, b2, perms, c)")
    assert _found(good, DUAL) == []


def test_starred_reference_scales_alone_to_an_extension_are_an_error() -> None:
    # *refs holds only reference scales: the extension cannot be reading the permuted ones (NV401);
    # *data also holds the permuted ones, which it may be reading instead (NV403)
    text = ("def custom_kernel(data):\n"
            "    a, b1, b2, *rest = data\n"
            "    refs = rest[:3]\n"
            "    mod.dual(a, b1, b2, *refs, data[9])\n"
            "    mod.other(*data)\n"
            "    return data[9]\n")
    found = _found(text, DUAL)
    assert [code for code, _ in found] == ["NV401", "NV403"]
    assert found[0][1] == ("*refs passes the reference scales (sfa_ref, sfb1_ref, sfb2_ref) to mod.dual without the "
                           "permuted ones: the kernel can only be reading the reference scales; pass sfa_permuted, "
                           "sfb1_permuted, sfb2_permuted")


def test_a_submission_under_a_task_yml_of_its_own_is_judged_by_that_task(tmp_path: Path, monkeypatch) -> None:
    """`lint ../nvfp4_dual_gemm` from a GEMM folder (GPU MODE's layout: one folder per problem): the
    dual GEMM's submission is checked with its own tuple, not the GEMM task's; $NVFP4CTL_TASK, chosen
    on purpose, still decides."""
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    for name, problem in (("gemm", "nvfp4_gemm"), ("dual", "nvfp4_dual_gemm")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "task.yml").write_text(f"problem: {problem}\ntests:\n  - {{m: 128, n: 256, k: 256, l: 1, seed: 1}}\n")
    clean = "def custom_kernel(data):\n    a, b1, b2, _sa, _s1, _s2, sa, s1, s2, c = data\n    return run(a, b1, b2, sa, s1, s2, c)\n"
    (tmp_path / "dual" / "submission.py").write_text(clean)
    monkeypatch.chdir(tmp_path / "gemm")
    result = CliRunner().invoke(app, ["-v", "lint", "../dual"])
    assert result.exit_code == 0, result.output
    assert "NV403" not in result.output and "NV006" not in result.output
    assert "checked as nvfp4_dual_gemm (the task.yml above it), not as the task's nvfp4_gemm" in result.output
    monkeypatch.setenv("NVFP4CTL_TASK", str(tmp_path / "gemm" / "task.yml"))
    result = CliRunner().invoke(app, ["lint", "../dual"])
    assert "NV006" in result.output and result.exit_code == 1, result.output


def test_copy_transpose_names_the_problems_b() -> None:
    """NV501 said "copy-transposes B ... pass b or a transposed view (b.t())" of the dual GEMM's b1 and b2
    and of each group's b, the GEMM's words."""
    dual = ("def custom_kernel(data):\n    a, b1, b2, _, _, _, sfa, sfb1, sfb2, c = data\n"
            "    w8 = b2.view(torch.uint8)\n    x = b1.t().contiguous()\n    y = w8.T.contiguous()\n"
            "    z = weight.t().contiguous()\n    return run(x, y, z)\n")
    assert [message for code, message in _found(dual, DUAL) if code == "NV501"] == [
        "copy-transposes b1 every call: b1 is already (N, K) K-major; pass b1 or a transposed view (b1.t()) without"
        " .contiguous()",
        "copy-transposes b2 every call: b2 is already (N, K) K-major; pass b2 or a transposed view (b2.t()) without"
        " .contiguous()",
        "copy-transposes b1 or b2 every call: b1 and b2 are already (N, K) K-major; pass them or transposed views"
        " (b1.t()) without .contiguous()"]
    group = ("def custom_kernel(data):\n    abc, _, reordered, sizes = data\n"
             "    return [run(a, b.t().contiguous(), s, c) for (a, b, c), s in zip(abc, reordered)]\n")
    assert [message for code, message in _found(group, LintConfig(problem="nvfp4_group_gemm")) if code == "NV501"] == [
        "copy-transposes each group's b every call: every b in abc_tensors is already (N, K) K-major; pass b or a"
        " transposed view (b.t()) without .contiguous()"]
    gemm = "def custom_kernel(data):\n    return run(data[0], data[1].t().contiguous())\n"
    assert [message for code, message in _found(gemm, LintConfig()) if code == "NV501"] == [
        "copy-transposes B every call: B is already (N, K) K-major; pass b or a transposed view (b.t()) without"
        " .contiguous()"]
    gemv = "def custom_kernel(data):\n    return run(data[0], weight.T.contiguous())\n"  # b: the vector, 128 rows
    assert [message for code, message in _found(gemv, LintConfig(problem="nvfp4_gemv")) if code == "NV501"] == [
        "copy-transposes b every call: b is already K-major; pass b or a transposed view (b.t()) without .contiguous()"]


def test_list_rules_speaks_of_the_tasks_problem(tmp_path: Path, monkeypatch) -> None:
    """--list-rules told NV401 in the GEMM's words in every folder: sfa_permuted/sfb_permuted (tuple indices
    4, 5), not the reference scales (2, 3), which are the dual GEMM's b2 and sfa_ref."""
    import json

    from typer.testing import CliRunner

    from nvfp4ctl.cli import app
    from nvfp4ctl.lint.rule_words import rules_for
    from nvfp4ctl.lint.rules import RULES
    from nvfp4ctl.problems import get_problem

    assert rules_for("nvfp4_gemm") == RULES  # the GEMM's words are rules.py's, word for word
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    for problem, why, bad in (
            ("nvfp4_dual_gemm", "sfa_permuted/sfb1_permuted/sfb2_permuted (tuple indices 6, 7, 8), not the reference"
                                " scales (3, 4, 5)", "a, b1, b2, sfa, sfb1, sfb2, _, _, _, c = data"),
            ("nvfp4_group_gemm", "sfasfb_reordered_tensors (tuple index 2), not the reference scales (1)",
             "abc, sfasfb, _, problem_sizes = data")):
        folder = tmp_path / problem
        folder.mkdir()
        (folder / "task.yml").write_text(get_problem(problem).task_file.read_text())
        monkeypatch.chdir(folder)
        rules = {rule["code"]: rule for rule in json.loads(
            CliRunner().invoke(app, ["lint", "--list-rules", "--format", "json"]).stdout)["rules"]}
        assert why in rules["NV401"]["why"] and rules["NV401"]["bad"].startswith(bad)
        assert "tuple indices 4, 5" not in json.dumps(rules)
        table = CliRunner().invoke(app, ["lint", "--list-rules"])
        assert table.exit_code == 0 and f"lint rules · {problem}" in table.output
    monkeypatch.chdir(tmp_path)  # --task names the problem too
    task = str(tmp_path / "nvfp4_dual_gemm" / "task.yml")
    document = json.loads(CliRunner().invoke(app, ["lint", "--list-rules", "--format", "json", "--task", task]).stdout)
    assert document["problem"] == "nvfp4_dual_gemm"
    rules = document["rules"]
    nv501 = next(rule for rule in rules if rule["code"] == "NV501")
    assert nv501["why"].startswith("b1 and b2 are already (N, K) K-major") and nv501["bad"] == "b1_t = b1.t().contiguous()"


def test_list_rules_refuses_a_task_file_the_user_named_that_cannot_be_read(tmp_path: Path, monkeypatch) -> None:
    """--list-rules --task nosuch.yml warned, listed the GEMM's rules and exited 0, where lint --task
    nosuch.yml FILE and check --task nosuch.yml exit 2."""
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["lint", "--list-rules", "--task", "nosuch.yml"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and "nosuch.yml" in result.output and "NV101" not in result.output
