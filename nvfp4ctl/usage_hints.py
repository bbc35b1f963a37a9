"""nvfp4ctl's own line for a command line click rejects where what was meant is plain: a file typed as
an argument to a command that takes its files as options (`check submission.py`, natural after
`build PATH` and `lint PATH`), and a --json given to a command whose JSON is asked for otherwise or
that gives none. Each line spells what to type instead."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nvfp4ctl.env import Env
from nvfp4ctl.printable import escaped_bytes

SUBMISSION_FILE = "submission.py"


@dataclass(frozen=True)
class FileOptions:
    """Which option of a command takes a file of each kind (`by_suffix`: ".py" → "--submission"), for
    a command that takes no file as an argument. Declared where the command is registered.
    `by_setting`: the setting that takes a file of a kind no option takes (log's run log, a .md)."""

    by_suffix: Mapping[str, str]
    by_setting: Mapping[str, str] = field(default_factory=dict)

    @property
    def options(self) -> list[str]:
        return sorted(set(self.by_suffix.values()))

    def option_for(self, suffix: str) -> str | None:
        return self.by_suffix.get(suffix.lower())


KERNEL_SUFFIXES = (".cu", ".cuh")
TASK_SUFFIXES = (".yml", ".yaml")

TARGET_FILES = FileOptions({".py": "--submission", **dict.fromkeys(KERNEL_SUFFIXES, "--kernel"),
                            **dict.fromkeys(TASK_SUFFIXES, "--task")})
# export writes a submission.py: a .py typed after it is where to write it
EXPORT_FILES = FileOptions({".py": "--output", **dict.fromkeys(KERNEL_SUFFIXES, "--kernel"),
                            **dict.fromkeys(TASK_SUFFIXES, "--task")})
KERNEL_FILES = FileOptions({**dict.fromkeys(KERNEL_SUFFIXES, "--kernel"), **dict.fromkeys(TASK_SUFFIXES, "--task")})
DUMP_FILES = FileOptions({**KERNEL_FILES.by_suffix, ".log": "--from-log", ".txt": "--from-log"})
# log reads the run log the setting names; a file typed after it is the target whose runs to show, or that log
LOG_FILES = FileOptions(dict.fromkeys((".py", *KERNEL_SUFFIXES), "--target"), by_setting={".md": Env.MEMORY})


def shell_words(words: Sequence[str]) -> str:
    """`words` spelled for the shell, each as shell_word writes it, so that a line shown can be pasted."""
    return " ".join(shell_word(word) for word in words)


def shell_word(word: str) -> str:
    """`word` as a shell reads it back, pasted: shlex's quoting, or, for a word holding a byte that is not
    UTF-8, bash's and zsh's $'...' with the byte as `\\xff`, where '...' kept the four characters \\xff
    and named another file."""
    if escaped_bytes(word) == word:
        return shlex.quote(word)
    return "$'" + escaped_bytes(word.replace("\\", "\\\\").replace("'", "\\'")) + "'"


def shell_path(path: Path | str) -> str:
    """A path as it can be pasted into a shell after a command's name: quoted where it has spaces or
    quotes, "./" before a name that starts with "-", which the command would read as an option."""
    typed = str(path)
    if typed.startswith("-"):
        typed = os.path.join(".", typed)
    return shell_word(typed)


def invocation(program: str, global_options: Sequence[str], command: str) -> str:
    """How a fixed command line starts: the program, the global options the user typed before the
    command's name (`-q`: a fix that dropped them would run otherwise than asked), the command."""
    return " ".join(filter(None, [program, shell_words(global_options), command]))


@dataclass(frozen=True)
class _TypedLine:
    program: str
    global_options: tuple[str, ...]
    arguments: tuple[str, ...]


_typed_line: list[_TypedLine] = []  # the command line being run, as the parser read it (one at a time)


def note_typed_line(program: str, global_options: Sequence[str], arguments: Sequence[str]) -> None:
    """Keep the command line click resolved (the program's name, its options before the command's name, the
    command's arguments after it), for typed_command_line."""
    _typed_line[:] = [_TypedLine(program, tuple(global_options), tuple(arguments))]


def typed_command_line(command: str, program: str = "nvfp4ctl", without: str | None = None) -> str:
    """The command line that runs, as typed and spelled for the shell (`nvfp4ctl -q check --only 3`), so that a
    fix put in front of it (a setting) runs what was asked; `program command` where none was noted. `without`:
    an option left out with its value (`--only 3`, `--only=3`), where the fix replaces what it asked."""
    if not _typed_line:
        return f"{program} {command}"
    typed = _typed_line[0]
    return " ".join(filter(None, [invocation(typed.program, typed.global_options, command),
                                  shell_words(_without_option(typed.arguments, without))]))


def _without_option(arguments: Sequence[str], option: str | None) -> list[str]:
    """`arguments` less each `option VALUE` and `option=VALUE`, up to a `--` (after which no word is an option)."""
    kept: list[str] = []
    words = iter(arguments)
    for word in words:
        if option is not None and word == option:
            next(words, None)
        elif option is None or not word.startswith(f"{option}="):
            kept.append(word)
        if word == "--":
            kept += words
    return kept


def _kernel_in(folder: Path) -> str:
    """The one .cu directly in `folder`, else a placeholder for it."""
    sources = sorted(folder.glob("*.cu"))
    return str(sources[0]) if len(sources) == 1 else str(folder / "KERNEL.cu")


def _in_place(typed: Sequence[str], replaced: Mapping[int, Sequence[str]],
              before_first: Sequence[str] = ()) -> str | None:
    """`typed`, a command's arguments as typed, spelled for the shell with the word at each index of
    `replaced` replaced by its words and `before_first` before the first of them: the other words the
    user typed stay where they were. A `--` goes where no word after it is an option, as in the fix
    an option follows it (`check -- submission.py`); None where one is (the fix would be a guess)."""
    words: list[str] = []
    for at, word in enumerate(typed):
        if at == min(replaced):
            words += before_first
        if at in replaced:
            words += replaced[at]
        elif word == "--":
            if any(kept.startswith("-") for i, kept in enumerate(typed[at + 1:], start=at + 1) if i not in replaced):
                return None
        else:
            words.append(word)
    return shell_words(words)


def _folder_hint(command: str, files: FileOptions, folder: Path) -> tuple[str, list[str]] | None:
    """A folder typed where a file goes: its submission.py where the command runs one (GPU MODE's
    problem folder), else a kernel source in it: the line's start and the words the folder becomes."""
    submission_option = files.option_for(".py")
    if submission_option == "--submission" and (folder / SUBMISSION_FILE).is_file():
        named = [submission_option, str(folder / SUBMISSION_FILE)]
    elif (kernel_option := files.option_for(".cu")) == "--kernel":  # log's --target is no kernel in a folder
        named = [kernel_option, _kernel_in(folder)]
    else:
        return None
    return f"{command} takes a file as an option, not a folder", named


def file_argument_hint(command: str, files: FileOptions, typed: Sequence[str], at: Sequence[int],
                       given: Sequence[str], program: str, global_options: Sequence[str] = ()) -> str | None:
    """The line for the words at `at` in `typed` (the command's arguments as typed), arguments a command
    that takes its files as options found no place for, spelled with the user's other words in place;
    None where they are not paths to files (`check 3`: a word no suffix or file makes a path), where
    they name no file of a kind the command takes options for, or where the option they would go to
    is given already (`given`: every name of each option typed), so that click's own line stays.
    `global_options`: those typed before the command's name, which the fix keeps there."""
    if not at:
        return None
    invoked = invocation(program, global_options, command)
    words = [typed[i] for i in at]
    paths = [Path(word) for word in words]
    if len(paths) == 1 and paths[0].is_dir():
        if (folder := _folder_hint(command, files, paths[0])) is None:
            return None
        said, named = folder
        fixed = _in_place(typed, {at[0]: named})
        return None if fixed is None else f"{said}: {invoked} {fixed}"
    if len(paths) == 1 and (setting := files.by_setting.get(paths[0].suffix.lower())) is not None:
        fixed = _in_place(typed, {at[0]: []})
        if fixed is None:
            return None
        spelled = " ".join(filter(None, [f"{setting}={shell_word(words[0])}", invoked, fixed]))
        return f"{command} takes the file as a setting: {spelled}"
    replaced: dict[int, list[str]] = {}
    header = None
    for index, word, path in zip(at, words, paths):
        option = files.option_for(path.suffix)
        if option is None:
            if len(words) == 1 and path.is_file():  # a file, but of no kind the command reads
                return (f"{command} takes its files as options ({', '.join(files.options)});"
                        f" see '{program} {command} --help'")
            return None
        if option in given or any(named[0] == option for named in replaced.values()):
            return None
        if path.suffix.lower() == ".cuh":  # a header: --kernel takes the .cu that includes it
            header = word
            word = "KERNEL.cu"
        replaced[index] = [option, word]
    fixed = _in_place(typed, replaced)
    if fixed is None:
        return None
    if header is not None:
        if len(words) > 1:
            return None
        return f"{command} takes the kernel as an option, the .cu that includes {header}: {invoked} {fixed}"
    noun = "the file as an option" if len(words) == 1 else "the files as options"
    return f"{command} takes {noun}: {invoked} {fixed}"


def json_option_hint(command: str, own_json: str | None, recorded: bool, program: str, asked: str = "--json",
                     global_options: Sequence[str] = (), typed: Sequence[str] = ()) -> str:
    """The line for `asked`, how another command is asked for JSON (--json, lint's --format json), given to
    `command`, which has no such option: its JSON as it is asked for (`own_json`), else that it gives none
    and, for a command whose runs are logged, where a script reads how it went (click offered the option
    nearest in spelling: --only for --json, --mma for --format). `global_options`: as file_argument_hint's;
    `typed`: the command's arguments as typed, which the fix keeps around its own JSON option."""
    if own_json is not None:
        fixed = _json_in_place(typed, asked, own_json) or own_json
        return f"{command}'s JSON is {own_json}, not {asked}: {invocation(program, global_options, command)} {fixed}"
    reason = f"{command} has no --json: it gives no JSON"
    if recorded:
        reason += f"; its exit code and its run-log line say how it went ({program} log)"
    return reason


def _json_in_place(typed: Sequence[str], asked: str, own_json: str) -> str | None:
    """`typed` with `asked` (`--json`, `--json=1`; `--format json`, `--format=json`) spelled as `own_json`
    where it first was: the user's other words stay (`lint src --json`: lint src --format json). The
    command's own option typed beside it goes too (`lint --json --format text`), so that the fix asks for
    JSON once. None where neither was typed before a `--`."""
    options = [(spelled.partition(" ")[0], " " in spelled) for spelled in (asked, own_json)]
    replaced: dict[int, list[str]] = {}
    at = 0
    while at < len(typed) and typed[at] != "--":
        taken = max(option_words(typed, at, name, valued) for name, valued in options)
        replaced.update((i, []) for i in range(at, at + taken))
        at += max(taken, 1)
    return _in_place(typed, replaced, own_json.split()) if replaced else None


def option_words(words: Sequence[str], at: int, name: str, takes_value: bool) -> int:
    """How many of `words`, from `at`, the option `name` takes up there: 1 for `--name=value` or a flag,
    2 for `--name value`, 0 where `name` is not there."""
    word = words[at]
    if word.startswith(f"{name}="):
        return 1
    if word != name:
        return 0
    return 2 if takes_value and at + 1 < len(words) else 1


def without_option(words: Sequence[str], name: str, takes_value: bool) -> list[str]:
    """`words` without every use of the option `name` (with its value), up to a `--`."""
    kept: list[str] = []
    at = 0
    while at < len(words):
        if words[at] == "--":
            return [*kept, *words[at:]]
        taken = option_words(words, at, name, takes_value)
        if not taken:
            kept.append(words[at])
        at += max(taken, 1)
    return kept
