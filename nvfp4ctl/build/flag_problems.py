"""extra_cuda_cflags that torch's build of a submission fails on, or whose arch build cannot tell, and
extra_cflags, extra_ldflags or extra_include_paths given as a str, which torch reads one character an element
(or extra_ldflags as a tuple, extra_include_paths as or holding a pathlib.Path, which torch fails on), as (where,
what is wrong): `build` refuses the submission with them (submission_build) and `lint` reports them
(NV008, NV009, NV010), from this one reading, so neither passes what the other refuses."""

from __future__ import annotations

import os

from nvfp4ctl.build import torch_nvcc
from nvfp4ctl.build.arch_names import arch_fix, code_needs, unknown_arch
from nvfp4ctl.build.submission_sources import Extension, NotAList, StrForList, device_code


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
    without -arch), with the fix (arch_names.arch_fix): the flag naming the arch the code needs (sm_100a),
    else the B200's (sm_100), or, where a -gencode already names it, dropping the -arch=native / all beside
    it, which nvcc compiles as well.
    Not for host code only (no cuda_sources, no .cu file): torch runs no nvcc and never uses those flags.
    Call it on flags unusable_flags passes. The text starts with "extra_cuda_cflags"."""
    if not extension.has_device_code:
        return None
    needs = code_needs(device_code(extension))
    words = torch_nvcc.shell_words(extension.cuda_flags)
    why = unknown_arch(words, needs)
    if why is None:
        return None
    return extension.line, f"extra_cuda_cflags: {why}; {arch_fix(words, needs)}"


def strs_for_lists(extension: Extension) -> list[tuple[StrForList | NotAList, str]]:
    """(the argument, why) for each of extra_cflags, extra_ldflags and extra_include_paths the call gives
    as one str, not a list, where torch's build goes wrong on it (torch 2.13's
    _write_ninja_file_to_build_library reads `[flag.strip() for flag in ...]`): a folder a character never
    holds the headers, a character a flag fails the host compile (only where torch runs one: compiles_cpp),
    and torch appends its own link flags to extra_ldflags, which a str fails. A one-character
    extra_include_paths is the folder it names. Then extra_ldflags given as a tuple and extra_include_paths as
    or holding a pathlib.Path, which torch fails on too (not_a_list). Each text starts with the argument's name."""
    found: list[tuple[StrForList | NotAList, str]] = []
    for given in extension.strs_for_lists:
        text = given.value.text
        if given.argument == "extra_include_paths" and (len(text.strip()) > 1 or given.value.unread is not None):
            found.append((given, _str_refusal(given, _folders_of_characters(given), [text])))
        elif given.argument == "extra_cflags" and extension.compiles_cpp:
            why = "torch reads each of its characters as a flag and the host compiler fails"
            found.append((given, _str_refusal(given, why, text.split())))
        elif given.argument == "extra_ldflags":
            why = ("torch appends its own link flags to it and fails (AttributeError: 'str' object has no attribute"
                   " 'append')")
            found.append((given, _str_refusal(given, why, text.split())))
    found.extend((other, not_a_list(other)) for other in extension.not_lists)
    return found


def not_a_list(given: NotAList) -> str:
    """The refusal of a tuple or pathlib.Path given where torch needs a list of str, with the list to give."""
    if given.kind == "tuple":
        return (f"{given.argument} is a tuple ({given.value}), not a list: torch appends its own link flags to it and"
                f" fails (AttributeError: 'tuple' object has no attribute 'append'); give a list, {given.listed}")
    if given.kind == "Path":
        return (f"{given.argument} is a pathlib.Path ({given.value}), not a list: torch iterates it and fails"
                f" (TypeError: 'PosixPath' object is not iterable); give a list of str, {given.listed}")
    return (f"{given.argument} holds a pathlib.Path ({given.value}), not a str: torch strips each folder and fails"
            f" (AttributeError: 'PosixPath' object has no attribute 'strip'); give a list of str, {given.listed}")


def _folders_of_characters(given: StrForList) -> str:
    """What torch makes of extra_include_paths given as a str: the first of its characters as folders,
    where the whole value is known."""
    if given.value.unread is not None:
        return f"torch reads each of its characters as a folder, so {given.written} is never searched for headers"
    text = given.value.text.strip()
    characters = ", ".join(repr(character) for character in list(dict.fromkeys(text))[:3])
    return f"torch reads each of its characters as a folder ({characters}, ...), so {text} is never searched for headers"


def _str_refusal(given: StrForList, why: str, listed: list[str]) -> str:
    """The refusal of a str given for a list: the value, what torch does with it, the list to give
    (the expression in a list where a placeholder was left empty: its value is not known)."""
    if given.value.unread is not None:
        value, fix = given.written, f"[{given.written}]"
    else:
        value, fix = repr(given.value.text), repr(listed)
    return f"{given.argument} is a str ({value}), not a list: {why}; give a list, {fix}"


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
