"""Which rules run: --select/--ignore/--profile over task.yml's `lint:` section over the defaults.

Codes and prefixes are accepted ("NV3" = NV301..NV303). The stream rule always runs: the server
rejects the file whatever we say, so ignoring it by code or prefix is a usage error.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvfp4ctl.errors import UsageError
from nvfp4ctl.lint.benchmark_shapes import Shape, dims_of, shipped_shapes
from nvfp4ctl.lint.rules import ALWAYS_ON, PROFILES, RULES, RULES_BY_CODE, STREAM_CODE
from nvfp4ctl.problems import DEFAULT_PROBLEM
from nvfp4ctl.problems.fields import describe_value
from nvfp4ctl.workspace import TASK_FILE

# GPU MODE nvfp4_gemm benchmark shapes (m, n, k): where a problem's own shipped task.yml gives none.
# task.yml's benchmarks replace the problem's when present.
DEFAULT_BENCHMARK_SHAPES: tuple[Shape, ...] = (
    (128, 7168, 16384),
    (128, 4096, 7168),
    (128, 7168, 2048),
)
SECTION_KEYS = ("select", "ignore", "profile", "paths")


@dataclass(frozen=True)
class LintConfig:
    select: tuple[str, ...] = ()  # empty: every rule that is on by default (or by the profile)
    ignore: tuple[str, ...] = ()
    profile: str = "default"
    # over the problem's benchmark_dims (shape_dims); empty: the problem's shipped task.yml's
    benchmark_shapes: tuple[Shape, ...] = ()
    problem: str = DEFAULT_PROBLEM  # whose input tuple the Python rules speak of

    def __post_init__(self) -> None:
        if not self.benchmark_shapes:  # a GEMV's config must not look for the GEMM's shapes
            object.__setattr__(self, "benchmark_shapes", shipped_shapes(self.problem) or DEFAULT_BENCHMARK_SHAPES)

    @property
    def shape_dims(self) -> tuple[str, ...]:
        """What each number of a benchmark shape is: ("m", "n", "k"), the GEMV's ("m", "k", "l")."""
        return dims_of(self.problem)

    def enabled(self, code: str) -> bool:
        if code in ALWAYS_ON:
            return True
        rule = RULES_BY_CODE[code]
        on = rule.default_on or self.profile in rule.profiles
        if self.select:
            on = (on and _matches_any(code, self.select)) or code in self.select
        return on and not _matches_any(code, self.ignore)


def _matches_any(code: str, patterns: Iterable[str]) -> bool:
    return any(code.startswith(pattern) for pattern in patterns)


def _normalize(patterns: Iterable[str], where: Callable[[int], str], ignoring: bool = False) -> tuple[str, ...]:
    """Rule codes and prefixes, upper-cased, each item's commas split; `where(index)` names the item in errors.
    `ignoring`: the patterns are to be ignored, and the stream rule cannot be."""
    normalized = []
    for index, raw in enumerate(patterns):
        for part in str(raw).split(","):
            pattern = part.strip().upper()
            if not pattern:
                continue
            if not any(rule.code.startswith(pattern) for rule in RULES):
                known = ", ".join(rule.code for rule in RULES)
                raise UsageError(f"{where(index)}: unknown rule code or prefix {part.strip()!r} (known: {known})")
            if ignoring and len(pattern) > 2 and STREAM_CODE.startswith(pattern):
                raise UsageError(f'{where(index)}: {pattern} cannot be ignored: the server rejects any file containing "stream"')
            if ignoring and len(pattern) > 2 and (kept := next((code for code in sorted(ALWAYS_ON) if code.startswith(pattern)), None)):
                raise UsageError(f"{where(index)}: {pattern} cannot be ignored: {kept} says lint cannot read a file"
                                 " (not UTF-8 text), which would otherwise pass unjudged; ignore the other codes one by one")
            normalized.append(pattern)
    return tuple(normalized)


