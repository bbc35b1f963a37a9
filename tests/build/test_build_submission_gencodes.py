"""`build submission.py` of an extension whose flags hold several -gencode: one nvcc run makes a cubin per arch,
and each arch's SASS is checked for that arch's tensor-core op, where the first arch alone was checked (against
the whole listing) and keyed. nvcc and cuobjdump are stand-ins here."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import submission_build
from nvfp4ctl.build.report import BuildReport, FunctionUsage, TensorOpCheck
from nvfp4ctl.build.submission_sources import find_sources
from nvfp4ctl.cli import app

runner = CliRunner()
# a wgmma kernel whose wgmma is compiled for sm_90 alone: the sm_100a cubin has no tensor-core op
WGMMA_BOTH_ARCHES = (
    "from torch.utils.cpp_extension import load_inline\n"
    'CUDA = "__global__ void k() {\\n#if __CUDA_ARCH__ == 900\\n  asm volatile(\\"wgmma.fence.sync.aligned;\\");\\n#endif\\n}"\n'
    'm = load_inline(name="g", cpp_sources="", cuda_sources=CUDA, extra_cuda_cflags=['
    '"-gencode=arch=compute_90a,code=sm_90a", "-gencode=arch=compute_100a,code=sm_100a"])\n')


def _cubin(arch: str, *instructions: str) -> str:
    """One arch's part of a `cuobjdump --dump-sass` listing, as nvcc 13.0's object of several -gencode gives it."""
    code = "".join(f"        /*{index * 16:04x}*/                   {instruction} ;\n"
                   for index, instruction in enumerate(instructions))
    return (f"\nFatbin elf code:\n================\narch = {arch}\ncode version = [1,8]\nhost = linux\n"
            f"compile_size = 64bit\n\n\tcode for {arch}\n\t.target\t{arch}\n\n\t\tFunction : _Z1kv\n{code}")


LISTING = (_cubin("sm_90a", "WARPGROUP.ARRIVE", "HGMMA.64x8x16.F32 gdesc[UR4], RZ, !UPT", "EXIT")
           + _cubin("sm_100a", "FFMA R0, R1, R2, R3", "EXIT"))
WHY_NOT_SM100 = ("g: no UTCOMMA.4X in the sm_100a SASS (found: no tensor-core op at all; a kernel without tensor cores"
                 " on purpose says so with a line `// nvfp4ctl: no-tensor-op`)")


@pytest.fixture()
def submission(tmp_path: Path, compiles: list[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(submission_build.resources, "dump_sass", lambda binary: LISTING)
    monkeypatch.setattr(submission_build.toolchain, "sass_tools", lambda: (Path("cuobjdump"), Path("nvdisasm")))
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    path = tmp_path / "submission.py"
    path.write_text(WGMMA_BOTH_ARCHES)
    return path


def test_each_arch_of_several_gencodes_is_checked_for_its_own_tensor_op(submission: Path, compiles: list[str]) -> None:
    """The sm_90a cubin's HGMMA passed the unit, though the sm_100a cubin, which a B200 runs, has none."""
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 1 and compiles == ["g.cu"], said
    assert f"error: {WHY_NOT_SM100}" in said, said
    assert "no HGMMA" not in said, said  # the sm_90a cubin has its op
    assert "sm_90a: HGMMA.64x8x16.F32 (wgmma (sm_90)); sm_100a: no UTCOMMA.4X; found none" in said, said
    again = runner.invoke(app, ["build", str(submission)])  # the cache entry holds every arch's check
    assert again.exit_code == 1 and compiles == ["g.cu"], again.output
    assert f"error: {WHY_NOT_SM100}" in " ".join(again.output.split()), again.output


def test_a_unit_of_several_gencodes_is_keyed_by_every_arch(submission: Path, compiles: list[str]) -> None:
    """The unit's key held its first arch alone: an entry made when the sm_90a SASS alone was checked (its
    HGMMA passing the unit) was served again and the sm_100a cubin never checked."""
    sources = find_sources(submission)
    extension = sources.extensions[0]
    [(name, code, _)] = submission_build._units(sources, extension)
    first_arch_key = submission_build._key(submission_build.keyed_code(code, sources.path), extension, ("sm_90a",))
    entry = submission_build._entry(name, "sm_90a", first_arch_key)
    entry.mkdir(parents=True)
    BuildReport(source=submission, arch="sm_90a", key=first_arch_key, entry=entry, module_name=None, functions=(),
                tensor_op=TensorOpCheck(expected="HGMMA", found=("HGMMA.64x8x16.F32",), match="HGMMA.64x8x16.F32",
                                        checked=True), compile_s=1.0).save()
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert compiles == ["g.cu"] and result.exit_code == 1, said
    assert f"error: {WHY_NOT_SM100}" in said, said


