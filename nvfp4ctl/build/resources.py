"""Reading what the compiler made: `ptxas -v` resource lines and the tensor-core op in the SASS."""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import subprocess
from dataclasses import replace
from pathlib import Path

from nvfp4ctl.build import toolchain
from nvfp4ctl.build.report import FunctionUsage, TensorOpCheck, without_its_a
from nvfp4ctl.errors import FailuresFound

# An entry's SASS listing, compressed: the tensor-op check reads the listing in memory, and only tune's
# same-code test (tune/compile_pool.code_digest) reads it back; plain it was ~16 MB for the sm_90a kernel, in
# every entry; gzip keeps it ~10x smaller for a person (`zless`) and for the tests that look into the shipped
# kernels' machine code.
SASS_FILE = "kernel.sass.gz"
_PLAIN_SASS_FILE = "kernel.sass"  # what entries made before 2026-11-28 hold


def save_sass(folder: Path, sass: str) -> None:
    # a listing names the kernel's path: bytes of a name that are not UTF-8 are kept as cuobjdump wrote them
    (folder / SASS_FILE).write_bytes(gzip.compress(sass.encode(errors="surrogateescape"), compresslevel=6, mtime=0))


def saved_sass(entry: Path) -> str | None:
    """The SASS listing a cache entry keeps (save_sass; an older entry's plain kernel.sass); None where it has
    none (the SASS tools were missing when it was built)."""
    if (entry / SASS_FILE).is_file():
        return gzip.decompress((entry / SASS_FILE).read_bytes()).decode(errors="surrogateescape")
    if (entry / _PLAIN_SASS_FILE).is_file():
        return (entry / _PLAIN_SASS_FILE).read_text(errors="surrogateescape")
    return None


_ENTRY = re.compile(r"ptxas info\s*: Compiling entry function '([^']+)'(?: for '(\w+)')?")
_GMEM = re.compile(r"ptxas info\s*: \d+ bytes gmem")  # the first line of each arch's ptxas run
_PROPERTIES = re.compile(r"ptxas info\s*: Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"ptxas info\s*: Used (\d+) registers(.*)")
_SMEM = re.compile(r"(\d+) bytes smem")

# Tensor-core mnemonics per arch, checked against nvcc 13.0 output (tests/build fixtures):
#   sm_90a  wgmma.mma_async                                  -> HGMMA.64xNx16.F32 (QGMMA for fp8)
#   sm_100a tcgen05.mma kind::mxf4nvf4.block_scale.block16   -> UTCOMMA.4X (2-CTA: UTCOMMA.2CTA.4X)
#           kind::mxf4 (block-32 scales) -> UTCOMMA; kind::mxf8f6f4 -> UTCQMMA; kind::f16 -> UTCHMMA
EXPECTED_TENSOR_OP = {
    "sm_90a": ("HGMMA", re.compile(r"^HGMMA\b")),
    "sm_100a": ("UTCOMMA.4X", re.compile(r"^UTCOMMA(?:\.\w+)*\.4X$")),
}
_TENSOR_OP = re.compile(r"^(?:[HQ]GMMA|UTC\w*MMA|HMMA|IMMA|OMMA|QMMA)\b")
_SASS_OPCODE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Za-z0-9_.]*)")


def parse_ptxas(log: str) -> tuple[FunctionUsage, ...]:
    """Per function and arch: registers and static smem (entries only), stack frame, spill bytes. An nvcc run of
    several -gencode runs ptxas once per arch, each naming its arch on its entry lines: each arch's figures are
    kept apart, where one arch's overwrote the other's."""
    # keyed by (ptxas run, function) until the runs' archs are known: a helper's properties may come before
    # the first entry line of its run, which names the arch
    usage: dict[tuple[int, str], dict[str, int]] = {}
    entries: set[tuple[int, str]] = set()
    run_arch: dict[int, str] = {}
    run = 0
    current: tuple[int, str] | None = None
    for line in log.splitlines():
        if _GMEM.search(line):
            if current is not None:  # the next arch's run (the first run's own line starts nothing)
                run, current = run + 1, None
        elif match := _ENTRY.search(line):
            name, arch = match.group(1), match.group(2) or ""
            if arch and run_arch.setdefault(run, arch) != arch:  # another arch with no gmem line between
                run += 1
                run_arch[run] = arch
            current = (run, name)
            entries.add(current)
        elif match := _PROPERTIES.search(line):
            current = (run, match.group(1))
        elif (match := _FRAME.search(line)) and current is not None:
            stack, stores, loads = map(int, match.groups())
            usage.setdefault(current, {}).update(stack_bytes=stack, spill_stores=stores, spill_loads=loads)
        elif (match := _USED.search(line)) and current is not None:
            smem = _SMEM.search(match.group(2))
            usage.setdefault(current, {}).update(
                registers=int(match.group(1)), shared_bytes=int(smem.group(1)) if smem else 0
            )
    merged: dict[tuple[str, str], dict[str, int]] = {}  # (arch, function): two runs of one arch are one
    entry_keys: set[tuple[str, str]] = set()
    for key in [*usage, *(key for key in entries if key not in usage)]:
        arch_key = (run_arch.get(key[0], ""), key[1])
        merged.setdefault(arch_key, {}).update(usage.get(key, {}))
        if key in entries:
            entry_keys.add(arch_key)
    return tuple(FunctionUsage(name=name, entry=(arch, name) in entry_keys, arch=arch, **figures)
                 for (arch, name), figures in merged.items())


