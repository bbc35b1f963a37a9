"""benchmarks/host_binding.py (a GPU run) and binding_levels.py (a CPU proxy), without compiling: the
builds they compare differ only where they should (docs/sm90_performance.md, "Host cost per call")."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.build import flags
from tests.kernels.benchmark_scripts import imported_benchmark


@pytest.fixture(scope="module")
def script():
    yield from imported_benchmark("host_binding")


def test_the_builds_differ_only_in_the_binding_flags_and_the_runtime(script, tmp_path: Path) -> None:
    specs = script.module_builds(tmp_path)
    before, static, now = (specs[label] for label in ("binding -O0 (before)", "binding -O0, static cudart",
                                                       f"binding {' '.join(flags.BINDING_CFLAGS)} (now)"))
    assert before["extra_cflags"] == static["extra_cflags"] == [] and now["extra_cflags"] == list(flags.BINDING_CFLAGS)
    assert "-l:libcudart_static.a" in static["extra_ldflags"] and "extra_ldflags" not in before
    assert before["sources"] == now["sources"] and before["extra_cuda_cflags"] == flags.cuda_flags("sm_90a")
    assert len({spec["name"] for spec in specs.values()}) == len(specs)  # no two builds share a module name
    assert "nvfp4_gemm_sm90.cu" in (tmp_path / "host_probe.cu").read_text()


@pytest.fixture(scope="module")
def levels_script():
    yield from imported_benchmark("binding_levels")


def test_the_cpu_proxy_builds_the_shipped_binding_at_the_level_asked(levels_script, tmp_path: Path) -> None:
    spec = levels_script.build_spec("-O1", tmp_path)
    assert spec["sources"][0].endswith("kernels/common/torch_binding.cpp") and spec["with_cuda"] is False
    assert spec["extra_cflags"][0] == "-O1" and str(tmp_path / "cpu_tensors.h") in spec["extra_cflags"]
    assert spec["name"] == "binding_O1" and spec["build_directory"] == str(tmp_path / "-O1")
    assert "#define is_cuda is_cpu" in levels_script.CPU_TENSORS and "nvfp4_gemm_launch" in levels_script.STUB
