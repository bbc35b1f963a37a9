"""One run's line in the run log: what it holds, how it is written, and how it is read back."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from nvfp4ctl import commit_stamp
from nvfp4ctl.bounded_text import MAX_RESULT_CELL
from nvfp4ctl.content_digest import finished_digest
from nvfp4ctl.errors import UsageError
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.printable import escaped_bytes, shown, shown_within
from nvfp4ctl.runner.gpu import first_gpu, run_device
from nvfp4ctl.tool_version import tool_version

SEPARATOR = " · "


@dataclass(frozen=True)
class RunEntry:
    time: str
    command: str
    target: str
    commit: str
    gpu: str
    exit_code: str
    result: str
    problem: str = ""  # the task's problem ("nvfp4_dual_gemm"); a last cell, absent on older lines
    tool: str = ""  # the nvfp4ctl that wrote the line ("0.1.0 (abc1234)"), in no cell of its own (with_tool)
    note: str = ""  # what the user typed after the problem, or the result of a line with none: read back, never written

    def to_line(self) -> str:
        names = [f.name for f in fields(self) if f.name in _CELLS and (f.name != "problem" or self.problem)]
        cells = [_cell(getattr(self, name), MAX_RESULT_CELL if name == "result" else None) for name in names]
        cells[1] = f"`{cells[1]}`"
        if self.tool:
            cells[2] = with_tool(cells[2], _cell(self.tool))
        return "- " + SEPARATOR.join(cells) + "\n"

    @property
    def subcommand(self) -> str:
        """The command's name ("bench"), past the global options typed before it (`nvfp4ctl -q bench`)."""
        return command_name(self.command)

    @classmethod
    def from_line(cls, line: str) -> RunEntry | None:
        if not line.startswith("- "):
            return None
        cells = line[2:].rstrip("\n").split(SEPARATOR)
        note = ""
        if len(cells) >= len(_CELLS):  # the problem's cell, and what a hand edit added after it
            if (read := _problem_and_note_after_the_result(cells[len(_CELLS) - 1:])) is None:
                return None
            problem, note = read
            cells[len(_CELLS) - 1:] = [problem]
        if len(cells) not in (len(_CELLS) - 1, len(_CELLS)):
            return None
        cells[1] = cells[1].strip("`")
        cells[2], tool = without_tool(cells[2])
        return cls(*cells, tool=tool, note=note)


_CELLS = ("time", "command", "target", "commit", "gpu", "exit_code", "result", "problem")


def time_shown(time: str) -> str:
    """A logged time stamp as `log` and its trend show it: "2025-01-02 03:04:05" for "2025-01-02T03:04:05Z"."""
    return time.replace("T", " ").rstrip("Z")


def time_order(time: str) -> str:
    """The key every reader puts logged runs in time order by (log --trend's runs, the previous bench compared
    with), not by their lines' places: a log merged by hand holds them out of order. UTC stamps of one form
    (time_shown writes each form the log has held as "2026-11-26 01:00:00") compare as text; runs of the same
    second go by file order, the later line the later run (a stable sort keeps it)."""
    return time_shown(time)

# How every problem is named: nvfp4ctl's ("nvfp4_dual_gemm"), or one a user defines ("mypkg.problems:MY_GEMM",
# as --problem and task.yml name it). A last cell of that form that names no known problem is a problem still
# (a later nvfp4ctl's, or the user's own: its own trend); any other is a note typed after a line with no problem.
# nvfp4ctl writes the name alone in its cell, so a name is the problem's only where it ends there or where what
# the user typed after it is set apart (_AFTER_THE_NAME); one their words run on from (`nvfp4_gemm: tried
# BLOCK_N 256`, `nvfp4_gemm_sm90.cu tuned`) is their sentence, a note typed after a line that logged no problem.
_AFTER_THE_NAME = r"(?=$|[\s(])"
_PROBLEM_FORM = re.compile(r"(nvfp4_[A-Za-z0-9_]+|[A-Za-z_][\w.]*:[A-Za-z_]\w*)" + _AFTER_THE_NAME)
_NAME_ENDS = re.compile(_AFTER_THE_NAME)


