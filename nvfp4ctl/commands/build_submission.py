"""`nvfp4ctl build submission.py`: the submission's own extensions (load_inline / load) or CuTe DSL
kernels, compiled without a GPU and reported per kernel, with the compile time against the
leaderboard's 120 s."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text

from nvfp4ctl.build.compiler_errors import display_path
from nvfp4ctl.build.kernel_names import readable_names
from nvfp4ctl.build.read_once import source_text
from nvfp4ctl.build.report import narrower_note, not_needed_note, tensor_op_problem, without_a_note
from nvfp4ctl.build.resources import describe_tensor_op
from nvfp4ctl.build.sources import NO_TENSOR_OP, header_not_text_warning, marks_in, not_text_warning
from nvfp4ctl.console import NORMAL, get_console
from nvfp4ctl.errors import ExitCode, UsageError
from nvfp4ctl.kernel_cells import byte_size, cache_cell, spills_text, time_cell
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.problems import DEFAULT_PROBLEM
from nvfp4ctl.progress_lines import progress_lines
from nvfp4ctl.words import plural

if TYPE_CHECKING:
    from nvfp4ctl.build.submission_build import ExtensionBuild
    from nvfp4ctl.build.submission_sources import Extension, SubmissionSources
    from nvfp4ctl.build.tensor_code_use import UncalledHelper

# "time" is this run's for the unit (nvcc plus torch's flags and the SASS read, or reading a cache hit);
# the budget line below sums nvcc's own time, the part the leaderboard's first run pays
# an arch compiled to PTX alone (code=compute_100a): no SASS, so no op to look for (the cell and the result line)
PTX_ALONE = "PTX alone, not checked"
# an arch without its a (sm_100): the a-arch's op never assembles there, so none is looked for (a note says so)
WITHOUT_A = "none (arch without the a)"
HEADERS = ["unit: kernel", "regs", "static smem", "stack", "spills", "tensor op", "time (this run)", "cache"]


def _one_archs_figures(entry: Path) -> str:
    """The note of a unit of several archs whose report was cached before each arch's ptxas figures were kept
    apart: its figures are one arch's, and which one is not recorded."""
    return (f"regs, static smem, stack and spills are one of its archs', which its cache entry does not name;"
            f" remove {entry} to build it again and read each arch's")


def _op_text(tensor_op) -> Text:
    if tensor_op.ptx_alone:
        return Text(PTX_ALONE)
    if tensor_op.declared_none and not tensor_op.present:
        return Text("none (declared)")
    if tensor_op.not_needed:
        return Text("none (not needed)")
    if tensor_op.present:
        op = tensor_op.shown
        return Text(f"{op} ({describe_tensor_op(op)})", style="green")
    if tensor_op.without_a:
        return Text(WITHOUT_A)
    if not tensor_op.checked:
        return Text("not checked", style="bold red")
    found = ", ".join(f"{op} ({describe_tensor_op(op)})" for op in tensor_op.found) or "none"
    return Text(f"no {tensor_op.expected}; found {found}", style="bold red")


def _ops_text(report) -> Text:
    """A unit's tensor-op cell: its op, or for a unit of several archs (-gencode each), each arch's."""
    if not report.other_arches:
        return _op_text(report.tensor_op)
    return Text("; ").join(Text.assemble(f"{arch}: ", _op_text(check)) for arch, check in report.arch_checks)


def _kernel_rows(name: str, functions, tensor_op: Text, time: str, cache: str) -> list[list[object]]:
    """A row per kernel; for a unit of several archs (-gencode each), a row per kernel and arch, the arch
    named beside the kernel: ptxas gives each arch its own registers, shared memory and spills."""
    kernels = [f for f in functions if f.entry] or [None]
    names = readable_names([f.name for f in kernels if f])
    per_arch = len({f.arch for f in kernels if f}) > 1
    rows = []
    for index, f in enumerate(kernels):
        spills = (f.spill_stores + f.spill_loads) if f else 0
        kernel = (f"{names[index]} ({f.arch})" if per_arch else names[index]) if f else "-"
        rows.append([f"{name}: {kernel}",
                     f.registers if f else "-", byte_size(f.shared_bytes) if f else "-", byte_size(f.stack_bytes) if f else "-",
                     spills_text(spills) if f else "-",
                     tensor_op if index == 0 else "", time if index == 0 else "",
                     cache if index == 0 else ""])
    return rows


