"""The commit stamp a wheel carries: its file's name, what a valid one holds, and which changes make it "+dirty".

setup.py writes the stamp and nvfp4ctl.tool_version reads it, so both take these names from here. setup.py
runs before the package is installed and loads this file by its path, not as part of the package: it must
import nothing but the standard library.
"""

from __future__ import annotations

import re

# At an sdist's root, and in the wheel under nvfp4ctl/_shipped.
STAMP_FILE = "BUILD_COMMIT"
OBJECT_NAME = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1, or SHA-256 in a repository made with it
DIRTY = "+dirty"  # a tree with changes to tracked files, as the run log's commit cell marks one
# What a stamp holds: the commit (group 1), then "+dirty" where the tree had changes (group 2).
STAMP = re.compile(rf"({OBJECT_NAME.pattern})({re.escape(DIRTY)})?")
# The changes no "+dirty" counts, as a `git status` pathspec: every file named MEMORY.md in the tree, at its top
# or in any folder. Each is a run log (workspace.MEMORY_FILE), which commands append run lines to beside the
# user's notes, never code a run measures. The run log's commit cell and a wheel's stamp both leave them out,
# so the two mark the same tree alike.
RUN_LOGS_LEFT_OUT = ":(top,exclude,glob)**/MEMORY.md"
# The `git status` arguments (after "git") that list the tracked files a "+dirty" counts: any output is a change.
TRACKED_CHANGES = ("status", "--porcelain", "--untracked-files=no", "--", RUN_LOGS_LEFT_OUT)
