"""build_kernel: cache lookup first, else compile in a staging folder, inspect, and land the entry."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from pathlib import Path

from nvfp4ctl.build import abi, cache, compile, machine, resources, toolchain
from nvfp4ctl.build.read_once import source_bytes, worked_out_once
from nvfp4ctl.build.report import REPORT_FILE, BuildReport
from nvfp4ctl.build.sources import (NO_TENSOR_OP, BuildInputs, build_inputs, checked_source, local_headers, marks_in,
                                    written_for)
from nvfp4ctl.content_digest import content_digest
from nvfp4ctl.errors import UsageError

BUILD_LOG = "build.log"
MODULE = "module"  # importable extension (torch with CUDA)
DEVICE = "device"  # device code only (torch without CUDA: cross-compiling)


def build_mode() -> str:
    return MODULE if toolchain.torch_build().has_cuda else DEVICE


def module_name(source: Path, arch: str, key: str) -> str:
    """A valid identifier (it names the module's PyInit_ symbol), unique per cache entry."""
    stem = re.sub(r"\W", "_", source.stem)
    return f"{'k_' if stem[:1].isdigit() else ''}{stem}_{arch.removeprefix('sm_')}_{key[:12]}"


def build_kernel(source: Path, arch: str, verbose: bool = False, defines: tuple[str, ...] = ()) -> BuildReport:
    """Compile (or find in the cache) `source` for `arch`, with extra `defines` ("NAME=VALUE", part
    of the cache key: same defines, same entry). Raises CompileError with the first real compiler
    error; spills and a missing tensor-core op (unless the kernel declares it uses none) are in
    report.problems(), not raised.
    `verbose` is accepted for the contract; the full log is always kept in the entry's build.log."""
    del verbose
    return _declared(_build(_planned(source, arch, tuple(defines))))


@dataclass(frozen=True)
class _Plan:
    """What one build of a kernel is keyed by: its files read and hashed, the toolchain asked."""
    source: Path  # as checked_source gives it: a link's target
    arch: str
    defines: tuple[str, ...]
    inputs: BuildInputs
    mode: str
    key: str
    entry: Path  # the cache folder of its build
    digest: str  # the run log's content hash of the kernel and its local headers, read when it was keyed


def _planned(source: Path, arch: str, defines: tuple[str, ...]) -> _Plan:
    """The plan of a build, made once within read_once.reading_once: `build` asks has_build for its progress
    line and then builds, and each read and hashed the kernel, its headers and binding."""
    def plan() -> _Plan:
        checked = checked_source(source)
        inputs = build_inputs(checked)
        mode = build_mode()
        key = cache.cache_key(inputs, arch, mode, defines)
        return _Plan(checked, arch, defines, inputs, mode, key, cache.entry_dir(checked, arch, key), _read_digest(checked))

    return worked_out_once(("kernel build", source, arch, defines), plan)


def _build(plan: _Plan) -> BuildReport:
    entry = plan.entry
    if (report := BuildReport.cached(entry, plan.source)) is not None:
        return report
    with cache.locked(entry, f"{plan.source.name} ({plan.arch})"):
        if (report := BuildReport.cached(entry, plan.source)) is not None:  # another process built it while we waited
            return replace(report, built_meanwhile=True)
        with cache.staging(entry) as folder:
            report = _compile_and_inspect(folder, plan.inputs, plan.arch, plan.key, plan.mode, plan.defines)
            cache.land(folder, entry)
    return report.moved_to(entry)


def _read_digest(kernel: Path) -> str:
    """runlog.file_digest of the kernel as this build reads it (source_bytes: the bytes the command keeps),
    not as the file is when the build ends: a kernel overwritten during its compile logs what was built."""
    return content_digest(source_bytes(kernel), [(header.name, source_bytes(header)) for header in local_headers(kernel)])


def built_digest(source: Path, arch: str) -> str | None:
    """The run log's content hash of `source` as its build for `arch` read it; None where it could not be
    planned (the build said why), the file then hashed as it is."""
    try:
        return _planned(source, arch, ()).digest
    except (UsageError, OSError):
        return None


def has_build(source: Path, arch: str) -> bool | None:
    """Whether `source` as it is now (its headers and binding too) has a build for `arch` in the cache
    under this toolchain: an entry lands only once its compile succeeded, so False is "never built
    here, or its build failed" (or its report is damaged: the build makes it again). Files and `nvcc
    --version` only, nothing compiled; None where the toolchain cannot be read (no nvcc). The file
    build_kernel builds: a link's target, named by it."""
    try:
        return BuildReport.cached(_planned(source, arch, ()).entry, source) is not None
    except (UsageError, OSError):
        return None


def _declared(report: BuildReport) -> BuildReport:
    """The report with what the source says of itself (`// nvfp4ctl: no-tensor-op`, the arch it is written
    for), read now rather than stored: a cache entry made before a mark's meaning changed still reads it right."""
    from nvfp4ctl.build.tensor_code_use import kernel_other_arch_code

    code = report.source.read_text(errors="replace")  # one read for both marks
    declared = bool(marks_in(code, NO_TENSOR_OP))
    op = replace(report.tensor_op, declared_none=declared, written_for=written_for(report.source, code))
    if op.narrower is not None:  # an mma.sync where the arch's widest op is missing: the kernel's, or a side path's?
        op = replace(op, other_arch_code=kernel_other_arch_code(report.source, report.arch, code))
    return replace(report, tensor_op=op)


def _compile_and_inspect(folder: Path, inputs: BuildInputs, arch: str, key: str, mode: str,
                         defines: tuple[str, ...] = ()) -> BuildReport:
    started, cpu_before = time.perf_counter(), machine.own_and_children_cpu_seconds()
    name = module_name(inputs.kernel, arch, key) if mode == MODULE else None
    if name is not None:
        try:
            compiled = compile.build_module(folder, inputs, arch, name, defines)
        except compile.CompileTimeout:  # a step stopped at its limit says nothing of the kernel's C ABI
            raise
        except compile.CompileError as failed:
            # A kernel without the C ABI compiles and links, then fails at import on an undefined
            # symbol: name what it lacks, as a build without CUDA torch does, not the loader's words.
            kernel_object = compile.kernel_object(folder, inputs)
            if kernel_object.is_file():
                _require_abi(inputs, compile.Compiled(log=failed.log, kernel_object=kernel_object))
            raise
    else:
        compiled = compile.build_device_code(folder, inputs, arch, defines)
    # the compiler's command names the kernel's path: bytes of a name that are not UTF-8 go back as they came
    (folder / BUILD_LOG).write_text(compiled.log, errors="surrogateescape")
    checked, abi_cpu_before = time.perf_counter(), machine.own_and_children_cpu_seconds()
    _require_abi(inputs, compiled)
    abi_s = time.perf_counter() - checked  # not the kernel's compile: left out of its time
    abi_cpu_s = machine.own_and_children_cpu_seconds() - abi_cpu_before  # nm's and the header probe's, left out alike
    sass = resources.dump_sass(compiled.kernel_object)
    if sass is not None:
        resources.save_sass(folder, sass)
    compile_s = round(time.perf_counter() - started - abi_s, 2)
    # the CPU time over the same span (the build child, ninja, nvcc's tools, the SASS dump, torch's import
    # here): wall time on a loaded machine says as much about the neighbours as about the kernel
    compile_cpu_s = round(machine.own_and_children_cpu_seconds() - cpu_before - abi_cpu_s, 2)
    report = BuildReport(
        source=inputs.kernel,
        arch=arch,
        key=key,
        entry=folder,
        module_name=name,
        functions=resources.parse_ptxas(compiled.log),
        tensor_op=resources.check_tensor_op(arch, sass),
        compile_s=compile_s,
        compile_cpu_s=compile_cpu_s,
        compile_busy=machine.busy_while(compile_s, compile_cpu_s),
    )
    report.save()
    _drop_intermediates(folder)
    return report


def _require_abi(inputs: BuildInputs, compiled: compile.Compiled) -> None:
    """The binding calls the problem's C ABI functions; a kernel that does not define them (or
    defines them with other parameters) links (a shared library may leave symbols open) and fails
    only at import, or on the leaderboard."""
    missing = abi.missing_abi(inputs, compiled.kernel_object)
    if missing is not None:
        raise compile.CompileError(missing, compiled.log)


def _drop_intermediates(folder: Path) -> None:
    """Objects and ninja state are not needed once the module and the report exist."""
    keep = {BUILD_LOG, resources.SASS_FILE, REPORT_FILE}
    for path in folder.iterdir():
        if path.is_file() and path.name not in keep and path.suffix != ".so":
            path.unlink()
