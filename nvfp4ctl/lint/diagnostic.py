"""A finding is data: where, which rule, how bad, what to do. Rules return lists of these."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Diagnostic:
    path: Path
    line: int  # 1-based
    col: int  # 1-based, in characters of the original file
    code: str  # "NV101"
    severity: Severity = field(compare=False)
    message: str = field(compare=False)
    source_line: str = field(default="", compare=False)  # the offending line, for rendering
    width: int = field(default=1, compare=False)  # how many characters the caret underlines

    def to_dict(self, display_path: str | None = None) -> dict[str, object]:
        return {
            "path": display_path or str(self.path),
            "line": self.line,
            "col": self.col,
            "end_col": self.col + max(self.width, 1),
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "source_line": self.source_line,
        }


@dataclass(frozen=True)
class Finding:
    """What a rule reports: a character offset into the file's text, a code, a message."""

    offset: int
    code: str
    message: str
    width: int = 1


@dataclass(frozen=True)
class LintReport:
    diagnostics: tuple[Diagnostic, ...]
    files: tuple[Path, ...]  # every file that was checked
    not_submissions: tuple[Path, ...] = ()  # .py files found in folders that are not submissions
    broken_links: tuple[Path, ...] = ()  # found in folders, pointing nowhere: not checked (warnings)
    other_problems: tuple[tuple[Path, str, str], ...] = ()  # (file, its own problem, why: engine.own_problem)
    compiler_outputs: tuple[Path, ...] = ()  # nvcc -keep intermediates found in folders: not checked
    unknown_waivers: tuple[tuple[Path, int, str], ...] = ()  # (file, line, code): a waiver naming no rule (warnings)
    # each checked file's own task.yml where one other than the task in use judged it, else None: where the run logs
    own_tasks: tuple[Path | None, ...] = ()

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity is Severity.WARNING)

    @property
    def files_with_findings(self) -> int:
        return len({d.path for d in self.diagnostics})
