"""--select/--ignore/--profile, task.yml's lint section, inline waivers."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.errors import UsageError
from nvfp4ctl.lint import LintConfig, lint_text
from nvfp4ctl.lint.config import parse_section, resolve_config
from nvfp4ctl.lint.waivers import waived_codes

BAD = '''\
import torch
def custom_kernel(data):
    a, b, sfa, sfb, _, _, c = data
    print(sfa)
    return c
'''


def codes(text: str, config: LintConfig | None = None) -> list[str]:
    return [d.code for d in lint_text(text, "snippet.py", config)]


def test_select_and_ignore_take_codes_and_prefixes() -> None:
    assert codes(BAD) == ["NV801", "NV401"]
    assert codes(BAD, LintConfig(select=("NV4",))) == ["NV401"]
    assert codes(BAD, LintConfig(ignore=("NV8",))) == ["NV401"]
    assert codes(BAD, LintConfig(select=("NV801",))) == ["NV801"]


def test_stream_rule_stays_on_whatever_is_selected() -> None:
    assert codes("x = 'Stream'\n", LintConfig(select=("NV4",))) == ["NV101"]


def test_profile_only_rule_is_off_until_the_profile_or_an_explicit_select() -> None:
    src = 'CUDA = """__global__ void k() { asm volatile("trap;"); }"""\n'
    assert codes(src) == []
    assert codes(src, LintConfig(profile="cutlass-only")) == ["NV901"]
    assert codes(src, LintConfig(select=("NV901",))) == ["NV901"]
    assert codes(src, LintConfig(select=("NV9",))) == []  # a prefix keeps defaults; name it to opt in


@pytest.mark.parametrize("bad", [["NV999"], ["XX"], ["NV4", "NV77"]])
def test_unknown_codes_are_usage_errors(bad: list[str]) -> None:
    with pytest.raises(UsageError, match="unknown rule code"):
        resolve_config(parse_section(None, Path(".")), bad, None, None)


@pytest.mark.parametrize("pattern", ["NV101", "NV1", "nv10"])
def test_ignoring_the_stream_rule_is_refused(pattern: str) -> None:
    with pytest.raises(UsageError, match="cannot be ignored"):
        resolve_config(parse_section(None, Path(".")), None, [pattern], None)


def test_task_section_is_validated_and_flags_win(tmp_path: Path) -> None:
    section = parse_section({"select": ["NV4", "NV8"], "ignore": "NV801", "profile": "cutlass-only",
                             "paths": ["kernels", "/abs/submission.py"]}, tmp_path)
    assert section.paths == (tmp_path / "kernels", Path("/abs/submission.py"))
    config = resolve_config(section, None, None, None)
    assert (config.select, config.ignore, config.profile) == (("NV4", "NV8"), ("NV801",), "cutlass-only")
    flagged = resolve_config(section, ["NV3"], None, "default")
    assert (flagged.select, flagged.ignore, flagged.profile) == (("NV3",), ("NV801",), "default")


@pytest.mark.parametrize("section, message", [
    ({"selct": ["NV4"]}, "lint.selct: unknown key"),
    ({"select": 3}, "lint.select: expected a list"),
    ({"profile": "fast"}, "lint.profile: expected one of"),
    ({"paths": [3, "kernels"]}, "lint.paths: expected a list of paths"),
    ({"ignore": ["NV101"]}, "cannot be ignored"),
    (["NV4"], "lint: expected a mapping"),
])
def test_bad_task_sections_name_the_key(section: object, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_section(section, Path("."))  # type: ignore[arg-type]


@pytest.mark.parametrize("section, message", [
    ({"select": [True, None]}, "task.yml: lint.select: expected a list of rule codes, got [true, null]"),
    ({"profile": False}, "task.yml: lint.profile: expected one of default, cutlass-only, got false"),
    ({"paths": {"a": True}}, "task.yml: lint.paths: expected a list of paths, got {'a': true}"),
])
def test_bad_task_values_are_spelled_as_yaml_writes_them(section: object, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_section(section, Path("."))  # type: ignore[arg-type]
    assert str(caught.value) == message


OTHER_TASK = "tests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\nlint:\n"


@pytest.mark.parametrize("section, message", [
    ("  select: [NV999]\n", "other.yml:4: lint.select: unknown rule code or prefix 'NV999'"),
    ("  select:\n    - NV4\n    - NV999\n", "other.yml:6: lint.select: unknown rule code or prefix 'NV999'"),
    ("  selct: [NV4]\n", "other.yml:4: lint.selct: unknown key"),
    ("  profile: cutlass-only\n  ignore:\n    - NV8\n    - NV101\n", "other.yml:7: lint.ignore: NV101 cannot be ignored"),
    ("  profile: fast\n", "other.yml:4: lint.profile: expected one of"),
    ("  paths:\n    - 3\n", "other.yml:4: lint.paths: expected a list of paths, got [3]"),
])
def test_bad_task_sections_name_the_file_and_line(section: str, message: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Errors of the lint: section have the FILE:LINE: form of every other task.yml error, and name the task
    file in use (they said "task.yml:" with no line whatever the file)."""
    from nvfp4ctl.task import parse_task

    monkeypatch.chdir(tmp_path)
    task = parse_task(OTHER_TASK + section, tmp_path / "other.yml")
    with pytest.raises(UsageError) as caught:
        parse_section(task.lint, tmp_path, task.lint_at)
    assert str(caught.value).startswith(message)


