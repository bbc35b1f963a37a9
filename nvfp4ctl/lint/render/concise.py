"""Text like ruff's: `path:line:col: CODE message`, the source line with a caret, a summary line."""

from __future__ import annotations

from pathlib import Path

from nvfp4ctl.lint.diagnostic import Diagnostic, LintReport
from nvfp4ctl.lint.render.paths import display_path
from nvfp4ctl.words import plural

TAB = "    "


def counts(report: LintReport) -> str:
    """"2 errors, 1 warning in 14 files": the one-line result for the run log."""
    return f"{plural(report.errors, 'error')}, {plural(report.warnings, 'warning')} in {plural(len(report.files), 'file')}"


def render_diagnostic(diagnostic: Diagnostic, cwd: Path | None = None) -> str:
    head = f"{display_path(diagnostic.path, cwd)}:{diagnostic.line}:{diagnostic.col}: {diagnostic.code} {diagnostic.message}"
    if not diagnostic.source_line:
        return head
    gutter = str(diagnostic.line)
    shown = diagnostic.source_line.replace("\t", TAB)
    before = diagnostic.source_line[: diagnostic.col - 1].replace("\t", TAB)
    width = max(1, min(diagnostic.width, len(diagnostic.source_line) - diagnostic.col + 1))
    pad = " " * len(gutter)
    return (f"{head}\n{pad} |\n{gutter} | {shown}\n"
            f"{pad} | {' ' * len(before)}{'^' * width} {diagnostic.severity.value}")


def summary(report: LintReport) -> str:
    skipped = (f"; {plural(len(report.not_submissions), 'Python file')} skipped, not a submission"
               if report.not_submissions else "")
    if report.compiler_outputs:
        skipped += f"; {plural(len(report.compiler_outputs), 'compiler intermediate')} skipped, nvcc -keep output"
    if not report.diagnostics:
        return f"All checks passed ({plural(len(report.files), 'file')} checked{skipped})"
    return (f"Found {plural(report.errors, 'error')}, {plural(report.warnings, 'warning')} in "
            f"{plural(report.files_with_findings, 'file')} ({len(report.files)} checked{skipped})")


def render(report: LintReport, cwd: Path | None = None) -> str:
    blocks = [render_diagnostic(d, cwd) for d in report.diagnostics]
    return "\n\n".join([*blocks, summary(report)]) + "\n"
