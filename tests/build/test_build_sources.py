from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.build import sources
from nvfp4ctl.errors import UsageError

FIXTURES = Path(__file__).parent / "fixtures"
HGMMA_PROBE, ZERO_GEMM = FIXTURES / "hgmma_probe.cu", FIXTURES / "zero_gemm.cu"


def _kernel(tmp_path: Path, folder: str, text: str) -> Path:
    path = tmp_path / folder / "k.cu"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_arch_comes_from_the_folder(tmp_path: Path) -> None:
    assert sources.declared_arch(_kernel(tmp_path, "sm90", "")) == "sm_90a"
    assert sources.declared_arch(_kernel(tmp_path, "sm100", "")) == "sm_100a"
    assert sources.declared_arch(_kernel(tmp_path, "mine", "")) is None


def test_a_declaration_in_the_file_wins_over_the_folder(tmp_path: Path) -> None:
    assert sources.declared_arch(_kernel(tmp_path, "sm90", "// nvfp4ctl: arch=sm_100a\n")) == "sm_100a"
    assert sources.declared_arch(HGMMA_PROBE) == "sm_90a"


@pytest.mark.parametrize("text", ['const char* s = "nvfp4ctl: arch=sm_100a";\n',
                                  'int tile = 128;  // nvfp4ctl: arch=sm_100a\n',
                                  'printf("see // nvfp4ctl: arch=sm_100a");\n'])
def test_a_mark_outside_a_comment_line_of_its_own_declares_nothing(tmp_path: Path, text: str) -> None:
    """The mark was matched anywhere in the text: a string quoting it declared the kernel's arch."""
    assert sources.declared_arch(_kernel(tmp_path, "sm90", text)) == "sm_90a"
    assert sources.declared_arch(_kernel(tmp_path, "mine", text)) is None


def test_a_comment_line_declares_whatever_its_indent_and_spacing(tmp_path: Path) -> None:
    assert sources.declared_arch(_kernel(tmp_path, "mine", "int x;\n  //nvfp4ctl:arch = sm_100a\n")) == "sm_100a"


def test_a_bad_declaration_or_no_arch_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="sm_80"):
        sources.declared_arch(_kernel(tmp_path, "x", "// nvfp4ctl: arch=sm_80\n"))
    with pytest.raises(UsageError, match="cannot tell which arch"):
        sources.resolve_arch(ZERO_GEMM, None)
    assert sources.resolve_arch(ZERO_GEMM, "sm_100a") == "sm_100a"


def test_arch_errors_name_the_kernel_relative_to_the_working_folder(tmp_path: Path, monkeypatch) -> None:
    """As the compiler's own errors and tune's knob errors do (compiler_errors.display_path): `tune --kernel
    mine.cu` was told "cannot tell which arch /abs/path/mine.cu is for"."""
    monkeypatch.chdir(tmp_path)
    kernel = _kernel(tmp_path, "mine", "__global__ void k() {}\n").resolve()
    with pytest.raises(UsageError) as error:
        sources.resolve_arch(kernel, None)
    assert str(error.value).startswith("cannot tell which arch mine/k.cu is for: put it under sm90/ or sm100/")
    declared = _kernel(tmp_path, "x", "// nvfp4ctl: arch=sm_80\n").resolve()
    with pytest.raises(UsageError) as error:
        sources.declared_arch(declared)
    assert str(error.value) == "x/k.cu:1: declared arch 'sm_80' is not one of sm_90a, sm_100a"


@pytest.mark.parametrize(("typed", "meant"), [("sm90a", "sm_90a"), ("SM_90A", "sm_90a"), ("sm100a", "sm_100a"),
                                              ("sm_90", "sm_90a"), ("sm-100a", "sm_100a")])
@pytest.mark.parametrize("folder", ["mine", "sm90", "sm100"])
def test_a_mistyped_arch_mark_is_refused_with_its_line_and_the_arch_meant(tmp_path: Path, monkeypatch, typed: str,
                                                                          meant: str, folder: str) -> None:
    """Only values starting `sm_` were read: `arch=sm90a` was passed over, so outside sm90/ the error said to add
    the line the file had, and inside one the folder's arch was taken without a word."""
    monkeypatch.chdir(tmp_path)
    kernel = _kernel(tmp_path, folder, f"#include <cstdint>\n\n// nvfp4ctl: arch={typed}\n")
    with pytest.raises(UsageError) as error:
        sources.resolve_arch(kernel, None)
    assert str(error.value) == (f"{folder}/k.cu:3: declared arch {typed!r} is not one of sm_90a, sm_100a;"
                                f" did you mean {meant}?")


