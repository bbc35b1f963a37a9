"""What a tune acts on, resolved once (kernel, arch, knobs, table, shapes, GPUs), and its execution:
pools opened, resume state loaded, the search or the compile-only round run."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nvfp4ctl.build.knobs import FORM
from nvfp4ctl.errors import UsageError
from nvfp4ctl.tune.knobs import KernelKnobs, discover, tunable
from nvfp4ctl.tune.search import SearchSettings, compile_only_builds, one_round, round_size, start_configs
from nvfp4ctl.tune.table import DispatchTable, Shape, files_written, read_table, writable_problem
from nvfp4ctl.words import plural, seconds_text
from nvfp4ctl.workspace import task_file_name

if TYPE_CHECKING:
    from nvfp4ctl.runner.targets import TargetSpec


def no_table_hint() -> str:
    """How a kernel gets a table the winners go into ("Dispatch table" in the tune guide), naming the guide's
    shipped copy: a wheel user has no docs/ folder."""
    from nvfp4ctl.project import shipped

    return f"declare one: `// nvfp4ctl:dispatch file=NAME` in the kernel, {shipped('docs') / 'tune.md'}"


@dataclass(frozen=True)
class TimingSettings:
    criterion: dict[str, float]
    settle_s: float
    input_sets: int


@dataclass
class TuneRun:
    source: Path
    label: str
    chosen_by: str  # where the kernel came from, for the run log: "--kernel", "default for sm_90", ...
    arch: str
    knobs: KernelKnobs
    table: DispatchTable | None
    task: Any
    cases: dict[Shape, Any]
    device: str
    gpus: list[str]
    compile_only: bool
    timeout_s: float
    gpu_name: str
    only: frozenset[str] | None = None  # --knobs, as full names
    timeout_source: str = "default"  # where timeout_s was read, as bench names it ("task.yml benchmark_timeout")
    notes: list[str] = field(default_factory=list)
    write: bool = True  # winners go into the dispatch table (not --no-write)

    @property
    def shapes(self) -> list[Shape]:
        return list(self.cases)

    @property
    def task_label(self) -> str | None:
        """The task.yml the shapes come from and why, as check's first line names it: "dual/task.yml (beside the
        kernel)" from the folder above, "task.yml (found from the current folder)" in dual/."""
        from nvfp4ctl.runner.targets import task_label_and_reason

        return None if self.task is None else task_label_and_reason(self.task)

    def headline(self) -> str:
        knobs = self.knobs.knobs
        searched = f"{len(self.only)} searched" if self.only else f"{len(tunable(knobs))} with a choice"
        where = "compile-only" if self.compile_only else f"{plural(len(self.gpus), 'GPU')} ({self.gpu_name})"
        table = f"table {self.knobs.dispatch.name}" if self.knobs.dispatch else "no dispatch table"
        if self.knobs.dispatch is None and self.write and not self.compile_only:  # said now, not after the whole tune
            table += f", so no winners written ({no_table_hint()})"
        # compile-only times nothing: no limit to name
        limit = "" if self.compile_only else f" · timeout {seconds_text(self.timeout_s)} per candidate and shape ({self.timeout_source})"
        task = "" if self.task_label is None else f" · task {self.task_label}"
        return (f"tune · kernel {self.label} ({self.arch}){task} · {plural(len(knobs), 'knob')}, {searched}"
                f" · {plural(len(self.cases), 'shape')} · {where} · {table}{limit}")

    def progress_total(self) -> int:
        """The progress bar's total as the run starts: the work of its first round (progress.WorkBar grows it
        by what a later round, or the new table, adds once it is known to run)."""
        if self.compile_only:  # it advances once per build, and shapes with one start share their builds
            start = start_configs(self.knobs, self.shapes, self.table)
            shipped = self.knobs.defaults() if self.knobs.shipped_is_start else None
            return len(compile_only_builds(one_round(self.knobs, start, self.only),
                                           lambda config: None if config == shipped else config))
        # a round counts the start per shape; the shipped build one more, none where it is the start's
        shipped = 0 if self.knobs.shipped_is_start else len(self.cases)
        return shipped + round_size(self.knobs, len(self.cases), self.only)


