"""Text like ruff's: `path:line:col: CODE message`, the source line with a caret, a summary line."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from nvfp4ctl.lint.diagnostic import Diagnostic, LintReport
from nvfp4ctl.lint.render.paths import display_path
from nvfp4ctl.printable import escape, escaped
from nvfp4ctl.words import plural

TAB = "    "


def counts(report: LintReport) -> str:
    """The run log's result line, in the numbers of the summary the terminal shows ("2 errors, 1 warning in
    1 file (14 checked)"): "in N files" counts the files with findings there, not those checked."""
    if not report.diagnostics:
        return f"{_found(report)} ({plural(len(report.files), 'file')} checked)"
    return f"{_found(report)} in {plural(report.files_with_findings, 'file')} ({len(report.files)} checked)"


def _found(report: LintReport) -> str:
    return f"{plural(report.errors, 'error')}, {plural(report.warnings, 'warning')}"


# The most of a source line shown, in its characters, and how many before the finding's column: a line of
# minified code, nvcc output or a binary file can be megabytes, and every finding on it printed it whole.
LINE_SHOWN = 160
BEFORE_COLUMN = 60
ELLIPSIS = "…"


def render_diagnostic(diagnostic: Diagnostic, cwd: Path | None = None) -> str:
    head = escaped(f"{display_path(diagnostic.path, cwd)}:{diagnostic.line}:{diagnostic.col}: {diagnostic.code}"
                    f" {diagnostic.message}")
    if not diagnostic.source_line:
        return head
    gutter = str(diagnostic.line)
    line, start = diagnostic.source_line, diagnostic.col - 1
    low = max(0, start - BEFORE_COLUMN) if len(line) > LINE_SHOWN else 0
    high = min(len(line), low + LINE_SHOWN) if len(line) > LINE_SHOWN else len(line)
    opening, closing = (ELLIPSIS if low > 0 else ""), (ELLIPSIS if high < len(line) else "")
    shown = opening + _shown(line[low:high]) + closing
    before = opening + _shown(line[low:start])
    width = max(1, min(diagnostic.width, high - start))
    # the carets cover each escape shown in the span (a tab keeps its one, as it always had)
    width += sum(len(escape(ch)) - 1 for ch in line[start : start + width] if ch != "\t" and not ch.isprintable())
    pad = " " * len(gutter)
    return (f"{head}\n{pad} |\n{gutter} | {shown}\n"
            f"{pad} | {' ' * len(before)}{'^' * width} {diagnostic.severity.value}")


@lru_cache(maxsize=64)  # the findings of one line share its text: escaped once
def _shown(text: str) -> str:
    """text as the source line shows it: a tab as spaces, any other character that is not printable
    as its escape (\\x1b, \\u202e), so a line of a binary or latin-1 file cannot move the cursor,
    recolour or reorder the terminal's text; the carets under it count the escapes' characters."""
    return escaped(text.replace("\t", TAB))


def summary(report: LintReport) -> str:
    skipped = (f"; {plural(len(report.not_submissions), 'Python file')} skipped, not a submission"
               if report.not_submissions else "")
    if report.compiler_outputs:
        skipped += f"; {plural(len(report.compiler_outputs), 'compiler intermediate')} skipped, nvcc -keep output"
    if not report.diagnostics:
        return f"All checks passed ({plural(len(report.files), 'file')} checked{skipped})"
    return (f"Found {_found(report)} in {plural(report.files_with_findings, 'file')}"
            f" ({len(report.files)} checked{skipped})")


def render(report: LintReport, cwd: Path | None = None) -> str:
    blocks = [render_diagnostic(d, cwd) for d in report.diagnostics]
    return "\n\n".join([*blocks, summary(report)]) + "\n"
