"""`build submission.py`: compile the device code of every load_inline / load extension a submission
makes, without a GPU, into the build cache, and report per kernel as for our own kernels.

The generated .cu is what load_inline compiles (torch's prelude, then the cuda_sources), with a
`#line N "submission.py"` before each piece, so compiler errors name the .py line. cpp_sources are
host code (the pybind glue) and are not compiled here. Flags: the submission's own
extra_cuda_cflags, as the words the shell running torch's ninja command splits them into
(torch_nvcc.shell_words: "-Xptxas -v" is two), and include paths, torch's own flags for the extension as the installed torch writes
them into its ninja file (torch_nvcc: COMMON_NVCC_FLAGS, the extension defines, and the C++ standard
unless a flag starts with -std=), the arch's -gencode when the flags name none, and `-Xptxas -v` for the
resource report. Include folders are laid out as torch's ninja file lays them out
(_write_ninja_file_to_build_library): extra_include_paths as -I, torch's, the toolkit's and Python's
as -isystem, and no -I for a load() file's folder. CUTLASS, which torch never adds, only where the
submission's own folders bring none, searched after all of them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from nvfp4ctl.build import cache, flags, machine, resources, toolchain, torch_nvcc
from nvfp4ctl.build.arch_names import (LEADERBOARD_GPU, LEADERBOARD_GPU_ARCH, code_needs, gencode_flag,
                                       naming_the_arch, native_as_on_the_leaderboard, ptx_alone_arches)
from nvfp4ctl.build.compile import BUILD_TIMEOUT_S, run_compiler, timeout_message
from nvfp4ctl.build.compiler_errors import display_path, first_error
from nvfp4ctl.build.flag_problems import strs_for_lists, unusable_flags, untold_arch
from nvfp4ctl.build.full_disk import raise_if_out_of_space
from nvfp4ctl.build.read_once import header_file, source_text, worked_out_once
from nvfp4ctl.build.report import BuildReport
from nvfp4ctl.build.sources import NO_TENSOR_OP, marks_in
from nvfp4ctl.build.submission_headers import (flag_include_folders, header_digests, is_toolchain_folder,
                                               machine_cutlass_key, supplies_cutlass)
from nvfp4ctl.build.submission_sources import Extension, SubmissionSources, device_code
from nvfp4ctl.errors import UsageError
from nvfp4ctl.preprocessor import includes_cutlass, live_code

LEADERBOARD_COMPILE_S = 120.0  # kernelbot's Timeout.COMPILE for the first `python submission.py` (FACTS.md)
WARN_FRACTION = 0.6
PRELUDE = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"  # load_inline's own
# _command's layout, in the key: an entry built with an earlier one (torch's folders as -I ahead of the
# submission's, a load() file's folder as -I, -std=c++17 where torch gives c++20) may hold a build that
# reads other headers or now fails. Torch's own flags follow from its version, which the key holds, not
# from torch_nvcc's reading of them: a change to that reading is not keyed (docs/byo_kernel.md says so).
# 5: CUTLASS as -isystem after every folder of the submission's, and none where it brings its own.
# 6: the flags as the shell's words, no -gencode where a flag holds "arch", standards torch does not see
# followed by its own. tests/build/test_build_submission_cache.py records each layout's command: a change
# to _command's output fails there until this is raised.
COMMAND_LAYOUT = 6


@dataclass
class ExtensionBuild:
    extension: Extension
    unit: str  # the compiled file's name (generated .cu, or the load() source)
    report: BuildReport | None = None
    error: str | None = None
    seconds: float = 0.0  # this run's time for the unit: the compile, or reading a cache hit
    compile_s: float = 0.0  # nvcc's time in the build that made the cache entry (the leaderboard's budget)
    compile_cpu_s: float | None = None  # nvcc's CPU time (its tools' included) in that build; None: not measured
    compile_busy: bool = False  # load on this machine inflated compile_s (machine.busy_while)
    cached: bool = False
    built_meanwhile: bool = False  # a hit on an entry another process built while this one waited for the lock
    notes: list[str] = field(default_factory=list)
    log: str = ""  # the compiler's whole output when it failed
    timed_out: bool = False  # nvcc ran past its limit and was stopped: `error` says so, the build exits 3
    torch_fallback: str | None = None  # why torch's own flags could not be read, where the fallback built it


def generated_cu(extension: Extension, py_path: Path) -> str:
    """load_inline's prelude and the cuda_sources, each piece after a `#line` naming its .py line; a
    piece that continues a line (a concatenation mid-line) is appended as is."""
    text = PRELUDE
    for piece in extension.cuda:
        if piece.joined and not text.endswith("\n"):
            text += piece.text
            continue
        if not piece.joined and not text.endswith("\n"):
            text += "\n"
        text += f'#line {piece.line} "{py_path}"\n{piece.text}'
    return text + "\n"


def cutlass_includes() -> list[Path]:
    """The machine's CUTLASS include folders, found as an export's lookup finds them (toolchain.cutlass_headers)."""
    return toolchain.cutlass_include_dirs()


def cutlass_lookup_note(extension: Extension) -> str | None:
    """For an nvfp4ctl export's `extra_include_paths=_include_dirs()` (Extension.cutlass_lookup_line), the
    CUTLASS the build compiled with: the lookup runs at import and finds the leaderboard machine's, and build,
    which does not run it, adds this machine's, as for any code that brings none. None for any other file.
    Asked after the build, which has refused a machine without CUTLASS where the code needs it."""
    if extension.cutlass_lookup_line is None:
        return None
    from nvfp4ctl.export import CUTLASS_LOOKUP_FUNCTION

    lookup = (f"line {extension.cutlass_lookup_line}: extra_include_paths={CUTLASS_LOOKUP_FUNCTION}() is nvfp4ctl"
              f" export's lookup of CUTLASS's headers at import ({toolchain.CUTLASS_LOOKUP_ORDER}), which finds the"
              " leaderboard machine's")
    cutlass = _cutlass_built_with(extension)
    if cutlass == "none":
        return f"{lookup}; its code includes no CUTLASS header: built without them"
    if cutlass == "own":
        return f"{lookup}; built with the CUTLASS its flags name"
    return f"{lookup}; {built_with_machine_cutlass()}"


def machine_cutlass_note(extension: Extension) -> str | None:
    """For code that includes CUTLASS/CuTe headers where the call's own include folders (extra_include_paths,
    -I, -isystem) bring none: build compiled it with this machine's CUTLASS, which torch does not add on the
    leaderboard, so a clean build here says nothing of the compile there. None for any other extension, and
    for one whose include paths were an export's lookup or not read (their notes name the headers instead).
    Asked after the build, which has refused a machine without CUTLASS where the code needs it."""
    if extension.cutlass_lookup_line is not None or extension.unread_includes_line is not None:
        return None
    if _cutlass_built_with(extension) != "machine":
        return None
    own = _own_folders(extension)
    folders = "extra_include_paths, -I or -isystem"
    named = (f"no include folder of the call ({folders}) holds cute/ or cutlass/ here" if own
             else f"the call names no include folder ({folders})")
    return (f"line {extension.line}: its CUDA includes CUTLASS/CuTe headers and {named}: {built_with_machine_cutlass()};"
            " torch adds no CUTLASS on the leaderboard, so there they compile only where that machine's nvcc finds"
            " them by itself, which nothing here can tell: name the folder in extra_include_paths (an nvfp4ctl export"
            f" looks it up at import: {toolchain.CUTLASS_LOOKUP_ORDER})")


def unread_includes_note(extension: Extension) -> str | None:
    """For extra_include_paths build cannot read without running the file (Extension.unread_includes_line),
    what it built with instead: nothing, or, for code that includes CUTLASS and brings none through its flags,
    this machine's CUTLASS, named as for an export's lookup. None where the include paths were read."""
    if extension.unread_includes_line is None:
        return None
    unread = (f"line {extension.unread_includes_line}: extra_include_paths is not a static string expression"
              " (or an f-string whose placeholder build cannot read)")
    if _cutlass_built_with(extension) == "machine":
        return f"{unread}; {built_with_machine_cutlass(' CUTLASS in their place')}"
    return f"{unread}; built without them"


def _cutlass_built_with(extension: Extension) -> Literal["none", "own", "machine"]:
    """The CUTLASS an extension's build compiled with: none where its code includes no CUTLASS header, its own
    where its include folders bring a cute/ or cutlass/ tree, else this machine's."""
    if not includes_cutlass_anywhere(extension):
        return "none"
    return "own" if supplies_cutlass(_own_folders(extension)) else "machine"


