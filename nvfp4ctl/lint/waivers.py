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
