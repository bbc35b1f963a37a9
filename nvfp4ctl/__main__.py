"""Where `nvfp4ctl` (the console script) and `python -m nvfp4ctl` start.

The console script imports its entry module before anything of ours runs, and loading the CLI
(typer, rich, every command's module) takes a while: a Ctrl-C then must end as it does later,
"error: interrupted" and exit 130, not as a traceback. So the entry is this module, which needs only
the standard library, and the CLI is loaded inside `main`'s handling.
"""

from __future__ import annotations

import contextlib
import sys

INTERRUPTED = 130  # errors.ExitCode.INTERRUPTED: nvfp4ctl.errors itself may be what the Ctrl-C stopped


def main() -> None:
    escape_what_the_streams_cannot_encode()
    try:
        from nvfp4ctl.cli import main as run
    except KeyboardInterrupt:
        # No run-log line, on purpose (docs/commands.md, exit codes): the run log's code is part of what was
        # loading, and loading it again to write one would hold back the exit the Ctrl-C asked for. From the
        # moment the command line is read, a Ctrl-C is logged (cli.py).
        _say_interrupted()
        raise SystemExit(INTERRUPTED) from None
    run()


def escape_what_the_streams_cannot_encode() -> None:
    """stdout and stderr write a character their encoding lacks as an escape (`\\xfc`), where a strict
    one (PYTHONIOENCODING=ascii, a latin-1 terminal) raised UnicodeEncodeError at the first `·` of log's
    lines or `ü` of a path: a traceback and exit 1 after init or export had written their files. A
    handler the user chose (PYTHONIOENCODING=latin-1:replace, UTF-8 mode's surrogateescape) stays."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) != "strict":
            continue
        with contextlib.suppress(AttributeError, ValueError, OSError):  # not a TextIOWrapper, or closed
            stream.reconfigure(errors="backslashreplace")


def _say_interrupted() -> None:
    """The CLI's own line, through its console where that was loaded (the same colours), else plain."""
    with contextlib.suppress(KeyboardInterrupt, OSError):  # another Ctrl-C, or a terminal that is gone
        console = sys.modules.get("nvfp4ctl.console")
        if console is not None:
            console.get_console().error("interrupted")
        else:
            sys.stderr.write("error: interrupted\n")
            sys.stderr.flush()


if __name__ == "__main__":
    main()