def built_with_machine_cutlass(what: str = "") -> str:
    """The CUTLASS _command adds for code that brings none, in one wording for every note that names it:
    "built with this machine's{what}, as for any code that brings none: $CUTLASS_HOME's (/opt/cutlass/include)".
    Asked after the build, which has refused a machine without CUTLASS where the code needs it."""
    return f"built with this machine's{what}, as for any code that brings none: {toolchain.cutlass_headers().described()}"


def _command(extension: Extension, unit: Path, arch: str, code: str, folder: Path) -> list[str]:
    """nvcc's command for one unit: torch's own flags for the extension as its ninja file gives them
    (torch_nvcc), around the submission's. The include folders as torch lays them out: the submission's
    extra_include_paths as -I, torch's, the toolkit's and Python's as -isystem. Every -I folder is
    searched before every -isystem one, so a submission's header named like one of torch's (fp16.h) is
    its own, as on the leaderboard. A load() file's folder gets no -I (torch gives none): `#include
    "x.cuh"` still finds x.cuh beside the file, as nvcc always looks there, but `#include <x.cuh>` does
    not. After the submission's flags, what torch appends to them: the C++ standard unless one of them
    starts with -std= (after --std=c++17 too: nvcc uses the last), which torch changes between releases (c++17, then c++20): a fixed one failed kernels that
    build on the leaderboard. Last, for code that includes CUTLASS, the machine's CUTLASS as -isystem,
    unless the submission's own folders bring one (_adds_cutlass)."""
    # -arch=native as the leaderboard's nvcc reads it: this machine's GPU, or none, is not the one it runs on
    user = native_as_on_the_leaderboard(torch_nvcc.shell_words(extension.cuda_flags))
    torch = _torch_flags(extension, arch)
    command = [str(toolchain.nvcc_path()), "-c", str(unit), "-o", str(folder / f"{unit.stem}.o"),
               *(f"-I{path}" for path in extension.include_paths)]
    for path in torch.system_includes:
        command += ["-isystem", path]
    command += torch.leading
    if torch_nvcc.torch_adds_arch(extension.cuda_flags):  # torch looks at each flag as given
        command.append(gencode_flag(arch))
    command += [*user, *torch.trailing, *flags.REPORT_FLAGS]
    # a load() file's own folder, where its `#include "x.cuh"` is found; inline code is staged in `folder`
    beside = unit.parent if unit.parent != folder else None
    if _adds_cutlass(code, extension, beside):
        # last of the -isystem folders, searched after every folder of the submission's: as -I it came
        # before them all, and a checkout named by -isystem was keyed but the wheel's headers compiled
        for path in cutlass_includes():
            command += ["-isystem", str(path)]
    return command


