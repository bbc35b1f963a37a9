"""What `lint` checks and with which settings when the user names nothing: task.yml decides."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvfp4ctl.lint.config import LintConfig, LintSection, parse_section, resolve_config
from nvfp4ctl.project import kernels_dir, project_root


@dataclass(frozen=True)
class LintPlan:
    paths: tuple[Path, ...]
    config: LintConfig
    skipped: tuple[str, ...] = ()  # defaults that do not exist (shown as warnings)


def _load_task() -> Any | None:
    from nvfp4ctl.task import load_task

    return load_task()


def _benchmark_shapes(task: Any | None) -> tuple[tuple[int, int, int], ...] | None:
    cases = getattr(task, "benchmarks", None) or ()
    shapes: list[tuple[int, int, int]] = []
    for c in cases:
        m, n, k = (getattr(c, d, None) for d in "mnk")
        if all(isinstance(v, int) for v in (m, n, k)):
            shapes.append((m, n, k))
        elif all(isinstance(v, tuple) for v in (m, n, k)):  # grouped: each group's shape
            shapes.extend(zip(m, n, k))
    return tuple(shapes) or None


def plan(
    paths: Sequence[Path] | None,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    profile: str | None = None,
) -> LintPlan:
    task = _load_task()
    task_path = getattr(task, "path", None)
    base = Path(task_path).parent if task_path else project_root()
    section: LintSection = parse_section(getattr(task, "lint", None), base)
    config = resolve_config(section, select, ignore, profile, _benchmark_shapes(task), getattr(task, "problem", None))
    if paths:
        return LintPlan(tuple(paths), config)
    defaults: list[Path] = list(section.paths) if section.paths else [kernels_dir()]
    submission = getattr(task, "submission", None)
    if submission is not None and not section.paths:
        submission = Path(submission)
        defaults.append(submission if submission.is_absolute() else base / submission)
    existing = tuple(p for p in defaults if p.exists())
    skipped = tuple(f"{p} does not exist; not checked" for p in defaults if not p.exists())
    return LintPlan(existing, config, skipped)
