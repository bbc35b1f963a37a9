"""Where nvfp4ctl's own files live: the package, the checkout around it, the shipped task.yml and
kernels, and the cache folder. The user's folder is resolved in `workspace.py`."""

from __future__ import annotations

from pathlib import Path

from nvfp4ctl.env import Env, env_str

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_DIR = PACKAGE_DIR.parent  # the checkout when installed editable or run from source
# A wheel (or `pip install .`) carries its own copy of kernels/, task.yml, the sm100 host proof, docs/ and README.md
# here: setup.py's build step copies them, so the repository keeps one copy at its root.
SHIPPED_DIR = PACKAGE_DIR / "_shipped"


def shipped(relative: str) -> Path:
    """A file or folder nvfp4ctl ships (setup.py SHIPPED): the wheel's copy, else the checkout's."""
    return SHIPPED_DIR / relative if SHIPPED_DIR.is_dir() else REPO_DIR / relative


def in_installed_package(path: Path) -> bool:
    """Whether `path` is one of the wheel's own copies (under nvfp4ctl/_shipped), which every project using
    this Python environment shares and a reinstall replaces; a checkout's kernels/ are the project's own."""
    return SHIPPED_DIR in path.resolve().parents


def shipped_task_path() -> Path:
    """nvfp4ctl's own task.yml (GPU MODE's nvfp4_gemm tests and benchmarks)."""
    return shipped("task.yml")


# The guide to the NVFP4CTL_UMMA_PRINT macro and its `nvfp4ctl:umma` lines, by its name in the
# repository: --help names it so (a path would name one machine's folders and wrap across lines).
BYO_KERNEL_DOC = "docs/byo_kernel.md"


def byo_kernel_doc() -> Path:
    """The BYO_KERNEL_DOC that messages point to: a wheel user has no checkout, so the path names the
    copy the wheel ships."""
    return shipped(BYO_KERNEL_DOC)


def kernels_dir() -> Path:
    """The user's kernels/ folder (our layout: kernels/sm90, kernels/sm100), else nvfp4ctl's own."""
    from nvfp4ctl.workspace import user_folder  # workspace imports this module

    local = user_folder() / "kernels"
    return local if local.is_dir() else shipped("kernels")


def cache_root() -> Path:
    """Build cache, GPU calibration and the run log of commands that found no user folder."""
    override = env_str(Env.CACHE)
    return Path(override).expanduser() if override else Path.home() / ".cache" / "nvfp4ctl"