def _torch_flags(extension: Extension, arch: str) -> torch_nvcc.TorchNvccFlags:
    """torch's flags for the extension, given its flags as torch is (each one as written, not yet split
    into the shell's words): torch looks at each for a standard (-std=) and an arch."""
    return torch_nvcc.extension_flags(extension.name, tuple(extension.cuda_flags), gencode_flag(arch))


def _flag_words(extension: Extension) -> list[str]:
    """extra_cuda_cflags as the words nvcc gets (torch_nvcc.shell_words); refuse_unsplittable has let
    through only flags the shell splits."""
    return torch_nvcc.shell_words(extension.cuda_flags)


def _key(code: str, extension: Extension, arches: tuple[str, ...], unit: Path | None = None) -> str:
    """What the unit's build depends on, read without importing torch (a cache hit stays cheap): the code
    as compiled, the local headers it includes (found as nvcc finds them: beside the including file, then
    in the -I folders in _command's order: extra_include_paths, then the flags', then in the flags'
    -isystem folders, which nvcc searches after every -I one; a CUTLASS checkout among them, or the
    machine's, by its headers' sizes and times), the extension's name (torch's
    -DTORCH_EXTENSION_NAME), its flags and include folders, a load() file's own folder, the command's
    layout, the compiler's environment variables (flags.CODE_CHANGING_ENV), every arch the nvcc run compiles (one arch as a str, as keys were before several were checked) and
    the toolchain (torch's version stands for the flags it adds, the C++ standard
    among them; a build with the fallback flags, where torch's could not be read, is keyed apart by
    _build_unit). Not the submission's file name: a copy of submission.py whose CUDA is the same builds
    the same objects."""
    search = [*(Path(folder) for folder in extension.include_paths), *flag_include_folders(_flag_words(extension))]
    headers = header_digests(code, unit.parent if unit is not None else None, search)
    torch = toolchain.torch_build()
    beside = unit.parent if unit is not None else None
    cutlass = _cutlass_in_key() if _keys_machine_cutlass(code, extension, beside) else None
    material = {"code": hashlib.sha256(code.encode()).hexdigest(), "extension": extension.name,
                "cuda_flags": list(extension.cuda_flags),
                "include_paths": [str(path) for path in extension.include_paths], "headers": headers,
                "arch": arches[0] if len(arches) == 1 else list(arches),
                "unit_folder": str(unit.parent) if unit is not None else None, "layout": COMMAND_LAYOUT,
                "nvcc": toolchain.nvcc_version(), "torch": [torch.version, torch.cuda], "python": toolchain.python_abi(),
                "cutlass": cutlass, "sass_tools": toolchain.sass_tools() is not None}
    if environment := flags.code_changing_env():  # only when set, so the usual keys stay what they were
        material["environment"] = environment
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def includes_cutlass_anywhere(extension: Extension) -> bool:
    """Whether an extension's device code includes a CUTLASS/CuTe header, itself or through a local header
    it reaches (found as _key finds them): its compile takes minutes where a plain kernel's takes seconds."""
    units = [(extension.cuda_text, None)] if extension.cuda else []
    units += [(source_text(path), path.parent) for path in extension.device_files if path.is_file()]
    return any(_reaches_cutlass(code, beside, extension) for code, beside in units)