def select_cases(task: Any, which: str) -> dict[Shape, Any]:
    chosen = {"tests": task.tests, "benchmarks": task.benchmarks, "all": (*task.tests, *task.benchmarks)}[which]
    cases: dict[Shape, Any] = {}
    for case in chosen:
        cases.setdefault((case.m, case.n, case.k, case.l), case)
    if not cases:
        raise UsageError(f"{task_file_name(task.path)}: no {which} shapes to tune for")
    return cases


def _default_needs_a_gpu(problem: str) -> str:
    """`--kernel default` without a GPU: the GPU picks nvfp4ctl's kernel, so name those with knobs by path."""
    from nvfp4ctl.build.loader import GPU_ARCH
    from nvfp4ctl.problems import resolve_problem
    from nvfp4ctl.project import shipped

    tunable_kernels = []
    for major, name in sorted(resolve_problem(problem).default_kernels.items()):
        source = shipped("kernels") / name
        try:
            discover(source)
        except (UsageError, OSError):
            continue  # missing, or no knobs: nothing to tune there
        tunable_kernels.append(f"{source} ({GPU_ARCH.get(major, f'sm_{major}x')})")
    if not tunable_kernels:
        return f"--kernel default: nvfp4ctl has no {problem} kernel with knobs; pass --kernel PATH"
    return (f"--kernel default: no CUDA GPU here to pick nvfp4ctl's kernel by; pass its path:"
            f" {' or '.join(tunable_kernels)}")


def resolve_kernel(kernel: Path | None, task: Any, has_gpu: bool) -> TargetSpec:
    from nvfp4ctl.runner.targets import (DEFAULT_BY_NAME, KERNEL, default_target, resolve_target, say_cutlass_lookup,
                                         say_not_text)

    if kernel is None and not has_gpu:
        raise UsageError("no CUDA GPU here: pass --kernel PATH to build its candidates (compile-only)")
    if str(kernel) == DEFAULT_BY_NAME and not has_gpu:  # it would be the torch fallback, which has no knobs
        raise UsageError(_default_needs_a_gpu(task.problem))
    if kernel is not None and str(kernel) != DEFAULT_BY_NAME:
        _refuse_other_than_cu(kernel)
    # the builds run in worker processes, which say nothing (compile_pool): a $CUTLASS_PATH passed over, and a
    # source that is not UTF-8, are said here, by resolve_target for a --kernel path (once: the lookup reads the
    # kernel's build inputs)
    spec = resolve_target(None, kernel, task) if kernel is not None else default_target(task.problem)
    if spec.kind != KERNEL:
        raise UsageError(f"{spec.label}: tune needs a kernel source (.cu) that declares knobs; pass --kernel PATH")
    if kernel is None:
        say_cutlass_lookup(spec)
        say_not_text(spec)
    return spec


def _refuse_other_than_cu(kernel: Path) -> None:
    """UsageError for a --kernel file that is no .cu: resolve_target's advice for it (--submission) is check's
    and bench's, and tune has no --submission; what it tunes is a kernel's declared knobs. A missing file or a
    folder is left to resolve_target, which says so."""
    if not kernel.is_file() or kernel.resolve().suffix == ".cu":
        return
    what = ("a .py submission has none to tune: check or bench it with --submission" if kernel.suffix == ".py"
            else f"{kernel.name} is not one")
    raise UsageError(f"--kernel {kernel}: tune tunes a CUDA kernel source (.cu) that declares knobs"
                     f" (`{FORM}` above `#ifndef NAME`); {what}")


def prepare(kernel: Path | None, which: str, task_path: Path | None, gpus: int | None, compile_only: bool,
            timeout: float | None, only: str | None = None, write: bool = True) -> TuneRun:
    """`timeout`: --timeout; None takes NVFP4CTL_TIMEOUT, else the task's benchmark_timeout, as bench does: a
    candidate is timed on a shape by bench's method, and checked once before."""
    from nvfp4ctl.tune.devices import asking_once

    with asking_once():  # the GPUs spread over and their memory: one nvidia-smi query
        return _prepare(kernel, which, task_path, gpus, compile_only, timeout, only, write)


