"""What README.md and docs/commands.md say that can be checked without a GPU: every option a command has
is named in its section of docs/commands.md, every option the two files name exists, every command line
they show parses, and the lint rule table, the environment variables, the exit codes and the export
example agree with the code."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.env import Env
from nvfp4ctl.errors import ExitCode
from nvfp4ctl.lint.rules import RULES

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS_MD = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
GROUP = typer.main.get_command(app)
COMMANDS = dict(GROUP.commands)
# Options every command has; the README's quickstart and the command's --help say what they do.
COMMON = {"--help", "-q", "--quiet", "-v", "--verbose"}
# pip's options, in the README's install notes.
NOT_OURS = {"--no-index", "--find-links"}


def _section(text: str, heading: str) -> str:
    """The text under a heading line, up to the next heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    start = text.index(f"\n{heading}\n") + len(heading) + 2
    following = re.compile(rf"^#{{1,{len(level)}}} ", re.MULTILINE).search(text, start)
    return text[start:following.start() if following else len(text)]


def _options(command: typer.core.TyperCommand) -> list[typer.core.TyperOption]:
    return [param for param in command.params if param.param_type_name == "option"]


def _named(spelling: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(spelling)}(?![\w-])", text) is not None


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_of_a_command_is_named_in_its_commands_md_section(name: str) -> None:
    section = _section(COMMANDS_MD, f"## `nvfp4ctl {name}`")
    unnamed = [option.opts[0] for option in _options(COMMANDS[name])
               if not set(option.opts) & COMMON and not any(_named(spelling, section) for spelling in option.opts)]
    assert not unnamed, f"docs/commands.md's nvfp4ctl {name} section does not name {', '.join(unnamed)}"


def test_every_option_the_docs_name_is_an_option_of_nvfp4ctl() -> None:
    known = {spelling for command in [GROUP, *COMMANDS.values()] for param in command.params for spelling in param.opts}
    named = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", README + COMMANDS_MD))
    assert named - known - COMMON - NOT_OURS == set()


def _shown_command_lines() -> list[str]:
    """`$ nvfp4ctl …` lines of the examples and `nvfp4ctl COMMAND …` in inline code, less synopses ([DIR]) and
    headings."""
    docs = README + COMMANDS_MD
    lines = re.findall(r"^\$ (nvfp4ctl .*)$", docs, re.MULTILINE)
    prose = re.sub(r"^#.*$", "", docs, flags=re.MULTILINE)  # a heading names the command alone
    for span in re.findall(r"`(nvfp4ctl [a-z][^`]*)`", prose):
        lines.extend(part.strip() for part in span.split("&&"))
    shown = []
    for line in lines:
        line = line.split(" #", 1)[0].strip()
        words = line.split()
        if len(words) > 1 and words[1] in {*COMMANDS, "-q", "-v", "--version"} and not re.search(r"[\[|]", line):
            shown.append(line)
    return sorted(set(shown))


SHOWN = _shown_command_lines()


def test_the_docs_show_command_lines() -> None:
    assert len(SHOWN) >= 10 and "nvfp4ctl check --only 3" in SHOWN


@pytest.mark.parametrize("line", SHOWN)
def test_every_command_line_the_docs_show_parses(line: str) -> None:
    """Each option named exists and takes what the line gives it (the command is not run)."""
    words = shlex.split(line)[1:]
    while words and words[0] in {"-q", "-v"}:
        words.pop(0)
    if words == ["--version"]:
        return
    name, args = words[0], words[1:]
    COMMANDS[name].make_context(name, args)


def test_the_lint_rule_table_lists_every_rule_with_its_severity() -> None:
    table = dict(re.findall(r"^\| (NV\d{3}) \| (error|warning)\b", COMMANDS_MD, re.MULTILINE))
    assert table == {rule.code: rule.severity.value for rule in RULES}


def test_every_key_of_lints_json_is_named_once_where_ci_use_points() -> None:
    """docs/ci_use.md listed lint's JSON keys, and missed seven (version, source_line, files_with_findings, files,
    not_submissions, compiler_outputs, nothing_to_lint): the keys are listed once, in docs/commands.md, and the CI
    guide points there."""
    from nvfp4ctl.lint.diagnostic import Diagnostic, LintReport, Severity
    from nvfp4ctl.lint.render import json as json_render

    finding = Diagnostic(Path("submission.py"), 1, 1, "NV101", Severity.ERROR, "stream", "s = 1")
    report = LintReport(diagnostics=(finding,), files=(Path("submission.py"),), unknown_waivers=((Path("k.cu"), 2, "NV0"),))
    document = json_render.payload(report)

    def keys(value: object) -> set[str]:
        if isinstance(value, dict):
            return set(value) | {key for item in value.values() for key in keys(item)}
        return {key for item in value for key in keys(item)} if isinstance(value, list) else set()

    section = _section(COMMANDS_MD, "### `lint --format json`")
    assert {key for key in keys(document) if f"`{key}`" not in section} == set()
    ci_use = (ROOT / "docs" / "ci_use.md").read_text(encoding="utf-8")
    assert "(commands.md#lint---format-json)" in ci_use and "`source_line`" not in ci_use


