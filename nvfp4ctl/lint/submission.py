"""What counts as a submission: the Python files the competition rules are about.

A GPU MODE submission is one .py file with `custom_kernel(data)`. In a folder, lint applies the
rules to a .py file only when it defines or imports `custom_kernel`, or is named submission*.py;
other Python files (benchmark scripts, helpers, the project's own tools) are never sent to the
server, so the rules do not apply to them. A file the user names on the command line is always
checked: they asked for it. C++ sources are always checked (they end up inside submissions).
"""

from __future__ import annotations

import re
from pathlib import Path

SUBMISSION_NAME = re.compile(r"^submission.*\.py$", re.IGNORECASE)
# A definition, an assignment or an import of the name, at any indentation (definitions under an
# `if` or `try` count); a mention in a docstring or a call does not.
CUSTOM_KERNEL = re.compile(
    r"^[ \t]*(?:(?:async[ \t]+)?def[ \t]+custom_kernel\b|custom_kernel[ \t]*(?::[^=\n]*)?=(?!=)"
    r"|(?:from[ \t]+\S+[ \t]+)?import[ \t][^\n#]*\bcustom_kernel\b)",
    re.MULTILINE,
)


def is_submission(path: Path, text: str) -> bool:
    return bool(SUBMISSION_NAME.match(path.name)) or bool(CUSTOM_KERNEL.search(text))
