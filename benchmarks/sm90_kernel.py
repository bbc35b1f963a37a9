"""Build, check and time the sm_90a NVFP4 kernel and its variants in one go (made for short GPU leases).

  python3 benchmarks/sm90_kernel.py libs             # no GPU: compile variants and launch_gap into .sm90build/, ptxas + SASS report
  python3 benchmarks/sm90_kernel.py smoke            # GPU: two small shapes (run first: catches hangs early)
  python3 benchmarks/sm90_kernel.py check [--variants main X]  # GPU: task.yml tests, odd shapes, full-range scales
  python3 benchmarks/sm90_kernel.py bench            # GPU: table vs cuBLAS anchor, naive torch, fp16 floor; the target's reach
  python3 benchmarks/sm90_kernel.py bench --variants main --shapes task   # GPU: all 13 task.yml shapes vs the anchor, the targets
  python3 benchmarks/sm90_kernel.py all [--binding]  # check + bench; --binding also checks the torch binding
  python3 benchmarks/sm90_kernel.py timeline [--shapes task]   # GPU: per-CTA phase times of one call (timeline variant)
  python3 benchmarks/sm90_kernel.py spread --variants main v6   # GPU: time moves between processes vs within one
  python3 benchmarks/sm90_kernel.py devtime --shapes task   # GPU: device time per call (profiler) vs the anchor's, and the gaps
  ncu ... python3 benchmarks/sm90_kernel.py launch --variants main --shape 128,7168,16384   # 3 launches to profile

One harness with the CLI: `check` judges every output with `nvfp4ctl check`'s comparison
(nvfp4ctl.check.compare: poisoned output, task.yml's tolerance, NaN/Inf must match exactly) and
adds a second call that must give the same bits; every time is `nvfp4ctl bench`'s (benchmark mode:
50 input sets, L2 cleared and the queue held before each repeat, one event pair around one call per
set, the leaderboard's stopping rule and mean; nvfp4ctl.bench.timing), so its numbers and the
CLI's are the same kind.

Variants are the kernel compiled with other knob values (kernels/sm90/sm90_config.cuh: split-K off,
no 3-CTA split, no soft split, no spanning split, shared A on every resident shape, ...) or with an
experiment of benchmarks/sm90_experiments.h (an earlier version's algorithm: v1 tile-wait loop, v6/v7
prmt decode, unstaged A-copy stores; one stage left out: NVFP4_SM90_ABLATE_*; the timeline build).
That header is force-included into every variant and never into the shipped build. Variants are plain
shared libraries (benchmarks/sm90_capi.cpp) loaded with ctypes, so they build here without a GPU and
run next to any torch. Logs and a JSON of every number go to $OUT (or --out).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import ctypes
import json
import math
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KERNEL = REPO / "kernels" / "sm90" / "nvfp4_gemm_sm90.cu"
CAPI = REPO / "benchmarks" / "sm90_capi.cpp"
# earlier versions, ablations, the timeline build: force-included into every variant, never shipped
EXPERIMENTS = REPO / "benchmarks" / "sm90_experiments.h"
LIB_DIR = REPO / ".sm90build"
LAUNCH_GAP = REPO / "benchmarks" / "launch_gap.cu"
TASK_FILE = REPO / "task.yml"  # shapes, seeds and tolerance, as the CLI reads them
DEVICE = "cuda"  # "cpu" only in tests/kernels/test_sm90_harness.py (host clock, no L2 clear)

# name -> extra defines; "main" is the shipped kernel
VARIANTS: dict[str, list[str]] = {
    "main": [],
    "v6": ["-DNVFP4_SM90_SHARED_A=0", "-DNVFP4_SM90_PRMT_DECODE=1"],
    "v7": ["-DNVFP4_SM90_PRMT_DECODE=1"],
    "shared_all": ["-DNVFP4_SM90_SHARED_A_MIN_K_TILES=1"],
    "shared_no_a_decode": ["-DNVFP4_SM90_SHARED_A_MIN_K_TILES=1", "-DNVFP4_SM90_ABLATE_SHARED_A_DECODE=1"],
    "shared_no_barrier": ["-DNVFP4_SM90_SHARED_A_MIN_K_TILES=1", "-DNVFP4_SM90_ABLATE_GRID_BARRIER=1"],
    "v1_tile_wait": ["-DNVFP4_SM90_V1_TILE_WAIT=1"],
    "no_split_k": ["-DNVFP4_SM90_MAX_CLUSTER_K=1"],
    "vec_only": ["-DNVFP4_SM90_ODD_SPLIT=0"],
    "no_exchange": ["-DNVFP4_SM90_ABLATE_EXCHANGE=1"],
    "no_a_decode": ["-DNVFP4_SM90_ABLATE_A_DECODE=1"],
    "no_b_decode": ["-DNVFP4_SM90_ABLATE_B_DECODE=1"],
    "no_decode": ["-DNVFP4_SM90_ABLATE_A_DECODE=1", "-DNVFP4_SM90_ABLATE_B_DECODE=1"],
    "no_mma": ["-DNVFP4_SM90_ABLATE_MMA=1"],
    "loads_only": ["-DNVFP4_SM90_ABLATE_MMA=1", "-DNVFP4_SM90_ABLATE_A_DECODE=1", "-DNVFP4_SM90_ABLATE_B_DECODE=1"],
    "no_pipeline": ["-DNVFP4_SM90_ABLATE_PIPELINE=1"],
    "empty": ["-DNVFP4_SM90_ABLATE_ALL=1"],
    "timeline": ["-DNVFP4_SM90_TIMELINE=1"],
    "no_soft_split": ["-DNVFP4_SM90_SOFT_SPLIT=0"],
    "no_span": ["-DNVFP4_SM90_SPAN=0"],
    # the kernel before persistent launches (a grid larger than the resident CTAs decodes A per CTA)
    "no_persistent": ["-DNVFP4_SM90_PERSISTENT=0"],
    # per-CTA A decoded by one warpgroup, as before v18 (v18: two, registers moved with setmaxnreg)
    "decode1": ["-DNVFP4_SM90_A_DECODE_WARPGROUPS=1"],
    "no_persistent_decode1": ["-DNVFP4_SM90_PERSISTENT=0", "-DNVFP4_SM90_A_DECODE_WARPGROUPS=1"],
    "persistent_whole_tiles": ["-DNVFP4_SM90_PERSISTENT_MAX_PARTS=1"],
    # C stored from registers, 4 bytes per store (before staged C)
    "direct_c": ["-DNVFP4_SM90_STAGED_C=0"],
    "late_map_prefetch": ["-DNVFP4_SM90_LATE_MAP_PREFETCH=1"],
    "late_first_loads": ["-DNVFP4_SM90_LATE_FIRST_LOADS=1"],
    # every shape on per-CTA A (no shared-A kernel is built; the table's other knobs apply): soft splits of 4 and 8
    "per_cta_plan": ["-DNVFP4_SM90_SHARED_A=0"],
    # earlier versions of the whole kernel, for one table. They read the shipped dispatch table, whose
    # 512x512x7168 entry (per-CTA A, from v13) neither had: that shape then runs in hardware clusters
    "v12": ["-DNVFP4_SM90_LATE_MAP_PREFETCH=1", "-DNVFP4_SM90_LATE_FIRST_LOADS=1", "-DNVFP4_SM90_SHARED_A_ONLY_SOFT_SPLIT=1"],
    "v11": ["-DNVFP4_SM90_LATE_MAP_PREFETCH=1", "-DNVFP4_SM90_LATE_FIRST_LOADS=1", "-DNVFP4_SM90_SHARED_A_ONLY_SOFT_SPLIT=1",
            "-DNVFP4_SM90_STAGED_C=0", "-DNVFP4_SM90_PERSISTENT=0"],
    # persistent launches may cut a tile into 4 K parts (check: 896x2432x1024 then runs 4 parts)
    "parts4": ["-DNVFP4_SM90_PERSISTENT_MAX_PARTS=4"],
    "no_persistent_c": ["-DNVFP4_SM90_ABLATE_PERSISTENT_C=1"],
    # persistent launches before v16: every tile cut into parts, none run whole first; and v16 with up
    # to 3 K parts per split tile (the table's value for 384x7168x2304 since v16)
    "sweeps_only": ["-DNVFP4_SM90_PERSISTENT_SWEEPS_ONLY=1"],
    # v16's order: a CTA's parts of split tiles after its whole tiles (v17 runs the non-owner parts first)
    "v16_order": ["-DNVFP4_SM90_PERSISTENT_PARTS_AFTER_WHOLE=1"],
    # a split tile's owner part as long as the others (v17 makes it kOwnerExchangeKTiles shorter)
    "even_parts": ["-DNVFP4_SM90_PERSISTENT_EVEN_PARTS=1"],
    # v16's persistent launches: both of the above
    "v16_persistent": ["-DNVFP4_SM90_PERSISTENT_PARTS_AFTER_WHOLE=1", "-DNVFP4_SM90_PERSISTENT_EVEN_PARTS=1"],
    "parts3": ["-DNVFP4_SM90_PERSISTENT_MAX_PARTS=3"],
    # v15's persistent plans (sweeps only, at most 2 parts as its table had for 384x7168x2304): compare
    # on the persistent task shapes only, since the plan knob makes it build with NVFP4CTL_TUNE and every
    # other shape then runs the compile-time defaults instead of its table entries
    "v15_persistent": ["-DNVFP4_SM90_PERSISTENT_SWEEPS_ONLY=1", "-DNVFP4_SM90_PERSISTENT_MAX_PARTS=2"],
    # the split-K reduction's partial loads in one round trip where more partners share a tile (v16:
    # no gain, benchmarks/NOTES_sm90.md)
    "inflight32": ["-DNVFP4_SM90_MAX_PARTS_IN_FLIGHT=32"],
    "inflight48": ["-DNVFP4_SM90_MAX_PARTS_IN_FLIGHT=48"],
    # the spanning split only for one M tile, as before v14 (512x1536x7168 then splits over clusters
    # of 2); the task shapes then get v13's plans
    "span_one_m_tile": ["-DNVFP4_SM90_SPAN_ONE_M_TILE=1"],
    # the spanning kernel on the cluster split's 112 CTAs (same work per CTA): compares the code paths
    "span112": ["-DNVFP4_SM90_SPAN_CTAS=112", "-DNVFP4_SM90_SPAN_MIN_GAIN=0"],
    # v18's start of a shared-A launch: the copy of A after the setup's sync (every thread copying),
    # the launch-wide barrier polled only after local A is decoded; each of the two alone
    "v18_start": ["-DNVFP4_SM90_LATE_A_COPY=1", "-DNVFP4_SM90_LATE_GRID_WAIT=1"],
    "late_a_copy": ["-DNVFP4_SM90_LATE_A_COPY=1"],
    "late_grid_wait": ["-DNVFP4_SM90_LATE_GRID_WAIT=1"],
    # the flags every CTA polls packed 32 to an L2 line, as before v19, or 512 bytes apart
    "flags4": ["-DNVFP4_SM90_FLAG_STRIDE_BYTES=4"],
    "flags512": ["-DNVFP4_SM90_FLAG_STRIDE_BYTES=512"],
    "local0": ["-DNVFP4_SM90_LOCAL_A_TILES=0"],
    "local1": ["-DNVFP4_SM90_LOCAL_A_TILES=1"],
    "local3": ["-DNVFP4_SM90_LOCAL_A_TILES=3"],
    "unstaged": ["-DNVFP4_SM90_UNSTAGED_A_STORES=1"],
    # shared A's fp16 slices never loaded per K tile: what the L2 traffic of A costs the main loop
    "no_a16_loads": ["-DNVFP4_SM90_ABLATE_A16_LOADS=1"],
    # flags polled with relaxed loads, one acquire fence once all are seen (ld.acquire invalidates L1 per load)
    "relaxed_polls": ["-DNVFP4_SM90_RELAXED_POLLS=1"],
    # v10's up-front phase left out, with the shipped plans (shared_no_* also move the shared-A threshold)
    "no_copy_decode": ["-DNVFP4_SM90_ABLATE_SHARED_A_DECODE=1"],
    "no_launch_barrier": ["-DNVFP4_SM90_ABLATE_GRID_BARRIER=1"],
    "v10": ["-DNVFP4_SM90_PREFILL_STAGES=2"],  # before v11: B prefilled for the local tiles' stages only
    "prefill4": ["-DNVFP4_SM90_PREFILL_STAGES=4"],
    "prefill5": ["-DNVFP4_SM90_PREFILL_STAGES=5"],
    "local3_prefill4": ["-DNVFP4_SM90_LOCAL_A_TILES=3", "-DNVFP4_SM90_PREFILL_STAGES=4"],
    "poll_nosleep": ["-DNVFP4_SM90_BARRIER_POLL_SLEEP_NS=0"],
    # the direct kernel (v15): never (v14's plans, with the shipped table); on every call (a check of its
    # exactness on every shape, batches included) with the planner's warp tile and K split; on calls
    # of at most 512 units with the planner's configuration or each of its four forced. Like every
    # variant that sets a plan knob they build with NVFP4CTL_TUNE (variant_defines).
    # wide tiles (v20, 192 rows of A per CTA): never (the 128-row plans, with the compile-time plan
    # defaults), or wherever they fit one wave (a check of the wide kernel on more shapes)
    "no_wide": ["-DNVFP4_SM90_WIDE_TILES=0"],
    "wide_everywhere": ["-DNVFP4_SM90_WIDE_TILES=2"],
    "no_direct": ["-DNVFP4_SM90_NO_DIRECT=1"],
    "direct_all": ["-DNVFP4_SM90_DIRECT_MAX_UNITS=100000000"],
    "direct_512": ["-DNVFP4_SM90_DIRECT_MAX_UNITS=512"],
    **{f"direct_{warp_m}_{warps_k}": ["-DNVFP4_SM90_DIRECT_MAX_UNITS=512",
                                      f"-DNVFP4_SM90_DIRECT_WARP_M={warp_m}", f"-DNVFP4_SM90_DIRECT_WARPS_K={warps_k}"]
       for warp_m, warps_k in ((32, 1), (32, 2), (32, 4), (64, 1))},
    # without the 3-CTAs-per-SM register bound on 32-row warps (2 CTAs per SM fit)
    "direct_512_two_per_sm": ["-DNVFP4_SM90_DIRECT_MAX_UNITS=512",
                              "-DNVFP4_SM90_DIRECT_TWO_CTAS_PER_SM=1"],
    "direct_32_4_two_per_sm": ["-DNVFP4_SM90_DIRECT_MAX_UNITS=512", "-DNVFP4_SM90_DIRECT_WARP_M=32",
                               "-DNVFP4_SM90_DIRECT_WARPS_K=4", "-DNVFP4_SM90_DIRECT_TWO_CTAS_PER_SM=1"],
}
# the same variants as timeline builds (benchmarks/sm90_kernel.py timeline --variants timeline_X)
VARIANTS |= {f"timeline_{name}": VARIANTS["timeline"] + VARIANTS[name]
             for name in ("no_soft_split", "no_span", "local0", "local3", "unstaged", "span_one_m_tile", "sweeps_only",
                          "v16_order", "even_parts", "decode1", "v18_start", "local1", "flags4", "no_a16_loads",
                          "relaxed_polls", "poll_nosleep")}
# TimelineEvent in the kernel, in order
TIMELINE_EVENTS = ["entry", "barriers_ready", "first_issued", "setup", "a_decoded", "arrived", "flags_seen", "grid_barrier", "stage_full", "first_tile", "main_loop_done", "partials_sent", "partials_landed",
                   "exit", "sm", "previous_exit"]
BENCH_SHAPES = [(128, 7168, 16384, 1), (128, 4096, 7168, 1), (128, 7168, 2048, 1)]
# 256x1536x7168x2, 128x3584x7168x3 and 256x2304x14336 span on an H100 with ranges crossing M-tile
# and batch boundaries (in the last, one range holds a single K tile before it goes on into the next
# M tile; 128x7168x4096x2 would save too few K tiles over its unsplit launch); the last four run persistent (more tiles than resident CTAs): batches, uneven
# waves, tiles cut into 1, 1, 2 and 2 K parts (1, 1, 4 and 4 with the variant parts4)
EXTRA_SHAPES = [(256, 384, 512, 1), (128, 256, 256, 2), (256, 384, 512, 2), (384, 640, 768, 3), (1024, 1024, 1024, 1),
                (128, 2048, 3584, 2), (128, 7168, 4096, 2), (256, 1536, 7168, 2), (128, 3584, 7168, 3), (256, 2304, 14336, 1),
                (384, 7168, 2304, 2), (1280, 2048, 1024, 3), (640, 3456, 2048, 1), (896, 2432, 1024, 1),
                *[(768, 3072, 1024, 1), (384, 1024, 1024, 2), (1152, 1280, 1536, 1)]]
# of those, 768x3072x1024 runs wide tiles in the shipped build (192 rows of A per CTA, v20), the other
# two only with the variant wide_everywhere (a batch; odd M tiles starting inside a 128-row scale chunk)
# Calls of 8 to 512 units (128 x 128 tile, K tile of 128) with L = 1, between and around the task's
# smallest: where the direct kernel stops paying (bench --shapes small)
SMALL_SHAPES = [(128, 512, 256, 1), (256, 512, 256, 1), (128, 768, 512, 1), (256, 384, 512, 1), (128, 2048, 512, 1),
                (128, 1024, 1024, 1), (384, 640, 768, 1), (128, 1536, 1024, 1), (256, 2048, 1024, 1),
                (1024, 1024, 1024, 1)]
# Shapes whose 128-row tiles overfill one wave of an H100 (132 SMs) and whose 192-row tiles fit it:
# the shipped build runs them as wide tiles (v20), the variant no_wide persistent (bench --shapes wide)
WIDE_SHAPES = [(384, 7168, 2304, 1), (768, 3072, 1024, 1), (1152, 2560, 2048, 1), (384, 8192, 1024, 1)]
FULL_SCALE_SHAPES = [(128, 256, 256, 1), (256, 384, 512, 2), (128, 7168, 2048, 1), (512, 1536, 7168, 1),
                     (128, 4096, 7168, 1), (384, 7168, 2304, 1), (1280, 2048, 1024, 3), (896, 2432, 1024, 1)]


# ---------------------------------------------------------------- building (no GPU needed)
def variant_defines(name: str) -> list[str]:
    """The variant's defines. One that sets a plan knob also gets NVFP4CTL_TUNE: the dispatch table
    holds every plan knob of every task shape, so its entries would otherwise override the -D there
    and the variant would time the shipped plan (the table is then left out for every shape, as in a
    tune candidate, and its entries' other knobs fall back to their compile-time values)."""
    from nvfp4ctl.build.knobs import read_knobs

    defines = VARIANTS[name]
    plan = {knob.name for knob in read_knobs(KERNEL.parent / "sm90_config.cuh") if knob.scope == "plan"}
    sets_plan = any(define.removeprefix("-D").split("=")[0] in plan for define in defines)
    return [*defines, "-DNVFP4CTL_TUNE"] if sets_plan and "-DNVFP4CTL_TUNE" not in defines else list(defines)


def build_variant(name: str) -> str:
    """The kernel with `nvfp4ctl build`'s flags (torch's COMMON_NVCC_FLAGS included, so `main` is the
    shipped machine code) plus the variant's defines, as a ctypes library."""
    from torch.utils.cpp_extension import COMMON_NVCC_FLAGS

    from nvfp4ctl.build import flags, toolchain, torch_nvcc

    LIB_DIR.mkdir(exist_ok=True)
    cuda_flags = flags.cuda_flags("sm_90a")  # then the standard torch appends to them, as in the build
    cmd = [str(toolchain.nvcc_path()), *COMMON_NVCC_FLAGS, *cuda_flags, *torch_nvcc.appended_standard(cuda_flags, cuda_flags[0]), "-include", str(EXPERIMENTS), *variant_defines(name),
           f"-I{REPO / 'kernels' / 'common'}", "-Xptxas", "-v", "-shared", "-Xcompiler", "-fPIC",
           "-o", str(LIB_DIR / f"{name}.so"), str(KERNEL), str(CAPI)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{name}: nvcc failed\n{done.stderr}")
    return done.stderr


def resource_lines(ptxas: str) -> list[str]:
    """One line per kernel instantiation: registers, stack, spills, and any ptxas performance warning."""
    lines, current = [], ""
    for line in ptxas.splitlines():
        if "Compiling entry function" in line:
            current = re.sub(r".*ILi(\d+)E.*", r"cluster_k=\1", line)
        elif "stack frame" in line:
            spill = line.strip()
        elif "Used" in line and "registers" in line:
            lines.append(f"{current}: {line.split(':', 1)[1].strip()}; {spill}")
        elif "C75" in line:
            lines.append(line.strip())
    return lines


def sass_counts(lib: Path) -> dict[str, int]:
    from nvfp4ctl.build import toolchain

    tools = toolchain.sass_tools()
    if tools is None:
        return {}
    cuobjdump, nvdisasm = tools
    env = dict(os.environ, PATH=f"{nvdisasm.parent}:{os.environ['PATH']}")  # cuobjdump calls nvdisasm
    sass = subprocess.run([str(cuobjdump), "-sass", str(lib)], capture_output=True, text=True, env=env).stdout
    return {op: len(re.findall(rf"\b{op}\b", sass)) for op in ("HGMMA", "PRMT", "LDL", "STL", "UTMALDG", "UBLKCP")}


def matches_shipped(lib: Path) -> str:
    """Whether a library's device code is the shipped build's (the digest tests/kernels/sm90_sass.json records)."""
    from nvfp4ctl.build.resources import dump_sass, sass_digest

    record = json.loads((REPO / "tests" / "kernels" / "sm90_sass.json").read_text())
    sass = dump_sass(lib)
    if sass is None:
        return "not compared (no cuobjdump)"
    same = sass_digest(sass) == record["sha256"]
    return "identical to the shipped build" if same else f"differs from the shipped build (nvcc {record['nvcc']} recorded)"


def build_launch_gap() -> None:
    """benchmarks/launch_gap.cu as .sm90build/launch_gap: `bench` reads this GPU's launch overhead from it."""
    from nvfp4ctl.build import toolchain

    cmd = [str(toolchain.nvcc_path()), "-arch=sm_90a", "-O2", "-o", str(LIB_DIR / "launch_gap"), str(LAUNCH_GAP)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"launch_gap: nvcc failed\n{done.stderr}")


def cmd_libs(args: argparse.Namespace) -> None:
    names = args.variants or list(VARIANTS)
    LIB_DIR.mkdir(exist_ok=True)  # launch_gap's build starts beside the variants' and writes into it too
    # one nvcc per variant, each mostly on one core: half the cores, at least 2
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, (os.cpu_count() or 2) // 2)) as pool:
        gap = pool.submit(build_launch_gap)
        reports = dict(zip(names, pool.map(build_variant, names)))
        gap.result()
    for name in names:
        print(f"[{name}]")
        for line in resource_lines(reports[name]):
            print("   ", line)
        print("    SASS:", sass_counts(LIB_DIR / f"{name}.so"))
        if name == "main":
            print("    device code:", matches_shipped(LIB_DIR / "main.so"))


# ---------------------------------------------------------------- running a variant
class CapiKernel:
    """custom_kernel(data) for one compiled variant."""

    def __init__(self, path: Path) -> None:
        self.lib = ctypes.CDLL(str(path))
        self.lib.nvfp4_capi_launch.restype = ctypes.c_int
        self.lib.nvfp4_capi_launch.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_int] * 4
        self.lib.nvfp4_capi_unsupported.restype = ctypes.c_char_p
        self.lib.nvfp4_capi_unsupported.argtypes = [ctypes.c_int] * 4
        self.lib.nvfp4_capi_error_string.restype = ctypes.c_char_p

    def unsupported(self, m: int, n: int, k: int, l: int) -> str | None:
        why = self.lib.nvfp4_capi_unsupported(m, n, k, l)
        return why.decode() if why else None

    def __call__(self, data: tuple):
        a, b, _, _, sfa, sfb, c = data
        m, n, l = c.shape
        k = a.shape[1] * 2
        err = self.lib.nvfp4_capi_launch(a.data_ptr(), b.data_ptr(), sfa.data_ptr(), sfb.data_ptr(), c.data_ptr(),
                                         m, n, k, l)
        if err:
            where = "before the launch" if err >= 10000 else "at the launch"
            raise RuntimeError(f"{where}: {self.lib.nvfp4_capi_error_string(err % 10000).decode()} ({m}x{n}x{k}x{l})")
        return c


def binding_kernel():
    """The CLI's path: nvfp4ctl.build.load_kernel_module (torch extension of kernel + torch_binding.cpp)."""
    sys.path.insert(0, str(REPO))
    from nvfp4ctl.build import load_kernel_module

    mod = load_kernel_module(KERNEL)
    return lambda d: mod.nvfp4_gemm(d[0], d[1], d[4], d[5], d[6])


# ---------------------------------------------------------------- correctness
@dataclass
class CheckResult:
    shape: str
    scales: str
    path: str
    mismatches: int
    max_abs_err: float
    unwritten: int  # outputs still holding the poison after the call
    deterministic: bool
    first_bad: str

    @property
    def ok(self) -> bool:
        return self.mismatches == 0 and self.deterministic


def tolerance() -> tuple[float, float]:
    """task.yml's (rtol, atol): the leaderboard's and `nvfp4ctl check`'s."""
    from nvfp4ctl.task import load_task

    task = load_task(TASK_FILE)
    return task.rtol, task.atol


def check_one(kernel, m: int, n: int, k: int, l: int, seed: int, scales: str, path: str) -> CheckResult:
    """`nvfp4ctl check`'s verdict (nvfp4ctl.check.compare: poisoned c, the leaderboard's tolerance, NaN and
    Inf must match exactly) on one call, plus a second call that must give the same bits (no races)."""
    import torch

    from nvfp4ctl.check.compare import compare, poison
    from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input
    from nvfp4ctl.problems.nvfp4_gemm.reference import reference_gemm

    data = generate_input(m, n, k, l, seed, device=DEVICE, scales=scales)
    want = reference_gemm(data[0], data[1], data[2], data[3])
    outs = []
    for _ in range(2):
        poison(data[6])
        outs.append(kernel(data).clone())
        if DEVICE == "cuda":
            torch.cuda.synchronize()
    rtol, atol = tolerance()
    result = compare(outs[0], want, rtol, atol, output_is_c=True)
    first = ""
    if result.first:
        miss = result.first[0]
        first = "c[{}] got {:.6g} want {:.6g}".format(",".join(map(str, miss.index)), miss.got, miss.want)
    same = torch.equal(outs[0].view(torch.int16), outs[1].view(torch.int16))
    return CheckResult(f"{m}x{n}x{k}x{l}", scales, path, result.mismatched, result.max_abs_err, result.unwritten or 0,
                       same, first)


# nvfp4_sm90_plan's code: split-K cluster size, +100 shared A, +1000 no cluster; a spanning split is
# SPAN_PLAN + its number of CTAs, wide tiles WIDE_PLAN + theirs, a persistent launch PERSISTENT_PLAN * its K parts per split tile +
# PERSISTENT_WHOLE_PLAN * the whole tiles each CTA runs first + its number of CTAs.
SPAN_PLAN = 10000
WIDE_PLAN = 50000
PERSISTENT_PLAN = 100000
PERSISTENT_WHOLE_PLAN = 1000
DIRECT_PLAN = 10000000


def describe_plan(plan: int) -> str:
    """nvfp4_sm90_plan's code in words."""
    if plan > DIRECT_PLAN:
        warp_m, warps_k = divmod(plan - DIRECT_PLAN, 10)
        return f"direct, {warp_m} rows per warp, K split {warps_k} ways in the CTA"
    if plan > PERSISTENT_PLAN:
        parts, rest = divmod(plan, PERSISTENT_PLAN)
        whole, ctas = divmod(rest, PERSISTENT_WHOLE_PLAN)
        first = f"{whole} whole tile{'s' if whole > 1 else ''} each, then " if whole else ""
        return f"persistent on {ctas} CTAs, {first}{parts} K part{'s' if parts > 1 else ''} per tile+sharedA"
    if plan > WIDE_PLAN:
        return f"wide tiles (192 rows) on {plan - WIDE_PLAN} CTAs+sharedA"
    if plan > SPAN_PLAN:
        return f"spanning over {plan - SPAN_PLAN} CTAs+sharedA"
    return f"{plan % 100}{'+sharedA' if plan % 1000 >= 100 else ''}{' (no cluster)' if plan >= 1000 else ''}"


def plan_ctas(plan: int, m: int, n: int, l: int) -> int:
    """CTAs of the launch nvfp4_sm90_plan's code describes for an m x n x l problem."""
    if plan > DIRECT_PLAN:
        warp_m, warps_k = divmod(plan - DIRECT_PLAN, 10)
        return (m // warp_m) * l * (n // (128 // warps_k))
    if plan > PERSISTENT_PLAN:
        return plan % PERSISTENT_WHOLE_PLAN
    if plan > WIDE_PLAN:
        return plan - WIDE_PLAN
    return plan - SPAN_PLAN if plan > SPAN_PLAN else (m // 128) * (n // 128) * l * (plan % 100)


def task_tests() -> list[tuple[int, int, int, int]]:
    from nvfp4ctl.task import load_task

    return [(case.m, case.n, case.k, case.l) for case in load_task(TASK_FILE).tests]


def cmd_check(args: argparse.Namespace, log) -> bool:
    """Checks main, or each of --variants (candidates to ship), on every case."""
    ok = True
    for name in args.variants or ["main"]:
        log(f"[check {name}]")
        ok = check_variant(name, args, log) and ok
    return ok


def check_variant(name: str, args: argparse.Namespace, log) -> bool:
    kernel = CapiKernel(LIB_DIR / f"{name}.so")
    if args.command == "smoke":
        cases = [((128, 256, 256, 1), "generator"), ((128, 7168, 2048, 1), "generator")]
    else:
        cases = [(s, "generator") for s in task_tests() + BENCH_SHAPES + EXTRA_SHAPES]
        cases += [(s, "full") for s in FULL_SCALE_SHAPES]
    results = [check_one(kernel, *shape, 1111, scales, "capi") for shape, scales in cases]
    if args.binding:
        t0 = time.time()
        try:
            bound = binding_kernel()
            log(f"binding built/loaded in {time.time() - t0:.1f} s")
            for shape, scales in [(task_tests()[0], "generator"), ((256, 384, 512, 2), "full")]:
                results.append(check_one(bound, *shape, 2222, scales, "binding"))
        except Exception as exc:  # report and go on to the timing
            log(f"binding path failed: {type(exc).__name__}: {exc}")
    for r in results:
        log(f"{'PASS' if r.ok else 'FAIL'} {r.path:7s} {r.shape:22s} {r.scales:9s} mismatches={r.mismatches:<8d} "
            f"max_abs_err={r.max_abs_err:.3g} unwritten={r.unwritten} deterministic={r.deterministic} {r.first_bad}")
    if hasattr(kernel.lib, "nvfp4_capi_plan"):
        plans = {f"{m}x{n}x{k}x{l}": kernel.lib.nvfp4_capi_plan(m, n, k, l)
                 for m, n, k, l in task_tests() + BENCH_SHAPES + EXTRA_SHAPES}
        log("launch plan per shape: " + ", ".join(f"{s}={describe_plan(p)}" for s, p in plans.items()))
    why = kernel.unsupported(100, 256, 256, 1)
    log(f"unsupported m=100: {why!r}")
    passed = sum(r.ok for r in results)
    log(f"check: {passed}/{len(results)} passed")
    args.results.setdefault("check", {})[name] = [asdict(r) | {"ok": r.ok} for r in results]
    return passed == len(results) and why is not None


# ---------------------------------------------------------------- timing
_FLUSH = None  # one per process: it measures the spin kernel's clock when made


def leaderboard_us(fn, inputs: list, args: argparse.Namespace, max_repeats: int | None = None,
                   settle: bool = True) -> float:
    """Mean µs per call by `nvfp4ctl bench`'s method (benchmark mode): the untimed settle, then
    nvfp4ctl.bench.timing.time_batches (per repeat: L2 cleared and the queue held, one event pair
    around one call on each input set) until its stopping criterion, the leaderboard's statistics."""
    from nvfp4ctl.bench.clock import CudaClock, HostClock
    from nvfp4ctl.bench.flush import CudaFlush, NoFlush
    from nvfp4ctl.bench.modes import BENCHMARK, MODE_SETTINGS
    from nvfp4ctl.bench.stats import summarize
    from nvfp4ctl.bench.stopping import StoppingCriterion
    from nvfp4ctl.bench.timing import time_batches

    global _FLUSH
    if _FLUSH is None:
        _FLUSH = CudaFlush() if DEVICE == "cuda" else NoFlush()
    clock = CudaClock() if DEVICE == "cuda" else HostClock()
    if settle and args.settle > 0:
        time_batches(fn, inputs, StoppingCriterion.for_wall_time(args.settle), _FLUSH, clock)
    criterion = StoppingCriterion(max_repeats=max_repeats or args.max_repeats, max_noise=args.max_noise / 100,
                                  budget_s=MODE_SETTINGS[BENCHMARK].budget_s)
    samples = time_batches(fn, inputs, criterion, _FLUSH, clock)
    return summarize(samples.per_call_ns).mean / 1e3


def bench_inputs(m: int, n: int, k: int, l: int, count: int) -> list:
    """`nvfp4ctl bench`'s input sets for a shape: task.yml's seed for it (1111 elsewhere), advanced by 42 per set."""
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input
    from nvfp4ctl.task import load_task

    seed = next((c.seed for c in load_task(TASK_FILE).benchmarks if (c.m, c.n, c.k, c.l) == (m, n, k, l)), 1111)
    return [generate_input(m, n, k, l, s, device=DEVICE) for s in get_problem("nvfp4_gemm").timing.seeds(seed, count)]


def method_line(args: argparse.Namespace) -> str:
    return (f"nvfp4ctl bench's method: {args.sets} input sets, one event pair around one call on each, L2 cleared "
            f"and the queue held before every repeat, {args.settle:g} s settle, up to {args.max_repeats} repeats or "
            f"noise < {args.max_noise:g} %; mean per call")


def measure_ceilings(log) -> tuple[float, float]:
    """(fp16 matmul FLOP/s, device copy bytes/s counting read + write): `nvfp4ctl bench`'s calibration, now."""
    from nvfp4ctl.bench.calibration import measure

    ceilings = measure("this GPU")
    log(f"ceilings: fp16 matmul {ceilings.tflops:.0f} TFLOP/s, copy {ceilings.tbps:.2f} TB/s")
    return ceilings.tflops * 1e12, ceilings.tbps * 1e12


def dequant_fp16(packed, scales_ref):
    """(rows, k/2) packed fp4 + (rows, k/16) e4m3 -> fp16 (rows, k): the naive torch way."""
    import torch

    table = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6],
                         dtype=torch.float16, device=packed.device)
    codes = packed.view(torch.uint8)
    values = torch.stack((table[(codes & 0xF).long()], table[(codes >> 4).long()]), dim=-1).flatten(-2)
    return values * scales_ref.to(torch.float16).repeat_interleave(16, dim=-1)


def last_json_line(cmd: list[str], what: str, log) -> dict | None:
    """Runs `cmd` (a child measuring one variant: its own process) and returns the last JSON line it
    printed; None, with `what` and its last error line logged, if it failed or printed none."""
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
    if done.returncode != 0 or not lines:
        log(f"{what} failed: {(done.stderr.strip().splitlines() or ['no output'])[-1]}")
        return None
    return json.loads(lines[-1])


def child_json(command: str, name: str, args: argparse.Namespace, log) -> dict | None:
    """Runs this script's `command` for one variant in its own process; its last JSON line, or None."""
    cmd = [sys.executable, __file__, command, "--variants", name, "--sets", str(args.sets),
           "--max-repeats", str(args.max_repeats), "--max-noise", str(args.max_noise), "--settle", str(args.settle),
           "--shapes", args.shapes, *(["--only", *args.only] if args.only else [])]
    return last_json_line(cmd, f"{name}: {command}", log)


def variant_times(name: str, args: argparse.Namespace, log) -> dict[str, float]:
    return child_json("time-variant", name, args, log) or {}


def anchor_call(sets: list, m: int, n: int):
    """The compute anchor, cuBLAS fp16 on operands dequantized beforehand: (function of one operand
    pair, the pairs of every input set)."""
    import torch

    operands = [(dequant_fp16(d[0][:, :, 0], d[2][:, :, 0]), dequant_fp16(d[1][:, :, 0], d[3][:, :, 0])) for d in sets]
    out = torch.empty(m, n, dtype=torch.float16, device="cuda")
    return (lambda ab: torch.mm(ab[0], ab[1].t(), out=out)), operands


def cublas_anchor(sets: list, m: int, n: int, args: argparse.Namespace) -> float:
    """The anchor on every input set, µs per call."""
    fn, operands = anchor_call(sets, m, n)
    return leaderboard_us(fn, operands, args)


def bench_shapes(args: argparse.Namespace) -> list[tuple[int, int, int, int]]:
    """`--shapes bench`: the three benchmark shapes; `task`: task.yml's tests, then its benchmarks;
    `small`: SMALL_SHAPES; `wide`: WIDE_SHAPES."""
    shapes = {"bench": BENCH_SHAPES, "small": SMALL_SHAPES, "wide": WIDE_SHAPES}.get(args.shapes) or task_tests() + BENCH_SHAPES
    return [s for s in shapes if not args.only or "x".join(map(str, s[:3])) in args.only]


def cmd_time_variant(args: argparse.Namespace) -> None:
    """Child of cmd_bench: times one variant on the bench shapes, prints one JSON line."""
    kernel = CapiKernel(LIB_DIR / f"{args.variants[0]}.so")
    times = {}
    for m, n, k, l in bench_shapes(args):
        sets = bench_inputs(m, n, k, l, args.sets)
        times[f"{m}x{n}x{k}"] = leaderboard_us(kernel, sets, args)
        del sets
    print(json.dumps(times))


def cmd_time_spread(args: argparse.Namespace) -> None:
    """Child of cmd_spread: one process's view, one JSON line. Per shape: the variant twice on the same
    inputs (drift within the process), cuBLAS fp16 in between, then once on a fresh allocation of the
    same inputs (where the buffers land), the first allocation still held."""
    import torch

    kernel = CapiKernel(LIB_DIR / f"{args.variants[0]}.so")
    times: dict[str, dict[str, float]] = {}
    for m, n, k, l in BENCH_SHAPES:
        sets = bench_inputs(m, n, k, l, args.sets)
        first = leaderboard_us(kernel, sets, args)
        anchor = cublas_anchor(sets, m, n, args)
        again = leaderboard_us(kernel, sets, args)
        moved = bench_inputs(m, n, k, l, args.sets)
        fresh = leaderboard_us(kernel, moved, args)
        times[f"{m}x{n}x{k}"] = {"first": first, "again": again, "fresh": fresh, "cublas": anchor}
        del sets, moved
        torch.cuda.empty_cache()
    print(json.dumps(times))


def cmd_spread(args: argparse.Namespace, log) -> None:
    """How much a variant's time moves from one process to the next, against the moves inside one process."""
    import statistics

    names = args.variants or ["main"]
    runs: dict[str, list[dict]] = {name: [] for name in names}
    for proc in range(args.procs):
        for name in names:  # interleaved, so a slow drift of the card hits every variant alike
            found = child_json("time-spread", name, args, log)
            if found is not None:
                runs[name].append(found)
    log(f"\n[spread] {args.procs} processes per variant, µs; spread = (max - min) / median over processes")
    for name, procs in runs.items():
        for shape in procs[0] if procs else []:
            cols = {key: [p[shape][key] for p in procs] for key in ("first", "again", "fresh", "cublas")}
            drift = [100 * (p[shape]["again"] / p[shape]["first"] - 1) for p in procs]
            moved = [100 * (p[shape]["fresh"] / p[shape]["first"] - 1) for p in procs]
            spreads = {key: 100 * (max(v) - min(v)) / statistics.median(v) for key, v in cols.items()}
            log(f"{name:>8s} {shape:>16s} first " + " ".join(f"{x:6.2f}" for x in cols["first"])
                + f" | spread first {spreads['first']:.2f}% cublas {spreads['cublas']:.2f}% | in-process drift "
                + " ".join(f"{x:+.2f}" for x in drift) + " | fresh buffers " + " ".join(f"{x:+.2f}" for x in moved))
    args.results["spread"] = runs


def cmd_bench(args: argparse.Namespace, log) -> None:
    import torch

    flops_rate, bw = measure_ceilings(log)
    names = [v for v in (args.variants or list(VARIANTS)) if (LIB_DIR / f"{v}.so").exists()]
    # Each variant runs in its own process, so builds of the same kernel never share process-wide
    # state (they once shared a unique template static and failed with "invalid argument").
    others = {name: variant_times(name, args, log) for name in names if name != "main"}
    main_kernel = CapiKernel(LIB_DIR / "main.so")
    bound = None
    if args.binding:
        try:
            bound = binding_kernel()
        except Exception as exc:
            log(f"binding not timed: {type(exc).__name__}: {exc}")
    rows = []
    for m, n, k, l in bench_shapes(args):
        sets = bench_inputs(m, n, k, l, args.sets)
        row: dict[str, float | str] = {"shape": f"{m}x{n}x{k}"}
        row["main"] = leaderboard_us(main_kernel, sets, args)
        if bound is not None:  # the same kernel through the CLI's torch binding
            try:
                row["binding"] = leaderboard_us(bound, sets, args)
            except RuntimeError as exc:
                log(f"binding not timed on {row['shape']}: {exc}")
                row["binding"] = float("nan")
        for name, times in others.items():
            row[name] = times.get(row["shape"], float("nan"))
        row["cublas_fp16"] = cublas_anchor(sets, m, n, args)
        row["naive_torch"] = leaderboard_us(  # ~2 ms a call: 2 input sets, 3 repeats, no settle
            lambda d: torch.mm(dequant_fp16(d[0][:, :, 0], d[2][:, :, 0]), dequant_fp16(d[1][:, :, 0], d[3][:, :, 0]).t()),
            sets[:2], args, max_repeats=3, settle=False)
        bytes_moved = (m + n) * k // 2 + (m + n) * k // 16 + 2 * m * n
        row["floor"] = max(2 * m * n * k / flops_rate, bytes_moved / bw) * 1e6
        rows.append(row)
        del sets
        torch.cuda.empty_cache()
    cols = [c for c in rows[0] if c != "shape"]
    geo = {c: math.exp(sum(math.log(r[c]) if r[c] > 0 else math.nan for r in rows) / len(rows)) for c in cols}
    log(f"\n{torch.cuda.get_device_name()} · {time.strftime('%Y-%m-%d')} · torch {torch.__version__} · "
        f"{method_line(args)} (naive_torch: 2 sets, 3 repeats); µs")
    log(f"{'shape':>16s} " + " ".join(f"{c:>12s}" for c in cols) + "   main/floor  cublas/main")
    for r in rows + [dict(geo, shape="geomean")]:
        log(f"{r['shape']:>16s} " + " ".join(f"{r[c]:12.1f}" for c in cols)
            + f"   {r['floor'] / r['main'] * 100:9.0f}%  {r['cublas_fp16'] / r['main']:10.2f}x"
            if "main" in r else "")
    args.results["bench"] = rows + [dict(geo, shape="geomean")]
    args.results["ceilings"] = {"fp16_tflops": flops_rate / 1e12, "copy_tbps": bw / 1e12}
    if args.shapes == "task" and not args.only:  # the targets are over all 13 shapes
        args.results["targets"] = log_anchor_targets(rows, log)
        return
    if args.shapes != "bench":
        return
    overhead = launch_overhead_us(log)
    if overhead is not None:
        args.results["reach"] = log_reach(rows, overhead, log)


# Targets over every task.yml shape (tests and benchmarks), against the cuBLAS fp16 anchor timed beside it
TASK_MIN_SPEEDUP, TASK_GEOMEAN_SPEEDUP, TASK_BENCH_GEOMEAN_US, TASK_COMPUTE_FLOOR_SLACK = 1.0, 1.5, 22.0, 0.05
TASK_ANCHOR_AT_FLOOR = 0.10


def log_anchor_targets(rows: list[dict], log) -> dict:
    """Met or not, per target, for `--shapes task`. A compute-bound shape (where the anchor itself runs
    within 10 % of the fp16 floor: big enough that launch and tails do not count) must also come
    within 5 % of that floor."""
    from nvfp4ctl.bench.stats import geomean

    speedups = {r["shape"]: r["cublas_fp16"] / r["main"] for r in rows}
    bench_keys = {f"{m}x{n}x{k}" for m, n, k, _ in BENCH_SHAPES}
    bench_geo = geomean([r["main"] for r in rows if r["shape"] in bench_keys])
    geo = geomean(list(speedups.values()))
    slow = [shape for shape, x in speedups.items() if x < TASK_MIN_SPEEDUP]
    compute_bound = [r for r in rows if r["cublas_fp16"] <= (1 + TASK_ANCHOR_AT_FLOOR) * r["floor"]]
    off_floor = [r["shape"] for r in compute_bound if r["main"] > (1 + TASK_COMPUTE_FLOOR_SLACK) * r["floor"]]

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    log(f"\n[targets] {len(rows)} shapes, anchor = cuBLAS fp16 on operands dequantized beforehand, same process")
    log(f"  every shape >= {TASK_MIN_SPEEDUP:g}x the anchor: {verdict(not slow)}"
        + (f" (below: {', '.join(f'{s} {speedups[s]:.2f}x' for s in slow)})" if slow else ""))
    log(f"  geomean speed-up >= {TASK_GEOMEAN_SPEEDUP:g}x: {geo:.2f}x, {verdict(geo >= TASK_GEOMEAN_SPEEDUP)}")
    log(f"  benchmark shapes geomean <= {TASK_BENCH_GEOMEAN_US:g} us: {bench_geo:.2f} us, "
        f"{verdict(bench_geo <= TASK_BENCH_GEOMEAN_US)}")
    log(f"  compute-bound shapes within {TASK_COMPUTE_FLOOR_SLACK:.0%} of the fp16 floor: "
        + (", ".join(f"{r['shape']} {r['main'] / r['floor']:.2f}x floor" for r in compute_bound) or "none")
        + f", {verdict(not off_floor)}")
    # The first target asks more of a compute-bound shape than the last: matching an anchor that runs
    # within a few % of the floor means coming at least that close (docs/sm90_performance.md: the energy
    # study puts even 5 % out of this design's reach on 2304x4608x7168).
    for r in compute_bound:
        log(f"  {r['shape']}: >= {TASK_MIN_SPEEDUP:g}x the anchor means <= {r['cublas_fp16']:.1f} us, within "
            f"{r['cublas_fp16'] / r['floor'] - 1:.1%} of its fp16 floor ({r['floor']:.1f} us)")
    return {"speedups": speedups, "geomean_speedup": geo, "bench_geomean_us": bench_geo, "below_anchor": slow,
            "off_floor": off_floor,
            "anchor_over_floor": {r["shape"]: r["cublas_fp16"] / r["floor"] for r in compute_bound}}


# The Hopper kernel's performance target: geomean <= 14 µs, every shape >= 2.5x faster than the cuBLAS anchor
TARGET_GEOMEAN_US, TARGET_ANCHOR_SPEEDUP = 14.0, 2.5


def launch_overhead_us(log) -> float | None:
    """This GPU's least cost of a launch in a back-to-back loop (µs): the smallest `overhead` that
    .sm90build/launch_gap prints over its launch configurations; None if it was not built."""
    binary = LIB_DIR / "launch_gap"
    if not binary.exists():
        log("reach not computed: .sm90build/launch_gap missing (`sm90_kernel.py libs` builds it)")
        return None
    done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=120, check=False)
    found = [float(x) for x in re.findall(r"overhead\s+([\d.]+) us", done.stdout)]
    log("launch_gap: " + " | ".join(line.strip() for line in done.stdout.splitlines()))
    return min(found) if done.returncode == 0 and found else None


