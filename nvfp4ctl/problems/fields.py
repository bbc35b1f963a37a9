"""Reading a task.yml case entry and a --shape text: one line naming the field for every mistake."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nvfp4ctl.errors import UsageError


class FieldError(Exception):
    """A bad task.yml field: the reader prefixes the file name ("task.yml: tests[2].k: ...")."""

    def __init__(self, field_path: str, problem: str) -> None:
        super().__init__(f"{field_path}: {problem}")
        self.field_path = field_path
        self.problem = problem


def read_int(entry: Mapping[str, Any], name: str, at: str, minimum: int = 1) -> int:
    if name not in entry:
        raise FieldError(f"{at}.{name}", "missing")
    value = entry[name]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        kind = "a non-negative integer" if minimum == 0 else "a positive integer"
        raise FieldError(f"{at}.{name}", f"expected {kind}, got {describe_value(value)}")
    return value


def read_int_list(entry: Mapping[str, Any], name: str, at: str, length: int) -> tuple[int, ...]:
    if name not in entry:
        raise FieldError(f"{at}.{name}", "missing")
    value = entry[name]
    if not isinstance(value, (list, tuple)) or len(value) != length:
        raise FieldError(f"{at}.{name}", f"expected a list of {length} positive integers (one per group), got {describe_value(value)}")
    for position, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, int) or item < 1:
            raise FieldError(f"{at}.{name}[{position}]", f"expected a positive integer, got {describe_value(item)}")
    return tuple(value)


def describe_value(value: Any) -> str:
    return "nothing" if value is None else repr(value)


def check_keys(entry: Mapping[str, Any], at: str, allowed: tuple[str, ...]) -> None:
    unknown = sorted(str(key) for key in entry if key not in (*allowed, "seed", "sol_us"))
    if unknown:
        raise FieldError(f"{at}.{unknown[0]}", f"unknown field (expected {', '.join(allowed)}, seed, sol_us)")


def shape_numbers(text: str, syntax: str, example: str, counts: tuple[int, ...]) -> list[int]:
    """"128,256,512" (also x or spaces) -> positive ints, their count one of `counts`."""
    parts = [p for p in text.replace("x", ",").replace(" ", ",").split(",") if p]
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) not in counts or any(n <= 0 for n in numbers):
        raise UsageError(f"--shape {text}: expected {syntax} as positive integers, e.g. --shape {example}")
    return numbers
