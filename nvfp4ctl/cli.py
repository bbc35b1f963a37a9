"""Typer entry point: parses, calls one command module, turns errors into one line and an exit code."""

from __future__ import annotations

import ast
import contextlib
import errno
import functools
import inspect
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from typer.core import TyperCommand, TyperGroup

from nvfp4ctl import workspace
from nvfp4ctl.commands import bench, build, check, dump, export, init, lint, log, tune
from nvfp4ctl.console import NORMAL, QUIET, VERBOSE, get_console, quiet_closed_stream, set_verbosity
from nvfp4ctl.env import Env, env_flag, env_str
from nvfp4ctl.errors import ExitCode, NvfpError, UsageError, error_line, os_reason
from nvfp4ctl.interrupts import stop_signals_as_ctrl_c
from nvfp4ctl.options import (TYPED_OPTIONS_KEY, TypedOptions, argument_positions, option_arities, option_token,
                              typed_options, typed_values)
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.usage_hints import (DUMP_FILES, EXPORT_FILES, KERNEL_FILES, LOG_FILES, TARGET_FILES, FileOptions,
                                  file_argument_hint, invocation, json_option_hint, note_typed_line, shell_words,
                                  without_option)
from nvfp4ctl.words import and_listed

_RECORDED: set[str] = set()  # the commands whose runs, parse errors included, go to the run log
_ON_DEVICE: set[str] = set()  # the commands that run their target on the device NVFP4CTL_DEVICE picks


def _record(outcome: Outcome, command: str) -> Outcome:
    """Append the run's line; returns the outcome to exit with (interrupted, when Ctrl-C or SIGTERM came
    while the line was written: the append writes it in one step, or takes back a part written, so it is
    whole or absent)."""
    memory = None
    written = False
    try:
        from nvfp4ctl import runlog  # here: `--help` never needs it
        from nvfp4ctl.atomic_file import made_read_only

        memory = workspace.memory_path()
        if runlog.is_null_device(memory):  # no run log kept: no line, and none of the entry's git and GPU lookups
            return outcome
        if made_read_only(memory):  # logging switched off: not even the entry's git and GPU lookups
            raise runlog.ReadOnlyRunLog(f"{memory} is read-only")
        if env_str(Env.MEMORY):  # the folders of a path the user set are theirs to make
            runlog.refuse_a_missing_folder(memory)
        with stop_signals_as_ctrl_c():
            runlog.append(runlog.make_entry(outcome, sys.argv[1:], workspace.user_folder(), memory,
                                            runs_on_device=command in _ON_DEVICE), memory)
            written = True
    except KeyboardInterrupt:
        if written:  # it came after the line was in: the run ended as the line says
            return outcome
        get_console().warn("run log not written: interrupted")
        return _stopped("interrupted", ExitCode.INTERRUPTED)
    except TimeoutError as error:  # another run held the lock too long: no setting of the user's is at fault
        get_console().warn(f"run log not written to {memory}: {error}")
    except OSError as error:  # a folder that cannot be made, a read-only one, a folder named as the file
        named, hint = (f" ({Env.MEMORY})", "") if env_str(Env.MEMORY) else ("", f"; set {Env.MEMORY}")
        if isinstance(error, runlog.NoLockFolder):  # another run log's path takes its lock in the same places
            hint = f"; point {Env.CACHE} at a folder you can write"
        get_console().warn(f"run log not written to {memory}{named}: {os_reason(error, memory)}{hint}")
    except Exception as error:  # the log must never turn a result into a failure
        get_console().warn(f"run log not written: {error}")
    return outcome


# click's UsageError, whichever click typer uses (newer typers carry their own copy of it)
_ClickUsageError: type[Exception] = typer.BadParameter.__bases__[0]
_COMMAND_KEY = "nvfp4ctl.command"
_ARGUMENTS_KEY = "nvfp4ctl.arguments"  # the command's arguments as typed, after its name
_LINE_KEY = "nvfp4ctl.line"  # the whole command line as typed, past the program's name
_GLOBAL_OPTIONS_KEY = "nvfp4ctl.global_options"  # the program's own options, as typed before the command's name


def _refuse_in_one_line(message: str) -> NoReturn:
    """A command line click rejects (a missing option or argument, an unknown option or command, an
    option with no value) is one line and exit 2, as every other usage error: not click's usage block,
    nor, on older typers, its boxed panel."""
    with contextlib.suppress(OSError):  # stderr gone: the exit code still says it
        get_console().error(message)
    raise typer.Exit(int(ExitCode.USAGE)) from None


def _one_line_message(error: Exception, command_path: str) -> str:
    """click's message, ending in where to look, as click's usage block did: the help of the command
    the error names, else `command_path`'s (an option with no value carries no context of its own)."""
    from nvfp4ctl.options import OptionValueError

    message = error.format_message()  # type: ignore[attr-defined]
    if isinstance(error, OptionValueError):  # those name the option and what is wrong with its value
        return message
    context = getattr(error, "ctx", None)
    path = context.command_path if context is not None else command_path
    return f"{message.rstrip('.')}; see '{path} --help'"


def _shows_help(error: Exception) -> bool:
    """click 8.2's way of showing the help of a bare `nvfp4ctl` (no_args_is_help), which must stay."""
    return type(error).__name__ == "NoArgsIsHelpError"


