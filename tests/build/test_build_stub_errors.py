"""An error the host compiler reports in the stub nvcc makes (tmpxft_..._k.cudafe1.stub.c) is shown at the
user's line its notes name, the notes kept, where it was shown at a file the user never sees."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from nvfp4ctl.build.compiler_errors import first_error
from nvfp4ctl.cli import app

runner = CliRunner()

# nvcc 13.0 with gcc on `namespace { using namespace cute; __global__ void fill_kernel(...) ... }`, cut to
# its first two errors
CUTE = "/site/cutlass_library/source/include/cute/atom/mma_traits_sm70.hpp"
CUTE_LOG = f"""\
In file included from /tmp/tmpxft_000064d1_00000000-6_my_cute.cudafe1.stub.c:8,
                 from tmpxft_000064d1_00000000-6_my_cute.cudafe1.stub.c:1:
/tmp/tmpxft_000064d1_00000000-6_my_cute.cudafe1.stub.c: In function 'void __device_stub__ZN47_GLOBAL__N__fd841e29_10_my_cute_cu_d589cb6011fill_kernelEPf(float*)':
tmpxft_000064d1_00000000-6_my_cute.cudafe1.stub.c:1:28: error: reference to '_GLOBAL__N__fd841e29_10_my_cute_cu_d589cb60' is ambiguous
{CUTE}:41:95: note: candidates are: 'namespace cute::_GLOBAL__N__fd841e29_10_my_cute_cu_d589cb60 {{ }}'
   41 | namespace {{
/src/kernels/sm100/my_cute.cu:10:95: note:                 'namespace _GLOBAL__N__fd841e29_10_my_cute_cu_d589cb60 {{ }}'
   10 | namespace {{
/src/kernels/sm100/my_cute.cu: At global scope:
tmpxft_000064d1_00000000-6_my_cute.cudafe1.stub.c:1:28: error: reference to '_GLOBAL__N__fd841e29_10_my_cute_cu_d589cb60' is ambiguous
tmpxft_000064d1_00000000-6_my_cute.cudafe1.stub.c:1:28: note: in definition of macro '_NV_ANON_NAMESPACE'
{CUTE}:41:95: note: candidates are: 'namespace cute::_GLOBAL__N__fd841e29_10_my_cute_cu_d589cb60 {{ }}'
   41 | namespace {{
"""
AMBIGUOUS = "reference to '_GLOBAL__N__fd841e29_10_my_cute_cu_d589cb60' is ambiguous"

# plain CUDA provoking the same error: the kernel's anonymous namespace takes in another namespace's
ANONYMOUS_TWICE = """\
namespace lib {
namespace {
constexpr int kScale = 2;
}  // namespace
}  // namespace lib

namespace {
using namespace lib;
__global__ void scale_kernel(int* out) { *out = kScale; }
}  // namespace

void launch(int* out) { scale_kernel<<<1, 1>>>(out); }
"""


def test_a_stub_error_is_placed_at_the_users_line_among_its_notes() -> None:
    shown = first_error(CUTE_LOG, (Path("/src/kernels/sm100/my_cute.cu"),))
    assert shown is not None
    assert shown.splitlines() == [
        f"/src/kernels/sm100/my_cute.cu:10: {AMBIGUOUS} (the host compiler's error at line 1 of nvcc's temporary"
        " my_cute.cudafe1.stub.c)",
        f"  note: {CUTE}:41: candidates are: 'namespace cute::_GLOBAL__N__fd841e29_10_my_cute_cu_d589cb60 {{ }}'",
        "  note: /src/kernels/sm100/my_cute.cu:10: 'namespace _GLOBAL__N__fd841e29_10_my_cute_cu_d589cb60 { }'",
        "(1 more error; -v shows the full compiler output)"]


def test_a_stub_error_whose_notes_name_no_file_of_yours_is_placed_at_the_first_real_one() -> None:
    shown = first_error(CUTE_LOG)
    assert shown is not None and shown.startswith(f"{CUTE}:41: {AMBIGUOUS} (the host compiler's error")
    alone = first_error("tmpxft_0001_00000000-6_k.cudafe1.stub.c:1:28: error: 'x' was not declared in this scope\n")
    assert alone == "nvcc's temporary k.cudafe1.stub.c:1: 'x' was not declared in this scope"


def test_an_error_in_a_real_file_comes_before_one_in_a_temporary_file() -> None:
    log = ("tmpxft_0001_00000000-6_k.cudafe1.stub.c:1:28: error: 'x' was not declared in this scope\n"
           "/src/k.cu:4:3: error: 'y' was not declared in this scope\n")
    assert first_error(log).splitlines() == [  # type: ignore[union-attr]
        "/src/k.cu:4: 'y' was not declared in this scope", "(1 more error; -v shows the full compiler output)"]


def test_build_of_a_kernel_in_an_anonymous_namespace_names_its_lines(tmp_path: Path) -> None:
    kernel = tmp_path / "anonymous.cu"
    kernel.write_text("// nvfp4ctl: no-tensor-op\n" + ANONYMOUS_TWICE)
    result = runner.invoke(app, ["build", str(kernel), "--arch", "sm_90a"])
    assert result.exit_code == 1, result.output
    assert f"{kernel}:3: reference to" in result.output and "is ambiguous (the host compiler's error" in result.output
    assert f"note: {kernel}:8: " in result.output  # the kernel's own anonymous namespace
    assert "tmpxft" not in result.output
    verbose = runner.invoke(app, ["build", str(kernel), "--arch", "sm_90a", "-v"])
    assert verbose.exit_code == 1 and "tmpxft" in verbose.output
