"""nvfp4ctl/build/tensor_code_use.py: another arch's tensor-core instructions, as the target's device pass
compiles a kernel and the header helpers it calls; nvcc itself checks the judgement where it is installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from nvfp4ctl.build.tensor_code_use import TensorCodeUse, UncalledHelper, relocatable, tensor_code_use

TCGEN05 = ("sm_100a", "tcgen05 / SM100 instructions")
# one header of helpers for both archs, each in its own inline function, the tcgen05 ones under an arch guard
SHARED_HELPERS = """#pragma once
#include <cstdint>
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
__device__ __forceinline__ void umma_commit(uint64_t* bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" :: "l"(bar));
}
#endif
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
"""
WGMMA_KERNEL = '#include "ptx_helpers.cuh"\n__global__ void k(float* out) { wgmma_fence(); out[0] = 1.0f; }\n'
TCGEN05_KERNEL = ('#include <cstdint>\n__global__ void k(uint64_t* bar) {\n'
                  '  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];"'
                  ' :: "l"(bar));\n}\n')


def test_guarded_helpers_of_a_shared_header_do_not_count_for_the_other_arch() -> None:
    """A wgmma kernel including a header whose tcgen05 helpers sit under `#if __CUDA_ARCH__ >= 1000` was
    refused for sm_90a: its headers were searched whole, guards and all."""
    use = tensor_code_use(WGMMA_KERNEL, [(Path("ptx_helpers.cuh"), SHARED_HELPERS)], "sm_90a")
    assert use.refused is None and use.uncalled == ()


def test_a_kernel_that_uses_tcgen05_is_still_refused() -> None:
    assert tensor_code_use(TCGEN05_KERNEL, [], "sm_90a").refused == TCGEN05
    guarded_off = "#if __CUDA_ARCH__ < 1000\n#error sm_100a only\n#endif\n" + TCGEN05_KERNEL
    assert tensor_code_use(guarded_off, [], "sm_90a").refused == TCGEN05  # #error is no guard of the code after it


@pytest.mark.parametrize("guard", ["#if __CUDA_ARCH__ >= 1000", "#ifdef __CUDA_ARCH_FEAT_SM100_ALL",
                                   "#if defined(__CUDA_ARCH_SPECIFIC__) && __CUDA_ARCH_SPECIFIC__ == 1000",
                                   "#if __CUDA_ARCH__ < 1000\n#else"])
def test_an_arch_guard_in_the_kernel_itself_is_read_as_the_target_compiles_it(guard: str) -> None:
    guarded = TCGEN05_KERNEL.replace("  asm", f"{guard}\n  asm").replace("(bar));\n", "(bar));\n#endif\n")
    assert tensor_code_use(guarded, [], "sm_90a").refused is None
    assert tensor_code_use(guarded, [], "sm_100a").refused is None  # its own arch


def test_an_unguarded_helper_counts_only_where_the_kernel_calls_it() -> None:
    """Called from the kernel, or through another helper that the kernel calls: refused. Called by nothing:
    nvcc emits no code for it, so it is a warning naming the header's line."""
    unguarded = SHARED_HELPERS.replace("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000\n", "").replace(
        "#endif\n", "")
    headers = [(Path("ptx_helpers.cuh"), unguarded)]
    assert tensor_code_use(WGMMA_KERNEL, headers, "sm_90a").uncalled == (
        UncalledHelper(Path("ptx_helpers.cuh"), 4, "umma_commit", TCGEN05),)
    calling = WGMMA_KERNEL.replace("wgmma_fence();", "wgmma_fence(); umma_commit(nullptr);")
    assert tensor_code_use(calling, headers, "sm_90a").refused == TCGEN05
    steps = [(Path("steps.cuh"), '#include "ptx_helpers.cuh"\n__device__ void mma_step() { umma_commit(nullptr); }\n')]
    through = WGMMA_KERNEL.replace("wgmma_fence();", "mma_step();")
    assert tensor_code_use(through, [*headers, *steps], "sm_90a").refused == TCGEN05
    macro = [(Path("m.cuh"), '#define COMMIT(bar) asm volatile("tcgen05.commit.cta_group::1.b64 [%0];" :: "l"(bar))\n')]
    assert tensor_code_use(WGMMA_KERNEL.replace("wgmma_fence();", "COMMIT(0);"), macro, "sm_90a").refused == TCGEN05
    assert tensor_code_use(WGMMA_KERNEL, macro, "sm_90a").uncalled == (UncalledHelper(Path("m.cuh"), 1, "COMMIT", TCGEN05),)


