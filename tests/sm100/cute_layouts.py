"""Build and run tests/umma/host/umma_layout_proof.cu: CuTe's own K-major UMMA smem layouts, the
descriptors it builds for each MMA K step, and its TMEM scale-factor layout, evaluated on the host.

The model (smem.py, tmem.py) is checked against these facts (tests/sm100/test_umma_model_cute.py):
the byte each (row, k) of an MMA reads, derived by the model from CuTe's descriptor, must be the
byte CuTe's layout puts it at; the TMEM cell of each scale must be one CuTe's layout uses.
CuTe headers only; built once per (program, nvcc, CUTLASS) into the nvfp4ctl cache (~1.5 min).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from nvfp4ctl.build import cache, toolchain
from nvfp4ctl.errors import FailuresFound
from nvfp4ctl.project import REPO_DIR
from nvfp4ctl.umma.host_proof import HOST_FLAGS, RUN_TIMEOUT_S, _run, host_binary

PROOF_SOURCE = REPO_DIR / "tests" / "umma" / "host" / "umma_layout_proof.cu"

_DESC_RE = re.compile(r"^desc swizzle=(\S+) op=([AB]) rows=(\d+) n=(\d+) step=(\d+) value=0x([0-9a-f]+)$")
_BYTES_RE = re.compile(r"^bytes swizzle=(\S+) op=([AB]) n=(\d+) step=(\d+) row=(\d+):([ \d]*)$")
_SF_RE = re.compile(r"^sf op=([AB]) rows=(\d+) step=(\d+) row=(\d+):(.*)$")


@dataclass
class OperandLayout:
    """One operand stage of one swizzle and MMA N: CuTe's descriptor and byte map per K step."""

    swizzle: str
    operand: str
    rows: int
    n: int
    descs: dict[int, int] = field(default_factory=dict)  # step -> 64-bit descriptor
    bytes: dict[int, list[list[int]]] = field(default_factory=dict)  # step -> [row][k byte] -> offset


def _binary() -> Path:
    digest = hashlib.sha256(PROOF_SOURCE.read_bytes())
    digest.update(" ".join(HOST_FLAGS).encode())
    digest.update(toolchain.nvcc_version().encode())
    digest.update(toolchain.cutlass_version().encode())
    includes = [f"-I{path}" for path in toolchain.cutlass_include_dirs()]
    return host_binary(cache.cache_root() / "umma-layout-proof" / digest.hexdigest()[:16], "umma_layout_proof",
                       [*HOST_FLAGS, *includes, str(PROOF_SOURCE)], "the CuTe layout proof")


def _output(mode: str) -> str:
    done = _run([str(_binary()), mode], RUN_TIMEOUT_S)
    if done.returncode != 0:
        raise FailuresFound(f"the CuTe layout proof failed ({done.returncode}): {done.stdout.strip()[-300:]}")
    return done.stdout


def parse_smem(text: str) -> list[OperandLayout]:
    layouts: dict[tuple[str, str, int], OperandLayout] = {}
    for line in text.splitlines():
        if match := _DESC_RE.match(line.strip()):
            swizzle, op, rows, n, step, value = match.groups()
            entry = layouts.setdefault((swizzle, op, int(n)), OperandLayout(swizzle, op, int(rows), int(n)))
            entry.descs[int(step)] = int(value, 16)
        elif match := _BYTES_RE.match(line.strip()):
            swizzle, op, n, step, row, offsets = match.groups()
            entry = layouts[(swizzle, op, int(n))]
            entry.bytes.setdefault(int(step), []).append([int(x) for x in offsets.split()])
    return list(layouts.values())


def parse_sf(text: str) -> dict[tuple[str, int], dict[tuple[int, int], list[tuple[int, int, int]]]]:
    """{(operand, rows): {(step, row): [(lane, column, byte) per k-block]}}"""
    out: dict[tuple[str, int], dict[tuple[int, int], list[tuple[int, int, int]]]] = {}
    for line in text.splitlines():
        if match := _SF_RE.match(line.strip()):
            op, rows, step, row, cells = match.groups()
            out.setdefault((op, int(rows)), {})[(int(step), int(row))] = [
                tuple(int(x) for x in cell.split(",")) for cell in cells.split()]  # type: ignore[misc]
    return out


def cute_smem_layouts() -> list[OperandLayout]:
    return parse_smem(_output("smem"))


def cute_sf_layouts() -> dict[tuple[str, int], dict[tuple[int, int], list[tuple[int, int, int]]]]:
    return parse_sf(_output("sf"))
