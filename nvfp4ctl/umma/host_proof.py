"""Build and run tests/sm100/host/sm100_host_proof.cu: CuTe's own view of the kernel's configs.

The program is compiled with the kernel source --kernel names in front (nvcc -include; types only,
NVFP4CTL_CONFIG_ONLY) and prints, per dispatch config, the instruction and shared-memory descriptors
CuTe builds, the TMEM column counts, and the scale-factor layout the kernel hands to CUTLASS. Built once per (program, kernel and its headers, nvcc, CUTLASS) into
the nvfp4ctl cache (never the repository); about 1.5 minutes on 2 cores.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from nvfp4ctl.build import cache, toolchain
from nvfp4ctl.build.submission_headers import machine_cutlass_key
from nvfp4ctl.build.compile import run_compiler
from nvfp4ctl.build.sources import header_search, local_headers
from nvfp4ctl.errors import FailuresFound, ToolTimeout, UsageError
from nvfp4ctl.project import shipped
from nvfp4ctl.words import seconds_text

PROOF_SOURCE = shipped("tests/sm100/host/sm100_host_proof.cu")
# -O1: CuTe's always-inline helpers do not all inline on the host at -O0 (gcc refuses the
# rotl/rotr pair); -arch only matters for the (absent) device code.
HOST_FLAGS = ("-O1", "-std=c++17", "--expt-relaxed-constexpr", "-arch=sm_100a")
# Fixed limits (no flag or setting raises them): a timeout's message says so.
# the kernel's types without its device code (it guards that with #if !defined(NVFP4CTL_CONFIG_ONLY))
CONFIG_ONLY_FLAGS = ("-DNVFP4CTL_CONFIG_ONLY=1",)
COMPILE_TIMEOUT_S = 900.0
RUN_TIMEOUT_S = 120.0

_LINE_RE = re.compile(r"^(?P<kind>config|idesc|smem_a|smem_b|smem_a_k1|tmem) id=(?P<id>\d+)(?P<rest>.*)$")
_PAIR_RE = re.compile(r"(\w+)=(\S+)")
_SF_RE = re.compile(r"^sf id=(?P<id>\d+) op=(?P<op>[AB]) l=(?P<l>\d+) row=(?P<row>\d+):(?P<offsets>[ \d]*)$")


@dataclass
class CuteFacts:
    """What CuTe builds for one dispatch config (host evaluation)."""

    id: int
    name: str = ""
    tile: tuple[int, int, int] = (0, 0, 0)
    stages: int = 0
    acc_stages: int = 0
    smem_bytes: int = 0  # the kernel's dynamic shared memory (CUTLASS SharedStorageSize)
    idesc: int = 0
    smem_a: int = 0
    smem_b: int = 0
    smem_a_k1: int = 0
    tmem: dict[str, int] = field(default_factory=dict)


def _key(kernel: Path) -> str:
    digest = hashlib.sha256()
    # the kernel's own headers (beside it or in kernels/common, the API header among them) change what the
    # proof is built from as much as the kernel does, as they change the build's key
    for path in (PROOF_SOURCE, kernel, *local_headers(kernel)):
        digest.update(path.read_bytes())
    digest.update(" ".join((*HOST_FLAGS, *CONFIG_ONLY_FLAGS, "-include")).encode())
    # the folders the kernel's includes are looked up in: a proof built while the kernel's own folder was one
    # found an `#include <x.cuh>` beside it that the build does not
    # as bytes: a folder's name that is not UTF-8 (the user's k\xff/kernels/common, a CUTLASS checkout's) has no
    # UTF-8 text, and a UTF-8 one gives the bytes it gave before
    digest.update(b"\n".join(map(os.fsencode, include_folders(kernel))))
    digest.update(toolchain.nvcc_version().encode())
    cutlass = machine_cutlass_key()  # a checkout found before the wheel counts by its headers' stamps
    digest.update(b"\n".join(map(os.fsencode, [cutlass] if isinstance(cutlass, str) else cutlass)))
    return digest.hexdigest()[:16]


def host_binary(entry: Path, name: str, compile_args: list[str], what: str, kernel: Path | None = None) -> Path:
    """A host program compiled by nvcc on first use into the cache folder `entry` (locked: parallel
    callers wait; landed atomically: a reader sees no binary or a whole one). `compile_args` are
    nvcc's arguments but the output; a compile error is one FailuresFound line naming `what`, or
    `kernel` where the first error is in the user's kernel or a header beside it."""
    binary = entry / name
    if binary.is_file():
        return binary
    with cache.locked(entry, what):
        if binary.is_file():
            return binary
        with cache.staging(entry) as folder:
            done = _run([str(toolchain.nvcc_path()), *compile_args, "-o", str(folder / name)], COMPILE_TIMEOUT_S,
                        f"{what}'s compile")
            if done.returncode != 0:
                errors = [line for line in done.stdout.splitlines() if "error" in line]
                first = (errors or ["see nvcc output"])[0]
                if kernel is not None and _in_folder_of(first, kernel):
                    raise FailuresFound(f"{kernel} does not compile: {first}")
                raise FailuresFound(f"{what} did not compile: {first}")
            entry.parent.mkdir(parents=True, exist_ok=True)
            cache.land(folder, entry)
    return binary