def log_reach(rows: list[dict], overhead: float, log) -> dict:
    """Whether the target can be met at all on this card: no call takes less than the launch overhead
    plus the fp16 floor (its math at the measured matmul rate), whatever the kernel does."""
    from nvfp4ctl.bench.stats import geomean

    least = {r["shape"]: r["floor"] + overhead for r in rows}
    needed = {r["shape"]: r["cublas_fp16"] / TARGET_ANCHOR_SPEEDUP for r in rows}
    least_geo = geomean(list(least.values()))
    needed_label = f"anchor/{TARGET_ANCHOR_SPEEDUP:g}"
    log(f"\n[reach] least time per call = fp16 floor + launch overhead ({overhead:.2f} µs, launch_gap); target: geomean "
        f"<= {TARGET_GEOMEAN_US:g} µs and >= {TARGET_ANCHOR_SPEEDUP:g}x the cuBLAS anchor per shape")
    log(f"{'shape':>16s} {'floor':>8s} {'least':>8s} {needed_label:>11s} {'main':>8s}  anchor speedup reachable")
    for r in rows:
        shape = r["shape"]
        log(f"{shape:>16s} {r['floor']:8.1f} {least[shape]:8.1f} {needed[shape]:11.1f} {r['main']:8.1f}  "
            f"{'yes' if least[shape] <= needed[shape] else f'no (least > {needed_label})'}")
    log(f"{'geomean':>16s} {'':8s} {least_geo:8.1f}   geomean target reachable: "
        f"{'yes' if least_geo <= TARGET_GEOMEAN_US else f'no ({least_geo:.1f} > {TARGET_GEOMEAN_US:g})'}")
    return {"launch_overhead_us": overhead, "least_us": least, "anchor_over_2_5_us": needed, "least_geomean_us": least_geo}


