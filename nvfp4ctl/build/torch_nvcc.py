"""torch's own nvcc flags for a load_inline / load extension, read from the ninja file the installed
torch writes for it (cpp_extension._write_ninja_file_to_build_library), so `build submission.py`
compiles with what `python submission.py` would: the C++ standard above all, which torch chooses,
changes between releases (-std=c++17 until it moved extensions to C++20 in 2026; 2.13 appends
-std=c++20) and appends only where none of the extension's flags, each as written, starts with -std=:
after --std=c++17, or a flag "-O3 -std=c++17", it appends its own, and nvcc uses the last of them.

The ninja file is written for a probe extension: the submission's name and flags, between two marker
defines, into a temporary folder. What torch puts before the first marker is its own (defines,
COMMON_NVCC_FLAGS, -fPIC, its include folders); what it puts after the second is what it appends to
the flags (the standard). The function is private to torch and its parameters change between
releases: only those the installed version has are passed, and where writing or reading the file
fails, the flags are built from torch's public COMMON_NVCC_FLAGS and include_paths() instead, with the
standard read from the function's source (fallback_note says why).
"""

from __future__ import annotations

import inspect
import os
import re
import shlex
import sysconfig
import tempfile
import warnings
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from nvfp4ctl.build import sh_words, toolchain
from nvfp4ctl.build.arch_names import ARCH_FLAG, machine_arch_option

DEFAULT_STANDARD = "-std=c++17"  # torch 2.x's before C++20, where its source names none
# torch appends its standard unless one of the extension's flags, each stripped, starts with this (not
# --std=, -std c++NN, nor a -std= inside a flag of several words)
TORCH_SEES_STANDARD = "-std="
_STANDARD_WORDS = ("-std", "--std")  # nvcc's spellings of the option: -std=c++17, --std c++17, ...
# nvcc's options whose value is another tool's flags (the host compiler's, ptxas', ...): a -std there is
# that tool's, not the device code's, and torch's appended standard does not replace it
_PASSED_THROUGH = ("-Xcompiler", "--compiler-options", "-Xptxas", "--ptxas-options", "-Xlinker", "--linker-options",
                   "-Xnvlink", "--nvlink-options", "-Xarchive", "--archive-options", "-Xfatbin", "--fatbin-options",
                   "-Xcudafe")
_BEGIN, _END = "-DNVFP4CTL_EXTENSION_FLAGS_BEGIN", "-DNVFP4CTL_EXTENSION_FLAGS_END"
_STANDARD = re.compile(r"['\"](-std=c\+\+\d+)['\"]")
_FALLBACK_REASONS: list[str] = []  # why probes of this process could not read torch's ninja file
_SHELL_OPERATORS = "();<>|&"  # unquoted, each ends the word before it: sh reads a list, a redirection or a subshell


def shell_words(flags: Sequence[str], build_files: Collection[str] = ()) -> list[str]:
    """The words nvcc gets for extra_cuda_cflags `flags`: torch strips each flag and joins them with single
    spaces into its ninja file's cuda_cflags, and ninja runs the command through /bin/sh, which splits it
    at blanks and takes quotes and backslashes away: "-Xptxas -v" is two words, "-DTAG='a b'" one, and a
    quote may span flags, as the joined line is read as one. A word with an unquoted *, ? or [ is a
    pattern sh matches against the build folder's files (torch's build folder, where the command runs):
    it stays as written where none of `build_files`, the names torch and ninja put there, matches it
    (-gencode=arch=compute_100a,code=[sm_100a,compute_100a]). ValueError, saying why in a few words,
    where the shell would not run what torch wrote (an unclosed quote, an operator such as ; or |), where
    it drops the rest of the line (a # that starts a word: the file to compile goes with it), or where
    ninja and the shell would rewrite it in a way not known here (a $, a backquote, a ~ that starts a
    word, a pattern that matches, or that looks outside the build folder)."""
    line = " ".join(flag.strip() for flag in flags)
    if "$" in line:
        raise ValueError("hold a $, which ninja expands as one of its variables (and the shell then as its own)")
    if "`" in line:
        raise ValueError("hold a backquote, a command the shell runs")
    if "\n" in line or "\r" in line:
        raise ValueError("hold a line break, which ends the line of torch's build file and fails its build")
    try:
        words, end = sh_words.split(line, _SHELL_OPERATORS)
    except ValueError:
        raise ValueError("hold an unclosed quote, and the shell that runs torch's build command fails") from None
    if end == "#":
        raise ValueError("hold a # that starts a word, where the shell's comment begins: it drops the rest of"
                         " torch's build command, the file to compile with it, and that build fails")
    if end is not None:
        raise ValueError(f"hold an unquoted {end!r}, which the shell that runs torch's build command reads"
                         " as its own syntax")
    for word in words:
        if word.text.startswith("~") and word.unquoted(0):
            raise ValueError(f"hold {word.text}, whose ~ the shell expands to a home folder (that of the machine"
                             " that runs the build, not known here); write the folder out, or quote the ~")
        try:
            matched = sh_words.pattern_matches(word, build_files)
        except ValueError:
            raise ValueError(f"hold {word.text}, a pattern the shell matches against the files of the machine that"
                             " runs the build, not known here; quote its *, ? or [") from None
        if matched:
            raise ValueError(f"hold {word.text}, a pattern the shell replaces with the files of torch's build folder"
                             f" it matches ({', '.join(matched)}); quote its *, ? or [")
    return [word.text for word in words]


