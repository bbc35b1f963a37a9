"""What a build produced: resource usage per function, the tensor-core op found in the SASS, timing."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from nvfp4ctl.build.arch_names import gencode_flag
from nvfp4ctl.build.sources import NO_TENSOR_OP  # sources imports nothing of the build's reports

REPORT_FILE = "report.json"
# mma.sync's SASS (HMMA.16816.F32, IMMA, QMMA for fp8, OMMA for fp4): a tensor-core op on every arch since
# sm_80, narrower than the arch's own (wgmma's HGMMA on sm_90a, tcgen05's UTCOMMA on sm_100a)
MMA_SYNC_OP = re.compile(r"^(?:HMMA|IMMA|OMMA|QMMA)\b")


@dataclass(frozen=True)
class FunctionUsage:
    """One function's line in `ptxas -v`: registers and static shared memory exist for kernels only."""

    name: str  # mangled, as ptxas prints it
    entry: bool  # a __global__ kernel (ptxas "Compiling entry function")
    registers: int = 0
    shared_bytes: int = 0
    stack_bytes: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    # the arch ptxas compiled these figures for ("" in a report cached before it was recorded): a unit of
    # several -gencode has a FunctionUsage per arch for each function
    arch: str = ""


@dataclass(frozen=True)
class TensorOpCheck:
    expected: str  # "HGMMA" on sm_90a, "UTCOMMA.4X" (block-scaled e2m1, block-16 scales) on sm_100a
    found: tuple[str, ...]  # distinct tensor-core mnemonics in the SASS, e.g. ("HGMMA.64x128x16.F32",)
    match: str | None  # the first of them that is the expected op
    checked: bool  # False when cuobjdump/nvdisasm were not available
    declared_none: bool = False  # the kernel says it uses no tensor core (`// nvfp4ctl: no-tensor-op`)
    # False: the problem built for needs none (the GEMV, bound by memory): a missing op is a note (not_needed)
    needed: bool = True
    ptx_alone: bool = False  # the arch was compiled to PTX alone (code=compute_100a): no SASS to check
    # (arch, what says so) the source is written for (sources.written_for): an sm90/ kernel built for sm_100a
    # lacks UTCOMMA because it is the wrong kernel for the arch, not one without tensor cores
    written_for: tuple[str, str] | None = None
    # (arch, what) of another arch's own tensor-core instructions the source compiles for that arch (wgmma for
    # sm_90a: tensor_code_use.other_arch_code): an mma.sync beside them is that kernel's side path, not this
    # arch's MMA. Read from the source with written_for, never stored
    other_arch_code: tuple[str, str] | None = None
    # the arch is a plain one (sm_100, sm_90: torch's own on a GPU, where no arch is named), where the a-arch's
    # op (`expected`, tcgen05's or wgmma's) never assembles: named in a note, never demanded. Read from the arch
    # (without_its_a), never stored
    without_a: bool = False

    @property
    def passes(self) -> bool:
        """Nothing to fail the build for on this arch: its op is there, it has no SASS to hold one, or the arch
        cannot hold it (without its a)."""
        return self.present or self.ptx_alone or self.without_a

    @property
    def present(self) -> bool:
        """A tensor-core op of this arch is there: its widest, or mma.sync's (narrower)."""
        return self.match is not None or self.narrower is not None

    @property
    def narrower(self) -> str | None:
        """The mma.sync op (HMMA) of a SASS without the arch's widest MMA: tensor cores all the same, accepted
        with a note (narrower_note); None where the widest is there, or the source holds another arch's own
        instructions (an sm_90a wgmma kernel built for sm_100a keeps only its mma.sync side path)."""
        if self.match is not None or self.other_arch_code is not None:
            return None
        return next((op for op in self.found if MMA_SYNC_OP.match(op)), None)

    @property
    def shown(self) -> str | None:
        """The op the tensor-op column shows: the arch's widest, else mma.sync's."""
        return self.match or self.narrower

    @property
    def not_needed(self) -> bool:
        """No tensor-core op found where the problem needs none and the source did not say so itself."""
        return not self.needed and not self.present and not self.declared_none