def _record_rejection(command: object, error: Exception, message: str | None = None) -> None:
    """The run log's line of a command line click rejects, for a command whose runs are logged: placed
    before the command's name or after it (`nvfp4ctl -q --nosuch bench`, `nvfp4ctl bench -q --nosuch`),
    the mistake is the same run's. `message`: nvfp4ctl's own wording of the mistake, where it has one."""
    if command in _RECORDED:
        workspace.reset()
        said = message if message is not None else error.format_message()
        _record(Outcome(result=f"error: {said.splitlines()[0]}", exit_code=ExitCode.USAGE), str(command))


def _give_json_failure(command: object, typed: TypedOptions, message: str,
                       exit_code: ExitCode = ExitCode.USAGE) -> None:
    """stdout's JSON document of a command line click rejects (or a Ctrl-C cuts short while it is read), where
    `command` was asked for JSON in its options as click reads them (`bench --only --json` asks for none:
    --json is --only's value)."""
    json_mode = JSON_MODES.get(command) if isinstance(command, str) else None
    if json_mode is not None and json_mode.typed(typed):
        _json_failure(json_mode, {json_mode.parameter: json_mode.value}, message, exit_code)


def _arities_before_the_name(group: TyperGroup, ctx: typer.Context) -> dict[str, int]:
    """How many values each option name takes before a command's name: the group's own (flags), then
    each command's option whose name takes as many values in every command that has it (the user put
    it on the wrong side of the name); a name the commands take differently is left out, as unknown."""
    by_command: dict[str, set[int]] = {}
    for command in group.commands.values():
        for name, arity in option_arities(command.params).items():
            by_command.setdefault(name, set()).add(arity)
    arities = {name: next(iter(found)) for name, found in by_command.items() if len(found) == 1}
    arities.update(option_arities(group.get_params(ctx)))
    return arities


def _values_taken(token: str, arities: dict[str, int]) -> int | None:
    """How many of the arguments after `token`, an option or a run of short ones (-qn 5), it takes as
    click's parser would with `arities`; None where an option it does not know may take the next one."""
    options, taken = option_token(token, arities)
    unknown = next((at for at, (name, _) in enumerate(options) if name not in arities), None)
    if unknown is None:
        return taken
    # click stops at a name it does not know: only one with nothing typed after it may take the next word
    typed_after = unknown < len(options) - 1 or (token.startswith("--") and "=" in token)
    return 0 if typed_after else None


def _global_options_in(words: Sequence[str], global_arities: dict[str, int]) -> list[str]:
    """The words of `words`, typed before a command's name, that are the program's own options (-q,
    --verbose, -qv; `global_arities`: its flags): those a fixed command line keeps before the name,
    not an option of a command typed there, a value or a `--`."""
    return [word for word in words if word.startswith("-") and "=" not in word
            and all(name in global_arities for name, _ in option_token(word, global_arities)[0])]


def _misplaced_json_option(error: Exception, args: list[str], named_at: int | None, program: str,
                           global_arities: dict[str, int],
                           refusal: Callable[[str, str, str], str | None]) -> tuple[str, tuple[str, str | None]] | None:
    """Where the option click found no such global option is how a command is asked for JSON (`--json`,
    `--format json`), typed before the command's name (at `named_at` in `args`): the line saying whose
    option it is, spelled where it goes (`nvfp4ctl bench --json`, with the program's own options typed
    before the name, -q, kept there and the command's arguments after it), and the option as typed, (name,
    value) as typed_options reads it. A value the command refuses (`refusal(command, option, value)`:
    why, else None) is said to be wrong instead: a fix that fails on the same word is none. A command that does not take it gets the line it gives after its
    name (`check --json`): no other command's fix. None for any other error, and for an option that
    asks no JSON of a command that does not take it (`--format text check`), which keeps click's line."""
    name = getattr(error, "option_name", None)
    takers = [taker for taker, mode in JSON_MODES.items() if mode.option == name]
    if type(error).__name__ != "NoSuchOption" or not takers:
        return None
    before_the_name = args[:named_at] if named_at is not None else args
    at = next((i for i, token in enumerate(before_the_name) if token.partition("=")[0] == name), None)
    if at is None:
        return None
    arities = _option_values(takers)
    # its values stop at the command's name: in `--format lint`, lint is the command, --format has none
    typed = before_the_name[at: at + 1 + (_values_taken(args[at], arities) or 0)]
    moved = typed_options(typed, arities)[0]
    kept = _global_options_in([*before_the_name[:at], *before_the_name[at + len(typed):]], global_arities)
    mode = JSON_MODES[takers[0]]
    command = args[named_at] if named_at is not None else None
    if command is not None and command not in takers:
        if mode.value is not True and moved[1] != mode.value:
            return None
        own = JSON_MODES.get(command)
        return json_option_hint(command, None if own is None else own.spelled, command in _RECORDED, program,
                                mode.spelled, kept), moved
    where = "the command" if command in takers else (
        f"the command {takers[0]}, after its name" if len(takers) == 1
        else f"the commands {and_listed(takers)}, after the command's name")
    if mode.value is not True and moved[1] is None:  # no value: the one that asks for JSON is spelled
        return (f"{name} is an option of {where}, with a value:"
                f" {invocation(program, kept, command or takers[0])} {mode.spelled} gives JSON"), moved
    if mode.value is not True and (why := refusal(command or takers[0], name, str(moved[1]))) is not None:
        return f"{name} is an option of {where}, and {why}", moved
    # as it goes after the name: a flag holds no value there (`--json=1` is refused), a value is a word;
    # right after the name, where it is an option whatever the command's arguments hold (a `--`)
    spelled = [name] if mode.value is True else [name, str(moved[1])]
    # the same option typed after the name too (`--json bench --json`) goes: the fix asks for JSON once
    after = without_option(args[named_at + 1:], name, mode.value is not True) if named_at is not None else []
    fixed = shell_words([*spelled, *after])
    return f"{name} is an option of {where}: {invocation(program, kept, command or takers[0])} {fixed}", moved