@lru_cache(maxsize=1)
def _known_problems() -> tuple[str, ...]:
    from nvfp4ctl.problems import problem_names  # the registry alone: no problem's module is loaded

    return problem_names()


def problem_and_note(cell: str) -> tuple[str, str]:
    """The last cell of a line, a known problem's name and a note the user typed after it (`nvfp4_dual_gemm
    (2-stage pipeline)`, `nvfp4_dual_gemm · tried swizzle 128B`), as (problem, note), a note in parentheses
    without them; a cell that starts with no known problem's name as it is (a problem of a later nvfp4ctl),
    with no note. Read whole, the note made a problem of its own: a trend of its own, a run bench's
    comparison passed over. A name the cell's words run on from (`nvfp4_gemm: tried BLOCK_N 256`) is none:
    nvfp4ctl writes the name alone, and the user sets a note apart from it (_AFTER_THE_NAME)."""
    for name in sorted(_known_problems(), key=len, reverse=True):  # the longest first: none is cut short
        if cell.startswith(name) and _NAME_ENDS.match(cell, len(name)):
            return name, _note_of(cell[len(name):])
    return cell, ""


def _problem_and_note_after_the_result(cells: list[str]) -> tuple[str, str] | None:
    """The problem and the note the cells after a line's result hold: a known problem's name and what the user
    typed after it (problem_and_note); a problem of a later nvfp4ctl, a cell of its own with nothing after it;
    else a note typed after a line that logged no problem, the cell separator inside it kept (`tried swizzle
    128B · slower`). None where the last cell is nvfp4ctl's problem cell, the name alone, and a cell more
    stands before it, or a later problem's cell has more after it: a line hand-edited inside its cells."""
    typed = SEPARATOR.join(cells)
    problem, note = problem_and_note(typed)
    if problem in _known_problems():
        return problem, note
    if _PROBLEM_FORM.match(cells[0]):
        return (problem, "") if len(cells) == 1 else None
    if len(cells) > 1 and _PROBLEM_FORM.fullmatch(cells[-1]):
        return None
    return "", _note_of(typed)


def _note_of(typed: str) -> str:
    """A note as the user typed it after a line's last cell, without the separator before it, and without
    its parentheses where it is one parenthesized phrase (`(2-stage pipeline)`)."""
    note = typed.strip().removeprefix(SEPARATOR.strip()).strip()
    if note.startswith("(") and note.endswith(")") and "(" not in note[1:] and ")" not in note[:-1]:
        note = note[1:-1].strip()
    return note

# Which nvfp4ctl wrote a line rides in its target cell's bracket, after the reason the target was chosen
# ("./submission.py@a7cbea65f00d [beside task.yml; nvfp4ctl 0.1.0 (abc1234)]"), and not in a cell of its own:
# every reader since the reason was logged cuts that bracket off the cell (split_target), where a ninth cell
# would make an older nvfp4ctl leave the whole line out as one it cannot read.
_TOOL_MARK = "nvfp4ctl "
# a version starts with a digit, so a reason's own words ("nvfp4ctl's shipped task") never read as one
_TOOL_AT_THE_END = re.compile(r"(?P<joint>; | \[)" + _TOOL_MARK + r"(?P<tool>\d[^\s\[\];]*(?: \([0-9a-f]+\))?)\]$")


def with_tool(cell: str, tool: str) -> str:
    """A target cell with the nvfp4ctl that wrote it, inside its reason's bracket (one of its own without one)."""
    if cell.endswith("]") and " [" in cell:
        return f"{cell[:-1]}; {_TOOL_MARK}{tool}]"
    return f"{cell} [{_TOOL_MARK}{tool}]"


