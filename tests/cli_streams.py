"""A CliRunner whose result keeps stdout and stderr apart on every click that typer may run on.

Click 8.2 and later keep them apart by themselves (result.output is both, interleaved). Click 8.0 and
8.1, which typer up to 0.20 may bring, write stderr into result.stdout unless asked not to; a test
that parses stdout (a --json document) or checks that nothing reached it needs them apart there too.
Asked not to mix, those clicks leave stderr out of result.output, so only such tests use this runner,
and they read result.stderr without flushing sys.stderr first: a test that writes to sys.stderr itself
(a fake compiler) flushes what it writes, as the product's console does."""

from __future__ import annotations

import inspect

from typer.testing import CliRunner


def separate_streams_runner() -> CliRunner:
    if "mix_stderr" in inspect.signature(CliRunner.__init__).parameters:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2 only
    return CliRunner()
