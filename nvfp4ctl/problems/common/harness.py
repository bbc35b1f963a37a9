"""Where each problem's harness stand-ins live, and how to make them importable beside a submission.

On the leaderboard a submission runs in a folder that also holds the problem's task.py, utils.py
and reference.py, and real submissions import them (`from reference import to_blocked, ref_kernel`,
`from utils import make_match_reference`, `from task import input_t, output_t`). Each problem ships
our own implementations of those three modules in nvfp4ctl/problems/<name>/harness/.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HARNESS_MODULES = ("task", "utils", "reference")
_PROBLEMS_DIR = Path(__file__).resolve().parent.parent


def harness_dir(problem: str) -> Path:
    """The folder holding `problem`'s task.py, utils.py and reference.py stand-ins."""
    folder = _PROBLEMS_DIR / problem / "harness"
    if not folder.is_dir():
        raise ValueError(f"no harness stand-ins for problem {problem!r}")
    return folder


def put_on_import_path(folder: Path, stand_ins: Path | None) -> None:
    """The submission's `folder` on sys.path, and the problem's `stand_ins` folder right behind it: the
    submission imports its neighbours, and a task.py, utils.py or reference.py of its own wins over ours."""
    entry = str(folder)
    if entry not in sys.path:
        sys.path.insert(0, entry)
    if stand_ins is not None and str(stand_ins) not in sys.path:
        sys.path.insert(sys.path.index(entry) + 1, str(stand_ins))


def preload_harness(problem: str, beside: Path | None = None) -> list[str]:
    """Import our stand-ins as the top-level modules task, utils and reference; returns the names set.

    A name already in sys.modules is left alone, and so is one whose file exists in `beside` (the
    submission's folder): a copy of GPU MODE's own module there wins, as it would on the leaderboard.
    """
    installed = []
    for name in HARNESS_MODULES:
        if name in sys.modules or (beside is not None and (beside / f"{name}.py").is_file()):
            continue
        path = harness_dir(problem) / f"{name}.py"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        installed.append(name)
    return installed


def default_device() -> str:
    """GPU MODE's harness always uses CUDA; our stand-ins fall back to the CPU so CI can run them."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"
