"""--umma against CuTe's host encoder (compiles tests/sm100/host once per session into the cache)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app


from nvfp4ctl.umma.host_proof import toolchain_missing


@pytest.mark.skipif(toolchain_missing() is not None, reason="needs nvcc and the nvidia-cutlass headers")
def test_umma_cross_checks_every_config() -> None:
    result = CliRunner().invoke(app, ["dump", "--umma"])
    assert result.exit_code == 0, result.output
    assert "umma: 2 configs, 0 mismatches" in result.output
    assert "not cross-checked" not in result.output and "MISMATCH" not in result.output