def _command_position(args: Sequence[str], arities: dict[str, int], is_command: Callable[[str], bool]) -> int | None:
    """The index of the first argument past the global options and their values, as click's parser
    reads them had a bad one not stopped it (`arities`: _arities_before_the_name): `--quiet=x` holds its
    own value; a command's option typed before the name takes the values it takes there (`--task check
    bench`: check is the task file); a word after an option no command has is its value unless it names
    a command. Where the options run out, a value that names a command is the command's name, the
    option's value missing (`--format lint`); else None. After `--` the next word is the name, as click
    reads it (`nvfp4ctl -- bench` runs bench)."""
    at = 0
    named_value = None
    while at < len(args):
        token = args[at]
        if token == "--":
            return at + 1 if at + 1 < len(args) else None
        if token == "-" or not token.startswith("-"):
            return at
        at += 1
        taken = _values_taken(token, arities)
        if taken is None:
            maybe_value = at < len(args) and not args[at].startswith("-")
            at += 1 if maybe_value and not is_command(args[at]) else 0
        else:
            values = range(at, min(at + taken, len(args)))
            named_value = next((i for i in reversed(values) if is_command(args[i])), named_value)
            at += taken
    return named_value


def command_position(args: Sequence[str]) -> int | None:
    """Where the command's name is in `args`, a command line past the program's name, as the CLI reads it
    (_LoggedGroup._command_position): for the run log, whose lines keep rejected command lines too
    (`nvfp4ctl --task log bench`: log is --task's value, bench the command)."""
    arities, names = _command_line_reading()
    return _command_position(args, arities, names.__contains__)


def _command_options(command: str, args: Sequence[str]) -> TypedOptions:
    """`command`'s options in `args`, the words after its name, as click reads them; none for a name it lacks."""
    group = typer.main.get_command(app)
    taker = group.commands.get(command) if isinstance(group, TyperGroup) else None
    return typed_options(args, option_arities(taker.params)) if taker is not None else ()


@functools.cache
def _command_line_reading() -> tuple[dict[str, int], frozenset[str]]:
    """The option arities before a command's name and the commands' names, of the app as registered."""
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    return _arities_before_the_name(group, typer.Context(group, info_name=app.info.name)), frozenset(group.commands)


def _option_values(commands: list[str]) -> dict[str, int]:
    """Each JSON option's arity in `commands` (JsonMode.value True: a flag; else it takes the value)."""
    return {JSON_MODES[name].option: 0 if JSON_MODES[name].value is True else 1 for name in commands}


def _unplaced_arguments(error: Exception, args: Sequence[str]) -> list[str]:
    """The arguments of a command with no argument parameters that click found no place for (its "Got
    unexpected extra argument" error, a plain UsageError): its parser's leftovers, read again from the
    command's arguments as typed; [] for any other error."""
    context = getattr(error, "ctx", None)
    if type(error) is not _ClickUsageError or context is None:
        return []
    command = context.command
    if any(param.param_type_name == "argument" for param in command.params):
        return []
    try:
        return list(command.make_parser(context).parse_args(args=list(args))[1])
    except _ClickUsageError:  # it parsed once already; a parse failing now says nothing of the arguments
        return []


def _json_asked_as(error: Exception, command: str, ctx: typer.Context) -> str | None:
    """How the option `command` has not asks for JSON, where it is how another command is asked for it:
    "--json", or "--format json" (lint's way, read as typed: `bench --format json`, `--format=json`);
    None for any other option, and for --format with another value or none."""
    name = getattr(error, "option_name", None)
    modes = [mode for mode in JSON_MODES.values() if mode.option == name]
    if type(error).__name__ != "NoSuchOption" or not modes:
        return None
    if modes[0].value is True:
        return modes[0].spelled
    taker = ctx.command.get_command(ctx, command) if isinstance(ctx.command, TyperGroup) else None
    arities = {**(option_arities(taker.params) if taker is not None else {}), name: 1}
    given = typed_values([name], typed_options(ctx.meta.get(_ARGUMENTS_KEY, ()), arities))
    # the first use: click stopped at it
    if given and given[0] == modes[0].value:
        return modes[0].spelled
    return None


def _hint(error: Exception, command: object, ctx: typer.Context) -> str | None:
    """nvfp4ctl's line for a mistake in a command's arguments whose fix is plain (usage_hints): a file
    typed as an argument (`check submission.py`), a --json the command has not. None for any other."""
    if not isinstance(command, str):
        return None
    if (asked := _json_asked_as(error, command, ctx)) is not None:
        own = JSON_MODES.get(command)
        return json_option_hint(command, None if own is None else own.spelled, command in _RECORDED, ctx.command_path,
                                asked, ctx.meta.get(_GLOBAL_OPTIONS_KEY, ()), ctx.meta.get(_ARGUMENTS_KEY, ()))
    files = FILE_OPTIONS.get(command)
    if files is None:
        return None
    typed = ctx.meta.get(_ARGUMENTS_KEY, ())
    words = _unplaced_arguments(error, typed)
    taker = ctx.command.get_command(ctx, command) if isinstance(ctx.command, TyperGroup) else None
    params = taker.params if taker is not None else ()
    at = argument_positions(typed, option_arities(params))
    if [typed[i] for i in at] != words:  # read otherwise than click's parser: no place to put the fix
        return None
    given = _given_option_names(params, ctx.meta.get(TYPED_OPTIONS_KEY, ()))
    return file_argument_hint(command, files, typed, at, given, ctx.command_path, ctx.meta.get(_GLOBAL_OPTIONS_KEY, ()))


