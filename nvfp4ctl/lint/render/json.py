"""Machine-readable output: every diagnostic plus the counts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nvfp4ctl.lint.diagnostic import LintReport
from nvfp4ctl.lint.render.paths import display_path
from nvfp4ctl.lint.rules import RULES, Rule

FORMAT_VERSION = 1


def payload(report: LintReport, cwd: Path | None = None, nothing_to_lint: Sequence[Path] = ()) -> dict[str, Any]:
    """The report as JSON; `nothing_to_lint`: named folders that held nothing lint checks (the run exits 2)."""
    return {
        "version": FORMAT_VERSION,
        "diagnostics": [d.to_dict(display_path(d.path, cwd)) for d in report.diagnostics],
        "summary": {
            "errors": report.errors,
            "warnings": report.warnings,
            "files_checked": len(report.files),
            "files_with_findings": report.files_with_findings,
            "not_submissions": [display_path(path, cwd) for path in report.not_submissions],
            "compiler_outputs": [display_path(path, cwd) for path in report.compiler_outputs],
            "nothing_to_lint": [display_path(path, cwd) for path in nothing_to_lint],
            "unknown_waivers": [{"path": display_path(path, cwd), "line": line, "code": code}
                                for path, line, code in report.unknown_waivers],
        },
        "files": [display_path(path, cwd) for path in report.files],
    }


def rules_document(rules: Sequence[Rule], problem: str) -> dict[str, Any]:
    """`--list-rules --format json`: the rules in `problem`'s words, under the "version" every document
    of lint's starts with (it was a bare array, which a script checking the version first could not read)."""
    return {"version": FORMAT_VERSION, "problem": problem, "rules": rules_payload(rules)}


def rules_payload(rules: Sequence[Rule] = RULES) -> list[dict[str, Any]]:
    return [
        {
            "code": rule.code,
            "name": rule.name,
            "severity": rule.severity.value,
            "why": rule.why,
            "bad": rule.bad,
            "good": rule.good,
            "waivable": rule.waivable,
            "default": rule.default_on,
            "profiles": list(rule.profiles),
        }
        for rule in rules
    ]