def _string_list(value: Any, where: str, what: str = "rule codes") -> list[str]:
    """A list of strings, or one string standing for a list of one (as YAML users write `select: NV4`)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return list(value)
    raise UsageError(f"{where}: expected a list of {what}, got {describe_value(value)}")


def _place(lint_at: Mapping[str, str], key: str, index: int | None = None) -> str:
    """Names a field of the `lint:` section as every task.yml error does: "other.yml:41: lint.paths", from
    Task.lint_at; a field it lacks (a single string for a list, a section built in memory) is named at its
    key, else at the section, else by the file name alone."""
    field_path = f"lint.{key}"
    candidates = ([f"{field_path}[{index}]"] if index is not None else []) + [field_path, "lint"]
    place = next((lint_at[name] for name in candidates if name in lint_at), TASK_FILE)
    return f"{place}: {field_path}"


@dataclass(frozen=True)
class LintSection:
    """task.yml's `lint:` section, validated."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    profile: str | None = None
    paths: tuple[Path, ...] | None = None
    paths_at: tuple[str, ...] = ()  # "task.yml:43: lint.paths" for each of paths, for the error that one is missing


def parse_section(section: Mapping[str, Any] | None, base: Path, lint_at: Mapping[str, str] | None = None) -> LintSection:
    """The validated section; `lint_at` is where its fields are written (Task.lint_at), for the errors."""
    if not section:
        return LintSection()
    lint_at = lint_at or {}
    at = functools.partial(_place, lint_at)
    if not isinstance(section, Mapping):
        raise UsageError(f"{lint_at.get('lint', TASK_FILE)}: lint: expected a mapping with keys {', '.join(SECTION_KEYS)}, got {describe_value(section)}")
    for key in section:
        if key not in SECTION_KEYS:
            raise UsageError(f"{at(str(key))}: unknown key (expected one of {', '.join(SECTION_KEYS)})")
    select = ignore = paths = None
    profile = None
    if section.get("select") is not None:
        select = _normalize(_string_list(section["select"], at("select")), lambda index: at("select", index))
    if section.get("ignore") is not None:
        ignore = _normalize(_string_list(section["ignore"], at("ignore")), lambda index: at("ignore", index), ignoring=True)
    if section.get("profile") is not None:
        if section["profile"] not in PROFILES:
            raise UsageError(f"{at('profile')}: expected one of {', '.join(PROFILES)},"
                             f" got {describe_value(section['profile'])}")
        profile = str(section["profile"])
    if section.get("paths") is not None:
        raw_paths = _string_list(section["paths"], at("paths"), "paths")
        paths = tuple(p if p.is_absolute() else base / p for p in map(Path, raw_paths))
    return LintSection(select=select, ignore=ignore, profile=profile, paths=paths,
                       paths_at=tuple(at("paths", index) for index in range(len(paths or ()))))


@dataclass(frozen=True)
class LintFlags:
    """--select, --ignore and --profile as given (None: not given): they win over the `lint:` section of
    every task.yml a file is judged by, the one in use and a folder's own alike."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    profile: str | None = None

    def over(self, section: LintSection, benchmark_shapes: tuple[Shape, ...] | None = None,
             problem: str | None = None) -> LintConfig:
        return resolve_config(section, self.select, self.ignore, self.profile, benchmark_shapes, problem)


def resolve_config(
    section: LintSection,
    select: Sequence[str] | None,
    ignore: Sequence[str] | None,
    profile: str | None,
    benchmark_shapes: tuple[Shape, ...] | None = None,
    problem: str | None = None,
) -> LintConfig:
    """Flags override task.yml, which overrides the defaults (one place for the precedence)."""
    cli_select = _normalize(select, lambda _: "--select") if select else None
    cli_ignore = _normalize(ignore, lambda _: "--ignore", ignoring=True) if ignore else None
    if profile is not None and profile not in PROFILES:
        raise UsageError(f"--profile: expected one of {', '.join(PROFILES)}, got {profile!r}")
    return LintConfig(
        select=cli_select if cli_select is not None else (section.select or ()),
        ignore=cli_ignore if cli_ignore is not None else (section.ignore or ()),
        profile=profile or section.profile or "default",
        benchmark_shapes=benchmark_shapes or (),  # none in task.yml: the problem's own (LintConfig)
        problem=problem or DEFAULT_PROBLEM,
    )
