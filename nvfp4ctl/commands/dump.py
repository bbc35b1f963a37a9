"""`nvfp4ctl dump`: what the B200 kernel's tensor-core instructions see, without (or with) a B200.

--umma     per dispatch config: instruction and shared-memory descriptors, field by field, CuTe's
           values against the values expected from the config (no GPU needed). With --idesc,
           --desc-a, --desc-b, --tmem-* (the user's own values) and/or --mma (a stated config): those
           values decoded and checked; --simulate runs them through the UMMA model on real inputs.
--layout   where scale (row, k-block) lives in the permuted tensor, and proof on real inputs that
           sfa_permuted / sfb_permuted equal to_blocked(reference scales).
--runtime  on an SM100 GPU: a debug build prints what CTA 0 uses; compared with the expectation.
"""

from __future__ import annotations

import re
import tempfile
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from collections.abc import Iterator
from typing import Annotated, Any, Optional

import typer
from rich.text import Text

from nvfp4ctl.commands.umma_view import hexes as _hexes
from nvfp4ctl.commands.umma_view import show_user_umma
from nvfp4ctl.console import get_console
from nvfp4ctl.errors import ExitCode, UsageError, os_reason
from nvfp4ctl.not_text import packed_or_wide
from nvfp4ctl.options import integer, parse_shape, path
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.problems.fields import MAX_SEED
from nvfp4ctl.project import BYO_KERNEL_DOC
from nvfp4ctl.runner.gpu import run_device
from nvfp4ctl.runner.targets import DEFAULT_BY_NAME
from nvfp4ctl.words import first_few, plural

DEFAULT_SEED = 1111
# --json's "version", as lint's document carries one: raised when a key changes meaning or goes away, so a
# script sees the change rather than misreading it (layout.shape went from a list to sizes by name unannounced)
JSON_VERSION = 1
# a --from-log line longer than this is no line a kernel printed (those are a few hundred characters): the
# file is refused there, not read on until a line break that may never come
MAX_LOG_LINE_CHARS = 1 << 20


def _status(ok: bool, checked: bool = True) -> Text:
    if not checked:
        return Text("expected", style="dim")
    return Text("ok", style="green") if ok else Text("MISMATCH", style="bold red")


def _check_step_counts(values: Any, config: Any) -> None:
    """One value per K step of a K tile: more than the config has would be silently dropped."""
    for option, given in (("--desc-a", values.desc_a), ("--desc-b", values.desc_b), ("--tmem-sfa", values.tmem_sfa),
                          ("--tmem-sfb", values.tmem_sfb)):
        if len(given) > config.k_steps:
            raise UsageError(f"{option} given {len(given)} times; a K tile of {config.block_k} with MMA K={config.k} has"
                             f" {config.k_steps} K steps (--block-k sets the K tile)")


def _task_in_use(task_path: Path | None) -> Any | None:
    """The task --umma and --runtime are judged by; None where none can be read and none was named (an
    unreadable task file is check's business; the GEMM's kernel is what dump reads then)."""
    from nvfp4ctl.task import load_task

    try:
        return load_task(task_path)
    except UsageError:
        if task_path is not None:
            raise  # named on purpose: say what is wrong with it
        return None


def _refuse_another_problem(loaded: Any | None) -> None:
    """The kernel --umma reads when none is named is nvfp4ctl's CUTLASS kernel for the GEMM, the only
    problem it ships one for: in a GEMV, grouped or dual GEMM folder it would check the GEMM's kernel as
    if it were the task's."""
    from nvfp4ctl.problems import DEFAULT_PROBLEM
    from nvfp4ctl.umma.configs import KERNEL_FILE
    from nvfp4ctl.workspace import task_file_name

    if loaded is None or loaded.problem == DEFAULT_PROBLEM:
        return
    raise UsageError(f"dump --umma reads nvfp4ctl's CUTLASS sm_100a kernel for {DEFAULT_PROBLEM}"
                     f" (kernels/{KERNEL_FILE.as_posix()}), but {task_file_name(loaded.path)} is for {loaded.problem},"
                     " for which nvfp4ctl has no such kernel; pass the values your kernel uses (--idesc, --desc-a,"
                     " --desc-b, --tmem-*, --mma) or --from-log FILE, or --kernel PATH for a CUTLASS kernel of yours")


