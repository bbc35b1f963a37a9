"""benchmarks/host_binding.py on CPU: the three builds it compares differ only where they should
(its GPU run: docs/sm90_performance.md, "Host cost per call")."""

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