def test_a_mistyped_arch_mark_is_refused_where_arch_is_passed_too(tmp_path: Path) -> None:
    kernel = _kernel(tmp_path, "sm90", "// nvfp4ctl: arch=sm90a\n")
    with pytest.raises(UsageError, match="declared arch 'sm90a' is not one of sm_90a, sm_100a; did you mean sm_90a"):
        sources.resolve_arch(kernel, "sm_90a")


def test_another_gpus_arch_gets_no_guess(tmp_path: Path) -> None:
    for typed in ("sm_80", "sm_120a", "compute_90a"):
        with pytest.raises(UsageError) as error:
            sources.declared_arch(_kernel(tmp_path, "x", f"// nvfp4ctl: arch={typed}\n"))
        assert "did you mean" not in str(error.value)


def test_a_mark_followed_by_words_names_its_arch(tmp_path: Path) -> None:
    kernel = _kernel(tmp_path, "mine", "// nvfp4ctl: arch=sm_100a (the tcgen05 path)\n")
    assert sources.declared_arch(kernel) == "sm_100a"


def test_no_arch_names_the_values_to_pass(tmp_path: Path, monkeypatch) -> None:
    """export --kernel k.cu (no --arch all there) said only "or pass --arch"."""
    monkeypatch.chdir(tmp_path)
    kernel = _kernel(tmp_path, "mine", "__global__ void k() {}\n")
    with pytest.raises(UsageError) as error:
        sources.resolve_arch(kernel, None)
    assert str(error.value).endswith("add a line `// nvfp4ctl: arch=sm_90a`, or pass --arch sm_90a or --arch sm_100a")


def test_missing_source_is_one_usage_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such kernel source"):
        sources.checked_source(tmp_path / "nope.cu")


def test_inputs_cover_local_headers_and_spot_cutlass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    common = tmp_path / "kernels" / "common"
    common.mkdir(parents=True)
    (common / "nvfp4_gemm_api.h").write_text('#pragma once\n#include "helpers.cuh"\n')
    (common / "helpers.cuh").write_text("#pragma once\n")
    (common / "torch_binding.cpp").write_text('#include "nvfp4_gemm_api.h"\n')
    kernel = _kernel(tmp_path / "kernels", "sm100", '#include "../common/nvfp4_gemm_api.h"\n#include "cute/tensor.hpp"\n')
    monkeypatch.setattr(sources, "kernels_dir", lambda: tmp_path / "kernels")
    inputs = sources.build_inputs(kernel)
    assert [p.name for p in inputs.headers] == ["nvfp4_gemm_api.h", "helpers.cuh"]
    assert inputs.needs_cutlass
    assert inputs.files[0] == kernel and inputs.files[-1].name == "torch_binding.cpp"
    assert sources.default_kernels() == [kernel]


def test_source_marks_reads_bare_and_valued_marks(tmp_path: Path) -> None:
    from nvfp4ctl.build.sources import NO_TENSOR_OP, source_marks

    kernel = tmp_path / "k.cu"
    kernel.write_text("// nvfp4ctl: never-run-on sm_100a\n// nvfp4ctl: no-tensor-op (a plain baseline)\n"
                      "// nvfp4ctl: no-tensor-ops is another word\n")
    assert source_marks(kernel, "never-run-on") == ("sm_100a",)
    assert source_marks(kernel, NO_TENSOR_OP) == ("",)
    assert source_marks(kernel, "arch") == ()


def test_the_naive_kernels_declare_no_tensor_op() -> None:
    from nvfp4ctl.build.sources import NO_TENSOR_OP, source_marks

    naive = sorted((Path(__file__).resolve().parents[2] / "kernels" / "naive").glob("*.cu"))
    assert naive and all(source_marks(path, NO_TENSOR_OP) for path in naive)