def _prepare(kernel: Path | None, which: str, task_path: Path | None, gpus: int | None, compile_only: bool,
             timeout: float | None, only: str | None, write: bool) -> TuneRun:
    from nvfp4ctl.build.loader import GPU_ARCH
    from nvfp4ctl.build.read_once import reading_once
    from nvfp4ctl.build.sources import resolve_arch
    from nvfp4ctl.build.toolchain import require_torch, torch_build
    from nvfp4ctl.runner.gpu import first_gpu, gpu_present, run_device
    from nvfp4ctl.runner.load_limit import load_limit
    from nvfp4ctl.runner.targets import task_for_kernel
    from nvfp4ctl.task import BENCHMARK_TIMEOUT, load_task, run_limit
    from nvfp4ctl.tune.devices import VISIBLE, visible_gpus
    from nvfp4ctl.workspace import note_problem

    with reading_once():  # a --kernel and its headers are read once, for its task, its problem and its warnings
        task = task_for_kernel(load_task(task_path), kernel)
        note_problem(task.problem)  # the run log's problem cell, for a tune that stops with an error or Ctrl-C too
        timeout_s, timeout_source, timeout_note = run_limit(task, timeout, BENCHMARK_TIMEOUT)
        load_limit(timeout_s)  # a bad NVFP4CTL_LOAD_TIMEOUT is refused before any build, not in a worker
        device = run_device()
        require_torch()  # every candidate's build and timing needs it: before "no GPU" and any worker starts
        has_gpu = device == "cuda" and gpu_present()
        spec = resolve_kernel(kernel, task, has_gpu)
        knobs = discover(spec.path)
    source, label = spec.path, spec.label
    arch = resolve_arch(source, None, arch_option=False)  # tune has no --arch
    notes: list[str] = [] if timeout_note is None else [timeout_note]
    why_not_timed = None
    if not has_gpu and not compile_only:
        why_not_timed = "no CUDA GPU here"
    elif has_gpu and not compile_only and os.environ.get(VISIBLE) is not None and not visible_gpus():
        has_gpu = False  # nvidia-smi sees GPUs this process's CUDA is told not to: none to time on
        why_not_timed = f"{VISIBLE}={os.environ[VISIBLE]!r} shows no GPU"
    elif not compile_only and not (build := torch_build()).has_cuda:  # a GPU, but no candidate could be imported to time
        why_not_timed = f"this torch has no CUDA ({build.version})"
    if why_not_timed is not None:
        notes.append(f"{why_not_timed}: compile-only (every candidate of one round built and inspected, none timed)")
        compile_only = True
    gpu = first_gpu() if has_gpu else None
    if not compile_only and gpu is not None and GPU_ARCH.get(gpu.major) != arch:
        raise UsageError(f"{label} is an {arch} kernel but this GPU is {gpu.arch}: tune it on such a GPU, or pass --compile-only")
    chosen: list[str] = []
    if not compile_only:
        visible = visible_gpus() or ["0"]
        if gpus is not None and gpus > len(visible):
            raise UsageError(f"--gpus {gpus}: this machine shows {plural(len(visible), 'GPU')}")
        chosen = visible[: gpus or len(visible)]
    table = None
    if knobs.dispatch is not None:
        if knobs.dispatch.is_dir():
            raise UsageError(f"{source.name} names the dispatch file {knobs.dispatch}, which is a folder")
        if not knobs.dispatch.is_file():
            raise UsageError(f"{source.name} names the dispatch file {knobs.dispatch}, which does not exist")
        table = read_table(knobs.dispatch, knobs)
    selected = select_knobs(knobs, only)
    if write and not compile_only and table is not None:  # found now, not after the whole tune
        refuse_writing_the_package(label, source, files_written(knobs, table, selected))
        problem = writable_problem(knobs, table, selected)
        if problem is not None:
            raise UsageError(problem)
    cases = select_cases(task, which)
    if not compile_only:  # a compile-only run makes no inputs: nothing to refuse
        refuse_too_large(task, cases, chosen)
    return TuneRun(source=source, label=label, chosen_by=spec.source, arch=arch, knobs=knobs, table=table, task=task,
                   cases=cases, device=device, gpus=chosen, compile_only=compile_only,
                   timeout_s=timeout_s, gpu_name=gpu.name if gpu else "none", only=selected, notes=notes,
                   timeout_source=timeout_source, write=write)