@dataclass(frozen=True)
class TorchNvccFlags:
    leading: tuple[str, ...]  # torch's flags before the extension's own, less include folders and arch
    system_includes: tuple[str, ...]  # torch's -isystem folders, in its order
    trailing: tuple[str, ...]  # what torch appends after the extension's flags: the standard, unless one starts -std=
    fallback_reason: str | None = None  # why torch's ninja file could not be read, where it could not


@lru_cache(maxsize=None)
def extension_flags(name: str, user_flags: tuple[str, ...], arch_flag: str) -> TorchNvccFlags:
    """torch's nvcc flags for extension `name` with extra_cuda_cflags `user_flags` (imports torch:
    seconds, once). `arch_flag` stands in for the flags' arch where they name none: torch then adds
    none of its own (it reads the visible GPUs, of which a build machine may have none)."""
    try:
        return _from_ninja_file(name, user_flags, arch_flag)
    except Exception as error:  # a private function of torch's: any release may break the probe
        _FALLBACK_REASONS.append(f"{type(error).__name__}: {error}".strip())
        return _from_public_api(name, user_flags, _FALLBACK_REASONS[-1])


def _from_ninja_file(name: str, user_flags: tuple[str, ...], arch_flag: str) -> TorchNvccFlags:
    from torch.utils import cpp_extension

    probe_flags = [*([arch_flag] if torch_adds_arch(user_flags) else []),
                   _BEGIN, *user_flags, _END]
    with tempfile.TemporaryDirectory(prefix="nvfp4ctl-torch-flags-") as folder, _probe_settings(cpp_extension):
        ninja = Path(folder) / "build.ninja"
        offered = {"path": str(ninja), "name": name, "sources": [str(Path(folder) / f"{name}.cu")],
                   "extra_cflags": [], "extra_cuda_cflags": probe_flags, "extra_sycl_cflags": [], "extra_ldflags": [],
                   "extra_include_paths": [], "with_cuda": True, "with_sycl": False, "is_standalone": False}
        writer = cpp_extension._write_ninja_file_to_build_library
        accepted = inspect.signature(writer).parameters
        writer(**{key: value for key, value in offered.items() if key in accepted})
        text = ninja.read_text()
    line = " ".join(_ninja_value(text, variable) for variable in ("cuda_cflags", "cuda_post_cflags"))
    if line.count(_BEGIN) != 1 or line.count(_END) != 1:
        raise ValueError("the extension's flags are not in torch's cuda_cflags")
    before, rest = line.split(_BEGIN)
    after = rest.split(_END)[1]
    leading, system_includes = _without_includes(shlex.split(before))
    return TorchNvccFlags(tuple(_torch_own(leading)), tuple(system_includes), tuple(shlex.split(after)))


def _ninja_value(text: str, variable: str) -> str:
    match = re.search(rf"^{variable} = (.*)$", text, re.MULTILINE)
    return match.group(1) if match else ""


def _without_includes(tokens: list[str]) -> tuple[list[str], list[str]]:
    """(the tokens less `-isystem DIR` / `-IDIR`, the -isystem folders): _command lays the folders out."""
    flags: list[str] = []
    system: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token == "-isystem" and index + 1 < len(tokens):
            system.append(tokens[index + 1])
            index += 2
            continue
        if not token.startswith("-I"):  # the probe names no extra_include_paths: none is the submission's
            flags.append(token)
        index += 1
    return flags, system


def _torch_own(tokens: list[str]) -> list[str]:
    """torch's leading flags less its arch (the build's gencode decides it) and `-ccbin $CC` (the
    machine's own host compiler, as nvcc picks it; $CC is not in the cache key). The probe runs without
    $CC (_probe_settings), so torch writes none: dropped here should a release take it from elsewhere."""
    kept: list[str] = []
    skip = False
    for token in tokens:
        if skip:
            skip = False
        elif token == "-ccbin":
            skip = True
        elif not ARCH_FLAG.search(token):
            kept.append(token)
    return kept


