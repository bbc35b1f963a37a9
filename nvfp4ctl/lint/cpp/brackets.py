"""Where each bracket of a code-only text closes, paired in one pass. A scan forward from each `(`
per question made nested brackets quadratic: `if (` 8,000 deep took 33 s."""

from __future__ import annotations

import bisect
import re
from array import array


class BracketPairs:
    """The closing bracket of each opener, as a scan counting openers and closers from it finds it: a
    closer pairs with the latest opener still open, one that closes nothing is passed over, and an
    opener never closed closes at len(code)."""

    def __init__(self, code: str, opener: str = "(", closer: str = ")") -> None:
        self._length = len(code)
        self._opens = array("q")  # every opener's offset, in order
        self._closes = array("q")  # where the opener at the same index closes
        still_open: list[int] = []  # indexes into _opens
        for match in re.finditer(f"[{re.escape(opener + closer)}]", code):
            if match.group() == opener:
                still_open.append(len(self._opens))
                self._opens.append(match.start())
                self._closes.append(self._length)
            elif still_open:
                self._closes[still_open.pop()] = match.start()

    def closing(self, open_index: int) -> int:
        """Offset of the bracket closing the opener at open_index (len(code) if it never closes)."""
        index = bisect.bisect_left(self._opens, open_index)
        if index == len(self._opens) or self._opens[index] != open_index:
            raise ValueError(f"no opener at offset {open_index}")
        return self._closes[index]
