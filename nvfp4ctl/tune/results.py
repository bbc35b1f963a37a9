"""What tune learns per candidate: its build (resources, or why it was rejected) and, per shape, its
check verdict and short timing. Plain data, saved in the resume state and ranked for the tables."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from nvfp4ctl.kernel_cells import byte_size

OK, WRONG, CRASH, TIMEOUT, ERROR = "ok", "wrong", "crash", "timeout", "error"
UNSUPPORTED = "unsupported"  # the candidate refused the shape (the bindings' "unsupported shape ..."): its message the constraint
COMPILE_ERROR, SPILLS = "compile error", "spills"


def shape_key(shape: Sequence[Any]) -> str:
    """A task shape as tune names it: 128x256x256 (x2 for l = 2). The GEMV's, whose c is (m, 1, l), has n 1
    (128x1x7168); the grouped GEMM's, whose m, n and k are per group, names each group (96x128x256+128x256x512)."""
    m, n, k, l = shape
    if isinstance(m, (tuple, list)):
        return "+".join(f"{gm}x{gn}x{gk}" for gm, gn, gk in zip(m, n, k)) + (f"x{l}" if l != 1 else "")
    return f"{m}x{1 if n is None else n}x{k}" + (f"x{l}" if l != 1 else "")


@dataclass(frozen=True)
class BuildResult:
    status: str  # OK, COMPILE_ERROR or SPILLS (rejected before any GPU time)
    registers: int = 0
    shared_bytes: int = 0
    stack_bytes: int = 0
    spill_bytes: int = 0
    compile_s: float = 0.0
    cache_hit: bool = False
    message: str = ""  # the first compiler error, or spill_reason(spilled)
    artifact: dict | None = None  # what a GPU worker loads (tune.jobs.load_candidate)
    # each spilling function as (readable name, bytes stored, bytes loaded): the data its reason is
    # rendered from, so a build saved by an older nvfp4ctl is shown in the current wording
    spilled: tuple[tuple[str, int, int], ...] = ()
    # registers and shared_bytes are this kernel's (readable name): the build's with the most registers
    kernel: str = ""
    # each kernel as (readable name, registers, static smem bytes): builds are compared kernel by kernel,
    # since a knob may change one instantiation and leave the heaviest as it was
    kernels: tuple[tuple[str, int, int], ...] = ()
    # sha256 of the build's SASS functions (resources.sass_digest), its source path left out: two builds
    # with one digest run the same instructions (a knob the device code never reads; host code may still
    # launch them differently, the image's data differ); "" where no SASS was dumped (no cuobjdump)
    code_digest: str = ""
    # build.host_code.host_digest of the module: with code_digest and data_digest, the same program (see same_program)
    host_digest: str = ""
    # build.device_data.device_data_digest of the module: what its device image holds besides the SASS
    # (constant banks, initialised globals, kernel attributes, shared memory sizes); "" where not made
    data_digest: str = ""

    @property
    def usable(self) -> bool:
        return self.status == OK

    @property
    def same_program(self) -> tuple[str, str, str] | None:
        """What two builds share where they run the same program, device and host code alike: their
        (SASS, device data, host code) digests; None where any is unknown. Two such builds can be timed
        apart by noise alone. The SASS alone is not enough: a knob only the host code reads (a split count,
        a grid size) changes the launch and not the SASS, and one held in the device image's data (a
        `__constant__` table's values, a `__shared__` array's size) changes what the same instructions read."""
        digests = (self.code_digest, self.data_digest, self.host_digest)
        return digests if self.usable and all(digests) else None

    @property
    def lasting(self) -> bool:
        """Would a rebuild give the same verdict? Only then is it saved for a resume (a rebuild is cheap,
        a candidate wrongly skipped for good is not). The rule: a build that passed, spilled, or failed
        with a compile error the compiler pins on the source (a `file:line:` diagnostic, ptxas's
        `uses too much/many`), unless that error names the machine (a file it could not create or open,
        no space, no memory, a killed tool). Anything else, e.g. the build cache deleted mid-run
        ("Fatal error: can't create .../tmp/..."), nvcc killed or timed out, is tried again on resume."""
        if self.status != COMPILE_ERROR:
            return True
        # the machine's words, not the source's: quoted names (`"signal_done" is undefined`) and a
        # missing #include ("cannot open source file") are the source's own
        said = _SOURCE_INCLUDE.sub("", _QUOTED.sub('""', self.message))
        return bool(_SOURCE_ERROR.search(self.message)) and not _MACHINE_ERROR.search(said)

    @property
    def reason_is_current(self) -> bool:
        """False for a spilling build saved before its spills were kept per function: its message is
        an older nvfp4ctl's sentence and nothing to render the current one from."""
        return self.status != SPILLS or bool(self.spilled)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, payload: dict) -> BuildResult:
        """A saved build; a spill reason is rendered again from its spills, in the current wording."""
        known = {f.name for f in fields(cls)}
        values = {name: value for name, value in payload.items() if name in known}
        values["spilled"] = tuple((str(name), int(stored), int(loaded))
                                  for name, stored, loaded in values.get("spilled") or ())
        values["kernels"] = tuple((str(name), int(registers), int(shared))
                                  for name, registers, shared in values.get("kernels") or ())
        if values.get("status") == SPILLS and values["spilled"]:
            values["message"] = spill_reason(values["spilled"])
        return cls(**values)