def _with_sm100_flag(code: str) -> str:
    return WGMMA_BOTH_ARCHES.replace("compute_100a,code=sm_100a", f"compute_100a,code={code}")


def test_an_arch_compiled_to_ptx_alone_is_not_checked_and_does_not_fail(submission: Path, compiles: list[str],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """-gencode=arch=compute_100a,code=compute_100a beside an sm_90a one: the listing holds the sm_90a cubin
    alone, and the sm_100a part, which has no SASS, failed the unit (no UTCOMMA.4X in the sm_100a SASS)."""
    submission.write_text(_with_sm100_flag("compute_100a"))
    monkeypatch.setattr(submission_build.resources, "dump_sass",
                        lambda binary: _cubin("sm_90a", "HGMMA.64x8x16.F32 gdesc[UR4], RZ, !UPT", "EXIT"))
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 0 and compiles == ["g.cu"], said
    assert "sm_90a: HGMMA.64x8x16.F32 (wgmma (sm_90)); sm_100a: PTX alone, not checked" in said, said
    assert "UTCOMMA" not in said, said
    again = runner.invoke(app, ["build", str(submission)])  # the cache entry says so too
    assert again.exit_code == 0 and compiles == ["g.cu"], again.output
    assert "sm_100a: PTX alone, not checked" in " ".join(again.output.split()), again.output


@pytest.mark.parametrize("ptx", ["compute_100a", "[compute_100a]"])
def test_ptx_alone_and_sass_of_one_arch_are_keyed_apart(submission: Path, ptx: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The key named sm_100a for code=compute_100a and for code=sm_100a alike; only the flags' text told
    them apart, so the same nvcc run written another way could be served the other's checks."""
    keyed: list[tuple[str, ...]] = []
    monkeypatch.setattr(submission_build, "_key", lambda code, extension, arches, unit=None: keyed.append(arches))
    for code in (ptx, "sm_100a"):
        submission.write_text(_with_sm100_flag(code))
        sources = find_sources(submission)
        extension = sources.extensions[0]
        [(name, unit_code, path)] = submission_build._units(sources, extension)
        submission_build._unit_key(sources, extension, "sm_90a", name, unit_code, path)
    assert keyed == [("sm_90a", "compute_100a"), ("sm_90a", "sm_100a")]


PTXAS_OF_BOTH = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z1kv' for 'sm_90a'
ptxas info    : Function properties for _Z1kv
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 90 registers, used 1 barriers, 2048 bytes smem, 352 bytes cmem[0]
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z1kv' for 'sm_100a'
ptxas info    : Function properties for _Z1kv
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 128 registers, used 1 barriers, 4096 bytes smem, 896 bytes cmem[0]
"""


def test_a_unit_of_several_gencodes_shows_each_archs_figures(submission: Path, compiles: list[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The unit's row gave 128 regs, the sm_100a run's, with nothing saying so, and the sm_90a kernel's 90 were
    lost: a row per arch now, the arch beside the kernel."""
    monkeypatch.setattr(submission_build.resources, "parse_ptxas",
                        lambda log, parse=submission_build.resources.parse_ptxas: parse(PTXAS_OF_BOTH))
    result = runner.invoke(app, ["build", str(submission)])
    rows = [" ".join(line.replace("│", " ").split()) for line in result.output.splitlines() if " k (sm_" in line]
    assert len(rows) == 2, result.output
    assert rows[0].startswith("g.cu (sm_90a, sm_100a): k (sm_90a) 90 2.0 KiB"), rows
    assert rows[1].startswith("g.cu (sm_90a, sm_100a): k (sm_100a) 128 4.0 KiB"), rows


def test_a_cached_unit_of_several_gencodes_without_each_archs_figures_says_so(submission: Path, compiles: list[str],
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A report cached when one arch's figures overwrote the other's cannot tell whose they are: a note says so."""
    monkeypatch.setattr(submission_build.resources, "parse_ptxas", lambda log: (FunctionUsage("_Z1kv", True, 128),))
    said = " ".join(runner.invoke(app, ["build", str(submission)]).output.split())
    assert "note: g.cu (sm_90a, sm_100a): regs, static smem, stack and spills are one of its archs', which its cache" \
           " entry does not name; remove " in said, said