def cmd_timeline(args: argparse.Namespace, log) -> None:
    """Where one call's time goes, CTA by CTA: a timeline build (NVFP4_SM90_TIMELINE) records the global
    timer at each phase; the last of 8 back-to-back calls (same inputs, as the leaderboard loop) is read back."""
    import torch

    log(f"\n[timeline] {torch.cuda.get_device_name()} · {time.strftime('%Y-%m-%d')} · µs from the first CTA's entry; "
        "med / max over CTAs")
    for name in args.variants or ["timeline"]:
        kernel = CapiKernel(LIB_DIR / f"{name}.so")
        kernel.lib.nvfp4_capi_timeline.argtypes = [ctypes.c_void_p, ctypes.c_int]
        for shape in bench_shapes(args):
            timeline_one(name, kernel, shape, args, log)


def timeline_one(name: str, kernel: CapiKernel, shape: tuple[int, int, int, int], args: argparse.Namespace, log) -> None:
    import statistics

    import torch

    m, n, k, l = shape
    n_events = len(TIMELINE_EVENTS)
    sets = bench_inputs(m, n, k, l, args.sets)
    per_call = leaderboard_us(kernel, sets, args)
    data = sets[0]
    for _ in range(8):
        kernel(data)
    torch.cuda.synchronize()
    plan = kernel.lib.nvfp4_capi_plan(m, n, k, l)
    if plan > DIRECT_PLAN:  # the direct kernel marks no phases: its rows would read as all zero
        log(f"{name} {m}x{n}x{k}: the direct kernel (plan {plan}) records no timeline; per call {per_call:.1f}")
        return
    ctas = plan_ctas(plan, m, n, l)
    buf = (ctypes.c_uint64 * (1024 * n_events))()
    if kernel.lib.nvfp4_capi_timeline(buf, 1024) != 0:
        raise RuntimeError("timeline copy failed")
    rows = [dict(zip(TIMELINE_EVENTS, buf[i * n_events:(i + 1) * n_events])) for i in range(min(ctas, 1024))]
    t0 = min(r["entry"] for r in rows)
    previous = [r["previous_exit"] for r in rows if r["previous_exit"] <= t0]
    gap = (t0 - max(previous)) / 1e3 if previous else float("nan")
    span = (max(r["exit"] for r in rows) - t0) / 1e3
    lines = [f"{name} {m}x{n}x{k}: {ctas} CTAs on {len({r['sm'] for r in rows})} SMs, per call {per_call:.1f}, "
             f"span {span:.1f}, gap before {gap:.1f}"]
    for event in TIMELINE_EVENTS[:TIMELINE_EVENTS.index("sm")]:
        values = [(r[event] - t0) / 1e3 for r in rows if r[event] >= t0]
        if values:
            lines.append(f"  {event:16s} {statistics.median(values):7.2f} / {max(values):7.2f}")
    loops = [(r["main_loop_done"] - r["first_tile"]) / 1e3 for r in rows if r["main_loop_done"] > r["first_tile"]]
    if loops:
        lines.append(f"  {'main loop':16s} {statistics.median(loops):7.2f} / {max(loops):7.2f} (min {min(loops):.2f})")
    for line in lines:
        log(line)
    args.results.setdefault("timeline", {}).setdefault(name, {})[f"{m}x{n}x{k}"] = {"per_call": per_call, "rows": rows}