def test_each_lint_path_is_named_at_its_own_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl.task import parse_task

    monkeypatch.chdir(tmp_path)
    task = parse_task(OTHER_TASK + "  paths:\n    - kernels\n    - submission.py\n", tmp_path / "other.yml")
    assert parse_section(task.lint, tmp_path, task.lint_at).paths_at == ("other.yml:5: lint.paths", "other.yml:6: lint.paths")
    one = parse_task(OTHER_TASK.replace("lint:\n", "lint: {paths: kernels}\n"), tmp_path / "other.yml")
    assert parse_section(one.lint, tmp_path, one.lint_at).paths_at == ("other.yml:3: lint.paths",)


def test_one_path_may_be_written_without_a_list(tmp_path: Path) -> None:
    """As `select: NV4` stands for [NV4], `paths: kernels` stands for [kernels]."""
    assert parse_section({"paths": "kernels"}, tmp_path).paths == (tmp_path / "kernels",)


def test_waivers_on_the_same_line_with_comma_lists() -> None:
    assert waived_codes("print(x)  # nvfp4ctl: ignore[NV801, NV4]") == ("NV801", "NV4")
    assert waived_codes('printf("x");  // nvfp4ctl: ignore[NV802]') == ("NV802",)
    waived = BAD.replace("    print(sfa)", "    print(sfa)  # nvfp4ctl: ignore[NV401,NV801]")
    assert codes(waived) == []
    only_one = BAD.replace("    print(sfa)", "    print(sfa)  # nvfp4ctl: ignore[NV801]")
    assert codes(only_one) == ["NV401"]
    next_line = BAD.replace("    print(sfa)", "    # nvfp4ctl: ignore[NV401]\n    print(sfa)")
    assert codes(next_line) == ["NV801", "NV401"]


def test_waiver_inside_embedded_cuda() -> None:
    src = 'SRC = """\n__global__ void k() {\n  printf("x");  // nvfp4ctl: ignore[NV802]\n  printf("y");\n}\n"""\n'
    assert [(d.line, d.code) for d in lint_text(src, "s.py")] == [(4, "NV802")]


def test_a_folders_task_yml_edited_between_two_runs_in_one_process_is_read_again(tmp_path: Path) -> None:
    """lint_paths kept each folder's parsed task.yml and its settings for the process, and workspace.reset() did
    not forget them: a second run after an edit (a test's, an editor's) judged by the old settings."""
    from nvfp4ctl import workspace
    from nvfp4ctl.lint.engine import lint_paths

    (tmp_path / "gemm").mkdir()
    task = tmp_path / "gemm" / "task.yml"
    submission = tmp_path / "gemm" / "submission.py"
    submission.write_text("def custom_kernel(data):\n    a, b, sfa, sfb, sfa_p, sfb_p, c = data\n"
                          "    b_t = b.t().contiguous()\n    return c\n")
    tests = "tests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\n"
    codes = []
    for ignored in ("[NV501]", "[]"):
        task.write_text(f"problem: nvfp4_gemm\n{tests}lint: {{ignore: {ignored}}}\n")
        report = lint_paths([submission], LintConfig(), own_tasks=True)
        codes.append([d.code for d in report.diagnostics])
        workspace.reset()
    assert codes == [[], ["NV501"]]
