"""`nvfp4ctl dump --umma` cross-checks every dispatch config against CuTe's host encoder."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from nvfp4ctl.cli import app


def test_umma_cross_checks_every_config(proof_kernel: Path) -> None:
    result = CliRunner().invoke(app, ["dump", "--umma", "--kernel", str(proof_kernel)])
    assert result.exit_code == 0, result.output
    assert "umma: 2 configs, 0 mismatches" in result.output
    assert "not cross-checked" not in result.output and "MISMATCH" not in result.output