def _given_option_names(params: Sequence[object], typed: TypedOptions) -> list[str]:
    """Every name of each option in `typed`, as the command's `params` declare them: `-o` typed is
    `--output` given too, which FileOptions names."""
    names = {name for name, _ in typed}
    given = set(names)
    for param in params:
        spellings = [*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())]
        if names.intersection(spellings):
            given.update(spellings)
    return sorted(given)


class _LoggedGroup(TyperGroup):
    """Click rejects a bad option value before our wrapper runs; the run log still gets its line. The
    command's options as typed are kept for that message, which names the option as it was typed."""

    def make_context(self, info_name: str | None, args: list[str], parent: typer.Context | None = None,
                     **extra: object) -> typer.Context:
        typed = list(args)  # the parse takes its words off `args`
        try:
            return super().make_context(info_name, args, parent, **extra)
        except KeyboardInterrupt:
            # Ctrl-C while the program's own options are read, the first moments of every run: before
            # invoke's handling, typer ended it with 130 and no word, and the run log had no line
            _interrupted_reading(typed)
            raise typer.Exit(int(ExitCode.INTERRUPTED)) from None

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        get_console().json_written = False  # each command line gives its own document, app() run twice too
        typed = list(args)  # click's parser takes the arguments it reads off `args` itself
        ctx.meta[_LINE_KEY] = tuple(typed)
        try:
            return super().parse_args(ctx, args)
        except _ClickUsageError as error:  # an option before the command's name (`nvfp4ctl --nosuch check`)
            if _shows_help(error):
                raise
            position = self._command_position(ctx, typed)
            named = self._command_named_in(ctx, typed, position)
            misplaced = _misplaced_json_option(error, typed, position if named else None, ctx.command_path,
                                               option_arities(self.get_params(ctx)),
                                               functools.partial(self._refusal, ctx))
            if misplaced is not None:  # `nvfp4ctl --json bench`: bench's own option, typed before its name
                reason, moved = misplaced
                _record_rejection(named[0] if named else None, error, reason)
                if named is not None:  # it asks for the JSON it would ask for after the name
                    _give_json_failure(named[0], (moved, *named[1]), reason)
                _refuse_in_one_line(reason)
            message = _one_line_message(error, ctx.command_path)
            if named is not None:
                _record_rejection(named[0], error)
                _give_json_failure(*named, message)
            _refuse_in_one_line(message)

    def _refusal(self, ctx: typer.Context, command: str, option: str, value: str) -> str | None:
        """Why `command`'s `option` refuses `value` (its parser's words: "'xml' is not one of text, json");
        None where it takes it."""
        taker = self.get_command(ctx, command)
        param = next((param for param in taker.params if option in param.opts), None) if taker else None
        if param is None:
            return None
        try:
            param.process_value(ctx, value)
        except _ClickUsageError as refused:
            return str(getattr(refused, "message", refused)).rstrip(".")
        return None

    def _command_named_in(self, ctx: typer.Context, args: list[str],
                          position: int | None) -> tuple[str, TypedOptions] | None:
        """The command a rejected global option came before (`position`: _command_position's), with its
        options as click reads them; None where no command's name is where click would have looked for
        one (`nvfp4ctl --nosuch x y bench`: x may be --nosuch's value, but y is where the name goes, and
        bench is y's argument)."""
        command = self.get_command(ctx, args[position]) if position is not None else None
        if command is None:
            return None
        return args[position], typed_options(args[position + 1:], option_arities(command.params))

    def _command_position(self, ctx: typer.Context, args: list[str]) -> int | None:
        return _command_position(args, _arities_before_the_name(self, ctx),
                                 lambda word: self.get_command(ctx, word) is not None)

    def resolve_command(self, ctx: typer.Context, args: list[str]) -> tuple:
        resolved = super().resolve_command(ctx, args)
        ctx.meta[_COMMAND_KEY] = resolved[0]  # a parse error may come with no context of its command
        ctx.meta[_ARGUMENTS_KEY] = tuple(args[1:])
        line = ctx.meta.get(_LINE_KEY, ())
        ctx.meta[_GLOBAL_OPTIONS_KEY] = tuple(_global_options_in(line[:max(len(line) - len(args), 0)],
                                                                 option_arities(self.get_params(ctx))))
        note_typed_line(ctx.command_path, ctx.meta[_GLOBAL_OPTIONS_KEY], args[1:])
        if resolved[1] is not None:  # a bad value's message names the option as typed
            ctx.meta[TYPED_OPTIONS_KEY] = typed_options(args[1:], option_arities(resolved[1].params))
        return resolved

    def invoke(self, ctx: typer.Context) -> object:
        try:
            return super().invoke(ctx)
        except _ClickUsageError as error:
            command = ctx.meta.get(_COMMAND_KEY)
            hint = None if _shows_help(error) else _hint(error, command, ctx)
            _record_rejection(command, error, hint)
            if _shows_help(error):
                raise
            message = hint or _one_line_message(error, f"{ctx.command_path} {command}" if command else ctx.command_path)
            _give_json_failure(command, ctx.meta.get(TYPED_OPTIONS_KEY, ()), message)
            _refuse_in_one_line(message)
        except KeyboardInterrupt:
            # Ctrl-C outside a command's own handling (a second Ctrl-C after its run-log line): typer would end
            # it as "Aborted!" with exit 1 (older typers) or with 130 and no word; it ends as every interrupted
            # command does (make_context here and _LoggedCommand's: the options being read, logged there)
            _say_interrupted()
            with contextlib.suppress(KeyboardInterrupt):  # not after the command's own document (json_written)
                _give_json_failure(ctx.meta.get(_COMMAND_KEY), ctx.meta.get(TYPED_OPTIONS_KEY, ()), "interrupted",
                                   ExitCode.INTERRUPTED)
            raise typer.Exit(int(ExitCode.INTERRUPTED)) from None


