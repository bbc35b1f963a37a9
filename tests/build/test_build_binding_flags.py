"""The torch binding is compiled optimised: cpp_extension's default for a .cpp source is -O0, which
cost about 10 µs more CPU per call, 18 against 8 µs at -O3 (docs/sm90_performance.md, "Host cost per call")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nvfp4ctl.build import child, compile, flags
from nvfp4ctl.build.sources import BuildInputs


def test_the_module_build_asks_for_an_optimised_binding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commands: list[list[str]] = []
    monkeypatch.setattr(compile, "_run", lambda command, cwd, env: (commands.append(command), (0, ""))[1])
    kernel, binding = tmp_path / "k.cu", tmp_path / "torch_binding.cpp"
    inputs = BuildInputs(kernel=kernel, binding=binding, headers=(), needs_cutlass=False, common=binding.parent)
    compile.build_module(tmp_path, inputs, "sm_90a", "k_90a")
    spec = json.loads(commands[0][-1])
    assert spec["extra_cflags"] == list(flags.BINDING_CFLAGS) == ["-O1"]
    assert "-O3" in spec["extra_cuda_cflags"]  # the kernel file's host code, through nvcc


def test_the_build_child_hands_the_binding_flags_to_cpp_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    from torch.utils import cpp_extension

    calls: list[dict[str, object]] = []
    monkeypatch.setattr(cpp_extension, "load", lambda **kwargs: calls.append(kwargs))
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", "/usr/local/cuda")
    spec = {"name": "k", "sources": ["k.cu", "b.cpp"], "extra_cflags": ["-O1"], "extra_cuda_cflags": ["-O3"],
            "extra_include_paths": [], "build_directory": "/tmp"}
    assert child.main(["child", json.dumps(spec)]) == 0
    assert calls[0]["extra_cflags"] == ["-O1"]