def cmd_devtime(args: argparse.Namespace, log) -> None:
    """Where each call's time is, for ours and the anchor alike: device time per call (the profiler's
    kernel time, `nvfp4ctl bench`'s kineto method), the time per call, and their difference, which is
    launch overhead and idle GPU between back-to-back calls."""
    import torch

    from nvfp4ctl.bench.flush import CudaFlush
    from nvfp4ctl.bench.kineto import profile_device_time

    flush = CudaFlush()
    names = args.variants or ["main"]
    kernels = {name: CapiKernel(LIB_DIR / f"{name}.so") for name in names}
    log(f"\n[devtime] {torch.cuda.get_device_name()} · {time.strftime('%Y-%m-%d')} · µs per call: device (profiler, "
        f"kernels only) / per call ({method_line(args)}) / gap = per call - device")
    log(f"{'shape':>16s} " + " ".join(f"{label + ' dev':>14s} {'per call':>9s} {'gap':>5s}" for label in [*names, "cublas"]))
    rows = []
    for m, n, k, l in bench_shapes(args):
        sets = bench_inputs(m, n, k, l, args.sets)
        anchor, operands = anchor_call(sets, m, n)
        calls = {**{name: (kernel, sets) for name, kernel in kernels.items()}, "cublas": (anchor, operands)}
        row: dict[str, object] = {"shape": f"{m}x{n}x{k}"}
        for label, (fn, inputs) in calls.items():
            per_call = leaderboard_us(fn, inputs, args)
            device = profile_device_time(fn, inputs, flush, head_start_s=2e-3, batches=3)
            row[label] = {"device": device.us_per_call if device else math.nan, "per_call": per_call,
                          "kernels": device.top_kernels if device else []}
        rows.append(row)
        log(f"{row['shape']:>16s} " + " ".join(
            f"{row[label]['device']:14.2f} {row[label]['per_call']:9.2f} {row[label]['per_call'] - row[label]['device']:5.2f}"
            for label in calls))
        del sets, operands, calls
        torch.cuda.empty_cache()
    args.results["devtime"] = rows


