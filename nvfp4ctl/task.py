"""task.yml -> a frozen `Task`: tests, benchmarks, tolerances, speed of light, timeout, lint options.

Our file has GPU MODE's shape (problems/nvidia/nvfp4_gemm/task.yml: `tests` and `benchmarks` lists of
{m, n, k, l, seed}, `ranking_by`) plus optional extras: `problem`, `tolerance: {rtol, atol}`,
`timeout` (seconds), `sol_us` per case, `submission`, `lint`. GPU MODE's own file loads unchanged:
unknown top-level keys (files, lang, description, config, templates) are ignored. Every mistake is
one UsageError line naming the field: "task.yml: benchmarks[2].k: expected a positive integer, got -5".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from nvfp4ctl.env import Env, env_str
from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems import problem_names
from nvfp4ctl.project import project_root, shipped

DEFAULT_PROBLEM = "nvfp4_gemm"
DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-3
DEFAULT_TIMEOUT_S = 180.0
DEFAULT_RANKING = "geom"
RANKINGS = ("geom", "mean", "last")
CASE_INTS = ("m", "n", "k", "l", "seed")
K_MULTIPLE = 16  # one e4m3 scale per 16 fp4 elements along K


@dataclass(frozen=True)
class Case:
    m: int
    n: int
    k: int
    l: int
    seed: int
    sol_us: float | None = None  # speed of light (µs) on B200 at 1.5 GHz, benchmarks only

    def label(self) -> str:
        return f"m={self.m} n={self.n} k={self.k} l={self.l} seed={self.seed}"


@dataclass(frozen=True)
class Task:
    path: Path | None
    problem: str = DEFAULT_PROBLEM
    tests: tuple[Case, ...] = ()
    benchmarks: tuple[Case, ...] = ()
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    ranking: str = DEFAULT_RANKING
    timeout_s: float = DEFAULT_TIMEOUT_S
    submission: Path | None = None
    lint: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), hash=False)


def task_path(path: Path | None = None) -> Path:
    """The task file to use: `path`, else $NVFP4CTL_TASK, else the project's task.yml, else the shipped one."""
    if path is not None:
        return Path(path)
    override = env_str(Env.TASK)
    if override:
        return Path(override)
    local = project_root() / "task.yml"
    return local if local.is_file() else shipped("task.yml")


def load_task(path: Path | None = None) -> Task:
    source = task_path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as error:
        raise UsageError(f"{source}: cannot read the task file ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{source}: not a UTF-8 text file") from None
    return parse_task(text, source)


def parse_task(text: str, path: Path | None = None) -> Task:
    """Parse task.yml text; `path` names the file in messages and anchors a relative `submission`."""
    where = path.name if path is not None else "task.yml"
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise UsageError(f"{where}: invalid YAML: {_yaml_problem(error)}") from None
    return _TaskReader(where, path).read(document)