def without_tool(cell: str) -> tuple[str, str]:
    """with_tool undone: (the target cell as an older line has it, the tool; "" where it names none)."""
    found = _TOOL_AT_THE_END.search(cell)
    if found is None:
        return cell, ""
    rest = cell[: found.start()] + ("]" if found["joint"] == "; " else "")
    return rest, found["tool"]


# `log --trend` asks every entry of a log of years of runs, most of which repeat a few command lines:
# shlex.split for each took seconds
@lru_cache(maxsize=4096)
def command_name(command: str) -> str:
    """"bench" for `nvfp4ctl bench ...`, `nvfp4ctl -q bench ...` and a rejected `nvfp4ctl --task log bench`
    (log is --task's value): the word where the CLI reads the command's name (cli.command_position), so
    the run log and the CLI agree on whose line it is; "" when none."""
    arguments = _command_words(command)
    return arguments[0] if arguments else ""


def command_arguments(command: str) -> tuple[str, ...]:
    """The words after the command's name (`nvfp4ctl -q bench --max-repeats 3` -> ("--max-repeats", "3")), as
    command_name finds that name; () when none."""
    return _command_words(command)[1:]


@lru_cache(maxsize=4096)
def _command_words(command: str) -> tuple[str, ...]:
    """The command's name and the words after it; () when the line names none (split once per command line,
    for command_name and command_arguments both)."""
    from nvfp4ctl.cli import command_position  # here, not at the top: modules the CLI imports import this one

    if _QUOTING.search(command) is None:  # nothing shlex would read otherwise than its whitespace split
        words = _SHLEX_WHITESPACE.split(command.strip(" \t\r\n"))
    else:
        try:
            words = shlex.split(command)
        except ValueError:  # an unbalanced quote in a hand-edited line
            words = command.split()
    at = command_position(words[1:])
    return tuple(words[1:][at:]) if at is not None else ()


_QUOTING = re.compile(r"['\"\\]")
_SHLEX_WHITESPACE = re.compile(r"[ \t\r\n]+")  # shlex's own, not str.split's (which breaks at \u3000 too)


def _cell(text: str, limit: int | None = None) -> str:
    """A cell as the line holds it: the cell separator's dot as "-"; every character str.splitlines() breaks
    at (\\r, \\x0b, \\x1c, \\u2028, ...) as a space, as the log is read back line by line and a break
    inside a cell would lose that entry; then as printable.shown writes it for the terminal (ESC as `\\x1b`,
    U+202E as `\\u202e`), so `cat MEMORY.md` cannot recolour or reorder the terminal's text, and a byte of a
    command-line argument or a path that is not UTF-8 (a lone surrogate, \\udcff) as `\\xff`: the log is
    UTF-8 and cannot encode the surrogate itself. `limit`: at most that many characters, cut before an
    escape the cut would split (printable.shown_within)."""
    if not text:
        return text
    one_line = " ".join(text.replace(SEPARATOR.strip(), "-").splitlines())
    return shown(one_line) if limit is None else shown_within(one_line, limit)


def resolved_as_logged(path: Path) -> tuple[Path, ...]:
    """`path` resolved, in each form a line may name it, each comparable with logged_path's: as nvfp4ctl
    writes a cell (printable.shown: ESC as `\\x1b`, a byte that is not UTF-8 as `\\xff`), then as lines
    before 2026-11-29 wrote it, every character but such a byte as it is (escaped_bytes), so a lookup still
    finds an older line of a name with ESC or U+202E."""
    resolved = str(path.resolve())
    return tuple(dict.fromkeys(Path(form) for form in (shown(resolved), escaped_bytes(resolved))))


def file_digest(path: Path) -> str:
    """Short content hash of a target. A kernel's local headers count too (a tuned dispatch table or a
    config header changes what runs while the .cu stays the same); a submission is one file."""
    try:
        digest = hashlib.sha256()
        with path.open("rb") as handle:  # in pieces: a target may be a --from-log of hundreds of MB
            while piece := handle.read(1 << 20):
                digest.update(piece)
        if path.suffix not in (".cu", ".cuh"):
            return finished_digest(digest)
        from nvfp4ctl.build.sources import local_headers  # only kernels pay for the build package

        return finished_digest(digest, ((header.name, header.read_bytes()) for header in local_headers(path)))
    except OSError:
        return "unreadable"