def test_export_and_the_host_proof_say_a_kernels_common_that_is_no_override_is_searched() -> None:
    """build.sources.header_search looks in a kernels/common/ of yours that is no override after nvfp4ctl's, for
    export's inlining and dump's host proof too; their sections named kernels/common alone."""
    for heading, start in (("## `nvfp4ctl export`", "local headers inlined"), ("## `nvfp4ctl dump`", "host program")):
        said = " ".join(_section(COMMANDS_MD, heading).split())
        assert "a kernels/common/ of yours that is no override" in said[said.index(start):], heading


def test_the_docs_say_select_keeps_the_stream_rule() -> None:
    """`lint --select NV8` still reports NV101 (the leaderboard rejects the file whatever is selected) and
    NV004 (a file lint cannot read); the docs said only that NV101 cannot be waived or ignored."""
    for text in (_section(README, "### `nvfp4ctl lint`"), _section(COMMANDS_MD, "## `nvfp4ctl lint`")):
        flat = " ".join(text.split())
        assert re.search(r"NV101[^.]* always runs?, whatever `--select", flat), flat[:400]
        assert "NV004" in flat


def test_the_environment_table_lists_every_variable_nvfp4ctl_reads() -> None:
    table = set(re.findall(r"^\| `([A-Z0-9_]+)` \|", _section(README, "## Configuration"), re.MULTILINE))
    ours = {value for name, value in vars(Env).items() if name.isupper()}
    assert table - ours == {"CUDA_HOME", "CUTLASS_PATH"}  # read by the toolchain lookups, as torch and an export do
    assert ours <= table


def test_the_exit_codes_section_gives_every_exit_code() -> None:
    given = {int(code) for code in re.findall(r"\*\*(\d+)\*\*", _section(README, "## Exit codes"))}
    assert given == {int(code) for code in ExitCode}


def test_the_export_example_is_what_export_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's `export --kernel default` lines, less the size, which changes with every kernel edit."""
    example = re.search(r"^\$ nvfp4ctl export --kernel default -o submission.py\n(.*?)^```", README,
                        re.MULTILINE | re.DOTALL)
    assert example is not None
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["export", "--kernel", "default", "-o", "submission.py"])
    assert result.exit_code == 0, result.output

    def words(text: str) -> str:
        return re.sub(r"\(\d+\.\d KiB\)", "(N KiB)", " ".join(text.split()))

    assert words(result.output) == words(example.group(1))


@pytest.mark.parametrize("typed", [["log"], ["log", "--trend"]])
def test_the_line_the_docs_give_for_a_file_after_log_is_what_log_says(typed: list[str], tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/commands.md said `log FILE` gives `nvfp4ctl log --trend --target FILE`; only `log --trend FILE` does."""
    from cli_streams import separate_streams_runner

    (tmp_path / "submission.py").write_text("")
    monkeypatch.chdir(tmp_path)
    result = separate_streams_runner().invoke(app, [*typed, "submission.py"], prog_name="nvfp4ctl")
    assert result.exit_code == 2, result.output
    suggested = result.stderr.strip().split(": ", 2)[-1].replace("submission.py", "FILE")
    flat = " ".join(COMMANDS_MD.split())
    assert f"`{' '.join(typed)} FILE` gives `{suggested}`" in flat, suggested


def test_the_timeouts_the_docs_name_are_the_shipped_task_files() -> None:
    """The README said "`timeout` (180 s)", where the grouped GEMM's task.yml, which `init` writes, sets 300.
    docs/commands.md's task.yml section names them now, the README links it."""
    import yaml

    said = re.search(r"(\d+) s\s+where none applies, and the grouped GEMM's ranked limit is (\d+) s",
                     _section(COMMANDS_MD, "## task.yml"))
    assert said, "docs/commands.md's task.yml section no longer names the timeouts"
    from nvfp4ctl.problems.fields import DEFAULT_TIMEOUT_S

    assert int(said.group(1)) == DEFAULT_TIMEOUT_S
    grouped = yaml.safe_load((ROOT / "nvfp4ctl/problems/nvfp4_group_gemm/task.yml").read_text())
    assert int(said.group(2)) == grouped["ranked_timeout"]