class _LoggedCommand(TyperCommand):
    """A command whose own options are read (`check --only ...`) after the program's: a Ctrl-C then ends as one
    while the program's options are read (_LoggedGroup.make_context), with its run-log line."""

    def make_context(self, info_name: str | None, args: list[str], parent: typer.Context | None = None,
                     **extra: object) -> typer.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except KeyboardInterrupt:
            _say_interrupted()
            typed = parent.meta.get(TYPED_OPTIONS_KEY, ()) if parent is not None else ()
            _end_interrupted_reading(self.name, typed)
            raise typer.Exit(int(ExitCode.INTERRUPTED)) from None


app = typer.Typer(
    name="nvfp4ctl",
    cls=_LoggedGroup,
    help="Build, check, benchmark and lint NVFP4 block-scaled kernels (GPU MODE nvfp4_gemm, nvfp4_dual_gemm, nvfp4_group_gemm, nvfp4_gemv).",
    no_args_is_help=True,
    add_completion=False,
    # Plain (click) help: Typer's rich help panels import rich.markdown and markdown-it, which made
    # `nvfp4ctl --help` 2.5x a bare `import typer`; plain help is 1.2x (2-core machine, 2026-11-26).
    rich_markup_mode=None,
    context_settings={"max_content_width": 100},
    pretty_exceptions_show_locals=env_flag(Env.DEBUG),
)


QuietOption = Annotated[bool, typer.Option("-q", "--quiet", help="Only results and errors.")]
VerboseOption = Annotated[bool, typer.Option("-v", "--verbose", help="Show details (full compiler output, child logs).")]


def _show_version(asked: bool) -> None:
    if asked:
        from nvfp4ctl.tool_version import tool_version

        # as the run log records it: the commit of a checkout or of the wheel's build beside the version
        get_console().info(f"nvfp4ctl {tool_version()}", result=True)  # a closed stdout is quiet here too
        raise typer.Exit()


VersionOption = Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                             help="Show nvfp4ctl's version and exit.")]


# -q/-v given before the command's name, for _run to weigh against those given after it
_global_flags: dict[str, bool] = {"quiet": False, "verbose": False}


@app.callback()
def _global_options(quiet: QuietOption = False, verbose: VerboseOption = False, version: VersionOption = False) -> None:
    _global_flags.update(quiet=quiet, verbose=verbose)
    set_verbosity(QUIET if quiet else VERBOSE if verbose else NORMAL)


def _apply_verbosity(added: list[str], kwargs: dict[str, object]) -> None:
    """-q/-v from before and after the command's name (a command's own -v stays its argument); both
    at once is a usage error: which one wins would be a guess."""
    given = {name for name in added if kwargs.pop(name, False)}
    given |= {name for name, on in _global_flags.items() if on}
    given |= {name for name in ("quiet", "verbose") if name not in added and kwargs.get(name) is True}
    if given == {"quiet", "verbose"}:
        raise UsageError("-q and -v together: pick one")
    if given:
        set_verbosity(QUIET if "quiet" in given else VERBOSE)


def _with_verbosity_options(command: Callable[..., Outcome], wrapper: Callable[..., None]) -> list[str]:
    """Give `wrapper` the command's parameters plus -q/-v where the command has none, so
    `nvfp4ctl lint -v` works like `nvfp4ctl -v lint` (as in git, ruff, pytest). Returns the added names."""
    # Not typing.get_type_hints: before Python 3.11 it wraps the hint of every parameter defaulting to
    # None in Optional[...], which hides the Annotated[..., typer.Argument/Option] inside from typer
    # (`lint PATH` then read PATH as an unexpected extra argument).
    hints = inspect.get_annotations(command, eval_str=True)
    parameters = [p.replace(annotation=hints.get(p.name, p.annotation))
                  for p in inspect.signature(command).parameters.values()]
    added = []
    for name, annotation in (("quiet", QuietOption), ("verbose", VerboseOption)):
        if name not in hints:
            parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=False,
                                                annotation=annotation))
            added.append(name)
    wrapper.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
    return added


def _is_within(path: object, folder: Path) -> bool:
    """Whether `path` is `folder` or lies inside it, both taken from the current folder as the OS does (a
    relative NVFP4CTL_CACHE against an error's absolute file name, or the other way round)."""
    hit = Path(os.path.abspath(str(path)))
    return hit.is_relative_to(os.path.abspath(folder))