@dataclass(frozen=True)
class BuildReport:
    source: Path
    arch: str
    key: str
    entry: Path  # the cache folder holding the module, report.json, build.log, kernel.sass.gz
    module_name: str | None  # None when only device code was built (torch without CUDA)
    functions: tuple[FunctionUsage, ...]
    tensor_op: TensorOpCheck
    compile_s: float  # the compile that produced this entry
    cache_hit: bool = False
    compile_cpu_s: float | None = None  # the compiler's, its tools' and build's own CPU time then (None: not measured)
    compile_busy: bool = False  # load inflated compile_s (machine.busy_while): compile_cpu_s is the fairer figure
    # each other arch the same nvcc run compiled (a submission's several -gencode), checked against its own SASS;
    # what the source declares and the problem needs (declared_none, needed) are tensor_op's
    other_arches: tuple[tuple[str, TensorOpCheck], ...] = ()
    # a hit on an entry another process built while this one waited for the cache lock (this run's, not stored)
    built_meanwhile: bool = False

    @property
    def arch_checks(self) -> tuple[tuple[str, TensorOpCheck], ...]:
        """(arch, its tensor-op check) of every arch built, `arch` first."""
        source_says = {"declared_none": self.tensor_op.declared_none, "needed": self.tensor_op.needed,
                       "written_for": self.tensor_op.written_for, "other_arch_code": self.tensor_op.other_arch_code}
        return ((self.arch, self.tensor_op),
                *((arch, replace(check, **source_says)) for arch, check in self.other_arches))

    @property
    def module_path(self) -> Path | None:
        return self.entry / f"{self.module_name}.so" if self.module_name else None

    @property
    def kernels(self) -> tuple[FunctionUsage, ...]:
        return tuple(f for f in self.functions if f.entry)

    @property
    def main_kernel(self) -> FunctionUsage | None:
        """The heaviest kernel (most registers): the GEMM, not a helper like a zero-fill."""
        return max(self.kernels, key=lambda f: (f.registers, f.shared_bytes), default=None)

    def named_kernels(self) -> list[tuple[str, FunctionUsage]]:
        """Each kernel with its name as -v's table gives it: the names are read together with every other
        function's, so two instantiations of one template never read alike."""
        from nvfp4ctl.build.kernel_names import readable_names

        names = readable_names([f.name for f in self.functions])
        return [(name, f) for name, f in zip(names, self.functions) if f.entry]

    @property
    def spill_bytes(self) -> int:
        return sum(f.spill_stores + f.spill_loads for f in self.functions)

    @property
    def stack_bytes(self) -> int:
        return max((f.stack_bytes for f in self.functions), default=0)

    def problems(self) -> list[str]:
        """Reasons this build is not acceptable (the command exits 1 on any)."""
        found: list[str] = []
        if self.spill_bytes:
            from nvfp4ctl.build.kernel_names import readable_names

            # named as the tables name them (-v's, build submission.py's, tune's): spill_kernel, not
            # ptxas's _Z12spill_kernelPKfP6__halfi
            names = readable_names([f.name for f in self.functions])
            per_arch = len({f.arch for f in self.functions}) > 1  # a unit of several archs: each arch's spills
            spilled = ", ".join(
                f"{name}{f' on {f.arch}' if per_arch else ''} ({f.spill_stores} B stores, {f.spill_loads} B loads)"
                for name, f in zip(names, self.functions)
                if f.spill_stores or f.spill_loads
            )
            found.append(f"register spills in {spilled}")
        # "not checked" is one line however many archs: each arch's would repeat it
        missing = dict.fromkeys(tensor_op_problem(check, arch) for arch, check in self.arch_checks)
        return found + [problem for problem in missing if problem is not None]

    def save(self) -> None:
        payload = asdict(self)
        payload.update(source=str(self.source), entry=None, cache_hit=None)  # set again when read
        del payload["built_meanwhile"]
        for check in [payload["tensor_op"], *(check for _, check in payload["other_arches"])]:
            del check["declared_none"]  # the source's own say, read again on each load (builder)
            del check["needed"]  # the problem's, which the command knows, not the build
            del check["written_for"]  # the source's own say, as declared_none
            del check["other_arch_code"]  # the source's, as written_for
            del check["without_a"]  # the arch's, read from it on each load
        (self.entry / REPORT_FILE).write_text(json.dumps(payload, indent=1))

    @classmethod
    def load(cls, entry: Path, source: Path) -> BuildReport:
        """A cached report; `source` is the file asked for now (same bytes, maybe another path)."""
        payload = json.loads((entry / REPORT_FILE).read_text())
        return cls(
            source=source,
            arch=payload["arch"],
            key=payload["key"],
            entry=entry,
            module_name=payload["module_name"],
            functions=tuple(FunctionUsage(**f) for f in payload["functions"]),
            tensor_op=_check(payload["tensor_op"], payload["arch"]),
            compile_s=payload["compile_s"],
            cache_hit=True,
            compile_cpu_s=payload.get("compile_cpu_s"),  # absent from entries made before it was measured
            compile_busy=payload.get("compile_busy", False),
            other_arches=tuple((arch, _check(check, arch)) for arch, check in payload.get("other_arches", ())),
        )

    @classmethod
    def cached(cls, entry: Path, source: Path) -> BuildReport | None:
        """load's report where the entry holds one; None where it holds none, or one that is no report (cut
        short by a full disk or a killed write, edited by hand): a cache miss, so the build compiles again and
        lands over the entry, as the calibration and tune-state caches take a damaged file."""
        try:
            return cls.load(entry, source)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def moved_to(self, entry: Path) -> BuildReport:
        return replace(self, entry=entry)