NVCC_TIME = "nvcc's own time, measured here; the table's time is this run's, which adds torch's flags and the SASS read"
DSL_TIME = "the run up to its last cute.compile, measured here, as the table's time"


def _budget_line(seconds: float, units: int, failed: int = 0, measures: str = NVCC_TIME,
                 apart: tuple[str, ...] = (), busy_cpu_s: float | None = None) -> tuple[str, bool]:
    """The compile time against the leaderboard's budget, and whether it is past the warning line. A unit
    that failed to compile has no time to budget: it is left out and said so, never counted. `apart`: the
    extensions whose archs were compiled in an nvcc run each, where torch runs one with every -gencode
    (the host code and the headers compiled once): their sum overstates torch's compile, and says so.
    `busy_cpu_s`: nvcc's (a CuTe DSL run's) CPU time where load on this machine inflated the wall time `seconds`: said beside
    it, and the warning judged by it (a loaded 2-core machine took 141 s of wall time for 38 s of CPU)."""
    from nvfp4ctl.build.submission_build import LEADERBOARD_COMPILE_S, compile_budget

    not_counted = f"{plural(failed, 'unit')} that failed to compile not counted" if failed else ""
    if not units and failed:
        return (f"compile: failed ({plural(failed, 'unit')}): no compile time to measure against the leaderboard's"
                f" {LEADERBOARD_COMPILE_S:.0f} s"), False
    if not units:
        return "compile: no device code to compile", False
    fraction, warn = compile_budget(seconds)
    inflated = ""
    if busy_cpu_s is not None:
        cpu_fraction, warn = compile_budget(busy_cpu_s)
        whose = "nvcc's" if measures == NVCC_TIME else "the run's"  # the DSL compiles in the child the run is
        inflated = f", inflated by load here: {whose} CPU time {busy_cpu_s:.1f} s = {cpu_fraction:.0%}"
    line = (f"compile: {seconds:.1f} s for {units} unit{'s' if units != 1 else ''} = {fraction:.0%} of the leaderboard's"
            f" {LEADERBOARD_COMPILE_S:.0f} s for the whole `python submission.py`{inflated} ({measures};"
            " torch import and linking come on top"
            + ("; a cache hit counts its first compile's time: the leaderboard compiles from scratch)"
               if measures == NVCC_TIME else ")")  # CuTe DSL cubins are not cached
            + (f"; {not_counted}" if not_counted else "")
            + (f"; {_overstated(apart)}" if apart else ""))
    return line, warn


def _overstated(apart: tuple[str, ...]) -> str:
    return (f"{', '.join(apart)}: each arch compiled in an nvcc run of its own here, where torch compiles them all in"
            " one (every -gencode, the host code and the headers once), so this sum overstates that compile")


def _arch_text(arches: tuple[str, ...]) -> str:
    return f"arch {arches[0]}" if len(arches) == 1 else f"archs {', '.join(arches)}"


def _refuse_missing_files(sources: SubmissionSources, extension: Extension) -> None:
    """A load() source that is not there, named before the arch is looked for in the code: the arch
    question (a TORCH_CUDA_ARCH_LIST build cannot read: "... pass --arch") came first, and passing --arch only
    led to this."""
    for path in extension.device_files:
        if not path.is_file():
            raise UsageError(f"{display_path(sources.path)}:{extension.line}: load() source {display_path(path)} does not exist")


def build_submission(path: Path, arch: str | None, verbose: bool, python: str | None, problem: str | None = None,
                     announce: Callable[[], None] | None = None) -> Outcome:
    """`problem`: the one the build judges by (the command resolves it as check does); None: the GEMM.
    `announce`: the command's header, said once the file passed its checks (a refusal is one line)."""
    from nvfp4ctl.build.read_once import reading_once

    with reading_once():  # the extensions of one submission share headers: each is read once, not per extension and unit
        return _build_submission(path, arch, verbose, python, problem or DEFAULT_PROBLEM, announce or (lambda: None))