# Two do-nothing pybind11 functions with the binding's signature: what passing five tensors costs,
# and passing them and returning one (the binding returns c).
HOST_PROBE = """
#include <torch/extension.h>
void takes_five(torch::Tensor, torch::Tensor, torch::Tensor, torch::Tensor, torch::Tensor) {}
torch::Tensor returns_c(torch::Tensor, torch::Tensor, torch::Tensor, torch::Tensor, torch::Tensor c) { return c; }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("takes_five", &takes_five);
  m.def("returns_c", &returns_c);
}
"""


def cpu_us_per_call(call, settle, loops: int = 20, calls: int = 200) -> float:
    """CPU µs to issue one call: the median of `loops` timings of `calls` calls, `settle()` (the GPU
    catching up, or nothing) after the warm-up call and after each timing, outside the clock."""
    import statistics

    call()
    settle()
    times = []
    for _ in range(loops):
        started = time.perf_counter()
        for _ in range(calls):
            call()
        times.append((time.perf_counter() - started) / calls * 1e6)
        settle()
    return statistics.median(times)


def cmd_host(args: argparse.Namespace, log) -> None:
    """CPU time to issue one call, layer by layer (the GPU runs behind; 200 calls stay far below the
    launch queue's depth, so the CPU never waits for it): the CLI's path (the problem's Python call
    into the torch extension), the extension's function itself (pybind11, the tensor checks, the
    launch), the C ABI through ctypes (plan, tensor maps, launch: the shipped build of `libs`), and
    beside them what the layers cost without the launch: pybind11 passing the five tensors (and
    returning c), ctypes passing the five pointers (to `nvfp4_capi_unsupported`, which only checks
    the shape), and one aten op (`c.zero_()`, a single small kernel) as a yardstick."""
    import torch
    from torch.utils.cpp_extension import load_inline

    from nvfp4ctl.runner.targets import load_kernel

    cli = load_kernel(KERNEL)
    binding = binding_kernel()
    capi = CapiKernel(LIB_DIR / f"{(args.variants or ['main'])[0]}.so")
    probe = load_inline("nvfp4_sm90_host_probe", [HOST_PROBE], extra_cflags=["-O2"])

    def ctypes_no_launch(d: tuple) -> None:  # CapiKernel's Python work, then a C call that launches nothing
        for i in (0, 1, 4, 5, 6):
            d[i].data_ptr()
        m, n, l = d[6].shape
        capi.lib.nvfp4_capi_unsupported(m, n, d[0].shape[1] * 2, l)

    paths = {"cli (custom_kernel)": cli, "extension function": binding, "C ABI via ctypes": capi,
             "pybind11, no launch": lambda d: probe.takes_five(d[0], d[1], d[4], d[5], d[6]),
             "pybind11, returns c": lambda d: probe.returns_c(d[0], d[1], d[4], d[5], d[6]),
             "ctypes, no launch": ctypes_no_launch, "aten zero_ (yardstick)": lambda d: d[6].zero_()}
    log(f"\n[host] {torch.cuda.get_device_name()} · {time.strftime('%Y-%m-%d')} · CPU µs to issue one call, "
        "median of 20 loops of 200 calls")
    log(f"{'shape':>16s} " + " ".join(f"{name:>22s}" for name in paths))
    rows = []
    for m, n, k, l in bench_shapes(args):
        data = bench_inputs(m, n, k, l, 1)[0]
        row: dict[str, object] = {"shape": f"{m}x{n}x{k}"}
        for name, fn in paths.items():
            row[name] = cpu_us_per_call(lambda: fn(data), torch.cuda.synchronize)
        rows.append(row)
        log(f"{row['shape']:>16s} " + " ".join(f"{row[name]:22.2f}" for name in paths))
    args.results["host"] = rows


