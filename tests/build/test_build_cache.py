from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.build import cache, flags, sources


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    common = tmp_path / "common"
    common.mkdir()
    (common / "nvfp4_gemm_api.h").write_text("#pragma once\n")
    (common / "torch_binding.cpp").write_text('#include "nvfp4_gemm_api.h"\n')
    (tmp_path / "sm90").mkdir()
    (tmp_path / "sm90" / "k.cu").write_text('#include "nvfp4_gemm_api.h"\n')
    monkeypatch.setattr(sources, "kernels_dir", lambda: tmp_path)
    return tmp_path


def _key(project: Path, arch: str = "sm_90a") -> str:
    return cache.cache_key(sources.build_inputs(project / "sm90" / "k.cu"), arch, "device")


def test_key_is_stable_and_follows_every_input(project: Path) -> None:
    first = _key(project)
    assert _key(project) == first
    assert _key(project, "sm_100a") != first
    (project / "common" / "nvfp4_gemm_api.h").write_text("#pragma once\n// changed\n")
    second = _key(project)
    assert second != first
    (project / "common" / "torch_binding.cpp").write_text('#include "nvfp4_gemm_api.h"\n// changed\n')
    assert _key(project) != second


def test_entries_live_under_the_cache_env(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "c"))
    entry = cache.entry_dir(project / "sm90" / "k.cu", "sm_90a", "ab" * 32)
    assert entry == tmp_path / "c" / f"k-sm_90a-{'ab' * 8}"
    monkeypatch.delenv("NVFP4CTL_CACHE")
    assert cache.cache_root() == Path.home() / ".cache" / "nvfp4ctl"


def test_staging_lands_atomically_or_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path))
    entry = tmp_path / "k-sm_90a-0123"
    with pytest.raises(RuntimeError), cache.staging(entry) as folder:
        (folder / "half-written").write_text("x")
        raise RuntimeError("compile failed")
    assert not entry.exists() and list((tmp_path / "tmp").iterdir()) == []
    with cache.staging(entry) as folder:
        (folder / "report.json").write_text("{}")
        cache.land(folder, entry)
    assert (entry / "report.json").is_file() and list((tmp_path / "tmp").iterdir()) == []


def test_key_follows_the_binding_flags(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _key(project)
    monkeypatch.setattr(flags, "BINDING_CFLAGS", ("-O2",))
    assert _key(project) != first  # an entry built with the binding at another level is not reused