def _reaches_cutlass(code: str, beside: Path | None, extension: Extension) -> bool:
    """Whether one unit includes a CUTLASS/CuTe header, itself or through a local header it reaches (found as
    _key finds them, from `beside`, the folder of a load() file)."""
    if includes_cutlass(live_code(code)):
        return True
    for header, _ in header_digests(code, beside, _own_folders(extension)):
        found = Path(header)
        if found.is_dir() or includes_cutlass(header_file(found).live):  # header_digests has read it
            return True  # a folder: the CUTLASS checkout an include of the code was found in
    return False


def _own_folders(extension: Extension) -> list[Path]:
    """The submission's include folders: extra_include_paths, then its flags' -I and -isystem ones."""
    return [*(Path(folder) for folder in extension.include_paths), *flag_include_folders(_flag_words(extension))]


def _adds_cutlass(code: str, extension: Extension, beside: Path | None) -> bool:
    """Whether _command adds the machine's CUTLASS (cutlass_includes): for code that includes CUTLASS, itself
    or through a header of its own (`#include "gemm.cuh"`, which includes cute/), unless the submission's own include folders (extra_include_paths, the flags' -I and -isystem) bring
    a cute/ or cutlass/ tree. torch adds none on the leaderboard: a submission that brings its own
    compiles with its own alone, one that relies on the machine's gets this machine's."""
    return _reaches_cutlass(code, beside, extension) and not supplies_cutlass(_own_folders(extension))


def _keys_machine_cutlass(code: str, extension: Extension, beside: Path | None) -> bool:
    """Whether the key holds the machine's CUTLASS (_cutlass_in_key): where _command adds it, and where a
    folder of the submission's that brings CUTLASS is the toolchain's own (it names the wheel's), whose
    headers the key does not read. Not where the submission brings a checkout of its own (it counts by
    its headers' stamps): a new wheel changes nothing it compiles, and rebuilt it for nothing."""
    if not _reaches_cutlass(code, beside, extension):
        return False
    own = [folder for folder in _own_folders(extension) if supplies_cutlass([folder])]
    return not own or any(is_toolchain_folder(folder) for folder in own)