def _refuse_other_arch(path: Path, sources: SubmissionSources, targets: dict[int, tuple[tuple[str, ...], str]],
                       arch: str | None, problem: str) -> list[str]:
    """A UsageError where --arch names an arch the submission's own settings do not build and its code holds
    tensor-core instructions for another (an sm_100a export built with --arch sm_90a), as export refuses a
    kernel written for another arch: building its own arch instead would pass a per-arch gate without building
    that arch. Code without them (none found, or marked `// nvfp4ctl: no-tensor-op`) runs on either arch, so it
    is built for its own with a warning, as is code whose instructions are --arch's own. The code is read as
    --arch's device pass compiles it, its local headers through the helpers it calls (tensor_code_use); the
    warnings returned name each instruction of a header helper nothing calls, which does not count."""
    from nvfp4ctl.build import torch_nvcc
    from nvfp4ctl.build.submission_build import unit_headers
    from nvfp4ctl.build.submission_sources import device_code
    from nvfp4ctl.build.tensor_code_use import relocatable, tensor_code_use
    from nvfp4ctl.commands.export import ours_for_arch
    from nvfp4ctl.export_header import export_lines

    warnings: list[str] = []
    for extension in sources.extensions:
        if arch is None or id(extension) not in targets or arch in (own := targets[id(extension)])[0]:
            continue
        code = device_code(extension)
        if marks_in(code, NO_TENSOR_OP):
            continue
        # its local headers too: a load() kernel's tcgen05 often sits in the helpers it includes
        use = tensor_code_use(code, [(header, source_text(header)) for header in unit_headers(sources, extension)], arch,
                              relocatable(torch_nvcc.shell_words(extension.cuda_flags)))
        warnings += [_uncalled_warning(extension.name, helper, arch) for helper in use.uncalled]
        if use.refused is None:
            continue
        # only a file export wrote is sent back to export; the user's own is theirs to change. Not "export the
        # kernel with --arch": export refuses a kernel written for another arch, so another kernel is the way
        export_again = (f", or export a kernel written for {arch}{ours_for_arch(problem, arch)}"
                        if export_lines(sources.text) is not None else "")
        raise UsageError(f"{display_path(path)} is built for {', '.join(own[0])} ({own[1]}), not for --arch {arch}:"
                         f" its {use.refused[1]} would not run there; pass --arch {use.refused[0]}{export_again};"
                         " nothing was built")
    return warnings


def _runs(sources: SubmissionSources, extension: Extension, arches: tuple[str, ...]) -> tuple[str, ...]:
    """The archs an extension is compiled for, one nvcc run each: those its own flags name are one run (keyed
    by them all, each arch's SASS checked); a TORCH_CUDA_ARCH_LIST's are a run each, as torch adds a -gencode each."""
    return arches[:1] if sources.arches_in_one_run(extension) else arches


def _uncalled_warning(extension: str, helper: UncalledHelper, arch: str) -> str:
    """The warning for another arch's instruction in a header helper the extension's code never calls."""
    where = f"{display_path(helper.header)}:{helper.line}"
    what = helper.needs[1].removesuffix(" instructions")
    if helper.helper is None:
        return (f"{where}: {what} code outside any function or macro {extension}'s code calls: not counted against"
                f" --arch {arch}; guard it with #if __CUDA_ARCH__ if a build for {arch} fails there")
    return (f"{where}: {what} code in {helper.helper}, which {extension}'s code never calls: not counted against"
            f" --arch {arch} (nvcc emits no code for a helper nothing calls)")