def test_the_build_child_finds_this_nvfp4ctl_without_an_install(monkeypatch) -> None:
    """`python3 -m nvfp4ctl bench` from a checkout that is not pip-installed: the build child, started
    from the build folder, failed with "No module named 'nvfp4ctl'" (H100, 2026-11-26)."""
    from pathlib import Path

    import nvfp4ctl
    from nvfp4ctl.build import compile as build_compile

    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.setattr(build_compile.toolchain, "cuda_home", lambda: Path("/usr/local/cuda"))
    env = build_compile._compiler_env()
    assert env["PYTHONPATH"].split(":")[0] == str(Path(nvfp4ctl.__file__).resolve().parents[1])


def test_an_installed_nvfp4ctl_does_not_put_site_packages_before_the_standard_library(monkeypatch) -> None:
    """In a wheel install the package's parent is site-packages, which the build child has anyway; on
    PYTHONPATH it would come before the standard library."""
    from pathlib import Path

    from nvfp4ctl.build import compile as build_compile

    monkeypatch.setenv("PYTHONPATH", "/mine")
    monkeypatch.setattr(build_compile.toolchain, "cuda_home", lambda: Path("/usr/local/cuda"))
    monkeypatch.setattr(build_compile, "_site_folders", lambda: {str(build_compile.REPO_DIR)})
    assert build_compile._compiler_env()["PYTHONPATH"] == "/mine"


def test_a_quoted_mark_is_not_a_mark(tmp_path) -> None:
    from nvfp4ctl.build.sources import NO_TENSOR_OP, source_marks

    kernel = tmp_path / "k.cu"
    kernel.write_text('// a kernel says `// nvfp4ctl: no-tensor-op` when it means it\n'
                      'const char* hint = "// nvfp4ctl: no-tensor-op";\n__global__ void k() {}\n')
    assert source_marks(kernel, NO_TENSOR_OP) == ()
    kernel.write_text("// nvfp4ctl: never-run-on sm_100a\n  // nvfp4ctl: no-tensor-op\n__global__ void k() {}\n")
    assert source_marks(kernel, NO_TENSOR_OP) == ("",)
    assert source_marks(kernel, "never-run-on") == ("sm_100a",)