def _full_folder_error(error: OSError) -> NvfpError | None:
    """A full disk under nvfp4ctl's cache folder, or the temporary folder where nvcc keeps its intermediate
    files (a build's compiler saying "No space left on device" too: compile.raise_if_out_of_space), is the
    user's to free, not the kernel's compile error; None for any other OSError."""
    import tempfile

    from nvfp4ctl.project import cache_root

    if error.errno != errno.ENOSPC or not error.filename:
        return None
    root = cache_root()
    if _is_within(error.filename, root):
        setting = f" ({Env.CACHE})" if env_str(Env.CACHE) else ""
        return UsageError(f"the cache folder {root}{setting} is full ({os.strerror(errno.ENOSPC)}):"
                          f" free space or point {Env.CACHE} elsewhere")
    temporary = Path(os.path.abspath(tempfile.gettempdir()))
    if _is_within(error.filename, temporary):
        return UsageError(f"the temporary folder {temporary} is full ({os.strerror(errno.ENOSPC)}):"
                          " free space or point TMPDIR elsewhere")
    return None


def _cache_folder_error(error: OSError) -> NvfpError | None:
    """A cache folder that cannot be made or written (NVFP4CTL_CACHE naming a file, a read-only
    place) is the user's setting, not a crash; None for any other OSError, which goes on as it came.
    Making it can fail on a folder above it too: a home that does not exist (HOME=/nonexistent), `/`
    for an empty HOME, a read-only folder or a dangling link above NVFP4CTL_CACHE."""
    from nvfp4ctl.project import cache_root

    root = cache_root()
    if not error.filename:
        return None
    usable = root.is_dir() and os.access(root, os.W_OK | os.X_OK)
    above = not usable and _is_within(root, error.filename)  # a folder that would hold it, as it was made
    if not above and not _is_within(error.filename, root):
        return None
    hit = Path(os.path.abspath(str(error.filename)))
    setting = f" ({Env.CACHE})" if env_str(Env.CACHE) else ""
    if usable:
        if isinstance(error, (FileExistsError, NotADirectoryError)):  # a file where the cache keeps a folder
            return UsageError(f"cannot use the cache folder {root}{setting}: {hit}: a file is where nvfp4ctl keeps a"
                              f" folder; remove it, or point {Env.CACHE} at another folder")
        if not isinstance(error, PermissionError):
            return None  # the folder is fine: a full disk or a lost build file is a real failure, shown as one
        # a part of a shared cache that another user made and the group may not write (locks/, tmp/, a
        # lock file, an entry): the path that refused, and the fix for it
        return UsageError(f"cannot use the cache folder {root}{setting}: {hit}: {error.strerror or error};"
                          f" ask its owner to make it group-writable (chmod -R g+w), or point {Env.CACHE}"
                          " at a folder of your own")
    return UsageError(f"cannot use the cache folder {root}{setting}: {_dangling_link(hit) or os_reason(error, root)};"
                      f" point {Env.CACHE} at a writable folder")


def _dangling_link(hit: Path) -> str | None:
    """What a link to a missing folder at or above the path that failed is, said as that: making a folder
    through it fails with "File exists" (the link is there, no folder behind it), which names no fault."""
    for path in (hit, *hit.parents):
        if path.is_symlink() and not path.exists():
            return f"{path} is a link to a missing folder ({os.readlink(path)})"
    return None


def _named_paths(command: Callable[..., Outcome], kwargs: dict[str, object]) -> list[Path]:
    """The paths the user gave the command, absolute; not those left at their default (a default of
    "." would make every file under the current folder one of them)."""
    defaults = {name: parameter.default for name, parameter in inspect.signature(command).parameters.items()}
    named = []
    for name, value in kwargs.items():
        if name in defaults and value == defaults[name]:
            continue
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, Path):
                named.append(Path(os.path.abspath(item)))
    return named


def _failed_path(error: Exception) -> tuple[str, str] | None:
    """(path, reason) of an error on a path: an OSError with its file name, or pathlib's link loop,
    which resolve() raises as a RuntimeError before Python 3.13."""
    if isinstance(error, OSError) and error.filename:
        return str(error.filename), error.strerror or str(error)
    prefix = "Symlink loop from "
    if isinstance(error, RuntimeError) and str(error).startswith(prefix):
        try:
            return str(ast.literal_eval(str(error)[len(prefix):])), os.strerror(errno.ELOOP)
        except (ValueError, SyntaxError):
            return None
    return None


def _named_path_error(error: Exception, named: list[Path]) -> NvfpError | None:
    """An error on a path the user named, or inside a folder they named (a name too long for the
    file system, a link loop, no permission), is their input to fix: one line and exit 2. None for
    any other path, whose error goes on as it came."""
    failed = _failed_path(error)
    if failed is None:
        return None
    path, reason = failed
    hit = Path(os.path.abspath(path))
    if any(hit == given or given in hit.parents for given in named):
        return UsageError(f"{path}: {reason}")
    return None


def _as_one_line(caught: Exception, command: Callable[..., Outcome], kwargs: dict[str, object]) -> NvfpError | None:
    """The error as one line and its exit code; None for a real crash, which stays a traceback."""
    if isinstance(caught, NvfpError):
        return caught
    if isinstance(caught, OSError) and (error := _full_folder_error(caught) or _cache_folder_error(caught)):
        return error  # before the named paths: its line names the setting to change
    return _named_path_error(caught, _named_paths(command, kwargs))


def _stopped(result: str, exit_code: ExitCode) -> Outcome:
    """The outcome of a command stopped by an error or Ctrl-C, with its target (and for check and bench
    its problem) when it had one."""
    noted = workspace.noted_target()
    return Outcome(result=result, exit_code=exit_code, target=noted[0] if noted else None,
                   target_source=noted[1] if noted else None, problem=workspace.noted_problem(),
                   target_digest=workspace.noted_target_digest() if noted else None)