def _refuse_runtime_for_another_problem(loaded: Any | None, kernel: Path | None) -> None:
    """--runtime builds any kernel with the GEMM's binding and runs it on the GEMM's inputs, so it is the
    GEMM's alone, as check --dump is. The task is check's for the kernel (task_for_kernel): where nvfp4ctl's
    own GEMM task stands in, a kernel including another problem's API header is judged by that problem."""
    from nvfp4ctl.problems import DEFAULT_PROBLEM, refuse_gemm_only
    from nvfp4ctl.runner.targets import task_for_kernel

    if loaded is not None:
        refuse_gemm_only(f"dump --runtime runs a debug build of an {DEFAULT_PROBLEM} kernel",
                         task_for_kernel(loaded, kernel).problem)


def _refuse_kernel_without_umma_configs(kernel: Path) -> None:
    """--umma lists a CUTLASS sm_100a kernel's dispatch configs: an sm_90a kernel has no tcgen05 MMA (wgmma
    takes descriptors of another format), and a kernel without a ConfigById table has no configs to list (parse_configs says
    so, with the way to check a hand-written kernel's own values)."""
    from nvfp4ctl.build.sources import written_for
    from nvfp4ctl.umma.configs import parse_configs

    arch = written_for(kernel)
    if arch is not None and arch[0] == "sm_90a":
        raise UsageError(f"{kernel} is an sm_90a kernel ({arch[1]} says so): sm_90a has no tcgen05 MMA, so no UMMA"
                         " descriptors to check (wgmma's are another format); dump --umma is for sm_100a tcgen05 kernels")
    parse_configs(kernel)


def _kernel_problem_name(kernel: Path) -> str:
    """"nvfp4_gemm kernel": whose C ABI the kernel implements, for the line saying what --umma checks."""
    from nvfp4ctl.build.sources import kernel_problem

    try:
        problem = kernel_problem(kernel)
    except OSError:
        return "kernel"  # the check itself says what is wrong with the file
    return f"{problem.name} kernel" if problem is not None else "kernel of no problem's API header"


# the listing's smem_a and smem_b are equal: both are CuTe's template, not the kernel's run-time words
SMEM_AT_ADDRESS_0 = ("smem_a, smem_b, smem_a_k1: stage 0's descriptors with each operand's buffer placed at shared"
                     " address 0 (on the host CuTe cannot take a real shared address), so start holds the K step's"
                     " offset alone; the kernel's own carry each buffer's address, A's and B's apart")


def _show_umma(kernel: Path, use_cute: bool, payload: dict[str, Any], as_json: bool) -> tuple[str, bool]:
    from nvfp4ctl.umma.crosscheck import check_kernel, to_json
    from nvfp4ctl.progress_lines import ProgressLines, progress_lines
    from nvfp4ctl.umma.host_proof import proof_entry, proof_needs_compiling

    console = get_console()
    what = _kernel_problem_name(kernel)
    if not as_json:
        console.info(f"umma: the dispatch configs of {kernel} ({what})", style="bold")
    waiting: AbstractContextManager[object] = nullcontext()
    lines = ProgressLines(None)
    entry = proof_entry(kernel) if use_cute else None  # keyed once: the key hashes every header and asks nvcc
    if proof_needs_compiling(entry):  # else the first run is a minute or more of silence
        console.note(f"umma: compiling CuTe's host proof for {kernel.name} (once per kernel and toolchain, about"
                     " 1-2 minutes on 2 cores; --no-cute skips it and shows the expected values only)")
        waiting = console.status("compiling CuTe's host proof")
        lines = progress_lines(console)  # no spinner without a terminal: a line now and then instead
        lines.said_elsewhere("compiling CuTe's host proof")
    with waiting, lines:
        checks, note = check_kernel(kernel, use_cute, entry)
    if note:
        console.warn(note)
    payload["umma"] = {"kernel": str(kernel), "kernel_of": what.removesuffix(" kernel"), "note": note,
                       "smem_descriptors": SMEM_AT_ADDRESS_0, "configs": [to_json(check) for check in checks]}
    if not as_json:
        console.info(SMEM_AT_ADDRESS_0, style="dim")
        for check in checks:
            config = check.config
            stages = f", {check.stages} stages, {(check.smem_bytes or 0) // 1024} KiB smem" if check.stages else ""
            console.info(f"config {config.label()}  ({config.use}{stages})", style="bold")
            console.info("  " + "  ".join(f"{name} 0x{value:0{8 if name == 'idesc' else 16}x}"
                                          for name, value in check.raw.items()))
            rows = [(row.descriptor, row.field, row.bits, row.meaning, "-" if row.actual is None else row.actual,
                     row.expected, _status(row.ok, check.checked)) for row in check.rows]
            console.table(["desc", "field", "bits", "meaning", "value", "expected", "status"], rows,
                          right_align_from=4)
            for problem in check.problems:
                console.fail(f"  {problem}")
    mismatches = sum(check.mismatches for check in checks)
    checked = "" if all(check.checked for check in checks) else " (not cross-checked)"
    # each by name, as for your own values: -q drops the tables, and the run log keeps this line alone
    findings = [finding for check in checks for finding in _findings(check)]
    named = f" ({first_few(findings)})" if findings else ""
    return (f"umma: {plural(len(checks), 'config')}, {plural(mismatches, 'mismatch', 'mismatches')}{named}{checked}",
            mismatches == 0)