def refuse_writing_the_package(label: str, source: Path, files: list[Path]) -> None:
    """UsageError where the winners would go into nvfp4ctl's installed package (a wheel's _shipped kernels):
    they would change `--kernel default` for every project of the environment, a reinstall would drop them,
    and a read-only install would refuse them after the whole tune. The checkout's kernels/ are written, as
    tuning the committed table is meant to be."""
    from nvfp4ctl.project import in_installed_package

    inside = [path for path in files if in_installed_package(path)]
    if not inside:
        return
    folder = source.resolve().parent
    # kernels/ of your own, as init makes it; where it holds that folder already, cp -r would nest the copy in it
    into = Path("kernels") if not (Path("kernels") / folder.name).exists() else Path("tuned")
    copied = into / folder.name  # where the cp below puts it: the folder's name keeps its arch (sm90/ is sm_90a)
    raise UsageError(f"{label} is inside nvfp4ctl's installed package: tune would write its winners into"
                     f" {inside[0]}, changing `--kernel default` for every project using this Python environment"
                     " (and a reinstall drops them); copy the kernel folder into your project"
                     f" (`mkdir -p {into.as_posix()} && cp -r {folder} {into.as_posix()}/`) and tune that copy"
                     f" (`--kernel {copied.as_posix()}/{source.name}`), or pass --no-write to report the winners alone")


def refuse_too_large(task: Any, cases: dict[Shape, Any], gpus: list[str]) -> None:
    """The UsageError of the first shape whose inputs and output alone exceed the smallest GPU's memory, before
    any build: each candidate's check would refuse it in its worker, every one failing with the same line."""
    from nvfp4ctl.problems import resolve_problem
    from nvfp4ctl.tune.devices import smallest_memory

    total = smallest_memory(gpus)
    if total is None:  # nvidia-smi could not tell: each candidate's check still refuses it (gpu_pool)
        return
    problem = resolve_problem(task.problem)
    for case in cases.values():
        try:
            problem.refuse_too_large(case, "cuda", total)
        except UsageError as error:
            raise UsageError(f"{task_file_name(task.path)}: {error}") from None


def shape_labels(task: Any, cases: dict[Shape, Any]) -> dict[Shape, str]:
    """Each shape as its problem's label names it, as bench's tables do (the GEMV's "4096x7168 l=8")."""
    from nvfp4ctl.problems import resolve_problem

    problem = resolve_problem(task.problem)
    return {shape: problem.label(case) for shape, case in cases.items()}


def select_knobs(knobs: KernelKnobs, names: str | None) -> frozenset[str] | None:
    """--knobs A,B -> full names; each must have a choice. A knob is named by its full name, by that name without
    the prefix all knobs share, or by its entry name, as tune's labels and tables name it (KernelKnobs.by_name)."""
    if names is None:
        return None
    with_choice = tunable(knobs.knobs)
    chosen = set()
    for name in (part.strip() for part in names.split(",") if part.strip()):
        try:
            knob = knobs.by_name(name)
        except UsageError:
            shown = [knobs.entry_name(k.name) for k in with_choice]  # as the labels name them
            # as resolve_problem says for a mistyped problem: any of the knob's names, in either case
            # (a_buffers is A_BUFFERS mistyped)
            names_by_case = {spelt.lower(): k.name for k in with_choice
                             for spelt in (knobs.entry_name(k.name), knobs.short(k.name), k.name)}
            close = difflib.get_close_matches(name.lower(), list(names_by_case), n=1, cutoff=0.7)
            hint = f"; did you mean {knobs.entry_name(names_by_case[close[0]])!r}?" if close else ""
            raise UsageError(f"--knobs {name}: {knobs.source.name} has no such knob (with a choice:"
                             f" {', '.join(shown)}){hint}") from None
        if knob not in with_choice:
            raise UsageError(f"--knobs {name}: has one value only ({knob.values[0]}): nothing to try")
        chosen.add(knob.name)
    if not chosen:
        raise UsageError("--knobs: name at least one knob")
    return frozenset(chosen)


