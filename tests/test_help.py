"""Every command's --help states each option's default once, in one spelling: where the help text says it in
words ("(default: 180)", "(default: here)"), typer's own "[default: …]" is off (show_default=False)."""

from __future__ import annotations

import re

import pytest
import typer

from nvfp4ctl.cli import app

# A default the help text states in words: "(default: 180)", "Default: every kernel …"; not the
# value 'default' (--kernel default) nor the rule profile named default.
_SAID = re.compile(r"(?<!['`])\bdefault\b(?!['`])\s*:?", re.IGNORECASE)
_SHOWN = re.compile(r"\s*\[(?:[^\]]*; )?default: [^\]]*\]\s*$")  # what typer adds after the help text


def _help_records() -> list[tuple[str, str, str]]:
    group = typer.main.get_command(app)
    records = []
    for name, command in group.commands.items():
        context = command.context_class(command, info_name=name)
        for parameter in command.params:
            record = parameter.get_help_record(context)
            if record is not None:
                records.append((name, record[0], record[1]))
    return records


RECORDS = _help_records()


def test_every_command_is_scanned() -> None:
    assert {name for name, _, _ in RECORDS} >= {"init", "build", "check", "bench", "dump", "lint", "log", "export",
                                                "tune"}


@pytest.mark.parametrize("command, option, text", RECORDS, ids=[f"{c} {o.split()[0]}" for c, o, _ in RECORDS])
def test_a_default_is_stated_once_and_spelled_default_colon(command: str, option: str, text: str) -> None:
    shown = _SHOWN.search(text)
    words = text[:shown.start()] if shown else text
    said = [match.group(0).strip() for match in _SAID.finditer(words) if not _is_a_value(words, match)]
    assert not (said and shown), f"{command} {option}: the default is in the text and in typer's [default: …]: {text!r}"
    assert all(spelled.endswith(":") for spelled in said), f"{command} {option}: write 'default: X': {text!r}"


def _is_a_value(words: str, match: re.Match[str]) -> bool:
    """'default' as a value the option takes (lint --profile default), not a default stated."""
    return bool(re.match(r"\s*,", words[match.end():])) and not match.group(0).rstrip().endswith(":")


def test_lint_select_says_the_stream_rule_always_runs() -> None:
    """--select NV8 still reports NV101; its help said only 'Only these rule codes or prefixes'."""
    (text,) = [text for command, option, text in RECORDS if command == "lint" and option.startswith("--select")]
    assert "NV101" in text and "always run" in text


def test_lint_select_and_ignore_name_every_rule_that_always_runs() -> None:
    """NV004 (not text) runs whatever --select or --ignore say, as NV101 does; the help named NV101 alone."""
    from nvfp4ctl.lint.rules import ALWAYS_ON

    for name in ("--select", "--ignore"):
        (text,) = [text for command, option, text in RECORDS if command == "lint" and option.startswith(name)]
        assert all(code in text for code in ALWAYS_ON), (name, text)


def test_dump_task_names_the_task_file_in_use_as_its_default() -> None:
    """dump --task said "(default: the project's)" where load_task takes the task file in use."""
    (text,) = [text for command, option, text in RECORDS if command == "dump" and option.startswith("--task")]
    assert "the project's" not in text
    assert "(default: the task file in use: $NVFP4CTL_TASK, else the nearest task.yml" in text


@pytest.mark.parametrize("name", sorted(typer.main.get_command(app).commands))
def test_a_usage_line_brackets_an_optional_argument_once(name: str) -> None:
    """init's usage read `init [OPTIONS] [[DIR]]`: click brackets an optional argument's metavar itself."""
    command = typer.main.get_command(app).commands[name]
    usage = command.get_usage(command.context_class(command, info_name=name))
    assert "[[" not in usage, usage


def test_check_scales_says_each_problems_generator() -> None:
    """check --help said generator: GPU MODE's {0,1,2,3}, and the README the generator's 0-3: the GEMM's
    alone; the dual GEMM's scales are torch.rand in [0, 1) in e4m3, the grouped GEMM's randint(1, 3)."""
    from pathlib import Path

    text = next(text for command, option, text in RECORDS if command == "check" and option.startswith("--scales"))
    text = " ".join(text.split())
    for words in ("GEMM {0,1,2,3}", "GEMV {0,1,2}", "grouped GEMM {1,2}", "dual GEMM rand [0,1)"):
        assert words in text, text
    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text().split())
    assert "the generator's 0–3" not in readme
    assert "0–3 for the GEMM, 0–2 the GEMV, 1–2 the grouped GEMM, `torch.rand` in [0, 1) the dual GEMM" in readme


@pytest.mark.parametrize("command", sorted({name for name, option, _ in RECORDS if option.split()[0] == "--shape"}))
def test_every_shape_option_names_each_problems_form(command: str) -> None:
    """log --help said M,N,K alone, where a GEMV's shape is M,K and a grouped GEMM's one triple per group."""
    text = next(text for name, option, text in RECORDS if name == command and option.split()[0] == "--shape")
    assert "M,N,K" in text and "GEMV M,K" in text and "M1,N1,K1;M2,N2,K2" in text, text


@pytest.mark.parametrize("command", ["check", "bench", "tune"])
def test_timeout_names_the_setting_between_the_flag_and_the_task_file(command: str) -> None:
    """The docs' order is --timeout > NVFP4CTL_TIMEOUT > task.yml; check's and bench's help went from
    the flag to task.yml, as if the setting were not read."""
    (text,) = [text for name, option, text in RECORDS if name == command and option.startswith("--timeout")]
    assert "default: NVFP4CTL_TIMEOUT, else task.yml's" in text, text


def test_bench_timeout_says_a_kill_may_be_of_a_shape_too_slow() -> None:
    """A shape whose calls still return when the limit comes is killed as too slow, not stuck (exit 3 as a
    possible deadlock); the help said every kill counts as a deadlock."""
    (text,) = [text for name, option, text in RECORDS if name == "bench" and option.startswith("--timeout")]
    assert "counts as a deadlock" not in text and "possible deadlock" in text and "too slow" in text, text