def _cutlass_in_key() -> list[str] | str | None:
    """The CUTLASS that _command adds (machine_cutlass_key); None where there is none, which the build refuses."""
    try:
        return machine_cutlass_key()
    except UsageError:
        return None


def keyed_code(code: str, py_path: Path) -> str:
    """A generated .cu without the `#line N "<py>"` marks generated_cu puts before each piece: they name
    the .py and its lines for compiler messages (a failed build is never cached) and change nothing an
    entry holds (report, SASS), so a renamed copy, or Python edited above the CUDA, reuses the entry."""
    marks = re.compile(rf'^#line \d+ "{re.escape(str(py_path))}"\n', re.MULTILINE)
    return marks.sub("", code)


def refuse_unreadable(sources: SubmissionSources, extension: Extension) -> None:
    """UsageError when the extension's device code is given but cannot be read without running the file:
    building nothing and passing would claim a kernel compiles that was never looked at."""
    if extension.unreadable is None:
        return
    line, what = extension.unreadable
    if extension.sources_path_alone:
        written = what.removeprefix("sources ").strip("`")
        raise UsageError(f"{display_path(sources.path)}:{line}: {extension.name}'s sources `{written}` is a pathlib.Path"
                         " alone, not a list: torch iterates sources and fails on it (TypeError: 'PosixPath' object is"
                         f" not iterable); give a list, sources=[{written}]")
    raise UsageError(f"{display_path(sources.path)}:{line}: {extension.name}'s {what} is not a static string expression, and build"
                     " reads the sources statically (string literals, names bound to them, +, f-strings of constants,"
                     " textwrap.dedent, paths made from __file__ with os.path or pathlib) without running the file:"
                     " it cannot see this device code")


def refuse_unsplittable(sources: SubmissionSources, extension: Extension) -> None:
    """UsageError where extra_cuda_cflags are flags torch's build fails on (flag_problems.unusable_flags)."""
    problem = unusable_flags(extension)
    if problem is not None:
        line, why = problem
        raise UsageError(f"{display_path(sources.path)}:{line}: {extension.name}'s {why}")


def refuse_strs_for_lists(sources: SubmissionSources, extension: Extension) -> None:
    """UsageError where extra_cflags, extra_ldflags or extra_include_paths is a str torch's build reads one
    character an element (flag_problems.strs_for_lists): build read it as the one folder or the flags meant,
    and passed what the leaderboard's build fails on."""
    problems = strs_for_lists(extension)
    if problems:
        given, why = problems[0]
        raise UsageError(f"{display_path(sources.path)}:{given.line}: {extension.name}'s {why}")


def refuse_unknown_arch(sources: SubmissionSources, extension: Extension) -> None:
    """UsageError where the flags name an arch build cannot know (flag_problems.untold_arch)."""
    problem = untold_arch(extension)
    if problem is not None:
        line, why = problem
        raise UsageError(f"{display_path(sources.path)}:{line}: {extension.name}'s {why}")


def gpu_arch_note(sources: SubmissionSources, extension: Extension, arch: str, why: str) -> str | None:
    """The warning for an extension whose code needs an arch-specific target (tcgen05: sm_100a) that nothing in
    the file names: torch then compiles for the GPU it runs on (10.0+PTX on a B200: sm_100, where tcgen05 does not
    assemble); code without such instructions, built with --arch sm_100a, gets none. The build keeps the arch
    the code needs, as the leaderboard's environment is not known for certain; the note says what torch would
    do and the fix. Where a TORCH_CUDA_ARCH_LIST whose value build cannot read is set before the call, the note
    says so: torch compiles for what it holds. None where neither is so."""
    unread = sources.unread_arch_list(extension)
    if unread is not None:
        return (f"line {unread.line} ({unread.written}) sets, or may set, TORCH_CUDA_ARCH_LIST to a value build cannot"
                f" read without running the file: torch compiles for the archs it holds at the call, which build cannot"
                f" tell; built here for {arch}. Set it to a string constant at module level, above the call, to build for its archs")
    if not arch.endswith("a") or not sources.torch_picks_gpu_arch(extension):
        return None
    needs = code_needs(device_code(extension))
    if needs is None:  # code any arch assembles (--arch sm_100a of plain CUDA): torch's sm_100 builds it as well
        return None
    what = f"the code's {needs[1]} do"
    hopper = " (and 9.0+PTX, sm_90, on an H100)" if arch == "sm_90a" else ""
    return (f"no arch is named for this call ({sources.no_arch_named(extension)}): torch compiles"
            f" for the GPU it runs on, {LEADERBOARD_GPU_ARCH[0]} ({LEADERBOARD_GPU_ARCH[1]}, without the a) on the"
            f" {LEADERBOARD_GPU} that runs GPU MODE's NVFP4 problems{hopper}, where {what} not assemble; built here"
            f" for {arch} ({why}). Name it: {naming_the_arch(arch)}{sources.arch_list_remarks(extension)}")