@contextmanager
def _probe_settings(cpp_extension: Any) -> Iterator[None]:
    """What torch reads besides the parameters, set for the probe and put back after it. CUDA_HOME, which
    torch reads once, on import, from the environment or the PATH: where it found none, the toolkit the
    build runs (toolchain.cuda_home), as the build's nvcc runs with CUDA_HOME set to it. An arch list:
    older releases' writer calls _get_cuda_arch_flags() without the flags, which reads it (else the
    visible GPUs, warning where there are none); the arch it gives is dropped (_torch_own). No $CC: torch
    writes `-ccbin $CC` unquoted into the file, so a CC of several words ("ccache gcc", "gcc -m64")
    cannot be split back out of it, and the build leaves the host compiler to nvcc. Warnings concern a
    build that is never run."""
    saved_home = cpp_extension.CUDA_HOME
    saved_environment = {variable: os.environ.get(variable) for variable in ("TORCH_CUDA_ARCH_LIST", "CC")}
    if saved_home is None:
        cpp_extension.CUDA_HOME = str(toolchain.cuda_home())
    os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"
    os.environ.pop("CC", None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        cpp_extension.CUDA_HOME = saved_home
        for variable, value in saved_environment.items():
            if value is None:
                os.environ.pop(variable, None)
            else:
                os.environ[variable] = value


def _from_public_api(name: str, user_flags: Sequence[str], reason: str) -> TorchNvccFlags:
    """The flags as torch's public names give them, where its ninja file cannot be read."""
    import torch
    from torch.utils import cpp_extension

    abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", 1))
    leading = [f"-DTORCH_EXTENSION_NAME={name}", "-DTORCH_API_INCLUDE_EXTENSION_H", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
               *cpp_extension.COMMON_NVCC_FLAGS, "--compiler-options", "-fPIC"]
    includes = [*cpp_extension.include_paths(), sysconfig.get_paths()["include"]]
    named = any(flag.strip().startswith(TORCH_SEES_STANDARD) for flag in user_flags)
    trailing = () if named else (_standard_in_source(cpp_extension),)
    return TorchNvccFlags(tuple(leading), tuple(includes), trailing, reason)


def _standard_in_source(cpp_extension: Any) -> str:
    """The `-std=c++NN` torch's ninja writer names in its source, else DEFAULT_STANDARD."""
    try:
        source = inspect.getsource(cpp_extension._write_ninja_file_to_build_library)
    except (AttributeError, OSError, TypeError):
        return DEFAULT_STANDARD
    found = _STANDARD.findall(source)
    return found[-1] if found else DEFAULT_STANDARD


def appended_standard(user_flags: Sequence[str], arch_flag: str) -> tuple[str, ...]:
    """What torch appends after an extension's nvcc flags `user_flags`: its C++ standard (-std=c++20 with
    torch 2.13 and 2.14), or nothing where one of them starts with -std= (imports torch: seconds, once)."""
    return extension_flags("nvfp4ctl_standard", tuple(user_flags), arch_flag).trailing


def torch_adds_arch(user_flags: Sequence[str]) -> bool:
    """Whether torch adds an arch flag of its own (_get_cuda_arch_flags): only where none of the
    extension's flags holds the letters "arch" (the one naming TORCH_EXTENSION_NAME aside), whatever
    the flag, so -I/src/archive makes it add none and nvcc compiles for its default arch."""
    return not any("arch" in flag for flag in user_flags if "TORCH_EXTENSION_NAME" not in flag)


def arch_taken_for_none(user_flags: Sequence[str]) -> str | None:
    """A flag torch takes for an arch flag (it holds "arch") where none of the flags names an arch
    nvcc reads: torch adds none, and nvcc builds for its default. None where that is not so, or where
    -arch=native / all / all-major decide (arch_names.unknown_arch)."""
    words = shell_words(user_flags)
    if torch_adds_arch(user_flags) or ARCH_FLAG.search(" ".join(words)) or machine_arch_option(words) is not None:
        return None
    return next(flag.strip() for flag in user_flags if "arch" in flag and "TORCH_EXTENSION_NAME" not in flag)


def overridden_standard(user_flags: Sequence[str]) -> str | None:
    """The extension's own standard where torch does not see it and appends its own after it (nvcc then
    uses torch's, the last, with a warning): the words that name it, else None. A -std given to another
    tool (-Xcompiler -std=c++17: the host compiler's) is none of nvcc's."""
    if any(flag.strip().startswith(TORCH_SEES_STANDARD) for flag in user_flags):
        return None
    words = shell_words(user_flags)
    for index, word in enumerate(words):
        if index and words[index - 1] in _PASSED_THROUGH:
            continue
        if word.split("=", 1)[0] in _STANDARD_WORDS:
            return word if "=" in word else " ".join(words[index:index + 2])
    return None


def fallback_note(reason: str | None = None) -> str | None:
    """One line for a build whose flags fell back, for `reason`, else for the last probe of this process
    that fell back (None where none did)."""
    reason = reason or (_FALLBACK_REASONS[-1] if _FALLBACK_REASONS else None)
    if reason is None:
        return None
    return (f"torch's nvcc flags could not be read from the build file it writes ({reason}):"
            " built with its COMMON_NVCC_FLAGS, include_paths() and the C++ standard its source names")
