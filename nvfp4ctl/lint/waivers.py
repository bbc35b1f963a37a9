"""Inline waivers: `# nvfp4ctl: ignore[NV301]` or `// nvfp4ctl: ignore[NV802, NV9]` on the same line."""

from __future__ import annotations

import re

WAIVER = re.compile(r"(?:#|//)\s*nvfp4ctl:\s*ignore\[([^\]]*)\]", re.IGNORECASE)


def waived_codes(line: str) -> tuple[str, ...]:
    """Codes or prefixes waived on a line (empty when the line has no waiver)."""
    codes: list[str] = []
    for match in WAIVER.finditer(line):
        codes.extend(part.strip().upper() for part in match.group(1).split(",") if part.strip())
    return tuple(codes)


def line_waivers(line: str) -> tuple[str, ...]:
    """What lint takes a line to waive: its waived_codes() where it spells nvfp4ctl in lower case.
    Read once per line and handed to is_waived for each finding on it."""
    return waived_codes(line) if "nvfp4ctl" in line else ()


def is_waived(code: str, waivers: tuple[str, ...]) -> bool:
    """Is `code` waived by a line's line_waivers()?"""
    return any(code.startswith(pattern) for pattern in waivers)


def unknown_waivers(text: str, known: tuple[str, ...]) -> list[tuple[int, str]]:
    """(line, code) of each code or prefix a waiver in `text` names that no code in `known` starts with, once
    per code in file order: `ignore[NV999]` waives nothing, and a typo'd code (NV3O1) leaves its finding
    standing with no word of why."""
    if "nvfp4ctl" not in text:  # no waiver (line_waivers reads only the lower-case spelling)
        return []
    found: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        for code in line_waivers(line):
            if code not in found and not any(rule.startswith(code) for rule in known):
                found[code] = number
    return [(number, code) for code, number in found.items()]