def spill_reason(spilled: Sequence[tuple[str, int, int]]) -> str:
    """Each function's spills as the spills column counts them (stores plus loads, build's spill_bytes),
    then the two parts build -v shows."""
    return ", ".join(f"{name} spills {byte_size(stored + loaded)}"
                     f" ({byte_size(stored)} stored, {byte_size(loaded)} loaded)" for name, stored, loaded in spilled)


_SOURCE_ERROR = re.compile(r"^[^\s:][^:\n]*:\d+: |\buses too (?:much|many)\b")  # compiler_errors.first_error's forms
_QUOTED = re.compile(r'"[^"\n]*"|\'[^\'\n]*\'')
_SOURCE_INCLUDE = re.compile(r"cannot open (?:source|include) file", re.IGNORECASE)
_MACHINE_ERROR = re.compile(r"cannot create|can't create|cannot open|could not open|no such file|no space|"
                            r"out of memory|cannot allocate|bad_alloc|memory exhausted|killed|signal|ran past",
                            re.IGNORECASE)


@dataclass(frozen=True)
class Measurement:
    status: str  # OK, WRONG, UNSUPPORTED, CRASH, TIMEOUT, ERROR, or the build's rejection
    us: float = math.inf  # mean per call
    err_us: float = 0.0
    runs: int = 0
    message: str = ""
    gpu: str = ""  # which worker measured it ("GPU 1"), for the log
    # the candidate (config id) whose result this is: one that builds the same program (BuildResult.same_program),
    # checked and timed in its place; "" where this candidate ran itself
    same_code_as: str = ""

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def lasting(self) -> bool:
        """Would the same program give this result again, bar noise? A check's verdict and a time do;
        a crash, a hang or an error may be the machine's, so a twin build is run again rather than given it."""
        return self.status in (OK, WRONG, UNSUPPORTED)

    def to_dict(self) -> dict:
        return asdict(self) | {"us": None if math.isinf(self.us) else self.us}

    @classmethod
    def from_dict(cls, payload: dict) -> Measurement:
        known = {f.name for f in fields(cls)}
        values = {name: value for name, value in payload.items() if name in known}
        return cls(**(values | {"us": math.inf if values.get("us") is None else values["us"]}))


@dataclass(frozen=True)
class Ranked:
    label: str  # the candidate as a diff against the start ("STAGES_PER_CTA_A=7", "start", "current table")
    config_id: str
    result: Measurement


def rank(entries: Iterable[Ranked]) -> list[Ranked]:
    """Fastest first, a candidate given another's result after the one timed; rejected candidates after
    every timed one, in the order they came."""
    entries = list(entries)
    timed = sorted((e for e in entries if e.result.ok), key=lambda e: (e.result.us, bool(e.result.same_code_as)))
    return timed + [e for e in entries if not e.result.ok]


def geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan
