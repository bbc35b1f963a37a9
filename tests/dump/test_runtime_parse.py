"""`dump --runtime`'s parser and comparison, on text shaped like the debug build's printf output."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.dump.runtime import compare, parse_device_dump
from nvfp4ctl.umma.configs import parse_configs

KERNEL = Path(__file__).resolve().parents[2] / "kernels" / "sm100" / "nvfp4_gemm_sm100.cu"


def device_text(idesc: str = "0x08100480", sfa_byte: int = 0x38) -> str:
    lines = ["some build noise", "NVFP4CTL config id=0 tile=128x64x256", f"NVFP4CTL idesc={idesc}"]
    for row in range(4):
        for kb in range(4):
            lines.append(f"NVFP4CTL sf row={row} kblock={kb} sfa_offset={row * 16 + kb} sfa=0x{sfa_byte:02x} "
                         f"sfb_offset={row * 16 + kb} sfb=0x40")
    lines += [f"NVFP4CTL out row=0 col={col} value={col * 0.5:.6f}" for col in range(8)]
    return "\n".join(lines)


def expected() -> dict:
    scales = {f"{row},{kb}": {"sfa_offset": row * 16 + kb, "sfa": 0x38, "sfb_offset": row * 16 + kb, "sfb": 0x40}
              for row in range(4) for kb in range(4)}
    return {"config_id": 0, "scales": scales, "outputs": [col * 0.5 for col in range(8)]}


def test_parse_device_dump() -> None:
    dump = parse_device_dump(device_text())
    assert dump.config_id == 0 and dump.tile == (128, 64, 256) and dump.idesc == 0x08100480
    assert len(dump.scales) == 16 and dump.scales[(3, 2)] == (50, 0x38, 50, 0x40)
    assert dump.outputs[7] == 3.5


def test_matching_dump_has_no_mismatch() -> None:
    checks = compare(parse_device_dump(device_text()), parse_configs(KERNEL), expected())
    assert all(check.ok for check in checks), [check for check in checks if not check.ok]
    assert len(checks) == 3 + 16 + 8


def test_wrong_descriptor_and_scale_are_flagged() -> None:
    checks = compare(parse_device_dump(device_text(idesc="0x08200480", sfa_byte=0x39)), parse_configs(KERNEL),
                     expected())
    bad = [check.what for check in checks if not check.ok]
    assert "idesc" in bad
    assert sum(what.startswith("scales") for what in bad) == 16


def test_missing_lines_are_flagged() -> None:
    checks = compare(parse_device_dump("NVFP4CTL config id=0 tile=128x64x256"), parse_configs(KERNEL), expected())
    assert not next(check for check in checks if check.what == "idesc").ok
    assert not next(check for check in checks if check.what == "scale lines").ok
    assert not next(check for check in checks if check.what == "c[0, 0]").ok


def test_child_script_is_valid_python() -> None:
    from nvfp4ctl.dump import runtime

    compile(runtime._CHILD, "<dump --runtime child>", "exec")


def test_debug_child_imports_and_builds_with_builds_flags() -> None:
    """The child runs only on a B200: its imports are run here, and its compile flags are build's own."""
    from nvfp4ctl.build import flags
    from nvfp4ctl.dump import runtime

    head = runtime._CHILD.split("kernel, binding, build_dir")[0]
    exec(compile(head, "dump-runtime-child", "exec"), {})
    compile(runtime._CHILD, "dump-runtime-child", "exec")
    assert "flags.cuda_flags(\"sm_100a\")" in runtime._CHILD and "flags.BINDING_CFLAGS" in runtime._CHILD
    assert flags.BINDING_CFLAGS == ("-O1",)


def test_an_input_error_in_the_debug_child_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child makes its inputs with make_input; its refusal (a tensor bigger than the GPU) is the user's
    input error, exit 2 in one line, not "the debug run failed" (exit 4)."""
    import subprocess

    from nvfp4ctl.build import toolchain
    from nvfp4ctl.dump import runtime
    from nvfp4ctl.errors import UsageError

    assert "make_input(" in runtime._CHILD and "generate_input" not in runtime._CHILD
    said = "m=128 n=256 k=256: the inputs do not fit in cuda memory (one tensor needs 512.0 GiB of 80.0)"

    def child(command: list[str], **kwargs: object) -> subprocess.CompletedProcess:
        return subprocess.CompletedProcess(command, 2, "", f"building...\n{runtime.USAGE_MARK}{said}\n")

    monkeypatch.setattr(toolchain, "say_cutlass_lookup", lambda: None)
    monkeypatch.setattr(runtime.subprocess, "run", child)
    with pytest.raises(UsageError) as caught:
        runtime.run_debug_kernel(tmp_path / "k.cu", tmp_path / "b.cpp", tmp_path, 128, 256, 256, 1, 1111, 0)
    assert str(caught.value) == said
