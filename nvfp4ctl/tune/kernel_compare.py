"""Compile-only candidates compared kernel by kernel. A kernel file may hold many kernels (the sm_90a
one: 21, wgmma instantiations and direct mma.sync kernels); a build's heaviest one can be another
kernel from one candidate to the next, so a row of the heaviest's figures that differs says nothing
of which kernel changed. Every row shows one kernel instead, the reference build's heaviest, and
counts the kernels whose registers or static smem differ from the reference build's."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from nvfp4ctl.kernel_cells import byte_size
from nvfp4ctl.tune.results import COMPILE_ERROR, BuildResult

NAMES_SHOWN = 3  # changed kernels named per candidate before "+N more"


@dataclass(frozen=True)
class Reference:
    """The build every row is compared with, and the kernel whose figures every row shows."""

    config_id: str
    kernel: str  # its kernel with the most registers (readable name)
    kernels: dict[str, tuple[int, int]]  # name -> (registers, static smem bytes)


def reference(builds: Iterable[tuple[str, BuildResult]]) -> Reference | None:
    """The first build (in the table's order: the current table's, then the start's) that compiled and
    knows its kernels, where some build has several; None where each has one (its row says it all) or
    none is known (a build saved before kernels were kept)."""
    built = [(cid, build) for cid, build in builds if build.status != COMPILE_ERROR and build.kernels]
    if not built or all(len(build.kernels) < 2 for _, build in built):
        return None
    cid, build = built[0]
    return Reference(cid, build.kernel, _by_name(build))


def shown(ref: Reference, build: BuildResult) -> tuple[int, int] | None:
    """(registers, static smem) of the reference's kernel in this build; None where it has no such kernel."""
    return _by_name(build).get(ref.kernel)


def new_heaviest(ref: Reference, build: BuildResult) -> tuple[str, int, int] | None:
    """This build's kernel with the most registers among those the reference lacks, as (name, registers,
    static smem): what stands in for the reference's kernel where a knob renames it (a template argument,
    `TileConfig<128, 6>` built as `TileConfig<128, 4>`). None where the build has no new kernel."""
    if build.status == COMPILE_ERROR:
        return None
    new = [kernel for kernel in build.kernels if kernel[0] not in ref.kernels]
    return max(new, key=lambda kernel: kernel[1]) if new else None


@dataclass(frozen=True)
class KernelChanges:
    changed: tuple[str, ...]  # "name 148 -> 64 regs, 16.0 KiB -> 8.0 KiB static smem", in the reference's order
    gone: tuple[str, ...]  # the reference's kernels this build lacks
    new: tuple[str, ...]  # this build's kernels the reference lacks
    of: int  # the reference's kernel count

    def __bool__(self) -> bool:
        """Whether any kernel changed, went or came."""
        return bool(self.changed or self.gone or self.new)

    def cell(self) -> str:
        """"none", "4 of 21", "4 of 21, 10 gone, 1 new"."""
        parts = [f"{len(self.changed)} of {self.of}"] if self.changed else []
        parts += [f"{len(self.gone)} gone"] if self.gone else []
        parts += [f"{len(self.new)} new"] if self.new else []
        return ", ".join(parts) or "none"

    def line(self, limit: int | None = NAMES_SHOWN) -> str:
        """Each change in words, `limit` of them and "+N more" (None: all)."""
        said = [*self.changed, *(f"{name} not in this build" for name in self.gone),
                *(f"{name} new in this build" for name in self.new)]
        if limit is None or len(said) <= limit:
            return "; ".join(said)
        return "; ".join(said[:limit]) + f"; +{len(said) - limit} more (-v: all)"


def changes(ref: Reference, build: BuildResult) -> KernelChanges | None:
    """This build's kernels against the reference's, kernel by kernel; None where it did not compile."""
    if build.status == COMPILE_ERROR or not build.kernels:
        return None
    own = _by_name(build)
    changed = tuple(_change(name, was, own[name]) for name, was in ref.kernels.items()
                    if name in own and own[name] != was)
    return KernelChanges(changed=changed, gone=tuple(name for name in ref.kernels if name not in own),
                         new=tuple(name for name in own if name not in ref.kernels), of=len(ref.kernels))


def _change(name: str, was: tuple[int, int], now: tuple[int, int]) -> str:
    said = []
    if was[0] != now[0]:
        said.append(f"{was[0]} -> {now[0]} regs")
    if was[1] != now[1]:
        said.append(f"{byte_size(was[1])} -> {byte_size(now[1])} static smem")
    return f"{name} {', '.join(said)}"


def _by_name(build: BuildResult) -> dict[str, tuple[int, int]]:
    return {name: (registers, shared) for name, registers, shared in build.kernels}