def _findings(check: Any) -> list[str]:
    """A config's mismatches, each naming its config (0:m128_n64) where its words do not already: its wrong
    fields (idesc.n_dim = 16, expected 8), then what is no one field (reserved bits, a tile CuTe sees otherwise)."""
    config = check.config
    label = f"{config.id}:{config.name}"
    fields = [f"{label} {row.descriptor}.{row.field} = {row.actual}, expected {row.expected}"
              for row in check.rows if not row.ok]
    names_it = re.compile(rf"{re.escape(config.label())}|\bconfig {config.id}\b")
    return fields + [problem if names_it.search(problem) else f"{label} {problem}" for problem in check.problems]


def _log_head(path: Path) -> bytes:
    """The first bytes of a --from-log file (what it is, where it holds no lines); a UsageError where it
    cannot be read."""
    try:
        with path.open("rb") as handle:
            return handle.read(4096)
    except OSError as error:
        raise UsageError(f"--from-log {path}: {os_reason(error, path)}") from error


def _log_lines(path: Path) -> Iterator[str]:
    """A --from-log file's lines one at a time, each read at most MAX_LOG_LINE_CHARS at once: a log of
    hundreds of MB is never held whole, not even one written as a single line (UsageError past the limit)."""
    try:
        with path.open(errors="replace") as handle:
            number = 0
            while line := handle.readline(MAX_LOG_LINE_CHARS + 1):
                number += 1
                if len(line) > MAX_LOG_LINE_CHARS and not line.endswith("\n"):
                    raise UsageError(f"--from-log {path}: line {number} runs past {MAX_LOG_LINE_CHARS:,} characters"
                                     " without a line break: not a saved output of `nvfp4ctl check --dump`, whose"
                                     " lines are short; keep its lines as printed, one to a line")
                yield line.rstrip("\r\n")
    except OSError as error:
        raise UsageError(f"--from-log {path}: {os_reason(error, path)}") from error


def _refuse_too_large_to_simulate(m: int, n: int, k: int, batches: int, seed: int) -> None:
    """The simulation makes the whole shape's inputs on the CPU (every batch, as check makes them): a shape too
    large for the machine's memory is said before the values are decoded and listed, as a shape the tile
    cannot take is."""
    from nvfp4ctl.problems import DEFAULT_PROBLEM, get_problem
    from nvfp4ctl.problems.base import make_case

    get_problem(DEFAULT_PROBLEM).refuse_too_large(make_case(m=m, n=n, k=k, l=batches, seed=seed), "cpu")


def _simulated_mma(idesc: int | None, shape: str | None, kind: str) -> tuple[str, str]:
    """The --mma that --simulate without one runs, and where it comes from: the M and N the user's --idesc
    encodes (its MMA is the kernel's, whatever the shape: config 0's N=64 under an N=7168 shape), else the
    tile --shape implies (N up to 256)."""
    from nvfp4ctl.umma.descriptors import decode_instr, instr_mn
    from nvfp4ctl.umma.user_values import KIND_K

    mma_k = KIND_K.get(kind, 64)  # an unknown --kind is said by the config
    if idesc is not None:
        m, n = instr_mn(decode_instr(idesc))
        return f"{m},{n},{mma_k}", f"from --idesc 0x{idesc:08x}"
    n_tile = parse_shape(shape)[1] if shape else 128
    return f"128,{n_tile if n_tile <= 256 and n_tile % 16 == 0 else 128},{mma_k}", "from --shape"


def _refuse_no_mma_in_idesc(mma: str, kind: str, origin: str) -> None:
    """An --idesc whose M or N no MMA takes is said as the idesc's, not as a config the user stated (the other
    options' mistakes are theirs: checked with the defaults here, they are said by the config itself)."""
    from nvfp4ctl.umma.user_values import KIND_K, make_config

    if kind not in KIND_K:
        return
    try:
        make_config(mma, kind, None, "K", "128B", 256)
    except UsageError as error:
        why = str(error).removeprefix("the stated config is not a valid block-scaled MMA: ")
        raise UsageError(f"--simulate without --mma takes the MMA {origin} ({mma}), which is not a valid"
                         f" block-scaled MMA: {why}; pass --mma M,N,K") from None