# A target file's path on a line is relative to the run log's own folder, written "./path": one log
# shared by two folders (NVFP4CTL_MEMORY) names their two submission.py files apart, and a log kept
# in the project reads the same from any checkout of it. Lines before this carry the path relative
# to the folder of the run that wrote them ("submission.py"), which the log does not say: a reader
# takes those relative to its own folder, as they always were.
LOG_RELATIVE = "./"


def describe_target(target: Path | str | None, root: Path | None = None, source: str | None = None,
                    log_folder: Path | None = None, digest: str | None = None) -> str:
    """`path@content-hash [why]`; a file's path "./"-relative to `log_folder`, the run log's folder,
    when inside it (else absolute; relative to the user's folder `root` where no log folder is given),
    so the log reads the same from any checkout and any working directory; a folder's (a label, never
    compared) relative to `root`. `why` says how it was chosen; `digest`: the file's content hash as the
    command read it (content_digest), where it read it once, else the file's as it is now."""
    if target is None:
        return "-"
    path = Path(target)
    if path.is_file():
        named = _log_relative(path, log_folder) if log_folder is not None else _relative_to_root(path, root)
        cell = f"{named}@{digest or file_digest(path)}"
    elif path.is_dir():
        cell = _relative_to_root(path, root)
    else:
        cell = str(target)
    return f"{cell} [{source}]" if source else cell


def split_target(cell: str) -> tuple[str, str]:
    """A logged target cell back into (path as logged, content hash); ("", "") for "-" or a folder."""
    path, _, digest = _without_reason(cell).rpartition("@")
    return path, digest


def folder_target(cell: str) -> str:
    """The folder a logged target cell names (several kernels built: the folder holding them, `kernels` or
    `/work/ws`), as describe_target wrote it: relative to the run's user folder, else absolute; "" for a
    file's cell (path@hash) and for "-"."""
    cell = _without_reason(cell)
    return "" if cell == "-" or "@" in cell else cell


def _without_reason(cell: str) -> str:
    return cell[: cell.rindex(" [")] if cell.endswith("]") and " [" in cell else cell


def logged_path(path: str, root: Path, log_folder: Path | None) -> Path:
    """The file a logged target path names, resolved: "./path" inside `log_folder` (the run log's folder),
    an older line's relative path inside `root` (the reader's folder), an absolute path as it is."""
    if path.startswith(LOG_RELATIVE) and log_folder is not None:
        return (log_folder / path).resolve()
    return (root / path).resolve()


def log_folder_of(memory: Path) -> Path:
    """The folder a run log's "./" paths start from: the one that holds it, as named (not where a link to
    it points, which would move every path when the link is made)."""
    return Path(os.path.abspath(memory)).parent


def _log_relative(path: Path, log_folder: Path) -> str:
    named = _relative(path, log_folder)
    return str(named) if named.is_absolute() else LOG_RELATIVE + str(named)


def _relative_to_root(path: Path, root: Path | None) -> str:
    return str(_relative(path, root) if root is not None else Path(os.path.abspath(path)))


