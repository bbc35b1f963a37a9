"""The scripts of benchmarks/ as modules for tests (they are no package and import each other by path)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def imported_benchmark(name: str) -> Iterator[ModuleType]:
    """benchmarks/<name>.py imported for a fixture's scope (yield from it), then forgotten."""
    spec = importlib.util.spec_from_file_location(f"{name}_under_test", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    yield module
    sys.modules.pop(spec.name, None)
