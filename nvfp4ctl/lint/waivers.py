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


def is_waived(code: str, line: str) -> bool:
    if "nvfp4ctl" not in line:
        return False
    return any(code.startswith(pattern) for pattern in waived_codes(line))