def _compiles_for_sm90a(folder: Path, kernel: str) -> subprocess.CompletedProcess[str]:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("needs nvcc")
    (folder / "ptx_helpers.cuh").write_text(SHARED_HELPERS)
    (folder / "k.cu").write_text(kernel)
    return subprocess.run([nvcc, "-c", "-gencode=arch=compute_90a,code=sm_90a", str(folder / "k.cu"), "-o",
                           str(folder / "k.o")], capture_output=True, text=True, timeout=300)


def test_what_is_refused_is_what_nvcc_fails_to_build_for_sm_90a(tmp_path: Path) -> None:
    """The judgement against the compiler: the wgmma kernel with the shared header builds for sm_90a, the
    kernel that uses tcgen05 does not."""
    built = _compiles_for_sm90a(tmp_path, WGMMA_KERNEL)
    assert built.returncode == 0, built.stderr
    failed = _compiles_for_sm90a(tmp_path, TCGEN05_KERNEL)
    assert failed.returncode != 0 and "tcgen05" in failed.stderr, failed.stderr


UNCALLED_KERNEL_HEADER = """#pragma once
#include <cstdint>
__global__ void umma_probe(uint64_t* bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" :: "l"(bar));
}
"""
PLAIN_KERNEL = '#include "ptx_helpers.cuh"\n__global__ void k(float* out) { out[0] = 1.0f; }\n'


def test_a_header_kernel_nothing_calls_is_refused_as_nvcc_compiles_every_kernel() -> None:
    """A header's __global__ holding tcgen05 that nothing launches was a warning ("nvcc emits no code for a
    helper nothing calls"); nvcc compiles every kernel that is no template, and ptxas refuses its tcgen05."""
    headers = [(Path("ptx_helpers.cuh"), UNCALLED_KERNEL_HEADER)]
    assert tensor_code_use(PLAIN_KERNEL, headers, "sm_90a") == TensorCodeUse(refused=TCGEN05, uncalled=())
    template = UNCALLED_KERNEL_HEADER.replace("__global__", "template <int N> __global__")
    assert tensor_code_use(PLAIN_KERNEL, [(Path("ptx_helpers.cuh"), template)], "sm_90a").refused is None
    # a helper an uncalled kernel calls is compiled with it
    through = [(Path("ptx_helpers.cuh"), SHARED_HELPERS.replace("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000\n", "")
                .replace("#endif\n", "") + "__global__ void probe(uint64_t* bar) { umma_commit(bar); }\n")]
    assert tensor_code_use(PLAIN_KERNEL, through, "sm_90a").refused == TCGEN05


def test_an_external_device_function_nothing_calls_counts_only_with_relocatable_code() -> None:
    """nvcc emits a non-inline __device__ function of namespace scope that nothing calls only with -rdc=true;
    an inline, static or member one, never."""
    device = UNCALLED_KERNEL_HEADER.replace("__global__", "__device__")
    headers = [(Path("ptx_helpers.cuh"), device)]
    assert tensor_code_use(PLAIN_KERNEL, headers, "sm_90a").refused is None
    assert tensor_code_use(PLAIN_KERNEL, headers, "sm_90a", relocatable_code=True).refused == TCGEN05
    for kept_out in ("static __device__", "__device__ __forceinline__", "namespace { __device__"):
        text = device.replace("__device__", kept_out) + ("}\n" if kept_out.startswith("namespace") else "")
        use = tensor_code_use(PLAIN_KERNEL, [(Path("ptx_helpers.cuh"), text)], "sm_90a", relocatable_code=True)
        assert use.refused is None, kept_out
    assert relocatable(["-O3", "-rdc=true"]) and relocatable(["-rdc", "true"]) and relocatable(["-dc"])
    assert not relocatable(["-O3", "-rdc=false"])


