"""Which problem a task file without `problem:` describes, from GPU MODE's unchanged task.yml.

Four signals, each asked of every problem: the first-line `# name: ...` comment, the description's
phrase, the keys of the test entries (`g` and list values: grouped; no `n`: GEMV) and the reference.py
beside the file. A signal that speaks either fits a problem or rules it out. Exactly one problem
left → it; none → one line, exit 2; several → the one with the most fitting signals, and when they
tie only because the entries are GEMM-shaped with nothing else to go on, the default nvfp4_gemm (a
bare `tests:` list of m, n, k, l, as our own files had before `problem:`); any other tie is an error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nvfp4ctl.errors import UsageError
from nvfp4ctl.preamble import past_preamble
from nvfp4ctl.problems import DEFAULT_PROBLEM

DEFAULT = DEFAULT_PROBLEM
NAME_COMMENT = re.compile(r"^\s*#\s*name\s*:\s*(\S+)")
KEYS = "test keys"
CASE_KEYS = frozenset({"g", "m", "n", "k", "l"})


def _name_comment(text: str) -> str | None:
    first = next(iter(past_preamble(text).splitlines()), "")
    match = NAME_COMMENT.match(first)
    return match.group(1).strip().lower() if match else None


def _entry_keys(document: Mapping[str, Any]) -> tuple[frozenset[str], bool] | None:
    # anything but a list is left to the case reader, which reports it in one line
    lists_of = [document.get(key) for key in ("tests", "benchmarks")]
    entries = [e for found in lists_of if isinstance(found, list) for e in found if isinstance(e, dict)]
    if not entries:
        return None
    keys = frozenset(str(k) for e in entries for k in e) - {"seed", "sol_us"}
    lists = any(isinstance(v, (list, tuple)) for e in entries for v in e.values())
    return keys, lists


def _reference_text(path: Path | None) -> str | None:
    if path is None:
        return None
    beside = path.parent / "reference.py"
    try:
        return beside.read_text(encoding="utf-8", errors="replace") if beside.is_file() else None
    except OSError:
        return None


def signals(problem: Any, text: str, document: Mapping[str, Any], reference: str | None) -> dict[str, bool]:
    """signal name -> fits (True) / rules out (False); silent signals are absent."""
    found: dict[str, bool] = {}
    detection = problem.detection
    comment = _name_comment(text)
    if comment is not None:
        found["name comment"] = comment in detection.name_comments
    description = document.get("description")
    if isinstance(description, str) and description.strip():
        found["description"] = detection.description_phrase in " ".join(description.lower().split())
    keys = _entry_keys(document)
    if keys is not None:
        names, lists = keys
        # unknown keys (typos) are left to the case parser, which names them
        found[KEYS] = names & CASE_KEYS == frozenset(problem.case_fields) and lists == problem.layout.nested
    if reference is not None:
        found["reference.py"] = all(m in reference for m in detection.reference_markers) and not any(
            m in reference for m in detection.reference_absent)
    return found


def detect_problem(text: str, document: Mapping[str, Any], path: Path | None, where: str = "task.yml") -> str:
    from nvfp4ctl.problems import all_problems

    reference = _reference_text(path)
    verdicts = {p.name: signals(p, text, document, reference) for p in all_problems()}
    alive = {name: found for name, found in verdicts.items() if all(found.values())}
    if not alive:
        problems = {p.name: p for p in all_problems()}
        raise UsageError(f"{where}: fits none of the problems ({_why_none(verdicts, problems, document)});"
                         " add `problem: NAME`")
    if len(alive) == 1:
        return next(iter(alive))
    best = max(sum(found.values()) for found in alive.values())
    leaders = [name for name, found in alive.items() if sum(found.values()) == best]
    if len(leaders) == 1:
        return leaders[0]
    only_keys = all(set(alive[name]) <= {KEYS} for name in leaders)
    if only_keys and DEFAULT in leaders:
        return DEFAULT
    raise UsageError(f"{where}: fits {' and '.join(leaders)} alike; add `problem: NAME` to say which")


def _why_none(verdicts: dict[str, dict[str, bool]], problems: Mapping[str, Any], document: Mapping[str, Any]) -> str:
    """Per problem the signals against it; for the test keys, the keys each problem takes and the ones
    the file has (a missing `l` or `seed`-only typo reads as plainly as it is)."""
    reasons = []
    for name, found in verdicts.items():
        against = [_keys_taken(problems[name]) if signal == KEYS else signal
                   for signal, fits in found.items() if not fits]
        reasons.append(f"{name}: {', '.join(against)} disagree")
    keys = _entry_keys(document)
    if keys is not None and any(not found.get(KEYS, True) for found in verdicts.values()):
        names, lists = keys
        shown = ", ".join(key for key in "gmnkl" if key in names) or "none of g, m, n, k, l"
        reasons.insert(0, f"the tests' keys: {shown}{' as lists' if lists else ''}")
    return "; ".join(reasons)


def _keys_taken(problem: Any) -> str:
    fields = problem.case_fields
    if problem.layout.nested:  # a group count, then one value per group
        listed = [field for field in fields if field != "g"]
        return f"{KEYS} (it takes {', '.join(fields)}: {', '.join(listed)} as lists of g values)"
    return f"{KEYS} (it takes {', '.join(fields)})"
