"""Shared fakes for the check tests: a task with fake_problem's cases, the targets folder."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_problem import FakeCase
from nvfp4ctl.task import Task

HERE = Path(__file__).parent
TARGETS = HERE / "targets"
FAKE_PROBLEM = "fake_problem:PROBLEM"


@dataclass(frozen=True)
class FakeTask:
    """The fields of nvfp4ctl.task.Task that check reads."""

    tests: tuple[FakeCase, ...]
    path: Path | None = None
    problem: str = FAKE_PROBLEM
    benchmarks: tuple[FakeCase, ...] = ()
    rtol: float = 1e-3
    atol: float = 1e-3
    ranking: str = "geom"
    timeout_s: float = 180.0
    timeout_given: bool = False
    submission: Path | None = None
    lint: dict[str, Any] = field(default_factory=dict)
    source: str = "shipped with nvfp4ctl"
    shipped_because: str = ""
    is_users: bool = False
    run_timeouts: dict[str, float] = field(default_factory=dict)

    def timeout_for(self, run: str) -> tuple[float, str] | None:
        return Task.timeout_for(self, run)  # type: ignore[arg-type]  # the real task's precedence

    def resolve_timeout(self, flag: float | None, run: str) -> tuple[float, str]:
        return Task.resolve_timeout(self, flag, run)  # type: ignore[arg-type]

    def gpu_mode_limit_note(self, run: str, source: str) -> str | None:
        return Task.gpu_mode_limit_note(self, run, source)  # type: ignore[arg-type]


SMALL_TESTS = (FakeCase(128, 256, 32), FakeCase(256, 128, 32), FakeCase(128, 128, 64, 2))
