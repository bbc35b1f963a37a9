"""Errors the host compiler reports in a file nvcc generated and removed (tmpxft_..._k.cudafe1.stub.c).

An anonymous namespace that `using namespace cute;` sits in makes the kernel's stub name two namespaces of
one name, cute's own anonymous one and the file's: gcc's error names line 1 of the stub, a file the user
never sees, and only its notes ("candidates are: ...") name the lines to change. Those notes are kept, and
the error is placed at the user's own line among them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# tmpxft_<pid>_<counter>-<step>_<stem>.<what nvcc made of it>
_TEMPORARY = re.compile(r"^tmpxft_[0-9a-f]+_[0-9a-f]+-\d+_(?P<made>.+)$")
_GCC_NOTE = re.compile(r"^(?P<file>\S.*?):(?P<line>\d+):(?:\d+:)? note: (?P<msg>.*)$")
# how many of an error's notes are shown: gcc lists one per candidate, and each repeats for every use
NOTES_SHOWN = 4


@dataclass(frozen=True)
class Note:
    file: str
    line: str
    message: str


def is_temporary(file: str | None) -> bool:
    return file is not None and _TEMPORARY.match(Path(file).name) is not None


def temporary_name(file: str) -> str:
    """The part of a temporary file's name that says what it was made from: `k.cudafe1.stub.c`."""
    made = _TEMPORARY.match(Path(file).name)
    return made["made"] if made else Path(file).name


def real_notes(following: list[str]) -> list[Note]:
    """The notes among an error's following lines that name a real file (not another temporary one, as
    gcc's 'in expansion of macro' notes do), each once, in the order the compiler gave them."""
    notes: list[Note] = []
    for line in following:
        note = _GCC_NOTE.match(line)
        if note is None or is_temporary(note["file"]):
            continue
        found = Note(note["file"], note["line"], note["msg"].strip())
        if found not in notes:
            notes.append(found)
    return notes