def _interrupted_reading(args: Sequence[str]) -> None:
    """Ctrl-C while the command line `args` was read, before any command's own handling: said as for every
    interrupted command, with the JSON document a command asked for JSON gives whenever it stops before its
    run, and logged where the command's name is there to tell that its runs are."""
    _say_interrupted()
    with contextlib.suppress(KeyboardInterrupt):  # yet another Ctrl-C: the exit code still says it
        at = command_position(args)
        command = args[at] if at is not None else None
        typed = _command_options(command, args[at + 1:]) if at is not None and command in JSON_MODES else ()
        _end_interrupted_reading(command, typed)


def _end_interrupted_reading(command: str | None, typed: TypedOptions) -> None:
    """What a Ctrl-C while `command`'s line was read leaves once "interrupted" is said: the JSON document,
    where its options as typed (`typed`) ask for one, and its run-log line, where its runs are logged."""
    with contextlib.suppress(KeyboardInterrupt):  # yet another Ctrl-C: the exit code still says it
        _give_json_failure(command, typed, "interrupted", ExitCode.INTERRUPTED)
        if command in _RECORDED:
            workspace.reset()
            _record(_stopped("interrupted", ExitCode.INTERRUPTED), command)


def _say_interrupted() -> None:
    # yet another Ctrl-C, or a terminal that is gone (SIGHUP; writing to it fails): the exit code and
    # the run log still say it
    with contextlib.suppress(KeyboardInterrupt, OSError):
        get_console().error("interrupted")


def _run(command: Callable[..., Outcome], added: list[str], args: tuple, kwargs: dict[str, object],
         json_mode: JsonMode | None = None) -> Outcome:
    """The command's outcome; its errors and Ctrl-C turned into one line and the outcome that says so.
    Its set-up is inside the handling too, so a Ctrl-C at any point of the run is "interrupted"."""
    try:
        # each run says a $CUTLASS_PATH passed over once (tests run many); a run that never loaded the
        # lookup has said nothing, and the commands that look nothing up need not import it
        if (toolchain := sys.modules.get("nvfp4ctl.build.toolchain")) is not None:
            toolchain.forget_said_lookups()
        _apply_verbosity(added, kwargs)
        with stop_signals_as_ctrl_c():  # `kill PID`, a lost terminal: child stopped, run logged, as for Ctrl-C
            return command(*args, **kwargs)
    except (NvfpError, OSError, RuntimeError) as caught:
        error = _as_one_line(caught, command, kwargs)
        if error is None:
            raise
        get_console().error(str(error))
        _json_failure(json_mode, kwargs, str(error), error.exit_code)
        return _stopped(f"error: {error.logged or (str(error).splitlines()[0] if str(error) else type(error).__name__)}",
                        error.exit_code)
    except KeyboardInterrupt:
        _say_interrupted()
        _json_failure(json_mode, kwargs, "interrupted", ExitCode.INTERRUPTED)
        return _stopped("interrupted", ExitCode.INTERRUPTED)


def _refuse_a_run_log_that_is_not_one(json_mode: JsonMode | None, kwargs: dict[str, object]) -> None:
    """NVFP4CTL_MEMORY naming a file the run log must not be appended to (a submission.py, a task.yml):
    one line and exit 2 before the command runs, rather than a result whose log line cannot be kept,
    and for a command asked for JSON its failure document, as for any other error. Only the setting
    can name such a file: nvfp4ctl's own choice is always a MEMORY.md."""
    setting = env_str(Env.MEMORY)
    if not setting:
        return
    from nvfp4ctl.runlog import not_a_run_log  # here: `--help` never needs it

    if (why := not_a_run_log(Path(setting))) is not None:
        message = (f"{Env.MEMORY}={setting}: {why}; nothing was run: point {Env.MEMORY} at a"
                   " Markdown file (MEMORY.md, say), or unset it")
        get_console().error(message)
        _json_failure(json_mode, kwargs, message, ExitCode.USAGE)
        raise typer.Exit(int(ExitCode.USAGE))


@dataclass(frozen=True)
class JsonMode:
    """How a command is asked for JSON on stdout: its parameter `parameter` (as the command function
    names it) holding `value` (`--json`: True; `--format json`: "json"). Declared where the command is
    registered, which refuses a parameter the command does not have: renaming it fails at import, not
    by a JSON failure document quietly gone."""

    parameter: str
    option: str  # as typed: for a command line click rejects, which never reaches the parameter
    value: object = True

    @property
    def spelled(self) -> str:
        """The option as typed to ask for JSON: "--json", "--format json"."""
        return self.option + ("" if self.value is True else f" {self.value}")

    def asked(self, kwargs: dict[str, object]) -> bool:
        given = kwargs.get(self.parameter)
        return getattr(given, "value", given) == self.value

    def typed(self, typed: TypedOptions) -> bool:
        """Whether the options as click read them (options.typed_options) ask for JSON: the last use of
        the option holds the value."""
        given = typed_values([self.option], typed)
        return bool(given) and (self.value is True or given[-1] == self.value)


JSON_MODES: dict[str, JsonMode] = {}  # command name → how it is asked for JSON
FILE_OPTIONS: dict[str, FileOptions] = {}  # command name → the options a file typed as an argument goes to


# The failure document's "version", first as in every success document (bench's, dump's, lint's, tune's),
# so that a script checking it first reads an error too; raised when one of its keys changes meaning or goes away
FAILURE_JSON_VERSION = 1