def _relative(path: Path, folder: Path) -> Path:
    """`path` inside `folder`, as the user named it where it lies there so (a linked gemm/submission.py is
    gemm's, not the file it leads to), else as both resolve; else absolute, as named."""
    named = Path(os.path.abspath(path))
    for inside, start in ((named, Path(os.path.abspath(folder))), (path.resolve(), folder.resolve())):
        try:
            return inside.relative_to(start)
        except ValueError:
            pass
    return named


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_state(cwd: Path, run_log: Path | None = None) -> str:
    """The commit of the tree at `cwd`, "+dirty" with changes to tracked files. No run log is a change:
    every file named MEMORY.md in the tree, and `run_log` wherever it is in it. Where MEMORY.md is tracked,
    the command before this one appended to it, and every later line said "+dirty" of a clean tree; one
    folder's log (gemm/MEMORY.md) did so for every other folder's runs too. A run log holds notes and run
    lines, never code a run measures, so leaving each whole out is exact for the commit cell and costs
    nothing more than the one `git status`."""
    found = _git(["rev-parse", "--show-toplevel", "--short", "HEAD"], cwd)
    if not found or len(lines := found.splitlines()) != 2:
        return "no-git"
    top, commit = lines
    status = list(commit_stamp.TRACKED_CHANGES)
    if run_log is not None and (inside := _inside(run_log, Path(top))) is not None:
        status.append(f":(top,exclude,literal){inside}")
    dirty = _git(status, cwd)
    return commit + commit_stamp.DIRTY if dirty else commit


def _inside(path: Path, top: Path) -> str | None:
    """`path` relative to the work tree's top, in git's spelling; None outside it."""
    try:
        return path.resolve().relative_to(top.resolve()).as_posix()
    except (OSError, ValueError):
        return None


CPU_DEVICE_LABEL = "cpu (NVFP4CTL_DEVICE=cpu)"


def detect_gpu(runs_on_device: bool = True) -> str:
    """The GPU column: the machine's GPU ("no GPU" without one), or, for a command that runs the target
    on the device NVFP4CTL_DEVICE picks (`runs_on_device`: check, bench, tune), the CPU label where
    that is the CPU. lint, build, dump and export run nothing there: the setting says nothing of them."""
    try:
        on_cpu = runs_on_device and run_device() == "cpu"
    except UsageError:  # a bad NVFP4CTL_DEVICE: the command said so and ran nothing
        on_cpu = False
    if on_cpu:  # the run did not use the GPU: its times must not be compared with the GPU's
        return CPU_DEVICE_LABEL
    gpu = first_gpu()
    return gpu.describe() if gpu else "no GPU"


def make_entry(outcome: Outcome, argv: list[str], cwd: Path, memory: Path | None = None,
               runs_on_device: bool = True) -> RunEntry:
    """The run's line; `memory`: the run log it goes to, whose folder its target's path starts from;
    `runs_on_device`: whether the command runs its target on NVFP4CTL_DEVICE's device (detect_gpu)."""
    return RunEntry(
        time=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        command=shlex.join(["nvfp4ctl", *argv]),
        target=describe_target(outcome.target, cwd, outcome.target_source,
                               log_folder_of(memory) if memory is not None else None, outcome.target_digest),
        commit=git_state(cwd, memory),
        gpu=outcome.gpu or detect_gpu(runs_on_device),
        exit_code=str(int(outcome.exit_code)),
        result=outcome.result,
        problem=outcome.problem or "",
        tool=tool_version(),
    )


# A bullet meant as a run's line has its shape: the time as logged, then the cell separator, or a second cell
# that is a backquoted nvfp4ctl command. A note of the user's is neither, one that starts with a time of its
# own too (`- try 2-CTA`, `- ran `nvfp4ctl bench` twice`, `- 2026-11-28T12:30Z: cccc = 2-stage pipeline`).
# A line cut short inside its time stamp (a write killed part-way) is a run's too.
_RUN_LIKE = re.compile(r"- (?:\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d)?Z?" + re.escape(SEPARATOR)
                       + r"|\d{4}-\d\d-\d\dT[\d:]*Z?\s*$|[^·]*· `nvfp4ctl\b)")


def looks_like_a_run(line: str) -> bool:
    """Whether `line`, which RunEntry.from_line does not read, was meant as a run's line (a hand edit
    that lost or added a cell): `log` says it left it out, where a note of the user's is passed silently."""
    return _RUN_LIKE.match(line) is not None