def build_extension(sources: SubmissionSources, extension: Extension, arch: str) -> list[ExtensionBuild]:
    """Every compiled unit of one extension: its generated .cu (load_inline) or its .cu files (load)."""
    refuse_unreadable(sources, extension)
    refuse_unsplittable(sources, extension)
    refuse_strs_for_lists(sources, extension)
    refuse_unknown_arch(sources, extension)
    if extension.call == "load_inline" and not extension.cuda:
        return [ExtensionBuild(extension, "-", notes=[*extension_notes(extension),
                                                      "no cuda_sources: host code only, nothing to compile"])]
    units = _units(sources, extension)
    built = [_declared(_build_unit(sources, extension, arch, name, code, path), code) for name, code, path in units]
    if built:  # the extension's notes once, with its first unit: a load() of several .cu files said each per file
        built[0].notes[:0] = extension_notes(extension)
    return built


def _units(sources: SubmissionSources, extension: Extension) -> list[tuple[str, str, Path | None]]:
    """(unit name, code, file on disk) of each unit the extension compiles: load_inline's generated .cu, or
    load()'s .cu files; a load() file that is not there is one line (UsageError). Made once within
    read_once.reading_once, for the progress line (has_build) and the build (the extension's key: its identity,
    as it lives for the whole command)."""
    return worked_out_once(("submission units", id(extension)), lambda: _units_of(sources, extension))


def _units_of(sources: SubmissionSources, extension: Extension) -> list[tuple[str, str, Path | None]]:
    units: list[tuple[str, str, Path | None]] = []
    if extension.call == "load_inline" and extension.cuda:
        units.append((f"{extension.name}.cu", generated_cu(extension, sources.path), None))
    for path in extension.files:
        if path.suffix not in (".cu", ".cuh"):
            continue
        if not path.is_file():
            raise UsageError(f"{display_path(sources.path)}:{extension.line}: load() source {display_path(path)} does not exist")
        units.append((path.name, source_text(path), path))
    return units


def _unit_key(sources: SubmissionSources, extension: Extension, arch: str, name: str, code: str,
              path: Path | None) -> str:
    """_key of one unit (`name`, `code`, its file `path` for a load() source, None for load_inline's), made once
    within read_once.reading_once (has_build's and the build's: each hashed the code and its headers)."""
    return worked_out_once(("submission unit key", id(extension), arch, name, path),
                           lambda: _key(keyed_code(code, sources.path) if path is None else code, extension,
                                        _keyed_arches(sources, extension, arch), path))


def _run_arches(sources: SubmissionSources, extension: Extension, arch: str) -> tuple[str, ...]:
    """Every arch the nvcc run of a unit built for `arch` compiles: the archs its own flags name (several -gencode
    are one run, `arch` the first of them), else `arch` alone (torch adds its -gencode)."""
    if sources.arches_in_one_run(extension):
        return sources.extension_arches(extension, None)[0]
    return (arch,)


def _ptx_alone(sources: SubmissionSources, extension: Extension) -> frozenset[str]:
    """The archs of a unit's nvcc run its own flags compile to PTX alone (-gencode=arch=compute_100a,code=compute_100a):
    no SASS of theirs to check."""
    if not sources.arches_in_one_run(extension):
        return frozenset()  # torch's -gencode for a TORCH_CUDA_ARCH_LIST entry compiles its SASS
    return ptx_alone_arches(torch_nvcc.shell_words(extension.cuda_flags))


