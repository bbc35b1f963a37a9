"""The run log: one line per command added to MEMORY.md's run-log section, never touching the notes around it.

entry: a run's line; files: MEMORY.md as a file (encodings, folders); section: where the run log lies in it,
read as CommonMark; fences: a code block left open where the line goes, closed first; reading: the runs read back;
appending: a line added under the locks; placing: the line
written into the file itself, or a copy moved over it while it is still the one read.
"""

from __future__ import annotations

from nvfp4ctl.runlog.appending import (LOCK_TIMEOUT_S, PREAMBLE, NoLockFolder, ReadOnlyRunLog, append, lock_path,
                                       not_a_run_log)
from nvfp4ctl.runlog.entry import (CPU_DEVICE_LABEL, LOG_RELATIVE, SEPARATOR, RunEntry, command_arguments, command_name,
                                   describe_target, detect_gpu, file_digest, folder_target, git_state, log_folder_of, logged_path,
                                   looks_like_a_run, make_entry, resolved_as_logged, split_target, time_order,
                                   time_shown)
from nvfp4ctl.runlog.files import (MARKDOWN_SUFFIXES, UndecodableRunLog, file_in_the_way, is_null_device,
                                   missing_folder, refuse_a_missing_folder, unreadable_kind)
from nvfp4ctl.runlog.placing import ChangedWhileWritten
from nvfp4ctl.runlog.reading import (NumberedRuns, RunLogBytes, RunsBelowTheLog, TimeFloor, newest_first,
                                     newest_first_in, numbered_runs_in, picked_by_time, read, read_log, read_numbered,
                                     runs_below_the_log, runs_below_the_log_in)
from nvfp4ctl.runlog.section import HEADING

__all__ = [
    "CPU_DEVICE_LABEL", "HEADING", "NoLockFolder", "LOCK_TIMEOUT_S", "LOG_RELATIVE", "MARKDOWN_SUFFIXES", "PREAMBLE", "SEPARATOR",
    "ChangedWhileWritten",
    "NumberedRuns", "ReadOnlyRunLog", "RunEntry", "RunLogBytes", "RunsBelowTheLog", "TimeFloor", "UndecodableRunLog", "append",
    "command_arguments", "command_name", "describe_target", "detect_gpu", "file_digest", "file_in_the_way", "folder_target", "git_state", "is_null_device", "lock_path",
    "log_folder_of", "logged_path", "looks_like_a_run", "make_entry", "missing_folder", "newest_first",
    "newest_first_in", "not_a_run_log", "numbered_runs_in", "picked_by_time", "read", "read_log", "read_numbered",
    "refuse_a_missing_folder", "resolved_as_logged", "runs_below_the_log", "runs_below_the_log_in", "split_target", "time_order", "time_shown",
    "unreadable_kind",
]
