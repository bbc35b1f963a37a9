"""Option values every running command parses the same way: --shape, --only, the watchdog timeout, and the parsers of
choice, integer, seconds and percentage options, whose bad values must read as one line in nvfp4ctl's words."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

import typer

from nvfp4ctl.env import Env, env_str
from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems.fields import DEFAULT_TIMEOUT_S, shape_numbers
from nvfp4ctl.words import plural


def parse_shape(text: str) -> tuple[int, int, int, int]:
    """"M,N,K" or "M,N,K,L" (also with x or spaces) -> (m, n, k, l)."""
    numbers = shape_numbers(text, "M,N,K or M,N,K,L", "128,7168,16384", (3, 4))
    m, n, k = numbers[:3]
    return m, n, k, numbers[3] if len(numbers) == 4 else 1


def check_only(only: Sequence[int], count: int, noun: str, task_file: str) -> None:
    """--only N of check (the task's tests) and of bench (its benchmarks): one wording for the same mistake,
    naming the task file in use (`task_file`, as workspace.task_file_name spells it)."""
    for number in only:
        if not 1 <= number <= count:
            span = f"1-{count}" if count else "none"
            raise UsageError(f"--only {number}: {task_file} has {plural(count, noun)} ({span})")


FLAG_SOURCE = "--timeout"
# resolve_timeout's sources of a limit no task file sets: one of them decided, whatever the file says
OVERRIDING_SOURCES = (FLAG_SOURCE, Env.TIMEOUT)


def resolve_timeout(flag: float | None, task_setting: tuple[float, str] | None,
                    task_name: str = "task.yml") -> tuple[float, str]:
    """Seconds per test and where they came from: --timeout > NVFP4CTL_TIMEOUT > the task file's key for
    the run (`task_setting`: Task.timeout_for's (seconds, key), None where the file sets none; named
    "task.yml test_timeout", the file as messages name the one in use) > 180."""
    if flag is not None:
        if not 0 < flag < math.inf:  # nan too: a watchdog that never fires
            raise UsageError(f"--timeout {flag:g}: expected a finite number of seconds > 0")
        return flag, FLAG_SOURCE
    from_env = env_str(Env.TIMEOUT)
    if from_env is not None:
        try:
            seconds = float(from_env)
        except ValueError:
            seconds = -1.0
        if not 0 < seconds < math.inf:
            raise UsageError(f"{Env.TIMEOUT}={from_env}: expected a finite number of seconds > 0")
        return seconds, Env.TIMEOUT
    if task_setting is not None:
        seconds, key = task_setting
        return float(seconds), f"{task_name} {key}"
    return DEFAULT_TIMEOUT_S, "default"


# The options of the command's own arguments (after its name) as click's parser reads them, (name, value)
# pairs, which cli's group keeps in the context's meta: click hands a parser the value and the option,
# not which of the option's names came with it.
TYPED_OPTIONS_KEY = "nvfp4ctl.typed_options"

TypedOptions = Sequence[tuple[str, str | None]]


class OptionValueError(typer.BadParameter):
    """A bad option value, shown as every other input error is: one line, `error: --settle: …`, exit 2
    (not click's usage block, nor the wording of the validation library under typer).

    The parsers below say only what is wrong with the value (`value`, as given); the option is named
    here, as the user typed it (`log -n 0` says `-n`, `log --last 0` says `--last`), read from the
    command's arguments: a name written into each parser could be another spelling than the user's."""

    def __init__(self, message: str, value: object = None) -> None:
        super().__init__(message)
        self.value = value

    def format_message(self) -> str:
        if self.param is None:
            return self.message
        if getattr(self.param, "param_type_name", None) == "argument":  # no name typed: the one --help shows
            # its metavar (SOURCES), not the Python parameter's name; click's default metavar is that name upper-cased
            shown = getattr(self.param, "metavar", None) or str(self.param.name).upper()
            return f"{shown}: {self.message}"
        typed = self.ctx.meta.get(TYPED_OPTIONS_KEY) if self.ctx is not None else None
        return f"{typed_name(self.param, typed, self.value)}: {self.message}"

    def show(self, file: object = None) -> None:
        from nvfp4ctl.console import get_console

        get_console().error(self.format_message())


def typed_name(param: Any, typed: TypedOptions | None, value: object = None) -> str:
    """The name of `param` the user typed (`typed`: typed_options' pairs) with `value` (the last such;
    the last name typed at all where the value is not found as given); the long name where they do not tell."""
    given = [(name, given_value) for name, given_value in typed or () if name in param.opts]
    with_value = [name for name, given_value in given if value is not None and given_value == str(value)]
    named = with_value or [name for name, _ in given]
    return named[-1] if named else _long_name(param)


def typed_values(names: Sequence[str], typed: TypedOptions) -> list[str | None]:
    """The value that came with each use of one of an option's `names` in `typed` (None: none came)."""
    return [value for name, value in typed if name in names]


def option_arities(params: Sequence[Any]) -> dict[str, int]:
    """Each name of a click command's options → how many values it takes (0: a flag, --no-x included)."""
    arities: dict[str, int] = {}
    for param in params:
        if getattr(param, "param_type_name", None) != "option":
            continue
        takes_value = not (getattr(param, "is_flag", False) or getattr(param, "count", False))
        arities.update(dict.fromkeys(param.opts, max(param.nargs, 1) if takes_value else 0))
        arities.update(dict.fromkeys(getattr(param, "secondary_opts", ()), 0))
    return arities


def typed_options(args: Sequence[str], arities: Mapping[str, int]) -> tuple[tuple[str, str | None], ...]:
    """(name, value) for each option in `args`, read as click's parser reads them (`arities`: option_arities
    of the command): an option that takes a value takes the next argument whatever it looks like, so in
    `--only --json` --json is --only's value, not an option; `--last=5`, `-n5` and flags run together
    (`-qn5`) too; nothing after `--`, which ends the options. A name the command does not have counts as a
    flag: click stops at it, but what the user typed after it still says what they asked for."""
    return tuple(_read_arguments(args, arities)[0])


def argument_positions(args: Sequence[str], arities: Mapping[str, int]) -> list[int]:
    """The index in `args` of each argument, neither an option nor an option's value, read as
    typed_options reads them (every word after `--` is one; `--` itself is not)."""
    return _read_arguments(args, arities)[1]


def _read_arguments(args: Sequence[str],
                    arities: Mapping[str, int]) -> tuple[list[tuple[str, str | None]], list[int]]:
    """typed_options' options and argument_positions' arguments, in one reading of `args`."""
    found: list[tuple[str, str | None]] = []
    arguments: list[int] = []
    at = 0  # the next argument: an index, as popping each from the front was quadratic in a long line
    while at < len(args):
        token = args[at]
        at += 1
        if token == "--":
            arguments += range(at, len(args))
            break
        if not token.startswith("-") or token == "-":
            arguments.append(at - 1)
            continue
        options, taken = option_token(token, arities)
        if taken and options[-1][1] is None:  # its value is the next argument
            options[-1] = (options[-1][0], args[at] if at < len(args) else None)
        found += options
        at += taken
    return found, arguments


def option_token(token: str, arities: Mapping[str, int]) -> tuple[list[tuple[str, str | None]], int]:
    """The options in `token`, a word starting with "-" (neither "-" nor "--"), read as click's parser
    reads them with `arities` (option_arities): each name with the value typed in the token (`--last=5`,
    `-n5`; None where it has none there), and how many of the arguments after the token it takes
    (`--pair=a b`: one). A name not in `arities` counts as a flag: click stops at it, but what the user
    typed after it still says what they asked for."""
    name, equals, attached = token.partition("=")
    if token.startswith("--") or (len(name) > 2 and name in arities):  # -n=5 is -n with "=5", as in click
        arity = arities.get(name, 0)
        if arity == 0:  # a flag, or a name this command does not have
            return [(name, None)], 0
        return [(name, attached if equals else None)], max(arity - (1 if equals else 0), 0)
    found: list[tuple[str, str | None]] = []
    for position, letter in enumerate(token[1:], start=1):  # short options: -q, -n5, -qv, -qn 5
        name = f"-{letter}"
        arity = arities.get(name, 0)
        if arity == 0:
            found.append((name, None))
            continue
        attached = token[position + 1:]
        found.append((name, attached or None))
        return found, max(arity - (1 if attached else 0), 0)
    return found, 0


def _long_name(param: Any) -> str:
    """An option's long name (`--last` of `-n/--last`); its only name where it has no long one."""
    return next((name for name in param.opts if name.startswith("--")), param.opts[0])


class Choice(str, Enum):
    """The values of an option parsed by `choice`. A member's str() is its value: typer before 0.29
    hands what the parser returns through its own enum conversion, which looks the member up by
    str(); a plain (str, Enum) member reads `Cls.member` there, matches nothing and arrives as None."""

    def __str__(self) -> str:
        return str(self.value)


E = TypeVar("E", bound=Choice)


def choice(enum: type[E]) -> Callable[[object], E]:
    """A parser for an option that takes one of a Choice's values."""
    names = [member.value for member in enum]

    def parse(value: object) -> E:
        if isinstance(value, enum):
            return value
        try:
            return enum(value)
        except ValueError:
            raise OptionValueError(f"{str(value)!r} is not one of {', '.join(names)}", value) from None

    return parse


def integer(minimum: int | None = None, maximum: int | None = None) -> Callable[[object], int]:
    """A parser for a whole number, within the bounds given (both included)."""

    def parse(value: object) -> int:
        if isinstance(value, int):
            number: int | None = value
        else:
            try:
                number = int(str(value))
            except ValueError:  # "1.5", "x"
                number = None
        if number is None or (minimum is not None and number < minimum):
            bound = "" if minimum is None else f" ≥ {minimum}"
            raise OptionValueError(f"{value} is not an integer{bound}", value)
        if maximum is not None and number > maximum:
            raise OptionValueError(f"{value} is not an integer ≤ {maximum}", value)
        return number

    return parse


def count(minimum: int = 1) -> Callable[[object], int]:
    """A parser for how many of something to show (`log -n`), ≥ `minimum`: a number past any list's length,
    however large, is read as sys.maxsize, so it shows them all and every reader of the count (slices, heaps,
    the run log's readers) takes it as an ordinary int."""
    whole = integer(minimum)

    def parse(value: object) -> int:
        return min(whole(value), sys.maxsize)

    return parse


class Numbers(tuple[int, ...]):
    """One value of a repeatable option that also takes several numbers at once (`--only 1,3`): the numbers
    it names. A class of its own, so typer reads the option as a list of plain values, not a nested type."""


def numbers() -> Callable[[object], Numbers]:
    """A parser for one whole number or several, comma-separated (`--only 1,3`, as lint's --select takes
    codes); one number's mistake reads as `integer`'s."""
    single = integer()

    def parse(value: object) -> Numbers:
        if isinstance(value, Numbers):
            return value
        parts = str(value).split(",")
        if len(parts) == 1:
            return Numbers((single(value),))
        try:
            return Numbers(single(part.strip()) for part in parts)
        except OptionValueError:
            raise OptionValueError(f"{value} is not an integer or a comma-separated list of them (1,3)", value) from None

    return parse


def flat(values: Sequence[Numbers] | None) -> list[int]:
    """The numbers of every use of a `numbers` option, in the order given."""
    return [number for given in values or () for number in given]


def path(what: str = "a file") -> Callable[[object], Path]:
    """A parser for a path option (--task, --kernel, --submission, --from-log, log's --target) or argument (build's
    and lint's): an empty one (`--task "$T"` with T unset) is refused as empty, where Path("") is "." and the line
    named the current folder (`.: cannot read the task file (Is a directory)`, `--kernel .: not a file`, lint checking
    the folder). `what`: what to name instead ("a file or folder" for lint's)."""

    def parse(value: object) -> Path:
        if isinstance(value, Path):
            return value
        if not str(value):
            raise OptionValueError(f"an empty path; name {what}", value)
        return Path(str(value))

    return parse


def file_to_write() -> Callable[[object], Path]:
    """A parser for a file a command writes (export's -o): a path ending in a slash names a folder, there or
    not (the shell's `> newdir/` refuses it too), so it is refused as a folder that is there is, never written
    as a file named like the folder."""

    named = path("the file to write")

    def parse(value: object) -> Path:
        if isinstance(value, Path):
            return value
        text = str(value)
        if text.endswith(("/", os.sep)) and text.rstrip("/" + os.sep):
            folder = Path(text)
            raise OptionValueError(f"{text} ends in /, a folder; name the file to write, e.g. -o"
                                   f" {folder / 'submission.py'}", value)
        return named(text)

    return parse


def seconds(*, zero: bool = True) -> Callable[[object], float]:
    """A parser for a finite number of seconds ≥ 0, or > 0 where `zero` is not allowed (nan and inf are not)."""
    return _finite_number("a number of seconds", zero)


def percentage() -> Callable[[object], float]:
    """A parser for a finite percentage > 0."""
    return _finite_number("a percentage", zero=False)


def _finite_number(noun: str, zero: bool) -> Callable[[object], float]:
    def parse(value: object) -> float:
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            number = math.nan
        in_range = (0 <= number if zero else 0 < number) and number < math.inf  # nan compares false
        if not in_range:
            raise OptionValueError(f"{value} is not {noun} {'≥' if zero else '>'} 0", value)
        return number

    return parse