def _yaml_problem(error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    return f"{problem} (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else problem


def _describe(value: Any) -> str:
    return "nothing" if value is None else repr(value)


class _TaskReader:
    """Validates one parsed document; every error names the file and the field path."""

    def __init__(self, where: str, path: Path | None) -> None:
        self.where = where
        self.path = path

    def fail(self, field_path: str, problem: str) -> UsageError:
        return UsageError(f"{self.where}: {field_path}: {problem}")

    def read(self, document: Any) -> Task:
        if not isinstance(document, dict):
            kind = "an empty file" if document is None else type(document).__name__
            raise UsageError(f"{self.where}: expected a mapping with tests and benchmarks, got {kind}")
        tests = self.cases(document, "tests", required=True)
        benchmarks = self.cases(document, "benchmarks", required=False)
        rtol, atol = self.tolerance(document.get("tolerance"))
        return Task(
            path=self.path,
            problem=self.problem(document.get("problem", DEFAULT_PROBLEM)),
            tests=tests,
            benchmarks=benchmarks,
            rtol=rtol,
            atol=atol,
            ranking=self.ranking(document.get("ranking_by", DEFAULT_RANKING)),
            timeout_s=self.timeout(document.get("timeout", DEFAULT_TIMEOUT_S)),
            submission=self.submission(document.get("submission")),
            lint=self.lint(document.get("lint")),
        )

    def cases(self, document: dict[str, Any], key: str, required: bool) -> tuple[Case, ...]:
        entries = document.get(key)
        if entries is None and not required:
            return ()
        if not isinstance(entries, list) or (required and not entries):
            example = "[{m: 128, n: 256, k: 256, l: 1, seed: 1111}, ...]"
            raise self.fail(key, f"expected a non-empty list like {example}, got {_describe(entries)}")
        return tuple(self.case(entry, f"{key}[{index}]") for index, entry in enumerate(entries))

    def case(self, entry: Any, at: str) -> Case:
        if not isinstance(entry, dict):
            raise self.fail(at, f"expected a mapping with {', '.join(CASE_INTS)}, got {_describe(entry)}")
        unknown = sorted(str(key) for key in entry if key not in (*CASE_INTS, "sol_us"))
        if unknown:
            raise self.fail(f"{at}.{unknown[0]}", f"unknown field (expected {', '.join(CASE_INTS)}, sol_us)")
        values = {name: self.integer(entry, name, at) for name in CASE_INTS}
        if values["k"] % K_MULTIPLE:
            raise self.fail(f"{at}.k", f"expected a multiple of {K_MULTIPLE} (one scale per 16 elements), got {values['k']}")
        sol_us = entry.get("sol_us")
        if sol_us is not None:
            sol_us = self.number(sol_us, f"{at}.sol_us", "a positive number of microseconds", positive=True)
        return Case(**values, sol_us=sol_us)

    def integer(self, entry: dict[str, Any], name: str, at: str) -> int:
        if name not in entry:
            raise self.fail(f"{at}.{name}", "missing")
        value = entry[name]
        minimum = 0 if name == "seed" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            kind = "a non-negative integer" if name == "seed" else "a positive integer"
            raise self.fail(f"{at}.{name}", f"expected {kind}, got {_describe(value)}")
        return value

    def number(self, value: Any, at: str, kind: str, positive: bool) -> float:
        # PyYAML reads `1e-3` (no dot) as a string, so numeric strings are accepted too.
        number: float | None = None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                number = None
        if number is None or not math.isfinite(number) or number < 0 or (positive and number == 0):
            raise self.fail(at, f"expected {kind}, got {_describe(value)}")
        return number

    def tolerance(self, section: Any) -> tuple[float, float]:
        if section is None:
            return DEFAULT_RTOL, DEFAULT_ATOL
        if not isinstance(section, dict):
            raise self.fail("tolerance", f"expected a mapping like {{rtol: 0.001, atol: 0.001}}, got {_describe(section)}")
        unknown = sorted(str(key) for key in section if key not in ("rtol", "atol"))
        if unknown:
            raise self.fail(f"tolerance.{unknown[0]}", "unknown field (expected rtol, atol)")
        rtol = self.number(section.get("rtol", DEFAULT_RTOL), "tolerance.rtol", "a non-negative number", positive=False)
        atol = self.number(section.get("atol", DEFAULT_ATOL), "tolerance.atol", "a non-negative number", positive=False)
        return rtol, atol

    def problem(self, value: Any) -> str:
        if value not in problem_names():
            raise self.fail("problem", f"expected one of {', '.join(problem_names())}, got {_describe(value)}")
        return value

    def ranking(self, value: Any) -> str:
        if value not in RANKINGS:
            raise self.fail("ranking_by", f"expected one of {', '.join(RANKINGS)}, got {_describe(value)}")
        return value

    def timeout(self, value: Any) -> float:
        return self.number(value, "timeout", "a positive number of seconds", positive=True)

    def submission(self, value: Any) -> Path | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail("submission", f"expected a path to a submission.py, got {_describe(value)}")
        submission = Path(value).expanduser()
        if not submission.is_absolute() and self.path is not None:
            submission = self.path.resolve().parent / submission
        return submission

    def lint(self, value: Any) -> Mapping[str, Any]:
        if value is None:
            return MappingProxyType({})
        if not isinstance(value, dict):
            raise self.fail("lint", f"expected a mapping of lint options, got {_describe(value)}")
        return MappingProxyType(dict(value))
