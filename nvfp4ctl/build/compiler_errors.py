"""Turn pages of compiler output into the first real error, as `file:line: error: message`.

Template instantiation chains ("detected during instantiation of ...", "required from here"),
notes, warnings and ninja's command lines are dropped; the outermost instantiation point in the
user's own file is kept as one `(instantiated from file:line)` hint. The notes of an error in a file nvcc
made and removed are kept where they name real files: they alone say which lines to change. `-v` shows
the full log.
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

from nvfp4ctl.build.nvcc_temporary import NOTES_SHOWN, Note, is_temporary, real_notes, temporary_name

_EDG = re.compile(r"^(?P<file>\S.*?)\((?P<line>\d+)\): (?:catastrophic )?error(?: #[\w-]+)?: (?P<msg>.*)$")
_GCC = re.compile(r"^(?P<file>\S.*?):(?P<line>\d+):(?:\d+:)? (?:fatal )?error: (?P<msg>.*)$")
_PTXAS = re.compile(r"^ptxas(?: (?P<file>\S+), line (?P<line>\d+);)? (?:fatal|error)\s*: (?P<msg>.*)$")
_TOOL = re.compile(r"^(?:nvcc fatal|/usr/bin/ld|ld|collect2|nvlink error|nvlink fatal)\s*: (?P<msg>.*)$")
_INSTANTIATED_AT = re.compile(r'at line (\d+) of "?(.+?)"?$')
_NOISE = re.compile(r"\): note\b|: note:|detected during|required from|[Ii]n instantiation of")
CONTEXT_LINES = 4
_TARGET = re.compile(r"\bon \.target '[^'\n]*'")
_PLAIN_TARGET = re.compile(r"\bnot supported on \.target 'sm_(\d+)'")  # sm_100a or sm_100f: no hint
# the B200's and B300's: an instruction their plain target refuses is one of sm_100a's (sm_103a's): tcgen05,
# the FP4 conversions
_TENSOR_MEMORY_FAMILY = frozenset({"100", "103"})


def display_path(file: str | Path) -> str:
    """A file as every build error names it: relative to the working folder when it lies under it
    (what the compiler's own lines say, and what editors and terminals turn into links), else as given."""
    path = Path(file)
    try:
        return os.path.relpath(path) if path.is_absolute() and path.resolve().is_relative_to(Path.cwd()) else str(file)
    except (OSError, ValueError):
        return str(file)


def _match(line: str) -> re.Match[str] | None:
    for pattern in (_EDG, _GCC, _PTXAS, _TOOL):
        if match := pattern.match(line.strip() if pattern is _TOOL else line):
            return match
    return None


def count_errors(log: str) -> int:
    # ptxas's closing "Ptx assembly aborted due to errors" is not an error of its own
    return sum(1 for line in log.splitlines() if _match(line) and "assembly aborted due to errors" not in line)


def first_error(log: str, user_files: tuple[Path, ...] = ()) -> str | None:
    """The first error with its file:line, the source line and caret when the compiler printed
    them, and where the user's code instantiated it; None when no error line is recognizable.
    An error in a real file comes before one in a file nvcc made and removed (its stub)."""
    lines = log.splitlines()
    errors = [(index, match) for index, line in enumerate(lines) if (match := _match(line))]
    if not errors:
        return None
    index, match = errors[0]
    if is_temporary(match.groupdict().get("file")):
        index, match = next(((index, match) for index, match in errors if _in_a_real_file(match)), errors[0])
    groups = match.groupdict()
    following = lines[index + 1 :]
    where = f"{display_path(groups['file'])}:{groups['line']}: " if groups.get("file") else ""
    message = groups["msg"].strip()
    notes: list[Note] = []
    if match.re is _PTXAS and groups.get("file") and groups["file"].endswith(".ptx"):
        where = _ptx_place(groups["file"], groups["line"], groups["msg"], user_files)
    elif match.re is _GCC and is_temporary(groups["file"]):
        notes = real_notes(_until_next_error(following))
        where, message = _temporary_place(groups["file"], groups["line"], message, notes, user_files)
    shown = [f"{where}{message}"]
    shown.extend(_context(following))
    shown.extend(f"  note: {display_path(note.file)}:{note.line}: {note.message}" for note in notes[:NOTES_SHOWN])
    if len(notes) > NOTES_SHOWN:
        shown.append(f"  ({len(notes) - NOTES_SHOWN} more notes)")
    if match.re is _PTXAS and (hint := _arch_specific_hint(groups["msg"])):
        shown.append(hint)
    if hint := _instantiation_hint(following, groups.get("file"), user_files):
        shown.append(hint)
    more = count_errors(log) - 1
    if more > 0:
        shown.append(f"({more} more error{'s' if more > 1 else ''}; -v shows the full compiler output)")
    return "\n".join(shown)


def _in_a_real_file(match: re.Match[str]) -> bool:
    file = match.groupdict().get("file")
    return bool(file) and not is_temporary(file)


def _until_next_error(following: list[str]) -> list[str]:
    return list(itertools.takewhile(lambda line: _match(line) is None, following))


def _temporary_place(file: str, line: str, message: str, notes: list[Note],
                     user_files: tuple[Path, ...]) -> tuple[str, str]:
    """An error in a file nvcc made (gcc's in the kernel's stub) is placed at the line its notes name in the
    user's own file, else in any real file, the file nvcc made named after the message; with no such note,
    at that file by what it was made from (`nvcc's temporary k.cudafe1.stub.c:1`), its tmpxft_ name meaning
    nothing to the user and the file gone."""
    made = f"nvcc's temporary {temporary_name(file)}"
    user_names = {path.name for path in user_files}
    lead = next((note for note in notes if Path(note.file).name in user_names), notes[0] if notes else None)
    if lead is None:
        return f"{made}:{line}: ", message
    return f"{display_path(lead.file)}:{lead.line}: ", f"{message} (the host compiler's error at line {line} of {made})"


def _ptx_place(ptx: str, line: str, message: str, user_files: tuple[Path, ...]) -> str:
    """ptxas names a line of the PTX nvcc made, a temporary file gone by now: name the user's line
    instead where the message quotes text found there (inline asm: `Unknown modifier '.instr'`),
    else say which PTX line it was."""
    sources = []
    for path in user_files:
        try:
            sources.append((path, path.read_text(errors="replace").splitlines()))
        except OSError:
            continue
    # the target ('sm_100') is no text of the instruction's: found on a line, it would be the flags' line
    quoted = re.findall(r"'([^'\n]+)'", _TARGET.sub("", message))
    for text in (text for text in quoted if len(text) > 1):
        written = _written_as(text)
        places = [(path, number) for path, lines in sources for number, source in enumerate(lines, 1)
                  if written.search(source)]
        if len(places) == 1:  # text found on several lines could be any of them: no guess
            return f"{display_path(str(places[0][0]))}:{places[0][1]}: ptxas (PTX line {line}): "
    if Path(ptx).name.startswith("tmpxft"):
        return f"ptxas (line {line} of the PTX nvcc made): "
    return f"{display_path(ptx)}:{line}: "


def _written_as(quoted: str) -> re.Pattern[str]:
    """How a text ptxas quotes is written in the source: as it is, but `cvt with .e2m1x2` (ptxas's words for an
    instruction and one of its modifiers) is the instruction with that modifier among its others,
    cvt.rn.f16x2.e2m1x2."""
    instruction, joined, modifier = quoted.partition(" with ")
    if joined and re.fullmatch(r"[\w.]+", instruction) and re.fullmatch(r"\.\w+", modifier):
        return re.compile(rf"(?<![\w.]){re.escape(instruction)}(?:\.\w+)*{re.escape(modifier)}(?!\w)")
    return re.compile(re.escape(quoted))


def _arch_specific_hint(message: str) -> str | None:
    """For an instruction ptxas refuses on a plain target (sm_100, sm_90): the arch-specific one (sm_100a)
    has the instructions only that GPU has (tcgen05, cvt with .e2m1x2, wgmma), which the plain one leaves out."""
    target = _PLAIN_TARGET.search(message)
    if target is None or int(target[1]) < 90:
        return None
    number = target[1]
    from nvfp4ctl.build.arch_names import gencode_flag

    flag = gencode_flag(f"sm_{number}a")
    if number in _TENSOR_MEMORY_FAMILY:
        return (f"  hint: the instruction needs sm_{number}a, the `a` arch: .target 'sm_{number}' leaves out the"
                f" instructions only that GPU has; compile with {flag}")
    return (f"  hint: .target 'sm_{number}' leaves out the instructions only that GPU has: if this is one of"
            f" sm_{number}a's, compile with {flag}")


def _context(following: list[str]) -> list[str]:
    """What EDG prints right after the message: continuation lines ("argument types are: ..."),
    the offending source line and a caret; up to the first note, instantiation chain or blank."""
    context: list[str] = []
    for line in following[:CONTEXT_LINES]:
        if not line.strip() or _match(line) or _NOISE.search(line) or line.startswith(("[", "FAILED:", "ninja:")):
            break
        context.append(line.rstrip())
    return context


def _instantiation_hint(following: list[str], error_file: str | None, user_files: tuple[Path, ...]) -> str | None:
    user_names = {path.name for path in user_files}
    hint = None
    for line in following:
        if _match(line):
            break
        for found in _INSTANTIATED_AT.finditer(line):
            number, file = found.groups()
            if Path(file).name in user_names and file != error_file:
                hint = f"  (instantiated from {display_path(file)}:{number})"
    return hint