def _build_submission(path: Path, arch: str | None, verbose: bool, python: str | None, problem_name: str,
                      announce: Callable[[], None]) -> Outcome:
    from nvfp4ctl.build.submission_sources import find_sources

    console = get_console()
    if path.is_dir():
        raise UsageError(f"{path} is a folder, not a submission: name a .py file in it")
    if not path.exists():
        raise UsageError(f"no such submission: {path}")
    if not path.is_file():
        raise UsageError(f"{path} is not a regular file: a submission is a .py file")
    # __file__ as Python gives it: absolute, symlinks kept (submission.py -> versions/v3.py loads the k.cu
    # beside the link, where `python submission.py` runs), as relative sources resolve beside it too
    as_run = Path(os.path.abspath(path))
    sources = find_sources(as_run, display_path(path))  # the file as check names it
    if not sources.extensions:
        announce()
        if sources.cute_dsl:
            return _build_dsl(as_run, arch or "sm_100a", python, problem_name)
        # Plain Python (init's starter, or a torch-only first try) is a valid submission, not a mistake;
        # one without custom_kernel is check's refusal, so the line does not send the user there
        from nvfp4ctl.errors import UnloadableSubmission
        from nvfp4ctl.runner.entry_point import refuse_broken_submission

        try:
            refuse_broken_submission(as_run, path.name)
            next_step = "; `nvfp4ctl check` runs it as it is"
        except UnloadableSubmission as refusal:
            console.warn(f"{refusal}; `nvfp4ctl check` refuses it as it is")
            next_step = ""
        console.info(f"{path.name}: no load_inline/load call and no CuTe DSL kernel: nothing to compile{next_step}",
                     result=True)
        return Outcome(result="nothing to compile (no load_inline/load call, no CuTe DSL kernel)", target=path)
    from nvfp4ctl.build import torch_nvcc
    from nvfp4ctl.build.submission_build import (build_extension, cutlass_lookup_note, gpu_arch_note, has_build,
                                                 includes_cutlass_anywhere, machine_cutlass_note, refuse_strs_for_lists,
                                                 refuse_unknown_arch, refuse_unreadable, refuse_unsplittable,
                                                 unit_headers)
    from nvfp4ctl.build.temporary_folder import require_places_a_compile_writes

    for extension in sources.extensions:  # before the arch: without the code, an arch question ("pass --arch") misleads
        refuse_unreadable(sources, extension)
        refuse_unsplittable(sources, extension)
        refuse_strs_for_lists(sources, extension)
        refuse_unknown_arch(sources, extension)
        _refuse_missing_files(sources, extension)
    # each extension's own archs: its flags', nvcc's default where torch adds none, else those torch would add
    # (every entry of a TORCH_CUDA_ARCH_LIST: torch compiles each)
    targets = {id(extension): sources.extension_arches(extension, arch)
               for extension in sources.extensions if extension.has_device_code}
    reasons = list(dict.fromkeys(targets.values()))
    uncalled_helpers = _refuse_other_arch(path, sources, targets, arch, problem_name)
    announce()  # the options and the file passed their checks: the header before any warning about them
    for warning in uncalled_helpers:
        console.warn(warning)
    for targeted, why in reasons:
        if arch is not None and targeted != (arch,):
            # the submission's own -gencode/-arch flag or TORCH_CUDA_ARCH_LIST is what `python submission.py`
            # compiles for; building another arch would check code the leaderboard never builds
            console.warn(f"--arch {arch} not used: the submission's own settings decide the arch, here {', '.join(targeted)}"
                         f" ({why})")
    if not targets:  # host code alone compiles for no arch: asking for one ("pass --arch") would be a chore for nothing
        built_for = "host code only"
    elif len(reasons) == 1:
        built_for = f"{_arch_text(reasons[0][0])} ({reasons[0][1]})"
    else:
        built_for = ", ".join(f"{extension.name}: {_arch_text(targets[id(extension)][0])} ({targets[id(extension)][1]})"
                              for extension in sources.extensions if id(extension) in targets)
    arches = ", ".join(dict.fromkeys(target for targeted, _ in reasons for target in targeted))
    console.info(f"{path.name}: {len(sources.extensions)} extension{'s' if len(sources.extensions) != 1 else ''}"
                 f" ({', '.join(e.name for e in sources.extensions)}), {built_for}", style="dim")
    rows: list[list[object]] = []
    failures: list[str] = []
    timed_out: list[str] = []  # units whose nvcc ran past its limit: the build exits 3, as a kernel's does
    total = 0.0  # compile seconds, a cache hit's as its first compile took (its row shows this run's): the leaderboard compiles afresh
    load = _CompileLoad()  # nvcc's CPU time beside `total`, for a machine whose load inflated it
    units = cached = failed = 0  # units: those compiled (or found in the cache), whose time the budget counts
    spilled = 0  # bytes, over every unit: the result line's sum, as a .cu build's
    tensor_ops: list[str] = []  # each unit's, for the result line
    apart: list[str] = []  # extensions of several archs whose compiles the budget sums, where torch runs one nvcc
    fallback_said = False  # torch's flags are read once per process: their fallback is said once, not per unit
    problem = _ProblemOfTask(problem_name)
    notes: list[str] = []  # a missing tensor-core op where the task's problem needs none
    said_not_text: set[Path] = set()  # a load() file or header of several extensions is warned of once
    if any(not has_build(sources, extension, target) for extension in sources.extensions if id(extension) in targets
           for target in _runs(sources, extension, targets[id(extension)][0])):
        require_places_a_compile_writes()
    # an extension compiles for tens of seconds (CUTLASS's for minutes): without a bar, plain lines say which
    with console.progress() as progress, progress_lines(console, len(sources.extensions)) as lines:
        task = progress.add_task("compiling", total=len(sources.extensions))
        for extension in sources.extensions:
            # host code only compiles for none: its step names no arch, and nothing of it is compiled here
            extension_targets, why = targets.get(id(extension), ((arch or "sm_100a",), ""))
            slow = "; CUTLASS takes minutes" if includes_cutlass_anywhere(extension) else ""
            step = (f"compiling {extension.name} ({', '.join(extension_targets)}{slow})" if id(extension) in targets
                    else f"{extension.name} (host code only)")
            runs = _runs(sources, extension, extension_targets)
            if all(has_build(sources, extension, target) for target in runs):
                step = f"{extension.name} ({', '.join(extension_targets)}): built before, taken from nvfp4ctl's build cache"
            progress.update(task, description=step)
            lines.show(step)
            for name in extension.undeclared_functions():
                console.error(f"{display_path(sources.path)}:{extension.line}: {extension.name}'s functions= names {name}, which its"
                              f" cpp_sources never declare: load_inline's generated binding fails to compile")
                failures.append(f"{extension.name}: functions= names {name}, not declared in cpp_sources")
            if id(extension) in targets:
                for target in extension_targets:
                    note = gpu_arch_note(sources, extension, target, why)
                    if note is not None:
                        console.warn(f"{extension.name}: {note}")
            for source in extension.device_files:
                if source not in said_not_text and (not_text := not_text_warning(source)) is not None:
                    console.warn(not_text)
                said_not_text.add(source)
            for header in unit_headers(sources, extension):  # its cache key reads them: no read of their own
                if header not in said_not_text and (not_text := header_not_text_warning(header)) is not None:
                    console.warn(not_text)
                said_not_text.add(header)
            builds = [(target, built) for target in runs for built in build_extension(sources, extension, target)]
            for target, built in builds:
                if target != runs[0]:  # the extension's notes once, whatever its archs
                    built.notes.clear()
                if len(extension_targets) > 1:  # every arch the unit compiles
                    built.unit = f"{built.unit} ({target if len(runs) > 1 else ', '.join(extension_targets)})"
                for note in built.notes:
                    console.warn(f"{extension.name}: {note}")
                if built.torch_fallback is not None and not fallback_said:
                    console.warn(torch_nvcc.fallback_note(built.torch_fallback))
                    fallback_said = True
                if built.unit == "-":
                    continue
                if built.error:
                    failed += 1
                    console.error(built.error)
                    if verbose:
                        console.raw(built.log)
                    why = "compile timeout" if built.timed_out else "compile error"
                    if built.timed_out:
                        timed_out.append(f"{extension.name}: {why}")
                    failures.append(f"{extension.name}: {why}")
                    rows.append([f"{built.unit}: -", "-", "-", "-", "-", Text(why, style="bold red"),
                                 f"{built.seconds:.1f} s", "-"])
                    continue
                units += 1
                cached += built.cached
                total += built.compile_s
                load.add(built)
                report = built.report
                missing_op = not all(check.passes for _, check in report.arch_checks)  # on one of its archs
                if not report.tensor_op.declared_none and not problem.needs_tensor_op():
                    # needed=False in a unit that passes as well: an sm_100's note of sm_100a's MMA is none of its
                    report = replace(report, tensor_op=replace(report.tensor_op, needed=False))
                    if missing_op:
                        notes.append(f"{built.unit}: {not_needed_note(report, problem.name())}")
                rows.extend(_kernel_rows(built.unit, report.functions, _ops_text(report),
                                         time_cell(built.seconds, built.built_meanwhile),
                                         cache_cell(built.cached, built.built_meanwhile)))
                notes.extend(f"{built.unit}: {narrower}" for arch, check in report.arch_checks
                             if (narrower := narrower_note(check, arch)) is not None)
                notes.extend(f"{built.unit}: {plain}" for arch, check in report.arch_checks
                             if (plain := without_a_note(check, arch)) is not None)
                if report.other_arches and not any(f.arch for f in report.functions):
                    notes.append(f"{built.unit}: {_one_archs_figures(report.entry)}")
                spilled += report.spill_bytes
                tensor_ops.extend(_op_word(check) for _, check in report.arch_checks)
                failures.extend(f"{extension.name}: {problem}" for problem in report.problems())
            lookup = cutlass_lookup_note(extension)
            if lookup is not None:  # an export's own CUTLASS lookup: what build used for it, no warning
                notes.append(f"{extension.name}: {lookup}")
            machine = machine_cutlass_note(extension)
            if machine is not None:  # the call's folders bring no CUTLASS: this machine's built it
                notes.append(f"{extension.name}: {machine}")
            if len({target for target, built in builds if built.report is not None and not built.error}) > 1:
                apart.append(extension.name)  # torch's one nvcc run for a source, every -gencode in it
            progress.advance(task)
            lines.advance()
    if rows:  # host code alone has no unit: an empty table says nothing
        console.table(HEADERS, rows, right_align_from=1, whole=(0,))
    for note in notes:
        console.info(f"note: {note}")
    line, warn = _budget_line(total, units, failed, apart=tuple(apart), busy_cpu_s=load.busy_cpu_s())
    said = line + (" — past 60 %: a cold leaderboard machine may time out" if warn else "")
    if warn and console.verbosity >= NORMAL:
        console.warn(said)
    else:  # the result line that sums up the table: -q drops the table and warnings, never this
        console.info(said, result=True)
    for failure in failures:
        console.error(failure)
    if failures:
        first, code = (timed_out[0], ExitCode.TIMEOUT) if timed_out else (failures[0], ExitCode.FAILURES)
        return Outcome(result=f"{plural(len(failures), 'problem')} ({first})", exit_code=code, target=path)
    from nvfp4ctl.build.submission_build import LEADERBOARD_COMPILE_S, compile_budget

    if not units:
        return Outcome(result="host code only: nothing to compile", target=path)
    share = compile_budget(total)[0]
    busy_cpu_s = load.busy_cpu_s()
    ops = ", ".join(dict.fromkeys(tensor_ops))
    result = (f"{plural(units, 'unit')} built for {arches} in {total:.1f} s ({share:.0%} of {LEADERBOARD_COMPILE_S:.0f} s"
              + (", the sum of one nvcc run per arch: more than torch's one run" if apart else "") + ")"
              + (f", inflated by load: {busy_cpu_s:.1f} s of CPU" if busy_cpu_s is not None else "")
              + f", {byte_size(spilled)} of spills, tensor op {ops}" + (f", {cached} cached" if cached else ""))
    console.ok(result)  # as a .cu build's: -q keeps the line that sums up the table it hides
    return Outcome(result=result, target=path)