def execute(run: TuneRun, timing: TimingSettings, budget_s: float | None, rounds: int, fresh: bool,
            on_progress: Any = lambda label, done: None, on_work: Any = lambda count: None) -> Any:
    from nvfp4ctl.bench.session import max_wall_s
    from nvfp4ctl.build.sources import build_inputs
    from nvfp4ctl.build.temporary_folder import require_usable_tmpdir
    from nvfp4ctl.project import cache_root
    from nvfp4ctl.tune.compile_pool import CompilePool, cpu_cores
    from nvfp4ctl.tune.gpu_pool import GpuPool, make_workers
    from nvfp4ctl.tune.session import Evaluator, TuneReport, compile_only, tune
    from nvfp4ctl.tune.state import TuneState, earlier_keys, state_key

    start = start_configs(run.knobs, run.shapes, run.table)
    criterion = {**timing.criterion, "max_wall_s": max_wall_s(run.timeout_s)}
    payload = {"problem": run.task.problem, "rtol": run.task.rtol, "atol": run.task.atol, "criterion": criterion,
               "settle_s": timing.settle_s, "input_sets": timing.input_sets, "device": run.device, "probe": True}
    settings = {"mode": "compile-only" if run.compile_only else "timed", "arch": run.arch,
                "payload": {k: v for k, v in payload.items() if k != "device"}}
    cases = [(c.m, c.n, c.k, c.l, c.seed) for c in run.cases.values()]
    if run.compile_only:
        # no resume state: a compile-only round builds every candidate again, a build-cache hit where one was
        # built before (render.resumed_line counts those), so a file of its builds would be read by nothing
        state = TuneState.nowhere()
    else:
        inputs = build_inputs(run.source).files
        state = TuneState.in_cache(cache_root(), state_key(inputs, cases, run.gpu_name, settings), fresh,
                                   earlier_keys(inputs, cases, run.gpu_name, settings))
    resumed = state.resumed
    report = TuneReport(knobs=run.knobs, shapes=run.shapes, compile_only=run.compile_only, resumed=resumed,
                        resumed_from=state.saved_run if resumed else None,
                        notes=[state.note] if state.note else [], task=run.task_label,
                        labels=shape_labels(run.task, run.cases))
    # While timing, leave a core to each GPU worker and one to this process: a compile hogging every
    # core would stall the workers' kernel launches and blur the timings.
    jobs = cpu_cores() if run.compile_only else max(1, cpu_cores() - len(run.gpus) - 1)
    require_usable_tmpdir()  # else every candidate's compile fails alike, each read as its own compile error
    with CompilePool(run.source, run.arch, jobs=jobs) as compile_pool:
        if run.compile_only:
            evaluator = Evaluator(compile_pool, None, state, run.cases, report, on_progress, on_work)
            compile_only(run.knobs, start, evaluator, run.only, run.arch)
        else:
            with GpuPool(make_workers(run.gpus, run.device, run.timeout_s, run.task.problem), payload,
                         run.timeout_s) as gpu_pool:
                evaluator = Evaluator(compile_pool, gpu_pool, state, run.cases, report, on_progress, on_work)
                tune(run.knobs, start, run.table, evaluator,
                     SearchSettings(rounds=rounds, budget_s=budget_s, only=run.only), write=run.write)
                report.gpu = gpu_pool.gpu or run.gpu_name
                report.gpu_busy_s = dict(gpu_pool.busy_s)
                report.stolen = gpu_pool.stolen
    return report