def tensor_ops(sass: str) -> tuple[str, ...]:
    """Distinct tensor-core mnemonics in a `cuobjdump --dump-sass` listing."""
    found = {op for op in _SASS_OPCODE.findall(sass) if _TENSOR_OP.match(op)}
    return tuple(sorted(found))


# What each tensor-core SASS op runs, for reports on other people's kernels (same sources as above).
TENSOR_OP_MEANING = (
    (re.compile(r"^UTCOMMA(?:\.\w+)*\.4X$"), "fp4 block16: mxf4nvf4"),
    (re.compile(r"^UTCOMMA"), "fp4 block32: mxf4"),
    (re.compile(r"^UTCQMMA"), "mxf8f6f4/f8f6f4"),
    (re.compile(r"^UTCHMMA"), "f16/tf32"),
    (re.compile(r"^UTC\w*MMA"), "other tcgen05"),
    (re.compile(r"^[HQ]GMMA"), "wgmma (sm_90)"),
    (re.compile(r"^(?:HMMA|IMMA|OMMA|QMMA)"), "mma.sync"),
)


def describe_tensor_op(op: str) -> str:
    return next((meaning for pattern, meaning in TENSOR_OP_MEANING if pattern.match(op)), "tensor-core op")


def check_tensor_op(arch: str, sass: str | None) -> TensorOpCheck:
    if arch not in EXPECTED_TENSOR_OP and arch + "a" not in EXPECTED_TENSOR_OP:
        found = tensor_ops(sass) if sass is not None else ()
        return TensorOpCheck(expected="-", found=found, match=found[0] if found else None, checked=sass is not None)
    # sm_100 is checked against sm_100a's op, which its SASS never holds: named, not demanded (without_a)
    expected, pattern = EXPECTED_TENSOR_OP.get(arch) or EXPECTED_TENSOR_OP[arch + "a"]
    without_a = without_its_a(arch)
    if sass is None:
        return TensorOpCheck(expected=expected, found=(), match=None, checked=False, without_a=without_a)
    found = tensor_ops(sass)
    match = next((op for op in found if pattern.match(op)), None)
    return TensorOpCheck(expected=expected, found=found, match=match, checked=True, without_a=without_a)


# each arch's cubin in a `cuobjdump --dump-sass` listing of an object of several -gencode starts with this line
_ARCH_SECTION = re.compile(r"^arch = (sm_\w+)[ \t]*$", re.MULTILINE)


def check_tensor_ops(arches: tuple[str, ...], sass: str | None,
                     ptx_alone: frozenset[str] = frozenset()) -> tuple[TensorOpCheck, ...]:
    """check_tensor_op of each arch one compile made (several -gencode), each against its own cubin's SASS: an
    op another arch's cubin holds runs on none of this one's GPUs. One arch, or a listing without its archs'
    lines, is checked whole. An arch of `ptx_alone` has no cubin (the driver compiles its PTX where it runs):
    not checked, and no failure."""
    sections = _arch_sections(sass) if sass is not None and len(arches) > 1 else {}
    return tuple(_ptx_alone_check(arch) if arch in ptx_alone
                 else check_tensor_op(arch, sections.get(arch, "") if sections else sass) for arch in arches)


def _ptx_alone_check(arch: str) -> TensorOpCheck:
    return replace(check_tensor_op(arch, None), ptx_alone=True)  # no SASS: the op expected, none checked


def _arch_sections(sass: str) -> dict[str, str]:
    """Each arch's part of a listing, by its `arch = sm_100a` line (an arch listed twice, its parts joined)."""
    starts = list(_ARCH_SECTION.finditer(sass))
    sections: dict[str, str] = {}
    for index, start in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(sass)
        sections[start.group(1)] = sections.get(start.group(1), "") + sass[start.start():end]
    return sections


def dump_sass(binary: Path) -> str | None:
    """SASS text of an object, cubin or shared library; None when the tools are missing."""
    tools = toolchain.sass_tools()
    if tools is None:
        return None
    cuobjdump, nvdisasm = tools
    env = {**os.environ, "PATH": f"{nvdisasm.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [str(cuobjdump), "--dump-sass", str(binary)], capture_output=True, text=True, env=env, timeout=600,
        errors="surrogateescape",  # the listing names the source's path, whose name may hold bytes not UTF-8
    )
    if done.returncode != 0:
        raise FailuresFound(f"cuobjdump --dump-sass {binary.name} failed: {done.stderr.strip()}")
    return done.stdout


_FUNCTION = re.compile(r"^\s*Function : (\S+)\s*$", re.MULTILINE)


def sass_digest(sass: str) -> str:
    """sha256 over a SASS listing's functions (name and code, in listing order), nothing else: the
    same machine code gives the same digest in any checkout, in an object or in a shared library
    (whose listing adds headers, source paths, and empty sections for host-only files)."""
    parts = _FUNCTION.split(sass)
    functions = [f"Function : {parts[i]}\n{parts[i + 1].strip()}" for i in range(1, len(parts), 2)]
    return hashlib.sha256("\n".join(functions).encode(errors="surrogateescape")).hexdigest()
