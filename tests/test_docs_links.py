"""Every relative link in the README and the docs leads somewhere: the file exists and, where the
link names a heading (`file.md#heading`), that heading is in it, spelled as GitHub makes its anchors.
A renamed heading or a moved study otherwise leaves the guide pointing at nothing, unnoticed.

Links to GPU MODE's repositories cannot be fetched here (tests run offline), so each is held to what
nvfp4ctl's own files say exists there: the reference-kernels repository, and a path its problem folders
and the files nvfp4ctl mirrors from them account for. A mistyped problem name is caught; a file GPU MODE
renamed is not."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from nvfp4ctl.problems import get_problem, problem_names

ROOT = Path(__file__).resolve().parent.parent
GUIDES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "benchmarks").glob("*.md"))]
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
# In prose and in fenced code alike: a `git clone` line with a mistyped URL fails as a link does.
_GPU_MODE_URL = re.compile(r"https?://github\.com/gpu-mode/[^\s)\]>`\"'<]*")
# The repository root, or a folder or file in it at a branch or commit: .../tree/main/problems/nvidia/nvfp4_gemm
_GPU_MODE_PLACE = re.compile(r"https?://github\.com/gpu-mode/(?P<repo>[\w.-]+?)(?:\.git)?"
                             r"(?:/(?:tree|blob)/[\w.-]+(?P<path>(?:/[\w.-]+)*))?/?(?:#[\w.-]*)?")
_TASK_FILE_SOURCE = re.compile(r"gpu-mode/(?P<repo>[\w.-]+), (?P<path>problems/[\w./-]+)")


def github_anchors(markdown: str) -> set[str]:
    """GitHub's anchor of each heading: lower case, punctuation dropped, spaces as hyphens, and -1,
    -2, … after a repeated one."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for line in _FENCE.sub("", markdown).splitlines():
        heading = _HEADING.match(line)
        if heading is None:
            continue
        anchor = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        anchors.add(anchor if count == 0 else f"{anchor}-{count}")
    return anchors


def test_anchors_are_spelled_as_github_spells_them() -> None:
    text = "# The NVFP4 family\n## `nvfp4ctl check`\n## After v20: where the time is\n## Notes\n## Notes\n"
    assert github_anchors(text) == {"the-nvfp4-family", "nvfp4ctl-check", "after-v20-where-the-time-is", "notes", "notes-1"}


