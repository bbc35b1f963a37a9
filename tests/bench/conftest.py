"""What the bench tests share: the progress a job reports to the watchdog's parent, caught here."""

from __future__ import annotations

from typing import Any

import pytest

from nvfp4ctl.runner import progress


@pytest.fixture
def reports(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every progress report a job sends (runner/progress.py), at once (no rate limit), in order."""
    sent: list[Any] = []

    class Channel:
        def send(self, message: Any) -> None:
            kind, value = message
            if kind == "progress":
                sent.append(value)

    monkeypatch.setattr(progress, "_channel", Channel())
    monkeypatch.setattr(progress, "REPORT_EVERY_S", 0.0)
    return sent