def _layout_case(task_path: Path | None, shape_text: str, seed: int, row: int, k_block: int) -> tuple[Any, Any, list]:
    """The task's problem, the --layout case of `shape_text` in its syntax and the scale tensors that have
    scale (row, k_block): read before torch is imported and inputs are made (seconds), so a mistyped --shape,
    --row or --kblock is a quick line."""
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.task import load_task

    problem = get_problem(load_task(task_path).problem)  # every scale tensor of the task's problem
    case = problem.parse_shape(shape_text, seed)
    return problem, case, _scales_with(problem.scale_extents(case), row, k_block)


def _scales_with(extents: list[tuple[str, int, int]], row: int, k_block: int) -> list[tuple[str, int, int]]:
    """The (operand, rows, k-blocks) that have scale (row, k_block). A scale some operand has is shown for the
    operands that have it: the grouped GEMM's groups differ in rows and in K, so a row or a k-block of one
    group is no error for the others; one that none has is a UsageError naming their ranges."""
    with_row = [extent for extent in extents if 0 <= row < extent[1]]
    if not with_row:
        rows = ", ".join(f"{_scale_label(operand)} 0..{rows - 1}" for operand, rows, _ in extents)
        raise UsageError(f"--row {row}: not a scale row of this shape ({rows})")
    found = [extent for extent in with_row if 0 <= k_block < extent[2]]
    if not found:
        blocks = ", ".join(f"{_scale_label(operand)} 0..{k_blocks - 1}" for operand, _, k_blocks in with_row)
        raise UsageError(f"--kblock {k_block}: not a scale k-block of row {row} in this shape ({blocks})")
    return found


def _scale_label(operand: str, suffix: str = "") -> str:
    """A scale tensor as the tables name it: "sfb1" for operand B1, "group 2 sfa" for a grouped GEMM's A[2]
    (check's words, "group 2 c"; "sfa[2]" read like a Python index, off by one from the 1-based group)."""
    name, _, group = operand.partition("[")
    label = f"sf{name.lower()}{suffix}"
    return f"group {group.rstrip(']')} {label}" if group else label


def _show_layout(problem: Any, case: Any, wanted: list[tuple[str, int, int]], seed: int, row: int, k_block: int,
                 wanted_device: str, payload: dict[str, Any], as_json: bool) -> tuple[str, bool]:
    """`wanted_device`: run_device()'s, as check and bench take it; "cuda" falls back to the CPU without a GPU,
    since the layout is the same on both and --layout needs none."""
    import dataclasses

    import torch

    from nvfp4ctl.dump.layout import check_storage, locate, scale_at

    console = get_console()
    device = "cuda" if wanted_device == "cuda" and torch.cuda.is_available() else "cpu"
    data = problem.make_input(case, device=device)
    scales = problem.scale_tensors(data)
    places = [locate(operand, rows, k_blocks * 16, row, k_block) for operand, rows, k_blocks in wanted]
    storage = check_storage(scales)
    located = []
    for where in places:
        ref_byte, stored = scale_at(where, scales)
        located.append({"operand": where.operand, "row": where.row, "k_block": where.k_block, "offset": where.offset,
                        "index6": list(where.index6), "reference": ref_byte, "stored": stored, "ok": ref_byte == stored})
    # shape: the sizes by name for every problem (a list [m, n, k, l] for the GEMMs and a string for the others
    # made a script branch on the problem); shape_text: the words the tables use
    payload["layout"] = {"problem": problem.name, "shape": problem.sizes(case), "shape_text": problem.shape_text(case),
                         "seed": seed, "device": device,
                         "scales": located, "storage": [vars(result) | {"ok": result.ok} for result in storage]}
    name = problem.key(dataclasses.replace(case, l=1)) + f" l={case.l}"
    if not as_json:
        console.info(f"scale layout for {problem.name} {problem.shape_text(case)} seed={seed} "
                     f"(inputs generated on {device})", style="bold")
        console.table(["tensor", "row", "k-block", "offset", "index (32,4,rest,4,rest_k,l)", "ref", "stored",
                       "status"],
                      [(_scale_label(p["operand"]), p["row"], p["k_block"], p["offset"], ",".join(str(i) for i in p["index6"]),
                        f"0x{p['reference']:02x}", f"0x{p['stored']:02x}", _status(p["ok"])) for p in located])
        console.table(["tensor", "batch", "bytes compared", "mismatches", "first mismatch", "status"],
                      [(_scale_label(r.operand, "_permuted vs to_blocked(ref)"), r.batch,
                        r.bytes_compared, r.mismatches, "-" if r.first_mismatch is None else r.first_mismatch,
                        _status(r.ok)) for r in storage])
        padded = [r for r in storage if r.padded]
        if padded:  # the counts above are smaller than what is stored, on purpose
            first = padded[0]
            batch = f" batch {first.batch}" if any(r.batch for r in storage) else ""
            console.info(f"padding: the rows and k-blocks filling a partial 128-row or 4-k-block tile are stored but"
                         f" compared nowhere ({_scale_label(first.operand)}{batch}: {first.bytes_compared} of"
                         f" {first.bytes_stored} bytes compared; {len(padded)} of {plural(len(storage), 'batch', 'batches')}):"
                         " GPU MODE's generator leaves them random, to_blocked zeros them, and no kernel may read them")
    ok = all(result.ok for result in storage) and all(p["ok"] for p in located)
    bad = sum(not result.ok for result in storage) + sum(not p["ok"] for p in located)
    names = ", ".join(dict.fromkeys(f"sf{operand.lower().split('[')[0]}" for operand, _, _ in scales))
    return f"layout: {name}, {plural(len(storage), 'scale batch', 'scale batches')} checked ({names}), {plural(bad, 'mismatch', 'mismatches')}", ok


