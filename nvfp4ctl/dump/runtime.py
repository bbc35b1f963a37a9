"""`dump --runtime`: build the sm_100a kernel with NVFP4CTL_DEBUG_DUMP=1, run one shape on an SM100
GPU in a child process, and compare what CTA 0 printed with the expected values and the reference.

What the debug build prints (kernels/sm100/nvfp4_gemm_sm100.cu, `debug_dump`): the dispatch config,
the MMA atom's instruction descriptor, scale bytes of rows 0..3 x k-blocks 0..3 read on the device
through the kernel's own LayoutSFA/SFB, and the first 8 outputs of row 0. CUTLASS's collective
keeps its shared-memory descriptors, staged SMEM/TMEM scales and raw fp32 accumulators internal, so
those are not printed; the fp16 outputs stand in for the accumulators.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from nvfp4ctl.build import toolchain
from nvfp4ctl.errors import KernelCrash, KernelTimeout, UsageError
from nvfp4ctl.umma import descriptors as d
from nvfp4ctl.umma.configs import KernelConfig, expected_instr

DEBUG_DEFINE = "-DNVFP4CTL_DEBUG_DUMP=1"
CHILD_TIMEOUT_S = 1800.0  # includes a CUTLASS build (minutes)
PROBE_ROWS, PROBE_KBLOCKS, PROBE_COLS = 4, 4, 8
USAGE_MARK = "NVFP4CTL usage error: "  # the child's stderr line of an input error (exit 2), not a crash

_CONFIG_RE = re.compile(r"^NVFP4CTL config id=(\d+) tile=(\d+)x(\d+)x(\d+)$")
_IDESC_RE = re.compile(r"^NVFP4CTL idesc=0x([0-9a-fA-F]+)$")
_SF_RE = re.compile(r"^NVFP4CTL sf row=(\d+) kblock=(\d+) sfa_offset=(\d+) sfa=0x([0-9a-f]+) "
                    r"sfb_offset=(\d+) sfb=0x([0-9a-f]+)$")
_OUT_RE = re.compile(r"^NVFP4CTL out row=0 col=(\d+) value=(\S+)$")


def sm100_gpu() -> str | None:
    """The name of the current GPU when it is an SM100 (compute capability 10.x), else None."""
    import torch

    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 10:
        return None
    return torch.cuda.get_device_name()


@dataclass
class DeviceDump:
    config_id: int | None = None
    tile: tuple[int, int, int] | None = None
    idesc: int | None = None
    scales: dict[tuple[int, int], tuple[int, int, int, int]] = field(default_factory=dict)  # (row, kb) -> offsets, bytes
    outputs: dict[int, float] = field(default_factory=dict)


def parse_device_dump(text: str) -> DeviceDump:
    dump = DeviceDump()
    for line in text.splitlines():
        line = line.strip()
        if match := _CONFIG_RE.match(line):
            dump.config_id = int(match.group(1))
            dump.tile = (int(match.group(2)), int(match.group(3)), int(match.group(4)))
        elif match := _IDESC_RE.match(line):
            dump.idesc = int(match.group(1), 16)
        elif match := _SF_RE.match(line):
            row, kb, off_a, byte_a, off_b, byte_b = match.groups()
            dump.scales[(int(row), int(kb))] = (int(off_a), int(byte_a, 16), int(off_b), int(byte_b, 16))
        elif match := _OUT_RE.match(line):
            dump.outputs[int(match.group(1))] = float(match.group(2))
    return dump


@dataclass(frozen=True)
class RuntimeCheck:
    what: str
    got: str
    want: str
    ok: bool


def compare(dump: DeviceDump, configs: tuple[KernelConfig, ...], expected: dict) -> list[RuntimeCheck]:
    """Device lines vs. the expected config/descriptor, the input scales and the reference outputs.

    `expected` (written by the child from the same inputs): sfa/sfb reference bytes per "row,kb",
    their offsets per the permuted layout, and the reference's first outputs of row 0."""
    checks: list[RuntimeCheck] = []
    config = next((c for c in configs if c.id == dump.config_id), None)
    checks.append(RuntimeCheck("config", str(dump.config_id), str(expected["config_id"]),
                               config is not None and dump.config_id == expected["config_id"]))
    if config is not None:
        want_tile = (config.block_m, config.block_n, config.block_k)
        checks.append(RuntimeCheck("tile", str(dump.tile), str(want_tile), dump.tile == want_tile))
        want_idesc = d.encode_instr(expected_instr(config))
        got_idesc = "missing" if dump.idesc is None else f"0x{dump.idesc:08x}"
        checks.append(RuntimeCheck("idesc", got_idesc, f"0x{want_idesc:08x}", dump.idesc == want_idesc))
    for key, (off_a, byte_a, off_b, byte_b) in sorted(dump.scales.items()):
        want = expected["scales"][f"{key[0]},{key[1]}"]
        got_tuple = (off_a, byte_a, off_b, byte_b)
        want_tuple = (want["sfa_offset"], want["sfa"], want["sfb_offset"], want["sfb"])
        checks.append(RuntimeCheck(f"scales row {key[0]} k-block {key[1]} (offset, byte) A|B",
                                   str(got_tuple), str(want_tuple), got_tuple == want_tuple))
    if len(dump.scales) != PROBE_ROWS * PROBE_KBLOCKS:
        checks.append(RuntimeCheck("scale lines", str(len(dump.scales)), str(PROBE_ROWS * PROBE_KBLOCKS), False))
    rtol = atol = 1e-3
    for col, want in enumerate(expected["outputs"]):
        got = dump.outputs.get(col)
        ok = got is not None and abs(got - want) <= atol + rtol * abs(want)
        checks.append(RuntimeCheck(f"c[0, {col}]", "missing" if got is None else f"{got:.6g}", f"{want:.6g}", ok))
    return checks