def _json_failure(json_mode: JsonMode | None, kwargs: dict[str, object], message: str, exit_code: ExitCode) -> None:
    """A command asked for JSON that stops on an error (no GPU, a bad --only, a crash) still gives stdout
    one JSON document, {"version": 1, "error": …, "exit_code": …}, beside the error line on stderr: a
    script reading stdout gets something it can parse, and the exit code stays the error's. Not after
    the command's own document, which a second one would make unparseable."""
    console = get_console()
    if json_mode is None or not json_mode.asked(kwargs) or console.json_written:
        return
    with contextlib.suppress(OSError):  # stdout gone (a closed pipe): the exit code still says it
        console.json({"version": FAILURE_JSON_VERSION, "error": error_line(message), "exit_code": int(exit_code)})


def _declared_option_names(hints: dict[str, object]) -> set[str]:
    """Every name of the options a command's parameters declare (`hints`: their annotations, evaluated
    once, by _with_verbosity_options, for typer: evaluating them again cost every start ~1 ms a command)."""
    from typer.models import OptionInfo

    names: set[str] = set()
    for hint in hints.values():
        for info in getattr(hint, "__metadata__", ()):
            if isinstance(info, OptionInfo):
                names.update(decl for decl in (info.default, *(info.param_decls or ()))
                             if isinstance(decl, str) and decl.startswith("-"))
    return names


def _logged(name: str, command: Callable[..., Outcome], record: bool = True, reads_log: bool = False,
            json_mode: JsonMode | None = None, file_options: FileOptions | None = None,
            on_device: bool = False) -> Callable[..., None]:
    """Run a command, show a failure as one red line, append the run log, exit with the code.
    `on_device`: the command runs its target on the device NVFP4CTL_DEVICE picks, which its run-log
    line names (runlog.detect_gpu).
    `reads_log`: the command reads the run log without adding to it (`log`), so a file that is none is
    refused as for a command that appends (it read as "no runs logged yet"). `json_mode`: how the
    command is asked for JSON, so that a failure gives stdout a JSON document too. `file_options`: the
    options that take its files, which a file typed as an argument is pointed to."""
    if json_mode is not None:
        if json_mode.parameter not in inspect.signature(command).parameters:
            raise TypeError(f"{name}: its JSON mode names {json_mode.parameter!r}, which is no parameter of the command")
        JSON_MODES[name] = json_mode

    @functools.wraps(command)
    def wrapper(*args: object, **kwargs: object) -> None:
        # From here, the command line parsed, a Ctrl-C is the run's and logged: the run log's setting is judged
        # inside the handling (its first use loads the run log's code), where a Ctrl-C then left no line.
        try:
            workspace.reset()
            if record or reads_log:
                _refuse_a_run_log_that_is_not_one(json_mode, kwargs)
            outcome = _run(command, added, args, kwargs, json_mode)
        except typer.Exit:  # the setting names no run log: nothing ran, and no log is there to add to
            raise
        except KeyboardInterrupt:  # as the setting was judged, or a second one while the first's line was shown
            _say_interrupted()
            with contextlib.suppress(KeyboardInterrupt):  # not after a document already given (json_written)
                _json_failure(json_mode, kwargs, "interrupted", ExitCode.INTERRUPTED)
            outcome = _stopped("interrupted", ExitCode.INTERRUPTED)
        except Exception as crash:  # a bug of nvfp4ctl's: its traceback follows, and the run log says the run ended so
            if record:
                reason = str(crash).splitlines()[0] if str(crash) else ""
                _record(_stopped(f"internal error: {type(crash).__name__}{': ' if reason else ''}{reason}",
                                 ExitCode.FAILURES), name)  # the exit status Python gives an uncaught exception
            raise
        if record:
            outcome = _record(outcome, name)
        raise typer.Exit(int(outcome.exit_code))

    added = _with_verbosity_options(command, wrapper)
    if file_options is not None:
        declared = _declared_option_names(wrapper.__annotations__)
        if missing := set(file_options.options) - declared:
            raise TypeError(f"{name}: its file options name {', '.join(sorted(missing))}, which it does not have")
        FILE_OPTIONS[name] = file_options
    app.command(name, cls=_LoggedCommand)(wrapper)
    if record:
        _RECORDED.add(name)
    if on_device:
        _ON_DEVICE.add(name)
    return wrapper


_logged("build", build.command)
_logged("check", check.command, file_options=TARGET_FILES, on_device=True)
_logged("bench", bench.command, json_mode=JsonMode("json", "--json"), file_options=TARGET_FILES, on_device=True)
_logged("dump", dump.command, json_mode=JsonMode("as_json", "--json"), file_options=DUMP_FILES)
_logged("lint", lint.command, json_mode=JsonMode("output_format", "--format", "json"))
_logged("export", export.command, file_options=EXPORT_FILES)
_logged("tune", tune.command, json_mode=JsonMode("json", "--json"), file_options=KERNEL_FILES, on_device=True)
_logged("log", log.command, record=False, reads_log=True, file_options=LOG_FILES)  # reading the log does not add to it
_logged("init", init.command, record=False)  # nothing has run yet; MEMORY.md is being made


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:  # before typer read the command line (making the click group of the app)
        _interrupted_reading(sys.argv[1:])
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None
    finally:
        _flush_stdout()


def _flush_stdout() -> None:
    """What is left in stdout's buffer, written before the interpreter's own last flush: that one, into a
    pipe whose reader has gone, says "Exception ignored ... BrokenPipeError" and turns the exit into 120."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        quiet_closed_stream(sys.stdout)
    except (OSError, ValueError):  # stdout closed by the caller, or a full disk: the exit code stands
        pass
