"""Every relative link in the README and the docs leads somewhere: the file exists and, where the
link names a heading (`file.md#heading`), that heading is in it, spelled as GitHub makes its anchors.
A renamed heading or a moved study otherwise leaves the guide pointing at nothing, unnoticed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "benchmarks").glob("*.md"))]
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


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
        if re.match(r"[a-z][a-z0-9+.-]*:", link):  # https:, mailto: — not ours to check offline
            continue
        path, _, anchor = link.partition("#")
        target = (guide.parent / path) if path else guide
        if not target.exists():
            broken.append(f"{link}: no such file")
        elif anchor and target.suffix == ".md" and anchor not in github_anchors(target.read_text(encoding="utf-8")):
            broken.append(f"{link}: no such heading in {target.name}")
    assert not broken, f"{guide.name}: " + "; ".join(broken)