def _op_word(tensor_op) -> str:
    """A unit's tensor-core op as the result line sums it up: the op, or why there is none."""
    if tensor_op.shown is not None:
        return tensor_op.shown
    if tensor_op.ptx_alone:
        return PTX_ALONE
    if tensor_op.declared_none:
        return "none (declared)"
    if tensor_op.not_needed:
        return "none (not needed)"
    return WITHOUT_A if tensor_op.without_a else f"no {tensor_op.expected}"


class _CompileLoad:
    """nvcc's CPU time over the units the budget counts, said where load on this machine inflated their
    wall time; not where a unit's was not measured (a cache entry older than the measure): a sum
    without it would understate the compile."""

    def __init__(self) -> None:
        self._cpu_s: float | None = 0.0
        self._busy = False

    def add(self, built: ExtensionBuild) -> None:
        self._busy = self._busy or built.compile_busy
        if self._cpu_s is not None:
            self._cpu_s = None if built.compile_cpu_s is None else self._cpu_s + built.compile_cpu_s

    def busy_cpu_s(self) -> float | None:
        return self._cpu_s if self._busy else None


class _ProblemOfTask:
    """The task's problem, loaded once and only where a build lacks its tensor-core op (a build that has it
    never loads it): a problem that does not load (one defined elsewhere) leaves the op needed, as for the GEMM."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._problem: Any | None = None
        self._read = False

    def _get(self) -> Any | None:
        if not self._read:
            self._read = True
            from nvfp4ctl.problems import resolve_problem

            try:
                self._problem = resolve_problem(self._name)
            except (UsageError, ImportError, AttributeError):  # a problem defined elsewhere that does not load
                self._problem = None
        return self._problem

    def needs_tensor_op(self) -> bool:
        problem = self._get()
        return problem is None or getattr(problem, "needs_tensor_op", True)

    def name(self) -> str:
        problem = self._get()
        return problem.name if problem is not None else "the task's problem"


def _build_dsl(path: Path, arch: str, python: str | None, problem: str) -> Outcome:
    from nvfp4ctl.build import cache
    from nvfp4ctl.build.cute_dsl import CHILD_SAID, COMPILE_FAILED, build_dsl, trace_inputs
    from nvfp4ctl.project import cache_root

    console = get_console()
    inputs = trace_inputs(problem)  # custom_kernel gets the tuple of the task's problem
    console.info(f"{path.name}: CuTe DSL kernels, compiled by cute.compile with CUTE_DSL_ARCH={arch} (no GPU needed)",
                 style="dim")
    step = f"running the submission on CPU inputs ({inputs.label}) until cute.compile writes its cubins"
    with console.progress() as progress, progress_lines(console) as lines:
        progress.add_task(step, total=None)
        lines.show(step)
        # the cubins are read before the run ends, so they go where a compile's files go: the cache's tmp/,
        # removed when the build ends (a build killed where nothing can clean up: by a later one's sweep)
        with cache.staging(cache_root() / f"dsl-{path.stem}") as out:
            built = build_dsl(path, arch, out, inputs, python)
    # a Python file says it uses no tensor core on purpose with a comment line of its own, as a .cu does
    declared = bool(marks_in(path.read_text(errors="replace"), NO_TENSOR_OP, comment="#"))
    op = replace(built.tensor_op, declared_none=declared)
    rows = []
    for cubin in built.cubins:
        rows.extend(_kernel_rows(cubin.name.removesuffix(f".{arch}.cubin"), built.functions, _op_text(op),
                                 time_cell(built.seconds, False), "-"))
        break  # one table: cuobjdump's usage covers every cubin's kernels
    console.table(HEADERS, rows, right_align_from=1, whole=(0,))
    if built.child_said:
        console.detail(built.child_said.replace(COMPILE_FAILED, "after compiling, a later cute.compile failed: ")
                       .replace(CHILD_SAID, "after compiling, the run stopped (no GPU): "))
    busy_cpu_s = built.cpu_seconds if built.busy else None
    line, warn = _budget_line(built.seconds, len(built.cubins), measures=DSL_TIME, busy_cpu_s=busy_cpu_s)
    (console.warn if warn else console.info)(line)
    console.detail(f"the run took {built.seconds:.1f} s, {built.cpu_seconds:.1f} s of CPU (the child's, its tools' included)")
    needed = _ProblemOfTask(problem).needs_tensor_op()
    if not op.present and op.expected != "-" and not needed and not declared:
        console.info(f"note: no {op.expected} in the SASS (found: {', '.join(op.found) or 'none'}):"
                     f" none needed for {problem}, which is bound by memory (FFMA and DRAM), not by tensor cores")
    # as a .cu's or load_inline's build: the same words, with the mark a Python file writes
    missing = None if op.expected == "-" else tensor_op_problem(replace(op, needed=needed), arch,
                                                                 mark=f"# nvfp4ctl: {NO_TENSOR_OP}")
    result = (f"CuTe DSL: {plural(len(built.cubins), 'cubin')} for {arch} in {built.seconds:.1f} s"
              + (f", inflated by load: {busy_cpu_s:.1f} s of CPU" if busy_cpu_s is not None else ""))
    if missing is not None:  # the failure's line is above the result, as for a .cu or load_inline build
        console.error(missing)
        return Outcome(result=f"{result}; {missing}", exit_code=ExitCode.FAILURES, target=path, problem=problem)
    console.ok(result)  # as a .cu or load_inline build's: -q keeps the line that sums up the table it hides
    return Outcome(result=result, target=path, problem=problem)
