"""`nvfp4ctl lint`: the competition rules as a static checker (never imports what it checks)."""

from nvfp4ctl.lint.config import LintConfig
from nvfp4ctl.lint.diagnostic import Diagnostic, LintReport, Severity
from nvfp4ctl.lint.engine import lint_paths, lint_source, lint_text
from nvfp4ctl.lint.rules import RULES, Rule

__all__ = ["Diagnostic", "LintConfig", "LintReport", "RULES", "Rule", "Severity", "lint_paths", "lint_source", "lint_text"]