def test_nvcc_is_found_in_usr_local_cuda_without_path_or_cuda_home(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A toolkit installed in its default place but not on the PATH: torch's cpp_extension builds with
    it, so nvfp4ctl must not say 'nvcc not found: install the CUDA toolkit'."""
    from nvfp4ctl.build import toolchain

    nvcc = tmp_path / "cuda" / "bin" / "nvcc"
    nvcc.parent.mkdir(parents=True)
    nvcc.write_text("#!/bin/sh\n")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(toolchain, "DEFAULT_CUDA_HOME", tmp_path / "cuda")
    toolchain.nvcc_path.cache_clear()
    try:
        assert toolchain.nvcc_path() == nvcc
        monkeypatch.setattr(toolchain, "DEFAULT_CUDA_HOME", tmp_path / "nowhere")
        toolchain.nvcc_path.cache_clear()
        with pytest.raises(UsageError, match="nvcc not found: install the CUDA toolkit"):
            toolchain.nvcc_path()
    finally:
        toolchain.nvcc_path.cache_clear()


def test_a_users_kernels_folder_without_common_uses_the_shipped_bindings(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """kernels/sm90/my_gemv.cu of your own and no kernels/common/: the API header and the binding come
    from nvfp4ctl (the build used to skip the kernel: 'the torch binding is missing: .../kernels/common/...')."""
    from nvfp4ctl.project import shipped

    kernel = tmp_path / "kernels" / "sm90" / "my_gemv.cu"
    kernel.parent.mkdir(parents=True)
    kernel.write_text('#include "nvfp4_gemv_api.h"\n')
    monkeypatch.chdir(tmp_path)
    assert sources.common_dir() == shipped("kernels") / "common"
    assert sources.kernel_problem(kernel).name == "nvfp4_gemv"
    assert sources.binding_path(kernel) == shipped("kernels") / "common" / "nvfp4_gemv_binding.cpp"
    (tmp_path / "kernels" / "common").mkdir()  # a common/ of your own wins where it holds a binding
    assert sources.common_dir() == shipped("kernels") / "common"
    (tmp_path / "kernels" / "common" / "torch_binding.cpp").write_text('#include "nvfp4_gemm_api.h"\n')
    assert sources.common_dir() == tmp_path / "kernels" / "common"


SHIPPED_GEMV = Path(__file__).resolve().parents[2] / "kernels" / "naive" / "nvfp4_gemv_naive.cu"


def test_a_models_kernels_common_leaves_shipped_kernels_and_yours_to_nvfp4ctls(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A model repository's kernels/common/rope.cuh in the current folder: the shipped GEMV kernel built as
    the GEMM (the header said 'it includes no problem's API header') with 'the torch binding is missing:
    .../kernels/common/torch_binding.cpp', exit 2; a kernel of yours failed the same way."""
    from nvfp4ctl.project import shipped

    (tmp_path / "kernels" / "common").mkdir(parents=True)
    (tmp_path / "kernels" / "common" / "rope.cuh").write_text("// mine\n")
    mine = _kernel(tmp_path / "kernels", "mine", '#include "nvfp4_gemv_api.h"\n')
    monkeypatch.chdir(tmp_path)
    own = shipped("kernels") / "common"
    for kernel in (SHIPPED_GEMV, mine):
        inputs = sources.build_inputs(kernel)
        assert inputs.common == own and inputs.binding == own / "nvfp4_gemv_binding.cpp"
        assert sources.kernel_problem(kernel).name == "nvfp4_gemv"
        assert sources.override_note_of(kernel) is None
    assert sources.common_override() is None


def _models_common(tmp_path: Path) -> Path:
    """A model repository's kernels/common/: no binding, so no override; rope.cuh its own header, and a
    launch_error.h by the name of one of nvfp4ctl's."""
    common = tmp_path / "kernels" / "common"
    common.mkdir(parents=True)
    (common / "rope.cuh").write_text("#pragma once\n// mine\n")
    (common / "launch_error.h").write_text("#pragma once\n// mine too\n")
    return common


def test_a_kernel_of_yours_includes_the_headers_of_a_kernels_common_that_is_no_override(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`#include "rope.cuh"` from a non-override kernels/common/ was on no include path: 'rope.cuh: No such
    file or directory'. It is searched after nvfp4ctl's, whose header of the same name wins, as a note says."""
    from nvfp4ctl.build import flags
    from nvfp4ctl.project import shipped

    common = _models_common(tmp_path)
    mine = _kernel(tmp_path / "kernels", "mine", '#include "nvfp4_gemv_api.h"\n#include "rope.cuh"\n')
    monkeypatch.chdir(tmp_path)
    own = shipped("kernels") / "common"
    inputs = sources.build_inputs(mine)
    assert flags.include_dirs(inputs) == [own, common]
    assert common / "rope.cuh" in inputs.headers and inputs.binding == own / "nvfp4_gemv_binding.cpp"
    assert sources.shadow_note_of(mine) is None  # nothing of yours is hidden: launch_error.h is not included
    mine.write_text('#include "nvfp4_gemv_api.h"\n#include "rope.cuh"\n#include "launch_error.h"\n')
    assert own / "launch_error.h" in sources.build_inputs(mine).headers
    assert common / "launch_error.h" not in sources.build_inputs(mine).headers
    assert sources.shadowed_headers(mine) == [common / "launch_error.h"]
    assert sources.shadow_note_of(mine) == ("kernels/common/launch_error.h not used: nvfp4ctl's own kernels/common/"
                                            " has a header of the same name, found first; rename yours to include it")
    # nvfp4ctl's own kernels build with nvfp4ctl's headers alone
    assert flags.include_dirs(sources.build_inputs(SHIPPED_GEMV)) == [own]


def test_angle_bracket_includes_are_followed_as_the_build_s_include_folders_find_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`#include <...>` of a header in the build's -I folders (kernels/common) is an input as a quoted one is:
    it picks the problem's binding and a header of yours it hides is named; one beside the kernel alone is
    not, as the compiler does not look there for it (nor does the build find it)."""
    from nvfp4ctl.project import shipped

    common = _models_common(tmp_path)
    mine = _kernel(tmp_path / "kernels", "mine", "#include <nvfp4_gemv_api.h>\n#include <rope.cuh>\n"
                                               "#include <launch_error.h>\n#include <beside.cuh>\n#include <vector>\n")
    (mine.parent / "beside.cuh").write_text("#pragma once\n")
    monkeypatch.chdir(tmp_path)
    own = shipped("kernels") / "common"
    inputs = sources.build_inputs(mine)
    assert inputs.binding == own / "nvfp4_gemv_binding.cpp"
    assert {common / "rope.cuh", own / "launch_error.h"} <= set(inputs.headers)
    assert mine.parent / "beside.cuh" not in inputs.headers and common / "launch_error.h" not in inputs.headers
    assert sources.local_headers(mine)[:3] == [own / "nvfp4_gemv_api.h", common / "rope.cuh", own / "launch_error.h"]
    assert sources.shadowed_headers(mine) == [common / "launch_error.h"]


def test_a_kernels_common_holding_a_binding_is_your_override_for_your_kernels_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl.project import shipped

    common = tmp_path / "kernels" / "common"
    common.mkdir(parents=True)
    (common / "nvfp4_gemm_api.h").write_text("#pragma once\n")
    (common / "torch_binding.cpp").write_text('#include "nvfp4_gemm_api.h"\n')
    gemm = _kernel(tmp_path / "kernels", "sm90", '#include "nvfp4_gemm_api.h"\n')
    gemv = _kernel(tmp_path / "kernels", "mine", '#include "nvfp4_gemv_api.h"\n')
    monkeypatch.chdir(tmp_path)
    assert sources.build_inputs(gemm).binding == common / "torch_binding.cpp"
    note = sources.override_note_of(gemm)
    assert note is not None and "your override of nvfp4ctl's kernels/common/ (it holds torch_binding.cpp)" in note
    # the GEMV kernel is the GEMV's by the header it names, which this override lacks, as it lacks its binding
    assert sources.kernel_problem(gemv).name == "nvfp4_gemv"
    with pytest.raises(UsageError, match=r"nvfp4_gemv_binding.cpp \(kernels/common is taken as your override of"
                                         r" nvfp4ctl's kernels/common/, as it holds torch_binding.cpp: add the binding"):
        sources.build_inputs(gemv)
    shipped_inputs = sources.build_inputs(SHIPPED_GEMV)  # nvfp4ctl's own kernels never take it
    assert shipped_inputs.binding == shipped("kernels") / "common" / "nvfp4_gemv_binding.cpp"


def test_build_inputs_reads_the_kernel_and_each_header_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command with a kernel target starts here; it read each file three times (the problem's
    binding, the header list, the CUTLASS test)."""
    kernel = Path(__file__).resolve().parents[2] / "kernels" / "sm90" / "nvfp4_gemm_sm90.cu"
    expected = sources.build_inputs(kernel)
    reads: list[str] = []
    read_text = Path.read_text

    def counted(path: Path, *args, **kwargs) -> str:
        reads.append(path.name)
        return read_text(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counted)
    assert sources.build_inputs(kernel) == expected
    assert len(expected.headers) > 10 and "nvfp4_gemm_api.h" in reads
    assert sorted(reads) == sorted(set(reads)) == sorted(p.name for p in (kernel, *expected.headers, expected.binding))


def test_includes_the_preprocessor_skips_pick_no_header_binding_or_cutlass(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    common = tmp_path / "kernels" / "common"
    common.mkdir(parents=True)
    for name in ("nvfp4_gemm_api.h", "nvfp4_dual_gemm_api.h", "old_tiles.cuh", "notes.cuh"):
        (common / name).write_text("#pragma once\n")
    (common / "torch_binding.cpp").write_text('#include "nvfp4_gemm_api.h"\n')
    (common / "nvfp4_dual_gemm_binding.cpp").write_text('#include "nvfp4_dual_gemm_api.h"\n')
    kernel = _kernel(tmp_path / "kernels", "sm100", (
        '// #include "nvfp4_dual_gemm_api.h"  (the dual GEMM is a later step)\n'
        '/* #include <cute/tensor.hpp> */\n'
        '#if 0\n#include "old_tiles.cuh"\n#endif\n'
        'int x; // a comment that goes on \\\n#include "notes.cuh"\n'
        '#include "nvfp4_gemm_api.h"\n'))
    monkeypatch.setattr(sources, "kernels_dir", lambda: tmp_path / "kernels")
    inputs = sources.build_inputs(kernel)
    assert [p.name for p in inputs.headers] == ["nvfp4_gemm_api.h"]
    assert inputs.binding.name == "torch_binding.cpp" and not inputs.needs_cutlass
