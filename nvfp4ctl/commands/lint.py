"""`nvfp4ctl lint` (not implemented yet)."""

from __future__ import annotations

from nvfp4ctl.errors import UsageError
from nvfp4ctl.outcome import Outcome


def command() -> Outcome:
    """Not implemented yet."""
    raise UsageError("'nvfp4ctl lint' is not implemented yet")