# where nvcc's error line names its file: cudafe++'s `path(line): error: ...` (or `catastrophic error`), or
# the preprocessor's and the host compiler's (gcc) `path:line:col: fatal error: ...` / `path:line: error: ...`
_ERROR_PLACE_RE = re.compile(r"^(?P<path>.+?)(?:\(\d+\)|:\d+(?::\d+)?):\s*(?:fatal\s+|catastrophic\s+)?error\b")


def _in_folder_of(error: str, kernel: Path) -> bool:
    """Whether nvcc's error line is in `kernel` or a file beside it: the user's code, not the host program
    built around it."""
    match = _ERROR_PLACE_RE.match(error.strip())
    return bool(match) and Path(match.group("path")).resolve().parent == kernel.resolve().parent


PROOF_BINARY = "sm100_host_proof"


def _proof_entry(kernel: Path) -> Path:
    return cache.cache_root() / "sm100-host-proof" / _key(kernel)


def proof_entry(kernel: Path) -> Path | None:
    """The cache folder of `kernel`'s host proof, keyed once for a run to hand on (the key hashes the kernel,
    its headers and the proof, and asks nvcc its version). None where the proof cannot be built here (no nvcc
    or CUTLASS) or its key cannot be worked out (an unreadable kernel, an nvcc that fails): the proof's own
    run keys it again and says why."""
    if toolchain_missing() is not None:
        return None
    try:
        return _proof_entry(kernel)
    except (UsageError, OSError):
        return None


def refuse_unincludable(kernel: Path) -> None:
    """A kernel path holding a quote cannot be the proof's -include (UsageError): nvcc writes it into an
    `#include "..."` line, where a `"` ends the name ("Stray '"' character") and a `'` mangles it, and the
    error read as the proof's own."""
    if quote := next((mark for mark in "'\"" if mark in str(kernel.resolve())), None):
        raise UsageError(f"{kernel}: CuTe's host proof cannot include a kernel whose path holds {quote} (nvcc's"
                         " -include reads it as part of a quoted name): rename the file or its folder, or pass --no-cute")


def kernel_flags(kernel: Path) -> list[str]:
    """nvcc's arguments that put `kernel` itself, types only, before the proof's code: the file named,
    whatever its name. Its folder is no -I, as in the build: its quoted includes are found beside it all the
    same, and an `#include <x.cuh>` beside it, which the build cannot find, is not found here either."""
    refuse_unincludable(kernel)
    return [*CONFIG_ONLY_FLAGS, "-include", str(kernel.resolve())]


def proof_compile_args(kernel: Path) -> list[str]:
    """nvcc's arguments for the proof of `kernel`, but the output: the include folders the build passes
    (kernels/common, where `#include "../common/nvfp4_gemm_api.h"` resolves for a kernel alone in its
    folder, then a kernels/common/ of yours that is no override, and CUTLASS's) before the kernel itself."""
    includes = [f"-I{path}" for path in include_folders(kernel)]
    return [*HOST_FLAGS, *includes, *kernel_flags(kernel), str(PROOF_SOURCE)]


def include_folders(kernel: Path) -> list[Path]:
    """The proof's -I folders: the build's (flags.include_dirs: the kernel's header_search, then CUTLASS's,
    which the proof's CuTe code needs whether the kernel includes it or not)."""
    return list(dict.fromkeys([*header_search(kernel), *toolchain.cutlass_include_dirs()]))


def proof_binary(kernel: Path, entry: Path | None = None) -> Path:
    """The compiled host program for `kernel`, built on first use into the build cache (into `entry`, its
    folder as proof_entry found it, where given)."""
    folder = entry if entry is not None else _proof_entry(kernel)
    return host_binary(folder, PROOF_BINARY, proof_compile_args(kernel), "the CuTe host proof", kernel)


def proof_needs_compiling(entry: Path | None) -> bool:
    """Whether the host proof whose cache folder is `entry` (proof_entry's) is to be compiled before it runs:
    the minute or more a first `dump --umma` waits. False where it is built, or cannot be (None: the check
    that follows says why)."""
    return entry is not None and not (entry / PROOF_BINARY).is_file()