def cmd_launch(args: argparse.Namespace) -> None:
    """Three launches of one variant on one shape and nothing else, for a profiler to wrap."""
    import torch

    from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input

    kernel = CapiKernel(LIB_DIR / f"{args.variants[0]}.so")
    m, n, k = (int(x) for x in args.shape.split(","))
    data = generate_input(m, n, k, 1, 1111, device="cuda")
    for _ in range(3):
        kernel(data)
    torch.cuda.synchronize()


# ---------------------------------------------------------------- main
def open_log(path: Path):
    """log(line): printed and appended to `path` (its folder made), flushed line by line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    log_file = path.open("a")

    def log(line: str) -> None:
        print(line, flush=True)
        log_file.write(line + "\n")
        log_file.flush()

    return log


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["libs", "smoke", "check", "bench", "all", "time-variant", "launch", "timeline",
                                            "spread", "time-spread", "devtime", "host"])
    parser.add_argument("--variants", nargs="*", help=f"subset of {list(VARIANTS)}")
    parser.add_argument("--binding", action="store_true", help="also check the torch binding (builds it, ~1 min)")
    parser.add_argument("--sets", type=int, default=50, help="input sets per shape, one call on each per repeat (bench: 50)")
    parser.add_argument("--max-repeats", type=int, default=200, help="most timed repeats per measurement (bench: 200)")
    parser.add_argument("--max-noise", type=float, default=0.1, help="stop once err/mean is below this many percent (bench: 0.1)")
    parser.add_argument("--settle", type=float, default=1.0, help="untimed seconds of the loop before each measurement (bench: 1)")
    parser.add_argument("--procs", type=int, default=6, help="processes per variant for `spread`")
    parser.add_argument("--shape", default="128,7168,16384", help="m,n,k for `launch`")
    parser.add_argument("--shapes", choices=["bench", "task", "small", "wide"], default="bench",
                        help="bench: the 3 benchmark shapes; task: task.yml's tests and benchmarks (13); "
                             "small: SMALL_SHAPES (8-512 units)")
    parser.add_argument("--only", nargs="*", default=[], metavar="MxNxK", help="of --shapes, only these")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", REPO / ".sm90build")))
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))  # this checkout's nvfp4ctl, not an installed one
    if args.command == "libs":
        cmd_libs(args)
        return 0
    if args.command == "time-variant":
        cmd_time_variant(args)
        return 0
    if args.command == "launch":
        cmd_launch(args)
        return 0
    if args.command == "time-spread":
        cmd_time_spread(args)
        return 0
    log = open_log(args.out / "sm90_kernel.log")
    args.results = {}
    ok = True
    if args.command in ("smoke", "check", "all"):
        ok = cmd_check(args, log)
    if args.command in ("bench", "all"):
        cmd_bench(args, log)
    if args.command == "timeline":
        cmd_timeline(args, log)
    if args.command == "spread":
        cmd_spread(args, log)
    if args.command == "devtime":
        cmd_devtime(args, log)
    if args.command == "host":
        cmd_host(args, log)
    (args.out / f"sm90_kernel_{args.command}.json").write_text(json.dumps(args.results, indent=1, default=str))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
