"""Which nvfp4ctl ran: the installed version, and the commit it was built from (a git checkout's own, or
the one setup.py stamped into the wheel).

The version in pyproject.toml moves seldom, so two runs a month apart may both be "0.1.0" and still time,
check or lint differently: the commit tells those apart. The run log records it on every line, so that a
change in a trend can be told a change of the tool's from one of the kernel's.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from nvfp4ctl import __version__
from nvfp4ctl.commit_stamp import OBJECT_NAME, STAMP, STAMP_FILE

_DISTRIBUTION = "nvfp4ctl"
_CHECKOUT = Path(__file__).resolve().parent.parent  # the folder that holds the package: a checkout's root, or site-packages
# Written by setup.py when a wheel is built: the source's commit, where no .git is around.
_BUILD_STAMP = Path(__file__).resolve().parent / "_shipped" / STAMP_FILE
SHORT_COMMIT = 7


@lru_cache(maxsize=1)
def tool_version() -> str:
    """"0.1.0 (abc1234)": the commit of the git checkout nvfp4ctl runs from (an editable install, or
    `python -m nvfp4ctl` inside one), else the one stamped at build time; "0.1.0" where neither says.
    Never raises: a run must not fail, nor lose its log line, over it."""
    commit = checkout_commit(_CHECKOUT) or stamped_commit(_BUILD_STAMP)
    return f"{installed_version()} ({commit})" if commit else installed_version()


def installed_version() -> str:
    """The installed distribution's version; the package's own where none is installed (a checkout run as is)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version(_DISTRIBUTION)
    except (PackageNotFoundError, ValueError, OSError):  # not installed, or metadata a broken install left
        return __version__
    return found or __version__  # metadata without a Version field reads as None


def checkout_commit(root: Path) -> str | None:
    """The short commit checked out at `root`, read from .git's files (no git process: every command pays
    for this); None where `root` is no checkout or its files say nothing readable. The tree's changes are
    not looked at: that needs git status, and the run log's commit cell tells the user's tree apart already."""
    try:
        git_dir = _git_dir(root)
        if git_dir is None:
            return None
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        name = _ref_target(git_dir, head.removeprefix("ref:").strip()) if head.startswith("ref:") else head
    except (OSError, UnicodeDecodeError):
        return None
    return name[:SHORT_COMMIT] if name and OBJECT_NAME.fullmatch(name) else None


def stamped_commit(stamp: Path) -> str | None:
    """The short commit a wheel was built from (setup.py writes the full one), "+dirty" where its tree had
    changes to tracked files; None where the file is missing or holds no commit (a wheel built from a
    tree outside git has none)."""
    try:
        found = STAMP.fullmatch(stamp.read_text(encoding="utf-8").strip())
    except (OSError, UnicodeDecodeError):
        return None
    return found[1][:SHORT_COMMIT] + (found[2] or "") if found else None


def _git_dir(root: Path) -> Path | None:
    """root/.git, or the folder a .git file names (`gitdir: ...`: a worktree's or a submodule's)."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    if not dot_git.is_file():
        return None
    text = dot_git.read_text(encoding="utf-8").strip()
    if not text.startswith("gitdir:"):
        return None
    return root / text.removeprefix("gitdir:").strip()  # an absolute path stays itself


def _ref_target(git_dir: Path, ref: str) -> str | None:
    """The object a ref names: its loose file, in the worktree's own folder or the repository's common one,
    else its line in packed-refs."""
    common = git_dir
    if (pointer := git_dir / "commondir").is_file():  # a linked worktree keeps its branches in the main one's
        common = git_dir / pointer.read_text(encoding="utf-8").strip()
    for folder in dict.fromkeys((git_dir, common)):
        if (loose := folder / ref).is_file():
            return loose.read_text(encoding="utf-8").strip()
    packed = common / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(encoding="utf-8").splitlines():
            name, _, packed_ref = line.partition(" ")
            if packed_ref == ref:
                return name
    return None