def _keyed_arches(sources: SubmissionSources, extension: Extension, arch: str) -> tuple[str, ...]:
    """_run_arches as the key names them: an arch compiled to PTX alone as its compute_ name (compute_100a), a
    build apart from its SASS."""
    ptx_alone = _ptx_alone(sources, extension)
    return tuple(name.replace("sm_", "compute_", 1) if name in ptx_alone else name
                 for name in _run_arches(sources, extension, arch))


def unit_headers(sources: SubmissionSources, extension: Extension) -> list[Path]:
    """The local headers the extension's units include, found as _key finds them (a CUTLASS checkout's and the
    toolchain's left out), in first-seen order; none where a unit cannot be read (the build says why)."""
    headers: dict[Path, None] = {}
    try:
        units = _units(sources, extension)
    except (UsageError, OSError):
        return []
    for _, code, path in units:
        for header, _ in header_digests(code, path.parent if path is not None else None, _own_folders(extension)):
            if Path(header).is_file():  # a folder is a CUTLASS checkout, keyed by its stamps
                headers.setdefault(Path(header))
    return list(headers)


def _entry(name: str, arch: str, key: str) -> Path:
    """The cache folder of a unit's build under `key`."""
    return cache.cache_root() / f"submission-{Path(name).stem}-{arch}-{key[:16]}"


def _fallback_key(key: str) -> str:
    """The key of a unit built with the fallback flags, where torch's could not be read: once they can be, the
    next build makes its own entry rather than reusing this one."""
    return hashlib.sha256(f"{key} torch-flags-fallback".encode()).hexdigest()


def has_build(sources: SubmissionSources, extension: Extension, arch: str) -> bool:
    """Whether every unit of the extension has a build for `arch` in the cache, so that building it compiles
    nothing: files only, as a cache hit reads them, and torch's flags where only the fallback flags' entry is
    there (_build_unit reads them then too). False where it has no unit or one cannot be read."""
    def built(name: str, key: str) -> bool:
        if BuildReport.cached(_entry(name, arch, key), sources.path) is not None:
            return True
        return (BuildReport.cached(_entry(name, arch, _fallback_key(key)), sources.path) is not None
                and _torch_flags(extension, arch).fallback_reason is not None)

    try:
        units = _units(sources, extension)
        return bool(units) and all(built(name, _unit_key(sources, extension, arch, name, code, path))
                                   for name, code, path in units)
    except (UsageError, OSError):  # the build itself says what is wrong
        return False


def extension_notes(extension: Extension) -> list[str]:
    """What the extension's build warns of, whatever its units: what its sources left out, and a standard
    of its own that torch does not see and follows with its own, which nvcc then uses."""
    notes = list(extension.notes)
    includes = unread_includes_note(extension)
    if includes is not None:
        notes.append(includes)
    standard = torch_nvcc.overridden_standard(extension.cuda_flags)
    if standard is not None:
        notes.append(f"extra_cuda_cflags' {standard} does not apply: torch appends its own -std= after it (it looks"
                     " for a flag that starts with -std=) and nvcc uses the last; give -std=c++NN as a flag of its own")
    taken = torch_nvcc.arch_taken_for_none(extension.cuda_flags)
    if taken is not None:
        notes.append(f"extra_cuda_cflags' {taken} holds \"arch\": torch takes it for an arch flag and adds none of its"
                     " own, so nvcc compiles for its default arch, here as on the leaderboard; name the arch"
                     " (-gencode=arch=compute_100a,code=sm_100a)")
    return notes


def _declared(result: ExtensionBuild, code: str) -> ExtensionBuild:
    """A unit whose code says `// nvfp4ctl: no-tensor-op` (the export of a plain-CUDA kernel carries the
    kernel's line) passes without a tensor-core op, as that .cu built alone does; read from the code on
    every build, never stored in the cache (builder._declared)."""
    if result.report is not None and marks_in(code, NO_TENSOR_OP):
        result.report = replace(result.report, tensor_op=replace(result.report.tensor_op, declared_none=True))
    return result