def _compiles(folder: Path, header: str, *flags: str, kernel: str = PLAIN_KERNEL) -> subprocess.CompletedProcess[str]:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("needs nvcc")
    (folder / "ptx_helpers.cuh").write_text(header)
    (folder / "k.cu").write_text(kernel)
    return subprocess.run([nvcc, "-c", "-gencode=arch=compute_90a,code=sm_90a", *flags, str(folder / "k.cu"), "-o",
                           str(folder / "k.o")], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(("header", "flags"), [(UNCALLED_KERNEL_HEADER, ()),
                                              (UNCALLED_KERNEL_HEADER.replace("__global__", "template <int N> __global__"), ()),
                                              (UNCALLED_KERNEL_HEADER.replace("__global__", "__device__"), ()),
                                              (UNCALLED_KERNEL_HEADER.replace("__global__", "__device__"), ("-rdc=true",)),
                                              (UNCALLED_KERNEL_HEADER.replace("__global__", "static __device__"), ("-rdc=true",))])
def test_an_uncalled_definition_is_refused_where_nvcc_fails_to_build_it_for_sm_90a(
        tmp_path: Path, header: str, flags: tuple[str, ...]) -> None:
    """The judgement of definitions nothing calls against nvcc itself: refused exactly where ptxas rejects
    their tcgen05 for sm_90a."""
    built = _compiles(tmp_path, header, *flags)
    refused = tensor_code_use(PLAIN_KERNEL, [(Path("ptx_helpers.cuh"), header)], "sm_90a", relocatable(flags)).refused
    assert (built.returncode != 0) == (refused is not None), built.stderr
    assert built.returncode == 0 or "tcgen05" in built.stderr, built.stderr


COMMIT = 'asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" :: "l"(bar));'


@pytest.mark.parametrize(("header", "named_by"), [
    (f"struct Commit {{\n  __device__ void operator()(uint64_t* bar) const {{ {COMMIT} }}\n}};\n", "Commit{}(bar);"),
    (f"struct Commit {{ __device__ void operator()(uint64_t* bar) const; }};\n"
     f"__device__ void Commit::operator()(uint64_t* bar) const {{ {COMMIT} }}\n", "Commit{}(bar);"),
    (f"struct Umma {{\n  uint64_t* bar_; int phase_;\n  __device__ Umma(uint64_t* bar) : bar_{{bar}}, phase_{{0}} {{ {COMMIT} }}\n}};\n",
     "Umma umma(bar);"),
    (f"__device__ auto commit = [] (uint64_t* bar) {{ {COMMIT} }};\n", "commit(bar);")])
def test_tcgen05_in_an_operator_a_constructor_or_a_lambda_counts_where_the_kernel_names_its_class(
        header: str, named_by: str) -> None:
    """tcgen05 in `operator()` of a struct, or in a constructor whose member initialisers use braces, belonged
    to no definition the scan could name: it was only warned about, even where the kernel used the struct."""
    headers = [(Path("umma.cuh"), "#include <cstdint>\n" + header)]
    kernel = '#include "umma.cuh"\n__global__ void k(uint64_t* bar) { }\n'
    assert tensor_code_use(kernel.replace("{ }", "{ " + named_by + " }"), headers, "sm_90a").refused == TCGEN05
    assert tensor_code_use(kernel, headers, "sm_90a").refused is None  # the struct unused: nvcc emits none of it


def test_tcgen05_in_a_function_the_scan_cannot_name_counts_as_reached() -> None:
    """An operator outside any class (or a member of an unnamed struct) has no name the kernel's code could be
    seen to use: counted, not left out. An instruction outside any function (a string) is still a warning."""
    for header in (f"struct Tile {{ int v; }};\n__device__ Tile operator+(Tile a, Tile b) {{ uint64_t* bar = 0; {COMMIT} return a; }}\n",
                   f"struct {{ __device__ void operator()(uint64_t* bar) {{ {COMMIT} }} }} commit;\n"):
        assert tensor_code_use(PLAIN_KERNEL, [(Path("ptx_helpers.cuh"), header)], "sm_90a").refused == TCGEN05, header
    named = [(Path("ptx_helpers.cuh"), 'const char* kOps[] {"tcgen05.mma"};\n')]
    assert tensor_code_use(PLAIN_KERNEL, named, "sm_90a").uncalled == (UncalledHelper(Path("ptx_helpers.cuh"), 1, None, TCGEN05),)


def test_a_struct_s_tcgen05_is_refused_where_nvcc_fails_to_build_it_for_sm_90a(tmp_path: Path) -> None:
    """The operator() of a struct against nvcc: its tcgen05 fails the sm_90a build where the kernel uses the
    struct, and is no code where nothing does."""
    header = f"#pragma once\n#include <cstdint>\nstruct Commit {{\n  __device__ void operator()(uint64_t* bar) const {{ {COMMIT} }}\n}};\n"
    using = '#include "ptx_helpers.cuh"\n__global__ void k(uint64_t* bar) { Commit{}(bar); }\n'
    for kernel in (PLAIN_KERNEL, using):
        built = _compiles(tmp_path, header, kernel=kernel)
        refused = tensor_code_use(kernel, [(Path("ptx_helpers.cuh"), header)], "sm_90a").refused
        assert (built.returncode != 0) == (refused is not None), (kernel, built.stderr)