def _gemm_shape(text: str, mode: str, task_path: Path | None) -> tuple[int, int, int, int]:
    """--shape as --simulate and --from-log take it, M,N,K[,L]: they run MMA values on the GEMM's inputs,
    whatever the task's problem. A shape that is none says so and, in another problem's folder, that it is
    the GEMM's syntax, not the task's (a GEMV's M,K read as the wrong count alone)."""
    from nvfp4ctl.problems import DEFAULT_PROBLEM

    try:
        return parse_shape(text)
    except UsageError as error:
        task_problem = _task_problem(task_path)
        if task_problem is None or task_problem == DEFAULT_PROBLEM:
            raise
        raise UsageError(f"{error}; {mode} runs the MMA values on {DEFAULT_PROBLEM} inputs (C = A·Bᵀ), so its"
                         f" --shape is the GEMM's M,N,K[,L], not {task_problem}'s") from None


def _task_problem(task_path: Path | None) -> str | None:
    """The problem of the task in use; None where it cannot be read (check and --layout say why)."""
    from nvfp4ctl.task import load_task

    try:
        return load_task(task_path).problem
    except UsageError:
        return None


def _shape_needed(layout: bool, runtime: bool, task_path: Path | None) -> str:
    """What --shape to pass: --layout takes the task problem's syntax (GEMV M,K; grouped M1,N1,K1;...),
    --runtime the GEMM's."""
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.task import load_task

    needs = ["--runtime needs --shape M,N,K[,L]"] if runtime else []
    if layout:
        problem = get_problem(load_task(task_path).problem)
        needs.insert(0, f"--layout needs --shape {problem.shape_syntax} ({problem.name}; e.g. --shape"
                        f" {problem.shape_example})")
    return "; ".join(needs)


def _runtime_plan(shape: tuple[int, int, int, int], seed: int) -> tuple[str, int]:
    """The SM100 GPU --runtime runs on and the kernel config of its shape, or the UsageError of either (or of
    a shape too large for the GPU's memory), before any mode prints or compiles: a refusal after --layout's
    report or --umma's build hid it."""
    from nvfp4ctl.dump.runtime import sm100_gpu
    from nvfp4ctl.problems import DEFAULT_PROBLEM, get_problem
    from nvfp4ctl.problems.base import make_case
    from nvfp4ctl.umma.configs import NO_CONFIG, select_config

    gpu = sm100_gpu()
    if gpu is None:
        raise UsageError("dump --runtime needs an SM100 (B200) GPU; none here (use --umma and --layout without one)")
    m, n, k, l = shape
    config_id = select_config(m, n, k, l)
    if config_id == NO_CONFIG:
        raise UsageError(f"--shape {m},{n},{k},{l}: the sm100 kernel does not support this shape")
    # the child builds for minutes before it makes the inputs: a shape too large for the GPU is said first
    get_problem(DEFAULT_PROBLEM).refuse_too_large(make_case(m=m, n=n, k=k, l=l, seed=seed), "cuda")
    return gpu, config_id