def _build_unit(sources: SubmissionSources, extension: Extension, arch: str, name: str, code: str,
                path: Path | None) -> ExtensionBuild:
    started = time.perf_counter()
    result = ExtensionBuild(extension, name)
    key = _unit_key(sources, extension, arch, name, code, path)
    entry = _entry(name, arch, key)

    def cached() -> bool:
        report = BuildReport.cached(entry, sources.path)
        if report is None:
            return False
        result.report, result.cached = report, True
        # this run's time, shown as a hit as a kernel's is; the budget line counts the compile's time
        result.seconds, result.compile_s = round(time.perf_counter() - started, 2), result.report.compile_s
        result.compile_cpu_s, result.compile_busy = result.report.compile_cpu_s, result.report.compile_busy
        return True

    if cached():
        return result
    fallback = _torch_flags(extension, arch).fallback_reason  # reads torch's flags (imports torch) on a miss only
    if fallback is not None:
        result.torch_fallback = fallback  # built with the fallback flags, under a key of its own
        key = _fallback_key(key)
        entry = _entry(name, arch, key)
        if cached():
            return result
    with cache.locked(entry, f"{name} ({arch})"):
        if cached():  # another process built it while this one waited: its `seconds` are the wait
            result.built_meanwhile = True
            return result
        with cache.staging(entry) as folder:
            unit = path if path is not None else folder / name
            if path is None:
                unit.write_text(code)
            command = _command(extension, unit, arch, code, folder)
            compiling, cpu_before = time.perf_counter(), machine.children_cpu_seconds()
            try:  # ended with every process below it on an interrupt, as a kernel's build (run_compiler)
                returncode, log = run_compiler(command, folder, {**os.environ, "CUDA_HOME": str(toolchain.cuda_home())},
                                               timeout_s=BUILD_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                result.error = f"{name}: {timeout_message('nvcc', BUILD_TIMEOUT_S)}"
                result.timed_out = True
                result.seconds = result.compile_s = BUILD_TIMEOUT_S
                return result
            result.compile_s = round(time.perf_counter() - compiling, 2)
            # wall time on a loaded machine says as much about the neighbours as about the code
            result.compile_cpu_s = round(machine.children_cpu_seconds() - cpu_before, 2)
            result.compile_busy = machine.busy_while(result.compile_s, result.compile_cpu_s)
            result.seconds = round(time.perf_counter() - started, 2)
            (folder / "build.log").write_text(" ".join(command) + "\n" + log)
            raise_if_out_of_space(returncode, log, folder)
            if returncode != 0:
                cache.raise_if_removed(folder)  # the compiler's "cannot create" names no error of the code's
                result.error = first_error(log, (sources.path, *(p for p in [path] if p))) or (
                    log.strip().splitlines() or ["nvcc failed"])[-1]
                result.log = log
                return result
            obj = folder / f"{unit.stem}.o"
            sass = resources.dump_sass(obj)
            if sass is not None:
                resources.save_sass(folder, sass)
            arches = _run_arches(sources, extension, arch)
            # each arch against its own SASS; one compiled to PTX alone has none to check
            checks = resources.check_tensor_ops(arches, sass, _ptx_alone(sources, extension))
            report = BuildReport(source=sources.path, arch=arch, key=key, entry=folder, module_name=None,
                                 functions=resources.parse_ptxas(log), tensor_op=checks[0],
                                 compile_s=result.compile_s, compile_cpu_s=result.compile_cpu_s,
                                 compile_busy=result.compile_busy, other_arches=tuple(zip(arches[1:], checks[1:])))
            report.save()
            obj.unlink(missing_ok=True)
            cache.land(folder, entry)
        result.report = report.moved_to(entry)
    result.seconds = round(time.perf_counter() - started, 2)
    return result


def compile_budget(seconds: float) -> tuple[float, bool]:
    """(fraction of the leaderboard's 120 s, past the 60 % warning line)."""
    fraction = seconds / LEADERBOARD_COMPILE_S
    return fraction, fraction > WARN_FRACTION
