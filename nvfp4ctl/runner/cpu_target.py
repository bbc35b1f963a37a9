"""A submission that builds a CUDA kernel, run under NVFP4CTL_DEVICE=cpu: refused up front, in one line.

Its kernel cannot run on the CPU whatever happens, and with a CUDA build of torch its load_inline would
first compile (a minute of nvcc and ninja, a cache entry) or fail in the child with a build log. A CPU-only
torch is left to the child, which says `this torch has no CUDA` as for a `--kernel`.

Only a build that runs on every import is refused: one under `if torch.cuda.is_available():`, in a try with a
fallback, or in a function no import calls is the submission's own choice, and its torch code runs on the CPU."""

from __future__ import annotations

from nvfp4ctl.errors import UsageError
from nvfp4ctl.runner.targets import SUBMISSION, TargetSpec
from nvfp4ctl.usage_hints import shell_path

CPU = "cpu"


def refuse_cuda_kernel_on_cpu(target: TargetSpec, device: str, command: str) -> None:
    """Refuse `target` where `device` is the CPU and it is a submission with a load_inline/load call whose
    CUDA holds code (an `nvfp4ctl export` of a kernel is one). `command`: check or bench, whose GPU run is
    the way out."""
    if device != CPU or target.kind != SUBMISSION:
        return
    from nvfp4ctl.build import toolchain

    if not toolchain.torch_build().has_cuda:
        return
    found = _cuda_build(target)
    if found is None:
        return
    doing = {"bench": "time"}.get(command, command)
    raise UsageError(f"{target.label} builds a CUDA kernel ({found}), which needs a GPU: NVFP4CTL_DEVICE=cpu runs"
                     f" torch code on the CPU alone; `nvfp4ctl build {shell_path(target.shown)}` compiles it"
                     f" without a GPU, or {doing} it on a GPU")


def _cuda_build(target: TargetSpec) -> str | None:
    """Where the submission builds CUDA code on every import, in a few words (`line 12: load_inline with
    cuda_sources`), or None where it builds none that can be read (no call, an empty or comment-only
    cuda_sources, sources not static: then its load says what happens) or none that surely runs at import."""
    from nvfp4ctl.build.submission_sources import find_sources
    from nvfp4ctl.build.syntax import call_name
    from nvfp4ctl.cpp_lexer import blank
    from nvfp4ctl.lint.python.parsing import PARSE_ERRORS, parsed_quietly
    from nvfp4ctl.runner.runs_at_import import calls_run_at_import
    from nvfp4ctl.submission_text import read_submission

    try:
        sources = find_sources(target.path)
        tree = parsed_quietly(read_submission(target.path, target.label), str(target.path))
    except (UsageError, *PARSE_ERRORS):  # read as check reads it, which says what is wrong with it
        return None
    # by line and by the name submission_sources reads it under (load_inline, cpp_extension.load_inline: load_inline)
    at_import = {(call.lineno, call_name(call).split(".")[-1]) for call in calls_run_at_import(tree)}
    for extension in sources.extensions:
        if (extension.line, extension.call) not in at_import:
            continue
        if blank(extension.cuda_text).code.strip():
            return f"line {extension.line}: {extension.call} with cuda_sources"
        if extension.device_files:
            return f"line {extension.line}: {extension.call} of {extension.device_files[0].name}"
    return None

