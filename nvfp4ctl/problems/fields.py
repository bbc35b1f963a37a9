"""Reading a task.yml case entry and a --shape text: one line naming the field for every mistake."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from nvfp4ctl.errors import UsageError
from nvfp4ctl.words import plural


# Sizes go to the kernels' C ABIs as int; seeds to torch's generator, which takes a signed 64-bit one.
MAX_SIZE = 2**31 - 1
MAX_SEED = 2**63 - 1

# A task.yml without a limit for the run (test_timeout, ..., timeout), and every command without --timeout or
# NVFP4CTL_TIMEOUT, waits this long per call: kernelbot's default for test, benchmark and ranked runs.
DEFAULT_TIMEOUT_S = 180.0


_WHY_MAXIMUM = {MAX_SIZE: " (the kernels take int sizes)", MAX_SEED: " (torch takes a 64-bit seed)"}


class FieldError(Exception):
    """A bad task.yml field: the reader prefixes the file and line ("task.yml:5: tests[2].k: ...")."""

    def __init__(self, field_path: str, problem: str) -> None:
        super().__init__(f"{field_path}: {problem}")
        self.field_path = field_path
        self.problem = problem


def read_int(entry: Mapping[str, Any], name: str, at: str, minimum: int = 1, maximum: int = MAX_SIZE) -> int:
    if name not in entry:
        raise FieldError(f"{at}.{name}", "missing")
    value = entry[name]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        kind = "a non-negative integer" if minimum == 0 else "a positive integer"
        raise FieldError(f"{at}.{name}", f"expected {kind}, got {describe_value(value)}")
    if value > maximum:
        raise FieldError(f"{at}.{name}", f"expected at most {maximum}{_WHY_MAXIMUM[maximum]}, got {value}")
    return value


def read_seed(entry: Mapping[str, Any], at: str) -> int:
    return read_int(entry, "seed", at, minimum=0, maximum=MAX_SEED)


def read_int_list(entry: Mapping[str, Any], name: str, at: str, length: int) -> tuple[int, ...]:
    if name not in entry:
        raise FieldError(f"{at}.{name}", "missing")
    value = entry[name]
    if not isinstance(value, (list, tuple)) or len(value) != length:
        raise FieldError(f"{at}.{name}", f"expected a list of {plural(length, 'positive integer')} (one per group),"
                                         f" got {describe_value(value)}")
    for position, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, int) or item < 1:
            raise FieldError(f"{at}.{name}[{position}]", f"expected a positive integer, got {describe_value(item)}")
        if item > MAX_SIZE:
            raise FieldError(f"{at}.{name}[{position}]", f"expected at most {MAX_SIZE}{_WHY_MAXIMUM[MAX_SIZE]}, got {item}")
    return tuple(value)


def describe_value(value: Any) -> str:
    """A bad task.yml value in an error ("got true"): "nothing" for an empty one, else yaml_spelling."""
    return "nothing" if value is None else yaml_spelling(value)


def yaml_spelling(value: Any) -> str:
    """A value parsed from YAML as YAML writes it (true, null, .inf, [a, true], {m: 1}), not as Python
    does (True, None, inf): the user wrote YAML, and `got True` would send them looking for a capital T.
    Text keeps its quotes ('x'): a number written as text must not read as the number."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ".inf" if value > 0 else "-.inf"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_spelling(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{yaml_spelling(key)}: {yaml_spelling(item)}" for key, item in value.items()) + "}"
    if isinstance(value, (int, float, str, bytes)):
        return repr(value)
    return str(value)  # a date: 2024-01-01


def check_keys(entry: Mapping[str, Any], at: str, allowed: tuple[str, ...]) -> None:
    unknown = sorted(str(key) for key in entry if key not in (*allowed, "seed", "sol_us"))
    if unknown:
        raise FieldError(f"{at}.{unknown[0]}", f"unknown field (expected {', '.join(allowed)}, seed, sol_us)")


# Between two numbers of a --shape: a comma or an x (spaces around it allowed), or spaces alone.
_SHAPE_SEPARATOR = re.compile(r"\s*[,x]\s*|\s+")


def shape_fields(text: str) -> list[str]:
    """"128,256, 512" -> ["128", "256", "512"]. An empty field stays "" ("128,,512", "128,256,"), which no
    caller reads as a number: dropping it would run a shape other than the one written."""
    return _SHAPE_SEPARATOR.split(text.strip())


def shape_numbers(text: str, syntax: str, example: str, counts: tuple[int, ...]) -> list[int]:
    """"128,256,512" (also x or spaces) -> positive ints, their count one of `counts`."""
    parts = shape_fields(text)
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) not in counts or any(n <= 0 for n in numbers):
        raise UsageError(f"--shape {text}: expected {syntax} as positive integers, e.g. --shape {example}")
    check_sizes(text, numbers)
    return numbers


def check_sizes(text: str, numbers: list[int]) -> None:
    if too_big := [n for n in numbers if n > MAX_SIZE]:
        raise UsageError(f"--shape {text}: {too_big[0]} is more than {MAX_SIZE}{_WHY_MAXIMUM[MAX_SIZE]}")
