"""Only the build steps that put the files nvfp4ctl needs at run time into the wheel.

The repository keeps kernels/ and task.yml at its root (users edit them there, and an editable
install reads them there). A wheel has no repository around it, so build_py copies them into the
package as nvfp4ctl/_shipped/, where nvfp4ctl.project.shipped() finds them. It also stamps the commit
the wheel was built from (nvfp4ctl/_shipped/BUILD_COMMIT), which the run log records beside the
version: "0.1.0" alone cannot tell two builds apart. An sdist carries the stamp at its root, so a
wheel built from the sdist (no .git there) has it too. The copied guides' links to files the wheel
leaves out (the benchmarks/ notes) become words naming them in the source tree. Everything else about
the package is in pyproject.toml.
"""

from __future__ import annotations

import posixpath
import re
import runpy
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

ROOT = Path(__file__).resolve().parent
# Paths relative to the repository root, copied to the same relative paths under nvfp4ctl/_shipped.
# README.md: the guide the shipped docs link to as ../README.md.
SHIPPED = ("kernels", "task.yml", "tests/sm100/host/sm100_host_proof.cu", "docs", "README.md")
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.o")
# The commit stamp's file name and patterns, which nvfp4ctl/tool_version.py reads the stamp with. Loaded from
# the file's path: the package is not importable while it is being built.
_COMMIT_STAMP = runpy.run_path(str(ROOT / "nvfp4ctl" / "commit_stamp.py"))
BUILD_COMMIT: str = _COMMIT_STAMP["STAMP_FILE"]  # at an sdist's root, and in the wheel under nvfp4ctl/_shipped
_OBJECT_NAME: re.Pattern[str] = _COMMIT_STAMP["OBJECT_NAME"]
DIRTY: str = _COMMIT_STAMP["DIRTY"]  # a tree with changes to tracked files, as the run log marks a checkout's commit
_STAMP: re.Pattern[str] = _COMMIT_STAMP["STAMP"]
SDIST_METADATA = "PKG-INFO"  # at the root of every sdist (the core metadata), never in a checkout
# The run logs commands run in the checkout append to (every MEMORY.md, any folder's): tracked files, but no
# wheel ships them, so no change, as the run log's commit cell leaves them out.
RUN_LOGS_LEFT_OUT: str = _COMMIT_STAMP["RUN_LOGS_LEFT_OUT"]
_TRACKED_CHANGES: tuple[str, ...] = _COMMIT_STAMP["TRACKED_CHANGES"]  # git status, RUN_LOGS_LEFT_OUT left out


def source_commit() -> str | None:
    """The commit of the tree being built: git's HEAD where ROOT is the root of a checkout of nvfp4ctl ("+dirty"
    with changes to tracked files), else the stamp an sdist carries, else None (a tree copied out of git:
    nothing to stamp)."""
    if (commit := _checkout_head()) is not None:
        return commit
    stamp = ROOT / BUILD_COMMIT
    text = stamp.read_text(encoding="utf-8").strip() if stamp.is_file() else ""
    return text if _STAMP.fullmatch(text) else None


def _checkout_head() -> str | None:
    """HEAD of the checkout of nvfp4ctl whose root is ROOT, "+dirty" with changes; None where ROOT is none."""
    # An unpacked sdist (PKG-INFO at its root, as every sdist has and no checkout tracks) is no checkout of
    # nvfp4ctl even where it is a git root itself (`git init` in it): that history is not nvfp4ctl's.
    if (ROOT / SDIST_METADATA).is_file():
        return None
    try:
        found = subprocess.run(["git", "rev-parse", "--show-toplevel", "HEAD"], cwd=ROOT,
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):  # no git on this machine
        return None
    top, _, commit = found.stdout.strip().partition("\n")
    # an sdist unpacked inside some other repository: that repository's HEAD is not ours
    if found.returncode != 0 or Path(top).resolve() != ROOT or not _OBJECT_NAME.fullmatch(commit.strip()):
        return None
    return commit.strip() + (DIRTY if _tracked_files_changed() else "")


def _tracked_files_changed() -> bool:
    """Whether the checkout at ROOT differs from its HEAD in a tracked file, the run logs left out; where git
    cannot say, the tree is not claimed to be the commit's."""
    try:
        status = subprocess.run(["git", *_TRACKED_CHANGES], cwd=ROOT, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return True
    return status.returncode != 0 or bool(status.stdout.strip())


# A Markdown link, [words](target), and a target that names a scheme (https:, mailto:) rather than a file.
_LINK = re.compile(r"\[([^\]\n]*)\]\(([^)\s]+)\)")
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def is_shipped(relative: str) -> bool:
    """Whether the wheel holds the file at `relative` (a path from the repository root)."""
    return any(relative == item or relative.startswith(item + "/") for item in SHIPPED)


def unshipped_links_as_text(text: str, guide: str) -> str:
    """The text of the guide at `guide` (a path from the repository root) with each link to a file the wheel
    leaves out (the development notes in benchmarks/) written as words naming it in the source tree: in an
    install such a link leads nowhere. Fenced code is left as it is."""
    def as_text(link: re.Match[str]) -> str:
        words, target = link[1], link[2]
        path = target.partition("#")[0]
        if not path or _SCHEME.match(target):
            return link[0]
        relative = posixpath.normpath(posixpath.join(posixpath.dirname(guide), path))
        if relative.startswith("../") or is_shipped(relative):  # outside the tree: no path to name there
            return link[0]
        named = f"`{relative}`"
        return f"{named} in the source tree" if words == named else f"{words} ({named} in the source tree)"

    lines, fenced = [], False
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        lines.append(line if fenced else _LINK.sub(as_text, line))
    return "".join(lines)


class BuildPyWithShipped(build_py):
    def run(self) -> None:
        editable = getattr(self, "editable_mode", False)  # an editable install reads the checkout itself
        if not editable:  # an in-tree build/ must not carry modules deleted from the source into the wheel
            shutil.rmtree(Path(self.build_lib) / "nvfp4ctl", ignore_errors=True)
        super().run()
        if editable:
            return
        target = Path(self.build_lib) / "nvfp4ctl" / "_shipped"
        for relative in SHIPPED:
            source, destination = ROOT / relative, target / relative
            if not source.exists():
                raise FileNotFoundError(f"{relative}: missing from the source tree (see MANIFEST.in)")
            destination.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, destination, ignore=IGNORED)
            else:
                shutil.copy2(source, destination)
        for guide in sorted(target.rglob("*.md")):
            relative = guide.relative_to(target).as_posix()
            text = guide.read_text(encoding="utf-8")
            if (rewritten := unshipped_links_as_text(text, relative)) != text:
                guide.write_text(rewritten, encoding="utf-8")
        if commit := source_commit():
            (target / BUILD_COMMIT).write_text(commit + "\n", encoding="utf-8")


class SdistWithCommit(sdist):
    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        if commit := source_commit():
            stamp = Path(base_dir) / BUILD_COMMIT
            stamp.unlink(missing_ok=True)  # a hard link to the source tree's stamp must not be written through
            stamp.write_text(commit + "\n", encoding="utf-8")


setup(cmdclass={"build_py": BuildPyWithShipped, "sdist": SdistWithCommit})
