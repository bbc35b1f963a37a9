"""Which archs nvcc's words compile to PTX alone (no SASS for build to check) and which archs they name, read
as nvcc reads -code and -gencode's code=: an arch is PTX alone when none of its codes is an sm_ one."""

from __future__ import annotations

import pytest

from nvfp4ctl.build.arch_names import named_arches, ptx_alone_arches


@pytest.mark.parametrize("words", [
    ["-arch=compute_100a"],
    ["-arch=compute_100a", "-code=compute_100a"],
    ["-arch=compute_100a", "--gpu-code=compute_100a"],
    ["-arch=compute_100a", "-code", "compute_100a"],
    ["-arch", "compute_100a", "--gpu-code", "compute_100a"],
    ["-arch=sm_100a", "-code=compute_100a"],
    ["-gencode=arch=compute_100a,code=compute_100a"],
    ['-gencode=arch=compute_100a,code="compute_100a"'],
    ["-gencode=arch=compute_100a,code='compute_100a'"],
], ids=lambda words: " ".join(words))
def test_an_arch_whose_codes_are_all_compute_is_ptx_alone(words: list[str]) -> None:
    assert named_arches(words) is not None and named_arches(words)[0] == ("sm_100a",)
    assert ptx_alone_arches(words) == {"sm_100a"}


@pytest.mark.parametrize("words", [
    ["-arch=sm_100a"],
    ["-arch=compute_100a", "-code=sm_100a"],
    ["-arch=compute_100a", "-code=sm_100a,compute_100a"],
    ["-arch=compute_100a", "-code=compute_100a,sm_100a"],
    ["-arch=compute_100a", "-code", "sm_100a,compute_100a"],
    ["-arch=compute_100a", "-code=compute_100a", "-code=sm_100a"],
    ["-gencode=arch=compute_100a,code=sm_100a"],
    ["-gencode=arch=compute_100a,code=[sm_100a,compute_100a]"],
    ['-gencode=arch=compute_100a,code="sm_100a"'],
    ['-gencode=arch=compute_100a,code="compute_100a,sm_100a"'],
], ids=lambda words: " ".join(words))
def test_an_arch_with_an_sm_code_is_compiled_to_sass(words: list[str]) -> None:
    assert named_arches(words) is not None and named_arches(words)[0] == ("sm_100a",)
    assert ptx_alone_arches(words) == frozenset()


def test_a_quoted_gencode_beside_another_names_both_archs() -> None:
    words = ['-gencode=arch=compute_100a,code="compute_100a"', "-gencode=arch=compute_90a,code=sm_90a"]
    assert named_arches(words) == (("sm_100a", "sm_90a"), ('-gencode=arch=compute_100a,code="compute_100a"',
                                                           "-gencode=arch=compute_90a,code=sm_90a"))
    assert ptx_alone_arches(words) == {"sm_100a"}
