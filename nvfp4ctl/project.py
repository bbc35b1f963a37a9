"""Where the user's project lives: the folder holding task.yml, MEMORY.md and kernels/."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from nvfp4ctl.env import Env, env_str

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_DIR = PACKAGE_DIR.parent  # the checkout when installed editable or run from source
# A wheel (or `pip install .`) carries its own copy of kernels/, task.yml and the sm100 host proof
# here: setup.py's build step copies them, so the repository keeps one copy at its root.
SHIPPED_DIR = PACKAGE_DIR / "_shipped"


def shipped(relative: str) -> Path:
    """A file or folder nvfp4ctl ships (setup.py SHIPPED): the wheel's copy, else the checkout's."""
    return SHIPPED_DIR / relative if SHIPPED_DIR.is_dir() else REPO_DIR / relative


@lru_cache(maxsize=1)
def project_root() -> Path:
    """Nearest folder from the working directory upwards that holds a task.yml; else the cwd."""
    cwd = Path.cwd().resolve()
    for folder in (cwd, *cwd.parents):
        if (folder / "task.yml").is_file():
            return folder
    return cwd


def memory_path() -> Path:
    override = env_str(Env.MEMORY)
    return Path(override) if override else project_root() / "MEMORY.md"


def kernels_dir() -> Path:
    """The project's kernels/ folder, falling back to the one shipped with nvfp4ctl."""
    local = project_root() / "kernels"
    return local if local.is_dir() else shipped("kernels")