def _run(command: list[str], timeout_s: float, what: str | None = None) -> subprocess.CompletedProcess[str]:
    """nvcc, or a built program, in this process's working folder (a kernel's folder given relative to it
    is an -I as given), ended with what it started when it runs past `timeout_s` or nvfp4ctl is stopped
    (run_compiler): ending nvcc alone left its cudafe++, cicc and ptxas compiling. Past `timeout_s` it is
    a ToolTimeout naming `what` (default: the program) and the limit; a program that cannot start, a
    UsageError."""
    program = Path(command[0]).name
    try:
        returncode, output = run_compiler(command, None, dict(os.environ), timeout_s)
    except subprocess.TimeoutExpired as error:
        # a compiler that does not finish is a timeout (exit 3), no mistake in the user's input
        ran = program if what is None else f"{what} ({program})"
        raise ToolTimeout(f"{ran} ran past {seconds_text(timeout_s)} and was stopped; the limit is fixed") from error
    except OSError as error:
        raise UsageError(f"could not run {program}: {error}") from error
    return subprocess.CompletedProcess(command, returncode, output)


def _output(kernel: Path, *args: str, entry: Path | None = None) -> str:
    done = _run([str(proof_binary(kernel, entry)), *args], RUN_TIMEOUT_S)
    if done.returncode != 0:
        raise FailuresFound(f"the CuTe host proof failed ({done.returncode}): {done.stdout.strip()[-300:]}")
    return done.stdout


def parse_umma(text: str) -> dict[int, CuteFacts]:
    """Lines of `sm100_host_proof umma` -> facts per config id (CuTe's warning lines are skipped)."""
    facts: dict[int, CuteFacts] = {}
    for line in text.splitlines():
        match = _LINE_RE.match(line.strip())
        if not match:
            continue
        config_id = int(match.group("id"))
        fact = facts.setdefault(config_id, CuteFacts(config_id))
        pairs = dict(_PAIR_RE.findall(match.group("rest")))
        kind = match.group("kind")
        if kind == "config":
            fact.name = pairs["name"]
            fact.tile = tuple(int(x) for x in pairs["tile"].split("x"))  # type: ignore[assignment]
            fact.stages, fact.acc_stages = int(pairs["stages"]), int(pairs["acc_stages"])
            fact.smem_bytes = int(pairs.get("smem_bytes", 0))
        elif kind == "tmem":
            fact.tmem = {name: int(value) for name, value in pairs.items()}
        else:
            setattr(fact, kind, int(pairs["value"], 16))
    return facts


def parse_layout(text: str) -> dict[tuple[int, str], dict[tuple[int, int], list[int]]]:
    """Lines of `sm100_host_proof layout` -> {(config id, "A"/"B"): {(batch, row): offsets per k-block}}."""
    layouts: dict[tuple[int, str], dict[tuple[int, int], list[int]]] = defaultdict(dict)
    for line in text.splitlines():
        match = _SF_RE.match(line.strip())
        if match:
            rows = layouts[(int(match.group("id")), match.group("op"))]
            rows[(int(match.group("l")), int(match.group("row")))] = [int(x) for x in match.group("offsets").split()]
    return dict(layouts)


def cute_umma_facts(kernel: Path, entry: Path | None = None) -> dict[int, CuteFacts]:
    return parse_umma(_output(kernel, "umma", entry=entry))


def cute_scale_layout(kernel: Path, m: int, n: int, k: int, l: int) -> dict[tuple[int, str], dict[tuple[int, int], list[int]]]:
    return parse_layout(_output(kernel, "layout", str(m), str(n), str(k), str(l)))


_SELECT_RE = re.compile(r"^select m=(\d+) n=(\d+) k=(\d+) l=(\d+) id=(-?\d+) implementable=([01]) workspace=(\d+)$")


@dataclass(frozen=True)
class Dispatch:
    config_id: int  # -1: the kernel rejects the shape
    implementable: bool  # CUTLASS's can_implement() on the kernel's own arguments for that config
    workspace_bytes: int


def cute_select(kernel: Path, shapes: list[tuple[int, int, int, int]]) -> dict[tuple[int, int, int, int], Dispatch]:
    """The kernel's own dispatch decision per shape (its select_config and CUTLASS's verdict, on the host)."""
    text = _output(kernel, "select", *(str(x) for shape in shapes for x in shape))
    picks = {}
    for line in text.splitlines():
        if match := _SELECT_RE.match(line.strip()):
            m, n, k, l, config_id, implementable, workspace = (int(x) for x in match.groups())
            picks[(m, n, k, l)] = Dispatch(config_id, bool(implementable), workspace)
    return picks


def toolchain_missing() -> str | None:
    """Why the host proof cannot be built here (no nvcc, no CUTLASS headers), or None."""
    try:
        toolchain.nvcc_path()
        toolchain.cutlass_include_dirs()
    except UsageError as error:
        return str(error)
    return None
