"""extra_cuda_cflags that torch's build of a submission fails on, or whose arch build cannot tell, as
(line, what is wrong): `build` refuses the submission with them (submission_build) and `lint` reports them
(NV008, NV009), from this one reading, so neither passes what the other refuses."""

from __future__ import annotations

import os

from nvfp4ctl.build import torch_nvcc
from nvfp4ctl.build.arch_names import arch_fix, code_needs, unknown_arch
from nvfp4ctl.build.submission_sources import Extension, device_code


def unusable_flags(extension: Extension) -> tuple[int, str] | None:
    """(line, why) where extra_cuda_cflags are not flags torch takes (a str, an element that is no str:
    torch's own build fails), or not words the shell that runs torch's build command would split them
    into (torch_nvcc.shell_words): an unclosed quote fails that build, a $ is ninja's. The text starts
    with "extra_cuda_cflags"; None where they are fine."""
    if extension.unusable_flags is not None:
        line, why = extension.unusable_flags
        return line, f"extra_cuda_cflags {why}"
    try:
        torch_nvcc.shell_words(extension.cuda_flags, torch_build_files(extension))
    except ValueError as why:
        shown = " ".join(flag.strip() for flag in extension.cuda_flags)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        return extension.line, f"extra_cuda_cflags ({shown}) {why}: torch joins them with spaces into one shell command"
    return None


def untold_arch(extension: Extension) -> tuple[int, str] | None:
    """(line, why) where the flags give nvcc an arch option that fails the device code or that build
    cannot report (arch_names.unknown_arch: -arch=native for tcgen05 or wgmma code, -arch=all, -code
    without -arch), with the flag naming the arch the code needs (sm_100a), else the B200's (sm_100).
    Not for host code only (no cuda_sources, no .cu file): torch runs no nvcc and never uses those flags.
    Call it on flags unusable_flags passes. The text starts with "extra_cuda_cflags"."""
    if not extension.has_device_code:
        return None
    needs = code_needs(device_code(extension))
    why = unknown_arch(torch_nvcc.shell_words(extension.cuda_flags), needs)
    if why is None:
        return None
    return extension.line, f"extra_cuda_cflags: {why}; name the arch ({arch_fix(needs)})"


def torch_build_files(extension: Extension) -> set[str]:
    """The names in torch's build folder for the extension (~/.cache/torch_extensions/.../NAME) while nvcc
    runs there, which the shell matches a pattern among the flags against: load_inline's main.cpp and
    cuda.cu, ninja's build file, log and deps, torch's lock, the objects (a .cu's NAME.cuda.o), their .d
    files and the library; the folder holds no folder. Those that may not be there yet are named too: a
    pattern that may match is refused."""
    sources = ["main.cpp", "cuda.cu"] if extension.call == "load_inline" else [path.name for path in extension.files]
    names = {"build.ninja", ".ninja_log", ".ninja_deps", "lock", f"{extension.name}.so"}
    if extension.call == "load_inline":
        names.update(sources)
    for source in sources:
        stem, suffix = os.path.splitext(source)
        target = f"{stem}.cuda.o" if suffix in (".cu", ".cuh") else f"{stem}.o"
        names.update((target, f"{target}.d"))
    return names
