"""The dispatch table read from the kernel source, and the values expected from each config."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.errors import UsageError
from nvfp4ctl.umma import descriptors as d
from nvfp4ctl.umma.configs import (NO_CONFIG, default_kernel, expected_instr, expected_smem, expected_tmem,
                                   parse_configs, select_config)

KERNEL = Path(__file__).resolve().parents[2] / "kernels" / "sm100" / "nvfp4_gemm_sm100.cu"
TASK_TESTS = [(128, 256, 256), (128, 1536, 7168), (128, 3072, 1536), (256, 7168, 256), (256, 7168, 2048),
              (2304, 4608, 7168), (384, 7168, 2304), (512, 512, 7168), (512, 4096, 512), (512, 1536, 7168)]
BENCHMARKS = [(128, 7168, 16384), (128, 4096, 7168), (128, 7168, 2048)]


def test_kernel_table_is_parsed() -> None:
    configs = parse_configs(KERNEL)
    assert [(c.id, c.name, c.block_m, c.block_n, c.block_k) for c in configs] == [
        (0, "m128_n64", 128, 64, 256), (1, "general", 128, 128, 256)]
    assert all(c.use for c in configs)
    assert default_kernel().name == KERNEL.name


def test_missing_table_is_a_usage_error(tmp_path: Path) -> None:
    empty = tmp_path / "k.cu"
    empty.write_text("// nothing here\n")
    with pytest.raises(UsageError, match="no `struct ConfigById"):
        parse_configs(empty)
    with pytest.raises(UsageError, match="cannot read kernel"):
        parse_configs(tmp_path / "absent.cu")


def test_a_kernel_that_is_not_utf8_is_one_usage_error_naming_its_line(tmp_path: Path) -> None:
    """A Latin-1 `é` in a comment was a UnicodeDecodeError traceback (exit 1, and no --json document)."""
    latin1 = tmp_path / "lat1.cu"
    latin1.write_bytes(b"// caf\xe9\n" + KERNEL.read_bytes())
    with pytest.raises(UsageError, match=r"lat1.cu:1: not UTF-8 \(byte 0xe9\); dump --umma reads"):
        parse_configs(latin1)


def test_dump_umma_of_a_kernel_that_is_not_utf8_gives_json_and_exit_2(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    latin1 = tmp_path / "lat1.cu"
    latin1.write_bytes(b"// caf\xe9\n" + KERNEL.read_bytes())
    result = CliRunner().invoke(app, ["dump", "--umma", "--kernel", str(latin1), "--json"])
    assert result.exit_code == 2, result.output
    document = json.loads(result.output[result.output.index("{"):])
    assert "lat1.cu:1: not UTF-8 (byte 0xe9)" in document["error"] and document["exit_code"] == 2


def test_every_task_shape_has_a_config() -> None:
    for m, n, k in TASK_TESTS:
        assert select_config(m, n, k, 1) == (0 if m == 128 else 1), (m, n, k)
    for m, n, k in BENCHMARKS:
        assert select_config(m, n, k, 1) == 0, (m, n, k)
    assert select_config(100, 256, 256, 1) == NO_CONFIG
    assert select_config(128, 256, 320, 1) == NO_CONFIG
    assert select_config(256, 192, 256, 1) == NO_CONFIG


def test_expected_values_per_config() -> None:
    narrow, general = parse_configs(KERNEL)
    assert d.encode_instr(expected_instr(narrow)) == 0x08100480
    assert d.encode_instr(expected_instr(general)) == 0x08200480
    assert d.encode_smem(expected_smem(general)) == 0x4000404000010000
    assert d.decode_smem(d.encode_smem(expected_smem(general, k_step=3)))["start"] == 3 * 32 >> 4
    assert expected_tmem(narrow) == {"acc_cols": 128, "sfa_cols": 16, "sfb_cols": 16}
    assert expected_tmem(general) == {"acc_cols": 256, "sfa_cols": 16, "sfb_cols": 16}
