"""Every lint rule's stable code, severity, reason and a bad/good example (the `--list-rules` view).

Codes never change meaning once released. NV0: a file that cannot be what it is meant to be (not
text, not Python, no custom_kernel, an empty kernel source, an extension whose build fails or builds
for the wrong arch); the other groups follow the competition rules: NV1 the banned word, NV2 graphs,
NV3 result caching, NV4 reference scales, NV5 copies of B, NV6 harness tampering, NV7 reference
fallback and shape special-casing, NV8 debug output, NV9 profile-only rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from nvfp4ctl.lint.diagnostic import Severity

ERROR, WARNING = Severity.ERROR, Severity.WARNING


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    why: str
    bad: str
    good: str
    waivable: bool = True
    default_on: bool = True
    profiles: tuple[str, ...] = ()  # profiles that turn an off-by-default rule on


STREAM_CODE = "NV101"
PROFILES = ("default", "cutlass-only")

RULES: tuple[Rule, ...] = (
    Rule("NV001", "python-syntax", ERROR,
         "The file does not parse as Python (this Python's grammar): the leaderboard's `python submission.py`"
         " fails on it, and only the text rules ran on it.",
         "def custom_kernel(data)\n    return data[6]", "def custom_kernel(data):\n    return data[6]"),
    Rule("NV002", "no-custom-kernel", ERROR,
         "A submission*.py that defines, assigns or imports no custom_kernel, a custom_kernel defined with"
         " parameters one argument cannot fill, or a Python file you name that has no code at all (empty, or"
         " only comments): the leaderboard calls custom_kernel(data) and fails on the file.",
         "def kernel(data):\n    return data[6]", "def custom_kernel(data):\n    return data[6]"),
    Rule("NV003", "empty-kernel-source", ERROR,
         "A .cu kernel source with no code (empty, or only comments): it defines no kernel and none of the"
         " C ABI functions the binding calls, so its build fails. Headers and load_inline strings are not judged.",
         "// to do: the sm_100a kernel", '#include "nvfp4_gemm_api.h"\ncudaError_t nvfp4_gemm_launch(const Nvfp4GemmArgs& args) { ... }'),
    Rule("NV004", "not-text", ERROR,
         "A file lint reads that is not UTF-8 text or holds a NUL byte (binary, UTF-16, latin-1): the"
         " leaderboard reads a submission as text, and lint cannot judge it; only the text rules ran on it.",
         'printf("caf\\xe9");  // saved as latin-1', 'printf("café");  // saved as UTF-8', waivable=False),
    Rule("NV005", "arch-not-named", WARNING,
         "A load_inline/load call whose CUDA needs sm_100a or sm_90a (tcgen05, wgmma) with no arch flag and no"
         " TORCH_CUDA_ARCH_LIST set before it: torch compiles for the GPU it runs on plus PTX, 10.0+PTX on a B200"
         " (sm_100, without the a), where those instructions do not assemble.",
         'load_inline("gemm", cpp, cuda_src)  # cuda_src uses tcgen05',
         'load_inline("gemm", cpp, cuda_src, extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"])'),
    Rule("NV006", "another-problems-input", ERROR,
         "custom_kernel unpacks the whole input, on every call, into as many names as another problem's tuple"
         " has (no starred name), so it cannot take the task's input: every test fails (ValueError at the"
         " unpacking, or AssertionError where an assert on len(data) comes first). The file is most likely"
         " another problem's submission, or lint read the wrong task.yml: --task names the right one. Where"
         " the unpacking may be skipped (a branch, a helper) it is NV403.",
         "a, b1, b2, _, _, _, sfa, sfb1, sfb2, c = data  # nvfp4_dual_gemm's 10",
         "a, b, _, _, sfa, sfb, c = data  # the task's own 7"),
    Rule("NV007", "input-unpack-count", ERROR,
         "custom_kernel unpacks the whole input, on every call, into a number of names that no problem's tuple"
         " has and the task's does not (no starred name), so it cannot take the task's input: every test fails"
         " (ValueError at the unpacking, or AssertionError where an assert on len(data) comes first). Where the"
         " unpacking may be skipped (a branch, a helper) it is not judged.",
         "a, b, c = data  # no problem's input has 3",
         "a, b, _, _, sfa, sfb, c = data  # the task's own 7"),
    Rule("NV008", "unusable-cuda-flags", ERROR,
         "A load_inline/load call whose extra_cuda_cflags torch's build fails on: a str, not a list (torch reads"
         " each of its characters as a flag), an element that is no str, or flags the shell running torch's"
         " build command cannot split (an unclosed quote, a $). `nvfp4ctl build` refuses the file the same way.",
         'load_inline("gemm", cpp, cuda_src, extra_cuda_cflags="-O3 -gencode=arch=compute_100a,code=sm_100a")',
         'load_inline("gemm", cpp, cuda_src, extra_cuda_cflags=["-O3", "-gencode=arch=compute_100a,code=sm_100a"])'),
    Rule("NV009", "unknown-arch", ERROR,
         "A load_inline/load call with device code whose extra_cuda_cflags give nvcc an arch option that fails"
         " the code or that build cannot report: -arch=native for tcgen05 or wgmma code (the GPU nvcc runs on,"
         " without the a: sm_100 on the B200; sm_75 on a machine without a GPU), -arch=all or all-major (every"
         " arch, none with the a, in one nvcc run), native or all with -code, -code without -arch (nvcc stops)."
         " -arch=native for code any arch assembles builds, as sm_100. `nvfp4ctl build` refuses the file the"
         " same way.",
         'load_inline("gemm", cpp, tcgen05_src, extra_cuda_cflags=["-arch=native"])',
         'load_inline("gemm", cpp, cuda_src, extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"])'),
    Rule("NV010", "str-for-a-list", ERROR,
         "A load_inline/load call whose extra_include_paths, extra_cflags or extra_ldflags is a str, not a list:"
         " torch reads each of its characters as an element, so extra_include_paths=\"some/dir\" searches the"
         " folders s, o, m, ... and never some/dir, a str of C++ flags fails the host compile, and torch fails"
         " on a str extra_ldflags (it appends its own link flags to it), as on a tuple one, and on an"
         " extra_include_paths that is a pathlib.Path or holds one. `nvfp4ctl build` refuses the file the"
         " same way.",
         'load_inline("gemm", cpp, cuda_src, extra_include_paths="include", extra_cflags="-O3")',
         'load_inline("gemm", cpp, cuda_src, extra_include_paths=["include"], extra_cflags=["-O3"])'),
    Rule("NV011", "file-beside-submission", WARNING,
         "A file read from beside the submission at run time (open(Path(__file__).with_name(\"kernel.cuh\")),"
         " (Path(__file__).parent / \"gemm.cu\").read_text(), torch's load() of such a path or a relative"
         " one): the leaderboard receives submission.py alone, so the file is not there. Embed its text in"
         " the submission; `nvfp4ctl export` embeds a kernel's .cu and its local headers.",
         'cuda_src = (Path(__file__).parent / "gemm.cu").read_text()',
         'cuda_src = r"""\n#include <cuda_runtime.h>\n..."""  # or: nvfp4ctl export'),
    Rule("NV012", "module-beside-submission", ERROR,
         "A module imported from beside the submission (from nvfp4_kernels import gemm, where nvfp4_kernels.py"
         " or a package folder nvfp4_kernels/ sits next to it): the leaderboard receives submission.py alone, so"
         " the import fails there. GPU MODE's task, utils and reference are there, installed modules too, and an"
         " import whose ImportError the file handles with a fallback fails nowhere. Paste the module's code into"
         " the submission.",
         "from nvfp4_kernels import nvfp4_gemm_kernel  # nvfp4_kernels.py beside submission.py",
         "@triton.jit\ndef nvfp4_gemm_kernel(...):  # defined in submission.py\n    ..."),
    Rule("NV013", "cutlass-without-include-folder", WARNING,
         "A load_inline/load call whose CUDA includes CUTLASS/CuTe headers and that names no include folder"
         " (extra_include_paths, -I or -isystem): torch adds no CUTLASS on the leaderboard, so the headers compile"
         " there only where that machine's nvcc finds them by itself, which nothing here can tell, while"
         " `nvfp4ctl build` compiles them with this machine's. Name the folder in extra_include_paths, looked up"
         " at import as an nvfp4ctl export does.",
         'load_inline(name="gemm", cpp_sources=CPP, cuda_sources=CUDA)  # CUDA: #include "cute/tensor.hpp"',
         'load_inline(name="gemm", cpp_sources=CPP, cuda_sources=CUDA, extra_include_paths=_cutlass_dirs())'),
    Rule(STREAM_CODE, "stream-word", ERROR,
         'The server rejects any file where "stream" in code.lower(); comments and names count. '
         "Cannot be waived or ignored.",
         "#include <iostream>\nauto s = at::cuda::getCurrentCUDAStream();",
         "#include <cstdio>\nkernel<<<grid, block, smem>>>(args);  // default queue",
         waivable=False),
    Rule("NV201", "cuda-graph", ERROR,
         "CUDA graph capture/replay hides launch cost from the timer and is forbidden.",
         "g = torch.cuda.CUDAGraph()\nwith torch.cuda.graph(g): run()\ng.replay()",
         "run()  # launch every call"),
    Rule("NV202", "replay-call", WARNING,
         "A .replay() call looks like CUDA graph replay, although no graph API is visible here.",
         "runner.replay()", "runner.run()"),
    Rule("NV203", "compile-cudagraphs", ERROR,
         'torch.compile modes "reduce-overhead" and "max-autotune", and backend "cudagraphs" (also torch._dynamo.optimize("cudagraphs")), capture CUDA graphs.',
         'f = torch.compile(gemm, mode="max-autotune")',
         'f = torch.compile(gemm, mode="max-autotune-no-cudagraphs")'),
    Rule("NV301", "result-cache", ERROR,
         "Returning a previous call's result, copying it into c (keyed by data_ptr/id/_version/shape), or "
         "returning c untouched when the input was seen before (a kept address, a static last pointer) skips "
         "the work the benchmark times.",
         "if a.data_ptr() in _out: return _out[a.data_ptr()]",
         "fn = _compiled.setdefault((m, n, k), compile_gemm(m, n, k))\nfn(a, b, sfa, sfb, c); return c"),
    Rule("NV302", "possible-result-cache", WARNING,
         "State kept across calls that may hold a result; caching compiled kernels, descriptors or configs is fine.",
         "_last[key] = c", "_kernels[key] = cute.compile(gemm, ...)"),
    Rule("NV303", "cached-entry-point", ERROR,
         "functools.cache/lru_cache on custom_kernel, or on a helper it hands the input tensors, returns the"
         " first result for every later call with the same tensor objects; on a helper handing back data"
         " computed from the scales, it keeps that data and repeated calls over the same inputs skip that work.",
         "@functools.lru_cache\ndef custom_kernel(data): ...", "def custom_kernel(data): ..."),
    Rule("NV401", "reference-scales", ERROR,
         "The timed path must use sfa_permuted/sfb_permuted (tuple indices 4, 5), not the reference "
         "scales (2, 3); an extension given a reference scale without its permuted one can only read the "
         "reference one, and a load_inline function whose C++ in the file takes the data of the parameter a"
         " reference scale lands in reads it. Unpacking them into an unused name is fine.",
         "a, b, sfa, sfb, _, _, c = data\nlaunch(a, b, sfa.data_ptr(), sfb.data_ptr(), c)",
         "a, b, _, _, sfa, sfb, c = data\nlaunch(a, b, sfa.data_ptr(), sfb.data_ptr(), c)"),
    Rule("NV402", "to-blocked", ERROR,
         "to_blocked() rebuilds the permuted scales on every call; the input already has them.",
         "scale_a = to_blocked(sfa_ref[:, :, 0])", "scale_a = sfa_permuted"),
    Rule("NV403", "reference-scales-passed-on", WARNING,
         "The reference scales go where lint cannot look (an extension function also given the permuted "
         "ones, the whole input or *data, an unpacking of the input into another problem's number of names that"
         " a call may not reach: in a branch or a helper, not under `if len(data) == N:`, where the task's tuple"
         " never gets; one every call reaches is NV006), or a name of "
         "unknown origin reads like them: fine only if they are never read. A load_inline function whose C++ in"
         " the file never names the parameter they land in is not reported; one that takes its data"
         " (`.data_ptr()` on it) is NV401.",
         "_mod.gemm(a, b, sfa_ref, sfb_ref, sfa, sfb, c)", "_mod.gemm(a, b, sfa, sfb, c)"),
    Rule("NV501", "copy-transpose-b", WARNING,
         "B is already (N, K) K-major for C = A @ B^T; a transposed copy costs more than the GEMM.",
         "b_t = b.t().contiguous()", "run(a, b.t())  # a view, no copy"),
    Rule("NV601", "monkeypatch-timing", ERROR,
         "Replacing torch.cuda.Event/synchronize, time functions or the harness's helpers falsifies timing.",
         "torch.cuda.synchronize = lambda: None", "torch.backends.cuda.matmul.allow_tf32 = False"),
    Rule("NV602", "harness-access", ERROR,
         "Reading or writing the harness's files or frames (eval.py, utils.py, reference.py, ...) is tampering.",
         'open("eval.py", "w")', 'open("tuned_configs.json")'),
    Rule("NV603", "install-at-import", ERROR,
         "pip install or subprocesses at import change the environment the harness measures.",
         'subprocess.run(["pip", "install", "triton==3.4"])', "import triton  # already installed"),
    Rule("NV701", "reference-fallback", WARNING,
         "Calling the reference (ref_kernel, _scaled_mm with reference scales) is not a kernel.",
         "return ref_kernel(data)", "return custom_gemm(data)"),
    Rule("NV702", "benchmark-shape-branch", WARNING,
         "Branching on the exact benchmark shapes to another code path games the ranking; tuned "
         "configs are fine (a branch that only sets numbers, or a helper's that only returns them or module"
         " constants set only to numbers, unless "
         "a later branch tests them), another algorithm is not.",
         "if (m, n, k) == (128, 7168, 16384): return fast(data)", "cfg = pick_tile(m, n, k)"),
    Rule("NV801", "debug-print", WARNING,
         "print() in the timed path costs host time every call; put it behind a debug flag.",
         'print("c =", c[0, 0])', 'if DEBUG:\n    print("c =", c[0, 0])'),
    Rule("NV802", "device-printf", WARNING,
         "printf in device code changes registers and timing; keep it behind a compile-time flag or "
         "in a failure path before __trap().",
         'printf("tile %d\\n", blockIdx.x);', '#ifdef NVFP4_DEBUG\nprintf("tile %d\\n", blockIdx.x);\n#endif'),
    Rule("NV901", "handwritten-ptx", ERROR,
         "Profile cutlass-only: kernels use CUTLASS/CuTe, not inline PTX.",
         'asm volatile("tcgen05.commit.cta_group::1 ...");', "cute::gemm(tiled_mma, ...);",
         default_on=False, profiles=("cutlass-only",)),
)

RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}
# What no --select, --ignore, task.yml or waiver turns off: a file the server rejects ("stream"), one lint
# cannot read (not text), whose "All checks passed" would be false.
ALWAYS_ON: frozenset[str] = frozenset(rule.code for rule in RULES if not rule.waivable)


def rule(code: str) -> Rule:
    return RULES_BY_CODE[code]
