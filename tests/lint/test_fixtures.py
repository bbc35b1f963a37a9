"""Realistic files in the styles users write: every finding must be marked `expect: NVxxx` on its
line, and every mark must be found (near-miss files carry no marks, so they must stay clean)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nvfp4ctl.lint import LintConfig, lint_paths

FIXTURES = Path(__file__).parent / "fixtures"
MARK = re.compile(r"expect:\s*(NV\d{3}(?:\s*,\s*NV\d{3})*)")


def expected(path: Path) -> set[tuple[int, str]]:
    marks = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = MARK.search(line)
        if match:
            marks.update((number, code.strip()) for code in match.group(1).split(","))
    return marks


@pytest.mark.parametrize("path", sorted(p for p in FIXTURES.iterdir() if p.is_file()), ids=lambda p: p.name)
def test_findings_match_the_marks(path: Path) -> None:
    report = lint_paths([path], LintConfig())
    found = {(d.line, d.code) for d in report.diagnostics}
    missing, unexpected = expected(path) - found, found - expected(path)
    details = {(d.line, d.code): d.message for d in report.diagnostics}
    assert not missing, f"not found: {sorted(missing)}"
    assert not unexpected, "unexpected: " + "; ".join(f"{l}:{c} {details[(l, c)]}" for l, c in sorted(unexpected))


def test_good_files_have_no_errors_even_with_every_rule_on() -> None:
    good = [p for p in FIXTURES.iterdir() if "good" in p.name or "near_miss" in p.name]
    report = lint_paths(good, LintConfig(select=tuple(r for r in ("NV0", "NV1", "NV2", "NV3", "NV4", "NV5", "NV6", "NV7", "NV8"))))
    assert report.errors == 0, [f"{d.path.name}:{d.line} {d.code}" for d in report.diagnostics]


def test_cutlass_only_profile_flags_inline_ptx() -> None:
    default = lint_paths([FIXTURES / "load_inline_tcgen05_good.py", FIXTURES / "kernel_good.cu"], LintConfig())
    strict = lint_paths([FIXTURES / "load_inline_tcgen05_good.py", FIXTURES / "kernel_good.cu"],
                        LintConfig(profile="cutlass-only"))
    assert not [d for d in default.diagnostics if d.code == "NV901"]
    flagged = {(d.path.name, d.line) for d in strict.diagnostics if d.code == "NV901"}
    assert flagged == {("load_inline_tcgen05_good.py", 14), ("kernel_good.cu", 33)}