@pytest.mark.parametrize("guide", GUIDES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_leads_somewhere(guide: Path) -> None:
    broken = []
    for link in _LINK.findall(_FENCE.sub("", guide.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", link):  # https:, mailto: — not fetched offline (GPU MODE's: below)
            continue
        path, _, anchor = link.partition("#")
        target = (guide.parent / path) if path else guide
        if not target.exists():
            broken.append(f"{link}: no such file")
        elif anchor and target.suffix == ".md" and anchor not in github_anchors(target.read_text(encoding="utf-8")):
            broken.append(f"{link}: no such heading in {target.name}")
    assert not broken, f"{guide.name}: " + "; ".join(broken)


@functools.cache
def gpu_mode_places() -> dict[str, set[str]]:
    """What nvfp4ctl's own files say GPU MODE's repositories hold, repository → paths (every folder above
    a path too): the task file each shipped task.yml names as its source, the harness files nvfp4ctl
    stands in for beside it (reference.py, task.py, utils.py) and each problem's timing loop."""
    files: dict[str, set[str]] = {}
    for name in problem_names():
        folder = ROOT / "nvfp4ctl" / "problems" / name
        source = _TASK_FILE_SOURCE.search((folder / "task.yml").read_text(encoding="utf-8"))
        assert source is not None, f"{name}'s task.yml no longer names the GPU MODE file it follows"
        paths = files.setdefault(source["repo"], set())
        paths.add(source["path"])
        problem_folder = source["path"].rpartition("/")[0]
        paths |= {f"{problem_folder}/{stand_in.name}" for stand_in in (folder / "harness").glob("*.py")
                  if stand_in.name != "__init__.py"}
        paths.add(get_problem(name).timing.source)
    return {repo: {"/".join(path.split("/")[:depth]) for path in paths for depth in range(1, path.count("/") + 2)}
            for repo, paths in files.items()}


def unknown_gpu_mode_links(text: str, places: dict[str, set[str]]) -> list[str]:
    """Each GPU MODE URL in `text` that names a repository or a path `places` does not hold, with why."""
    unknown = []
    for url in _GPU_MODE_URL.findall(text):
        url = url.rstrip(".,;:")
        place = _GPU_MODE_PLACE.fullmatch(url)
        if place is None:
            unknown.append(f"{url}: not the repository's root nor a tree/ or blob/ path in it")
        elif place["repo"] not in places:
            unknown.append(f"{url}: no GPU MODE repository nvfp4ctl follows (known: {', '.join(sorted(places))})")
        elif place["path"] and place["path"].strip("/") not in places[place["repo"]]:
            unknown.append(f"{url}: {place['path'].strip('/')} is no path nvfp4ctl's problem files name there")
    return unknown


def test_the_gpu_mode_places_are_each_problems_folder_and_files() -> None:
    reference_kernels = gpu_mode_places()["reference-kernels"]
    assert {"problems/nvidia/nvfp4_gemm", "problems/nvidia/nvfp4_gemm/task.yml", "problems/nvidia/nvfp4_gemm/reference.py",
            "problems/nvidia/nvfp4_group_gemm/utils.py", "problems/nvidia/eval_better_bench.py", "problems/nvidia",
            "problems"} <= reference_kernels
    assert "problems/nvidia/nvfp4_gem" not in reference_kernels


@pytest.mark.parametrize("url", [
    "https://github.com/gpu-mode/reference-kernels", "https://github.com/gpu-mode/reference-kernels.git",
    "https://github.com/gpu-mode/reference-kernels/tree/main/problems/nvidia/nvfp4_dual_gemm",
    "https://github.com/gpu-mode/reference-kernels/tree/main/problems/nvidia/nvfp4_gemv/",
    "https://github.com/gpu-mode/reference-kernels/blob/f83cb92/problems/nvidia/nvfp4_gemm/reference.py#L12",
    "https://github.com/gpu-mode/reference-kernels/blob/main/problems/nvidia/eval_better_bench_grouped_gemm.py"])
def test_a_gpu_mode_link_to_a_known_place_passes(url: str) -> None:
    assert unknown_gpu_mode_links(f"[it]({url}) and `git clone {url}`.", gpu_mode_places()) == []


@pytest.mark.parametrize(("url", "why"), [
    ("https://github.com/gpu-mode/reference-kernels/tree/main/problems/nvidia/nvfp4_gem",
     "problems/nvidia/nvfp4_gem is no path"),
    ("https://github.com/gpu-mode/reference-kernels/blob/main/problems/nvidia/nvfp4_gemm/refrence.py",
     "problems/nvidia/nvfp4_gemm/refrence.py is no path"),
    ("https://github.com/gpu-mode/reference-kernel", "no GPU MODE repository nvfp4ctl follows"),
    ("https://github.com/gpu-mode/reference-kernels/problems/nvidia/nvfp4_gemm", "nor a tree/ or blob/ path"),
])
def test_a_gpu_mode_link_with_a_typo_is_named(url: str, why: str) -> None:
    for text in (f"see [the task]({url})", f"```\n$ git clone {url}\n```"):
        found = unknown_gpu_mode_links(text, gpu_mode_places())
        assert len(found) == 1 and found[0].startswith(url + ":") and why in found[0], found


@pytest.mark.parametrize("guide", GUIDES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_gpu_mode_link_names_a_place_nvfp4ctl_knows_there(guide: Path) -> None:
    unknown = unknown_gpu_mode_links(guide.read_text(encoding="utf-8"), gpu_mode_places())
    assert not unknown, f"{guide.name}: " + "; ".join(unknown)
