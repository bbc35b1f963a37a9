"""The small family of errors core modules raise; the CLI turns each into one line and an exit code."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILURES = 1  # tests failed, lint errors
    USAGE = 2  # usage or input error
    TIMEOUT = 3  # timeout / possible deadlock
    CRASH = 4  # kernel crashed
    INTERRUPTED = 130  # Ctrl-C: the shell convention (128 + SIGINT), so scripts never read it as failures


def error_line(message: str) -> str:
    """A JSON document's "error": the message's first line, as the run log keeps it; a crash's child log
    lines and traceback below it stay on stderr."""
    return message.strip().splitlines()[0] if message.strip() else message


class NvfpError(Exception):
    """Base class: the message is shown as one line, the exit code is returned to the shell."""

    exit_code: ExitCode = ExitCode.FAILURES
    # the run log's words for it where its first line is not them: bench's line of a raised exception, its
    # message cut as check cuts a cause (bounded_text.bounded_cause); None: the first line
    logged: str | None = None


class UsageError(NvfpError):
    """A user mistake: bad flag, missing file, malformed task.yml, no GPU where one is needed."""

    exit_code = ExitCode.USAGE


class UnloadableSubmission(UsageError):
    """A submission that is not Python or gives GPU MODE no callable custom_kernel: the user's input,
    not a crash. Its message names the place (FILE:LINE: ...) and is shown as it is."""


class FailuresFound(NvfpError):
    exit_code = ExitCode.FAILURES


class KernelTimeout(NvfpError):
    """A kernel call outlived the watchdog: reported as a possible deadlock."""

    exit_code = ExitCode.TIMEOUT


class ToolTimeout(NvfpError):
    """A compiler, or a host program nvfp4ctl built, ran past its limit and was stopped: a timeout (exit 3),
    not the user's input, and no kernel call to call a possible deadlock."""

    exit_code = ExitCode.TIMEOUT


class KernelCrash(NvfpError):
    """The child running the kernel died or hit a CUDA error."""

    exit_code = ExitCode.CRASH


def os_reason(error: OSError, path: object = None) -> str:
    """An OSError as the user needs it: the reason, and the path it hit where that is not `path`, the
    one the message names already (writing a/b.py when `a` is a file fails on `a`)."""
    reason = error.strerror or str(error)
    hit = error.filename
    return f"{reason} ({hit})" if hit and str(hit) != str(path) else reason
