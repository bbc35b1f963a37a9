"""Which other problem a submission is written for, read from its custom_kernel as lint's NV006 reads it: an
unpacking of the whole input, reached on every call, into as many names as exactly one other problem's tuple
has (`abc_tensors, sfasfb, sfasfb_reordered, sizes = data`, 4: the grouped GEMM's). check and bench ask it
before any test, as such a file cannot take their problem's input (it raises on every test). Where the count fits several problems (7: the
GEMM's and the GEMV's) or none, or the line waives NV006, it answers None: nothing is known for sure."""

from __future__ import annotations

from dataclasses import dataclass

from nvfp4ctl.lint.python.constants import indexing_with
from nvfp4ctl.lint.python.facts import using
from nvfp4ctl.lint.python.index import ModuleIndex
from nvfp4ctl.lint.python.parsing import PARSE_ERRORS, parsed_quietly
from nvfp4ctl.lint.python.timed import every_call_unpackings
from nvfp4ctl.lint.waivers import is_waived, line_waivers
from nvfp4ctl.preamble import past_byte_order_mark

RULE = "NV006"


@dataclass(frozen=True)
class ForeignInput:
    problem: str  # the one problem whose input has `named` elements
    named: int  # names the unpacking gives
    line: int  # 1-based, in the file's text


def foreign_input(text: str, task_problem: str) -> ForeignInput | None:
    """The other problem `text`'s custom_kernel unpacks the input of, judged under `task_problem`'s tuple; None
    where the file does not parse (the run says why) or nothing says so for sure."""
    code = past_byte_order_mark(text)  # which python skips
    try:
        tree = parsed_quietly(code)
    except PARSE_ERRORS:
        return None
    lines = code.splitlines()
    with using(task_problem), indexing_with(tree):
        found = every_call_unpackings(ModuleIndex(tree))
    for unpacking in found:
        line = unpacking.target.lineno
        waived = 0 < line <= len(lines) and is_waived(RULE, line_waivers(lines[line - 1]))
        if len(unpacking.others) == 1 and not waived:
            return ForeignInput(unpacking.others[0], unpacking.named, line)
    return None