_CHILD = r"""
import json, sys
from pathlib import Path
import torch
from torch.utils import cpp_extension
from nvfp4ctl.build import flags, toolchain
from nvfp4ctl.dump.layout import locate
from nvfp4ctl.dump.runtime import USAGE_MARK
from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems import DEFAULT_PROBLEM, get_problem
from nvfp4ctl.problems.base import make_case
from nvfp4ctl.problems.nvfp4_gemm.reference import reference_gemm

kernel, binding, build_dir, expected_path, m, n, k, l, seed, config_id = sys.argv[1:11]
m, n, k, l, seed = int(m), int(n), int(k), int(l), int(seed)
Path(build_dir).mkdir(parents=True, exist_ok=True)
mod = cpp_extension.load(
    name="nvfp4_gemm_sm100_debug", sources=[kernel, binding], build_directory=build_dir,
    extra_cuda_cflags=[*flags.cuda_flags("sm_100a"), "-DNVFP4CTL_DEBUG_DUMP=1"],
    extra_cflags=list(flags.BINDING_CFLAGS),  # the binding as `build` compiles it, not at -O0
    extra_include_paths=[str(p) for p in toolchain.cutlass_include_dirs()] + [str(Path(binding).parent)],
    verbose=False)
try:  # make_input: the inputs check and bench make, with their refusal of a shape too large for the GPU
    data = get_problem(DEFAULT_PROBLEM).make_input(make_case(m=m, n=n, k=k, l=l, seed=seed), device="cuda")
except UsageError as error:
    print(USAGE_MARK + str(error), file=sys.stderr)
    sys.exit(2)
want = reference_gemm(data[0], data[1], data[2], data[3])
scales = {}
for row in range(4):
    for kb in range(4):
        a, b = locate("A", m, k, row, kb), locate("B", n, k, row, kb)
        scales[f"{row},{kb}"] = {"sfa_offset": a.offset, "sfa": int(data[2][row, kb, 0].view(torch.uint8)),
                                 "sfb_offset": b.offset, "sfb": int(data[3][row, kb, 0].view(torch.uint8))}
Path(expected_path).write_text(json.dumps({"config_id": int(config_id), "scales": scales,
                                           "outputs": [float(x) for x in want[0, :8, 0].float().cpu()]}))
sys.stdout.flush()
mod.nvfp4_gemm(data[0], data[1], data[4], data[5], data[6])
torch.cuda.synchronize()
"""


def run_debug_kernel(kernel: Path, binding: Path, build_dir: Path, m: int, n: int, k: int, l: int, seed: int,
                     config_id: int) -> tuple[str, dict]:
    """Build the debug variant and run one call in a child; returns (its stdout, the expected values)."""
    toolchain.say_cutlass_lookup()  # the child builds, and its output is read only when it fails
    expected_path = build_dir / "expected.json"
    command = [sys.executable, "-c", _CHILD, str(kernel), str(binding), str(build_dir), str(expected_path),
               str(m), str(n), str(k), str(l), str(seed), str(config_id)]
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired as error:
        raise KernelTimeout(f"possible deadlock: the debug run ran past {CHILD_TIMEOUT_S:.0f} s") from error
    if done.returncode != 0:
        usage = [line.removeprefix(USAGE_MARK) for line in done.stderr.splitlines() if line.startswith(USAGE_MARK)]
        if usage:
            raise UsageError(usage[-1])
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise KernelCrash(f"the debug run failed: {tail}")
    return done.stdout, json.loads(expected_path.read_text())