def _show_runtime(kernel: Path, shape: tuple[int, int, int, int], seed: int, gpu: str, config_id: int,
                  payload: dict[str, Any], as_json: bool) -> tuple[str, bool, str]:
    from nvfp4ctl.build.sources import binding_path
    from nvfp4ctl.dump.runtime import compare, parse_device_dump, run_debug_kernel
    from nvfp4ctl.umma.configs import parse_configs

    m, n, k, l = shape
    with tempfile.TemporaryDirectory(prefix="nvfp4ctl-dump-") as folder:
        text, expected = run_debug_kernel(kernel, binding_path(), Path(folder), m, n, k, l, seed, config_id)
    checks = compare(parse_device_dump(text), parse_configs(kernel), expected)
    payload["runtime"] = {"gpu": gpu, "shape": list(shape), "checks": [vars(check) for check in checks]}
    if not as_json:
        get_console().table(["what", "device printed", "expected", "status"],
                            [(c.what, c.got, c.want, _status(c.ok)) for c in checks], title=f"runtime on {gpu}")
    bad = sum(not check.ok for check in checks)
    return f"runtime: {plural(len(checks), 'check')}, {plural(bad, 'mismatch', 'mismatches')}", bad == 0, gpu


def command(
    umma: Annotated[bool, typer.Option("--umma", help="Descriptors of every dispatch config vs. expected (no GPU).")] = False,
    layout: Annotated[bool, typer.Option("--layout", help="Where a scale lives in the permuted tensor; verify inputs.")] = False,
    runtime: Annotated[bool, typer.Option("--runtime", help="Debug build on an SM100 GPU: compare what CTA 0 uses.")] = False,
    shape: Annotated[Optional[str], typer.Option("--shape", help="M,N,K[,L] for --runtime, --simulate and --from-log; --layout takes the task problem's syntax (GEMV M,K[,L]; grouped M1,N1,K1;M2,N2,K2).")] = None,
    task: Annotated[Optional[Path], typer.Option("--task", metavar="PATH", parser=path(), help="task.yml whose problem --layout shows and --umma/--runtime must be nvfp4_gemm for (default: the task file in use: $NVFP4CTL_TASK, else the nearest task.yml from the current folder up, else nvfp4ctl's own (nvfp4_gemm)).")] = None,
    seed: Annotated[int, typer.Option("--seed", metavar="<int range>", min=0, max=MAX_SEED, parser=integer(0, MAX_SEED), help="Input seed for --layout, --runtime, --simulate and --from-log.")] = DEFAULT_SEED,
    row: Annotated[int, typer.Option("--row", metavar="<int>", parser=integer(), help="Scale row to locate (--layout).")] = 0,
    kblock: Annotated[int, typer.Option("--kblock", metavar="<int>", parser=integer(), help="Scale k-block (16 K-elements) to locate (--layout).")] = 0,
    kernel: Annotated[Optional[Path], typer.Option("--kernel", metavar="PATH", parser=path(), help="sm_100a kernel source, or `default`: nvfp4ctl's own CUTLASS sm_100a kernel (none: the one in your kernels/ folder, else nvfp4ctl's).")] = None,
    no_cute: Annotated[bool, typer.Option("--no-cute", help="--umma: skip CuTe's host encoder (no compile), show expected values only.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON document instead of tables.")] = False,
    idesc: Annotated[Optional[str], typer.Option("--idesc", metavar="HEX", help="--umma: your 32-bit instruction descriptor.")] = None,
    desc_a: Annotated[Optional[list[str]], typer.Option("--desc-a", metavar="HEX", help="--umma: your A smem descriptor; repeat once per K step.")] = None,
    desc_b: Annotated[Optional[list[str]], typer.Option("--desc-b", metavar="HEX", help="--umma: your B smem descriptor; repeat once per K step.")] = None,
    tmem_d: Annotated[Optional[str], typer.Option("--tmem-d", metavar="HEX", help="--umma: TMEM address of D (lane<<16 | column).")] = None,
    tmem_sfa: Annotated[Optional[list[str]], typer.Option("--tmem-sfa", metavar="HEX", help="--umma: TMEM address of A's scales; repeat per K step.")] = None,
    tmem_sfb: Annotated[Optional[list[str]], typer.Option("--tmem-sfb", metavar="HEX", help="--umma: TMEM address of B's scales; repeat per K step.")] = None,
    mma: Annotated[Optional[str], typer.Option("--mma", metavar="M,N,K", help="--umma: the MMA your values are for; every field is checked against it.")] = None,
    kind: Annotated[str, typer.Option("--kind", help="--umma config: mxf4nvf4, mxf4 or mxf8f6f4.")] = "mxf4nvf4",
    sf_vec: Annotated[Optional[int], typer.Option("--sf-vec", metavar="<int>", parser=integer(), help="--umma config: 16 or 32 elements per scale (default: 16 for mxf4nvf4).")] = None,
    major: Annotated[str, typer.Option("--major", help="--umma config: K or MN, or A,B (e.g. K,K).")] = "K",
    swizzle: Annotated[str, typer.Option("--swizzle", help="--umma config: none, 32B, 64B or 128B (the TMA/smem swizzle).")] = "128B",
    block_k: Annotated[int, typer.Option("--block-k", metavar="<int>", parser=integer(), help="--umma config: K elements per K tile (K steps = block-k / MMA K).")] = 256,
    simulate: Annotated[bool, typer.Option("--simulate", help="--umma: run the values through the UMMA model on real inputs (--shape, --seed).")] = False,
    from_log: Annotated[Optional[Path], typer.Option("--from-log", metavar="FILE", parser=path(), help=f"--umma: a saved output with `nvfp4ctl:umma` lines ({BYO_KERNEL_DOC}); decoded and simulated.")] = None,
) -> Outcome:
    """Show the B200 kernel's UMMA descriptors, scale layout and (on a B200) what it really uses."""
    from nvfp4ctl.build.toolchain import require_torch
    from nvfp4ctl.umma.configs import default_kernel, shipped_kernel

    if not (umma or layout or runtime):
        raise UsageError("choose what to dump: --umma, --layout and/or --runtime")
    user = any(v is not None for v in (idesc, desc_a, desc_b, tmem_d, tmem_sfa, tmem_sfb, mma)) or simulate
    if (user or from_log) and not umma:
        raise UsageError("--idesc/--desc-a/--desc-b/--tmem-*/--mma/--simulate/--from-log go with --umma")
    config_given = [option for option, given in (("--kind", kind != "mxf4nvf4"), ("--sf-vec", sf_vec is not None),
                                                 ("--major", major != "K"), ("--swizzle", swizzle != "128B"),
                                                 ("--block-k", block_k != 256)) if given]
    if config_given and not user:  # they would be ignored: our kernel's configs come from its source
        raise UsageError(f"{', '.join(config_given)}: the MMA config is read only with your own values (--idesc,"
                         " --desc-a, ... and --mma); our kernel's configs come from its source")
    # an option that does nothing must not look as if it was taken into account
    with_values = from_log is not None and user and not simulate
    reads_kernel = (umma and not user and from_log is None) or runtime  # --layout and your own values need none
    ignored = [(option, why) for option, why, given in (
        ("--kernel", "goes with --umma (without your own values) or --runtime", kernel is not None and not reads_kernel),
        ("--task", "goes with --layout or --runtime, or with --umma reading nvfp4ctl's kernel (no --kernel PATH)",
         task is not None and not (layout or runtime
                                   or (reads_kernel and (kernel is None or str(kernel) == DEFAULT_BY_NAME)))),
        ("--row", "goes with --layout", row != 0 and not layout),
        ("--kblock", "goes with --layout", kblock != 0 and not layout),
        ("--shape", "goes with --layout, --runtime, --simulate or --from-log",
         shape is not None and not (layout or runtime or simulate or from_log)),
        ("--idesc/--desc-*/--tmem-*/--mma", "not used with --from-log, which reads the values from the file",
         with_values)) if given]
    if ignored:
        raise UsageError("; ".join(f"{option} {why}" for option, why in ignored))
    if from_log is not None:
        from nvfp4ctl.commands.umma_view import show_dump_lines

        head = _log_head(from_log)  # an unreadable file is said before the shape and torch
        m, n, k, batches = _gemm_shape(shape, "--from-log", task) if shape is not None else (128, 128, 512, 1)
        require_torch()  # the UMMA model's; after the user's own mistakes, which they can fix first
        if shape is not None:
            _refuse_too_large_to_simulate(m, n, k, batches, seed)
        summary, ok = show_dump_lines(_log_lines(from_log), m, n, k, seed, origin=f"--from-log {from_log}",
                                      saved=True, why_none=packed_or_wide(head), batches=batches)
        return Outcome(result=summary, exit_code=ExitCode.OK if ok else ExitCode.FAILURES, target=from_log)
    # `--kernel default` names nvfp4ctl's own kernel, as it does for check, bench and export, also in a
    # kernels/ folder of yours (which the bare default reads)
    named_default = kernel is not None and str(kernel) == DEFAULT_BY_NAME
    # first: no --shape makes a GEMV task the GEMM's
    judged_by = _task_in_use(task) if runtime or umma else None  # read once for both refusals
    if runtime:  # whatever the kernel: it runs through the GEMM's binding
        _refuse_runtime_for_another_problem(judged_by, kernel)
    if umma and not user and (kernel is None or named_default):
        _refuse_another_problem(judged_by)
    if (layout or runtime) and shape is None:
        raise UsageError(_shape_needed(layout, runtime, task))
    # a --shape, --row or --kblock that is wrong is said before any mode runs (--umma's first run compiles for
    # minutes) and before torch is imported (seconds)
    layout_case = _layout_case(task, shape or "", seed, row, kblock) if layout else None
    layout_device = run_device() if layout else "cpu"  # a mistyped NVFP4CTL_DEVICE is said before any mode runs
    runtime_shape = parse_shape(shape or "") if runtime else None
    if simulate and shape is not None:
        _gemm_shape(shape, "--simulate", task)
    source = shipped_kernel() if named_default else default_kernel() if kernel is None else kernel
    if reads_kernel and source.is_dir():  # as build and export say it: "not found" would send one looking for it
        raise UsageError(f"{source} is a folder, not a kernel source: name a .cu file in it")
    if reads_kernel and not source.is_file():
        # the bare default looks in your kernels/ folder; one without a CUTLASS sm100 kernel says how on
        way_out = f" (--kernel PATH for yours, --kernel {DEFAULT_BY_NAME} for nvfp4ctl's)" if kernel is None else ""
        raise UsageError(f"kernel not found: {source}{way_out}")
    if umma and reads_kernel and not user:  # before the listing's first line and the minute of compiling
        _refuse_kernel_without_umma_configs(source)
        if not no_cute:
            from nvfp4ctl.umma.host_proof import refuse_unincludable

            refuse_unincludable(source)
    if layout or runtime or user:  # inputs, the UMMA model and the debug build are torch's: said after the
        require_torch()  # user's own mistakes above, which they can fix first
    if simulate and shape is not None:
        _refuse_too_large_to_simulate(*parse_shape(shape), seed)
    runtime_plan = _runtime_plan(runtime_shape, seed) if runtime_shape is not None else None
    payload: dict[str, Any] = {"version": JSON_VERSION}
    results: list[str] = []
    all_ok = True
    gpu = None
    if umma and user:
        from nvfp4ctl.umma.user_values import UserValues, make_config, parse_hex

        values = UserValues(
            idesc=parse_hex(idesc, "--idesc", 32) if idesc is not None else None, desc_a=_hexes(desc_a, "--desc-a", 64),
            desc_b=_hexes(desc_b, "--desc-b", 64), tmem_d=parse_hex(tmem_d, "--tmem-d", 32) if tmem_d is not None else None,
            tmem_sfa=_hexes(tmem_sfa, "--tmem-sfa", 32), tmem_sfb=_hexes(tmem_sfb, "--tmem-sfb", 32))
        if mma is None and simulate:  # the MMA the values state, else the tile the shape implies; said in the output
            mma, origin = _simulated_mma(values.idesc, shape, kind)
            get_console().detail(f"--simulate without --mma: checking against --mma {mma} ({origin})")
            if values.idesc is not None:
                _refuse_no_mma_in_idesc(mma, kind, origin)
        if mma is None and config_given:
            raise UsageError(f"{', '.join(config_given)}: the MMA config is read with --mma or --simulate; pass one of them")
        config = make_config(mma, kind, sf_vec, major, swizzle, block_k) if mma is not None else None
        if config is not None:
            _check_step_counts(values, config)
        result, ok = show_user_umma(values, config, simulate, shape, seed, payload, as_json)
        results.append(result)
        all_ok &= ok
    elif umma:
        result, ok = _show_umma(source, not no_cute, payload, as_json)
        results.append(result)
        all_ok &= ok
    if layout_case is not None:
        result, ok = _show_layout(*layout_case, seed, row, kblock, layout_device, payload, as_json)
        results.append(result)
        all_ok &= ok
    if runtime_shape is not None and runtime_plan is not None:
        result, ok, gpu = _show_runtime(source, runtime_shape, seed, *runtime_plan, payload, as_json)
        results.append(result)
        all_ok &= ok
    console = get_console()
    summary = "; ".join(results)
    if as_json:
        console.json(payload)
    else:
        (console.ok if all_ok else console.fail)(summary)
    # the run log names the kernel only where one was read: --layout checks the task's inputs alone
    return Outcome(result=summary, exit_code=ExitCode.OK if all_ok else ExitCode.FAILURES,
                   target=source if reads_kernel else None, gpu=gpu)