def _check(saved: dict, arch: str) -> TensorOpCheck:
    # an entry saved before without_a was known holds it, saved as False for an sm_100 built then
    return TensorOpCheck(**{**saved, "found": tuple(saved["found"]), "without_a": without_its_a(arch)})


def tensor_op_problem(op: TensorOpCheck, arch: str, mark: str = f"// nvfp4ctl: {NO_TENSOR_OP}") -> str | None:
    """Why a build's tensor-core op is not acceptable (the command exits 1), with the `mark` line that
    declares code without tensor cores on purpose (`# nvfp4ctl: no-tensor-op` in a CuTe DSL submission's
    Python); None where it is there, declared absent, or not needed by the problem."""
    if op.declared_none or not op.needed or op.ptx_alone or op.without_a:
        # a plain-CUDA baseline, a problem bound by memory, PTX alone, or an arch without its a: nothing to expect
        return None
    if not op.checked:
        return "tensor-core op not checked: cuobjdump/nvdisasm not found (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)"
    if op.present:
        return None
    seen = ", ".join(op.found) if op.found else "no tensor-core op at all"
    if op.written_for is not None and op.written_for[0] != arch:
        own, why = op.written_for
        return f"no {op.expected} in the {arch} SASS (found: {seen}): an {own} kernel ({why}) built for {arch}; build it with --arch {own}"
    if op.other_arch_code is not None:
        own, what = op.other_arch_code
        return (f"no {op.expected} in the {arch} SASS (found: {seen}): its {what.removesuffix(' instructions')} code is"
                f" {own}'s, which {arch} does not run; build it with --arch {own}")
    return (f"no {op.expected} in the {arch} SASS (found: {seen}; a kernel without tensor cores on purpose says so"
            f" with a line `{mark}`)")


WIDEST_MMA = {"sm_90a": "wgmma", "sm_100a": "tcgen05.mma"}  # what compiles to each arch's expected op
ARCH_GPU = {"sm_90a": "H100", "sm_100a": "B200"}  # the GPU GPU MODE's NVFP4 problems run each arch on


def without_its_a(arch: str) -> bool:
    """sm_100 or sm_90: the plain arch of one whose widest MMA (tcgen05.mma, wgmma) needs the a."""
    return arch not in WIDEST_MMA and arch + "a" in WIDEST_MMA


def widest_mma_arch(arch: str) -> str:
    """The arch whose widest MMA `arch`'s check names: sm_100a for sm_100, which cannot assemble it itself."""
    return arch + "a" if without_its_a(arch) else arch


def narrower_note(op: TensorOpCheck, arch: str) -> str | None:
    """The note of a build whose tensor-core op is mma.sync's (narrower), not the arch's widest; None otherwise."""
    if op.narrower is None:
        return None
    owner = widest_mma_arch(arch)
    widest = WIDEST_MMA.get(owner)
    return (f"its tensor-core op is {op.narrower} (mma.sync), not {owner}'s widest MMA {op.expected}"
            f"{f' ({widest})' if widest else ''}")


def without_a_note(op: TensorOpCheck, arch: str) -> str | None:
    """The note of a build for a plain arch (sm_100) of code that may want the GPU's widest MMA, which only
    its a-arch assembles; None where the arch has its a, or the code or the problem wants no tensor core."""
    if not without_its_a(arch) or op.declared_none or not op.needed:
        return None
    owner = widest_mma_arch(arch)
    return (f"built for {arch}, without the a: the {ARCH_GPU[owner]}'s widest MMA, {WIDEST_MMA[owner]}"
            f" ({op.expected}), needs {owner} and never assembles for {arch}, so none is asked of the build; to"
            f" use it, name the arch: {gencode_flag(owner)}")


def not_needed_note(report: BuildReport, problem: str) -> str:
    """The note that replaces the failure of a build with no tensor-core op for a problem that needs none (of its
    first arch without one, where it holds several)."""
    arch, check = next(((arch, check) for arch, check in report.arch_checks if not check.passes), report.arch_checks[0])
    seen = ", ".join(check.found) or "no tensor-core op"
    return (f"no {check.expected} in the {arch} SASS (found: {seen}): none needed for {problem},"
            " which is bound by memory (FFMA and DRAM), not by tensor cores")
