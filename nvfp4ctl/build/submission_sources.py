"""What a submission.py compiles: the CUDA/C++ sources, flags and arch of every
`torch.utils.cpp_extension.load_inline(...)` / `load(...)` call, read statically from its AST.

The entry of that read; its parts live beside it: syntax_index (one walk of the tree, shared by the parts),
static_values (an expression's value), arch_list_reader (the TORCH_CUDA_ARCH_LIST settings), arch_names (how an
arch is named)."""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from nvfp4ctl.build.arch_list_reader import ARCH_LIST, GPU_PICKED_ARCH_LISTS, ArchListReader, ArchListSetting
from nvfp4ctl.build.arch_names import (LEADERBOARD_GPU, LEADERBOARD_GPU_ARCH, NVCC_DEFAULT_ARCH, arch_list_arches,
                                       code_needs, machine_arch_option, named_arch, named_arches)
from nvfp4ctl.build.compiler_errors import display_path
from nvfp4ctl.build.export_lookup import is_export_lookup, returns_no_folders
from nvfp4ctl.build.read_once import source_text
from nvfp4ctl.build.static_values import (Piece, StaticEvaluator, elements, join_pieces, unread_lines,
                                          unread_notes)
from nvfp4ctl.build.syntax import call_name, keyword_argument, shown
from nvfp4ctl.build.syntax_index import SyntaxIndex, index_of
from nvfp4ctl.cpp_lexer import blank
from nvfp4ctl.errors import UsageError
from nvfp4ctl.submission_text import read_submission

__all__ = ["ARCH_LIST", "CUTE_DSL", "CUTE_DSL_USE", "GPU_PICKED_ARCH_LISTS", "NVCC_DEFAULT_ARCH", "ArchListSetting",
           "Extension", "Piece", "SubmissionSources", "arch_list_arches", "code_needs", "device_code", "find_sources",
           "join_pieces", "load_source_files", "named_arch", "sources_in"]

CUTE_DSL = re.compile(r"^\s*(?:import\s+cutlass\.cute|from\s+cutlass\s+import\s+cute|import\s+cutlass\b.*$|"
                      r"from\s+cutlass\.cute)", re.MULTILINE)
CUTE_DSL_USE = re.compile(r"@cute\.(?:kernel|jit)\b|\bcute\.compile\(")


# A user header (a quoted include) or a using-declaration may declare a function where a text scan of
# cpp_sources cannot see it; <torch/extension.h> and the like declare none of the user's.
_DECLARED_ELSEWHERE = re.compile(r'^\s*#\s*include\s*"|\busing\s+(?!namespace\b)[\w:]*::\w+\s*;', re.MULTILINE)


@dataclass(frozen=True)
class NotAList:
    """A list argument of torch's that a call gives as a value torch fails on other than a str: extra_ldflags
    as a tuple (torch appends to it), extra_include_paths as a pathlib.Path or holding one (torch iterates it,
    and strips each folder)."""

    argument: str  # extra_ldflags | extra_include_paths
    node: ast.expr  # the argument's expression, where messages point
    kind: str  # "tuple" | "Path" | "Path element"
    value: str  # the value as a message shows it: read where static, else as written
    listed: str  # the list to give, as written in Python

    @property
    def line(self) -> int:
        return self.node.lineno


@dataclass(frozen=True)
class StrForList:
    """A list argument of torch's that a call gives as one str (extra_include_paths="inc"): torch iterates it,
    one character an element."""

    argument: str  # extra_cflags | extra_ldflags | extra_include_paths
    node: ast.expr  # the argument's expression, where messages point
    value: Piece  # unread: a placeholder of an f-string left empty

    @property
    def line(self) -> int:
        return self.node.lineno

    @property
    def written(self) -> str:
        return shown(self.node)


@dataclass
class Extension:
    """One load_inline / load call."""

    call: str  # load_inline | load
    name: str
    line: int
    deferred: bool = False  # called inside a function: module-level statements run before it, wherever they are
    cuda: list[Piece] = field(default_factory=list)
    cpp: list[Piece] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)  # load(sources=[...]): .cu/.cpp paths
    cuda_flags: list[str] = field(default_factory=list)
    # False where extra_cuda_cflags are given but not static: built without them, they may name the arch
    cuda_flags_static: bool = True
    cpp_flags: list[str] | None = field(default_factory=list)  # extra_cflags; None: not a static expression
    # extra_include_paths, absolute: torch makes each one os.path.abspath against the process's working
    # folder, which for the leaderboard's `python submission.py` is the submission's; nvcc here runs elsewhere
    include_paths: list[str] = field(default_factory=list)
    # the line of an nvfp4ctl export's `extra_include_paths=_include_dirs()`: its CUTLASS lookup at import,
    # which build does not run; it adds this machine's CUTLASS instead, as for code that brings none
    cutlass_lookup_line: int | None = None
    # the line of extra_include_paths that are not static (and not an export's lookup): built without them
    unread_includes_line: int | None = None
    notes: list[str] = field(default_factory=list)  # what could not be read statically
    # load_inline's functions= names, None when absent or not static; cpp_read: cpp_sources was read
    functions: list[str] | None = None
    cpp_read: bool = False
    # (line, what): device code is given (cuda_sources / load's sources) but not as a static expression,
    # so build cannot see it; unlike an absent cuda_sources, this must not pass as host code only
    unreadable: tuple[int, str] | None = None
    # load()'s sources is one pathlib.Path: read, but torch fails on it (it iterates sources), so unreadable too
    sources_path_alone: bool = False
    # (line, why): extra_cuda_cflags torch itself fails on (a str, a flag that is not a str)
    unusable_flags: tuple[int, str] | None = None
    # extra_cflags, extra_ldflags, extra_include_paths given as a str: torch reads each character as an element
    strs_for_lists: list[StrForList] = field(default_factory=list)
    # extra_ldflags as a tuple, extra_include_paths as or holding a pathlib.Path: torch fails on both
    not_lists: list[NotAList] = field(default_factory=list)

    @property
    def cuda_text(self) -> str:
        return join_pieces(self.cuda)

    @property
    def device_files(self) -> list[Path]:
        """load()'s .cu/.cuh sources: the files nvcc compiles (a .cpp is host code)."""
        return [path for path in self.files if path.suffix in (".cu", ".cuh")]

    @property
    def has_device_code(self) -> bool:
        return bool(self.cuda) or bool(self.device_files)

    @property
    def compiles_cpp(self) -> bool:
        """Whether torch runs the host compiler, with extra_cflags: load_inline always writes a main.cpp
        (cpp_sources plus the pybind11 module of `functions`), load() for each source that is no .cu/.cuh."""
        return self.call == "load_inline" or len(self.files) > len(self.device_files)

    def undeclared_functions(self) -> list[str]:
        """functions= names the cpp_sources never declare: load_inline's generated binding
        (`m.def("name", name)`) then fails to compile, which this build, compiling the device code
        only, would not see."""
        if self.functions is None or not self.cpp_read:
            return []
        code = blank(join_pieces(self.cpp)).code
        if _DECLARED_ELSEWHERE.search(code):  # a header or a using-declaration may declare them: not ours to tell
            return []
        return [name for name in self.functions if not re.search(rf"(?<![\w.]){re.escape(name)}\s*\(", code)]


@dataclass
class SubmissionSources:
    path: Path
    extensions: list[Extension]
    arch_list_settings: list[ArchListSetting]  # in the file's order
    cute_dsl: bool  # imports cutlass.cute and defines @cute.kernel / calls cute.compile
    text: str
    # os.putenv("TORCH_CUDA_ARCH_LIST", ...) lines: putenv leaves os.environ, which torch reads, unchanged
    arch_list_putenv: list[int] = field(default_factory=list)

    @property
    def env_arch_list(self) -> str | None:
        """The last TORCH_CUDA_ARCH_LIST the file sets."""
        return self.arch_list_settings[-1].value if self.arch_list_settings else None

    def arch_list_setting(self, extension: Extension) -> ArchListSetting | None:
        """The statement whose TORCH_CUDA_ARCH_LIST torch reads in the extension's call, None where none is
        set: the last that runs before it. A module-level statement runs before a call inside a function
        (custom_kernel's) wherever it is written, and after a module-level call written above it; one inside
        a function runs when the function is called, which may be never before a module-level call, so it
        reaches only calls inside functions (deferred_arch_lists says what it leaves out); otherwise the
        file's line order decides. A setdefault sets it only where none is set (the environment the file
        runs in is taken to set none), a del or pop unsets it."""
        current: ArchListSetting | None = None
        # for a call inside a function, every module-level statement has run before any function's
        in_run_order = sorted(self.arch_list_settings, key=lambda setting: (setting.deferred, setting.line))
        for setting in in_run_order if extension.deferred else self.arch_list_settings:
            if setting.deferred and not extension.deferred:
                continue
            if not (setting.line < extension.line or (extension.deferred and not setting.deferred)):
                continue
            if setting.kind == "unset":
                current = None
            elif setting.kind == "set" or current is None:
                current = setting
        return current

    def arch_list_for(self, extension: Extension) -> str | None:
        """The TORCH_CUDA_ARCH_LIST torch reads for the extension's call; None where none is set or where
        its value is not static (arch_list_setting tells them apart)."""
        setting = self.arch_list_setting(extension)
        return setting.value if setting is not None else None

    def no_arch_named(self, extension: Extension) -> str:
        """Why torch picks the GPU's arch for the call, as a note says it: no arch flag, and no
        TORCH_CUDA_ARCH_LIST before it or one torch reads as unset ("native", empty)."""
        setting = self.arch_list_setting(extension)
        if setting is not None and setting.value is not None:
            return f"no arch flag; TORCH_CUDA_ARCH_LIST is {setting.value!r} before it, which torch reads as unset"
        return "no arch flag, no TORCH_CUDA_ARCH_LIST set before it"

    def unread_arch_list(self, extension: Extension) -> ArchListSetting | None:
        """The TORCH_CUDA_ARCH_LIST setting torch reads for the call where build cannot read its value, and
        torch adds an arch flag from it (no flag of the extension's holds "arch")."""
        from nvfp4ctl.build import torch_nvcc

        setting = self.arch_list_setting(extension)
        if setting is None or setting.value is not None or not torch_nvcc.torch_adds_arch(extension.cuda_flags):
            return None
        return setting

    def torch_picks_gpu_arch(self, extension: Extension) -> bool:
        """Whether torch compiles the extension for the GPU it runs on: it adds its own arch flag (no flag
        holds "arch") and no TORCH_CUDA_ARCH_LIST is set before the call, or an empty one
        (_get_cuda_arch_flags then reads the visible GPUs' capability: 10.0+PTX, sm_100 without the a, on a
        B200). Not where one is set to a value build cannot read, nor where extra_cuda_cflags are not
        static: either may name the arch."""
        from nvfp4ctl.build import torch_nvcc

        setting = self.arch_list_setting(extension)
        return (extension.cuda_flags_static and torch_nvcc.torch_adds_arch(extension.cuda_flags)
                and (setting is None or setting.value in GPU_PICKED_ARCH_LISTS))

    def deferred_arch_lists(self, extension: Extension) -> list[ArchListSetting]:
        """The settings inside a function that a module-level call does not see: the function may not have
        run before the call (arch_list_setting leaves them out)."""
        if extension.deferred:
            return []
        return [setting for setting in self.arch_list_settings if setting.deferred and setting.kind != "unset"]

    def arch_list_remarks(self, extension: Extension) -> str:
        """What a note of an arch torch picks for the extension adds: a TORCH_CUDA_ARCH_LIST set by
        os.putenv, or inside a function, which a module-level call may run before."""
        deferred = self.deferred_arch_lists(extension)
        if not deferred:
            return self.putenv_remark()
        lines = ", ".join(str(setting.line) for setting in deferred)
        several = len(deferred) > 1
        return (f"{self.putenv_remark()} (line{'s' if several else ''} {lines} set{'' if several else 's'}"
                f" TORCH_CUDA_ARCH_LIST inside a function, which may not have run before this module-level call:"
                f" set it at module level, above the call)")

    def putenv_remark(self) -> str:
        """What a note of an arch torch picks adds where the file sets TORCH_CUDA_ARCH_LIST by os.putenv."""
        if not self.arch_list_putenv:
            return ""
        lines = ", ".join(str(line) for line in self.arch_list_putenv)
        return (f" (os.putenv on line {lines} does not change os.environ, which torch reads:"
                f' set os.environ["{ARCH_LIST}"] instead)')

    def extension_arches(self, extension: Extension, requested: str | None) -> tuple[tuple[str, ...], str]:
        """(archs, where they came from) of the compile of one extension's device code: the arch its flags
        name, else the leaderboard GPU's for -arch=native (code that needs an a is refused before:
        flag_problems.untold_arch), else nvcc's default where torch adds no arch flag (one of the flags holds "arch"), else every
        arch of the TORCH_CUDA_ARCH_LIST set before the call (torch compiles each), else the arch build
        infers (arch())."""
        from nvfp4ctl.build import torch_nvcc

        named = self._flag_arches(extension)
        if named is not None:
            arches, options = named
            return arches, f"{extension.name}'s flag{'s' if len(options) > 1 else ''} {', '.join(options)}"
        machine = machine_arch_option(torch_nvcc.shell_words(extension.cuda_flags))
        if machine is not None and machine[0] == "native":
            return ((LEADERBOARD_GPU_ARCH[1],),
                    f"{extension.name}'s flag {machine[1]}: the GPU it runs on, the {LEADERBOARD_GPU}'s")
        taken = torch_nvcc.arch_taken_for_none(extension.cuda_flags)
        if taken is not None:
            return (NVCC_DEFAULT_ARCH,), f"nvcc's default: {extension.name}'s flag {taken} holds \"arch\", so torch adds none"
        setting = self.arch_list_setting(extension)
        if setting is not None and setting.value and setting.value not in GPU_PICKED_ARCH_LISTS:
            arches = arch_list_arches(setting.value, f"{self.path}:{setting.line}")
            return arches, f"TORCH_CUDA_ARCH_LIST={setting.value}"
        unread = self.unread_arch_list(extension)
        if unread is None:
            arch, why = self.arch(requested)
            return (arch,), why
        told = self.told_arch(requested)
        if told is None:
            raise UsageError(f"{self.path}:{unread.line}: {unread.written} sets, or may set, TORCH_CUDA_ARCH_LIST to a"
                             " value build cannot read without running the file, and nothing else names the arch;"
                             " pass --arch, or set it to a string constant")
        return (told[0],), f"{told[1]}; the TORCH_CUDA_ARCH_LIST of line {unread.line} is not static"

    def arches_in_one_run(self, extension: Extension) -> bool:
        """Whether the extension's own flags name its archs: nvcc compiles them all in the one run those flags
        give (torch adds no arch flag), where each arch of a TORCH_CUDA_ARCH_LIST is a -gencode torch adds, built
        here in a run of its own."""
        return self._flag_arches(extension) is not None

    def _flag_arches(self, extension: Extension) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """named_arches of the extension's flags: (archs, the options naming them), None where they name none."""
        from nvfp4ctl.build import torch_nvcc

        return named_arches(torch_nvcc.shell_words(extension.cuda_flags))

    def arch(self, requested: str | None) -> tuple[str, str]:
        """(arch, where it came from) where no TORCH_CUDA_ARCH_LIST applies and torch adds its own arch
        flag, which on the leaderboard names the GPU's (torch_picks_gpu_arch): told_arch's, else the
        leaderboard GPU's sm_100 for code any arch assembles, which torch compiles for the B200 it runs on
        (10.0+PTX), as build takes -arch=native."""
        told = self.told_arch(requested)
        if told is not None:
            return told
        return LEADERBOARD_GPU_ARCH[1], f"no arch named: the GPU it runs on, the {LEADERBOARD_GPU}'s"

    def told_arch(self, requested: str | None) -> tuple[str, str] | None:
        """(arch, where it came from) of the -gencode/-arch of another extension's flags, --arch, tcgen05 ->
        sm_100a, wgmma -> sm_90a; None where none of them names one."""
        from nvfp4ctl.build import torch_nvcc

        for extension in self.extensions:
            named = named_arch(torch_nvcc.shell_words(extension.cuda_flags))
            if named is not None:
                return named[0], f"{extension.name}'s flag {named[1]}"
        if requested:
            return requested, "--arch"
        needs = code_needs("\n".join(device_code(e) for e in self.extensions))
        if needs is not None:
            return needs[0], f"the code uses {needs[1].removesuffix(' instructions')}"
        return None


def device_code(extension: Extension) -> str:
    """The device code of one extension: its cuda_sources, or the .cu/.cuh files load() compiles. Each file
    starts on a line of its own, so a // comment at the end of one does not run into the next."""
    return "\n".join([extension.cuda_text, *(source_text(path) for path in extension.device_files if path.is_file())])


def find_sources(path: Path, named: str | None = None) -> SubmissionSources:
    """`named`: the file as messages name it (default: relative to the working folder where under it)."""
    named = named or display_path(path)
    text = read_submission(path, named)  # as check reads it: a file that is not UTF-8 is the same line
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as error:
        raise UsageError(f"{named}:{error.lineno}: not valid Python ({error.msg})") from error
    except (RecursionError, MemoryError) as error:  # Python's parser gives up on a very deep expression
        raise UsageError(f"{named}: an expression is nested too deeply for Python's parser ({error}): build reads the"
                         " sources without running the file and cannot read this one (python cannot compile it"
                         " either); join fewer terms with +, or give the pieces as a list") from None
    return sources_in(path, text, tree)


def sources_in(path: Path, text: str, tree: ast.Module) -> SubmissionSources:
    """The extensions of a submission already read and parsed (lint has both)."""
    index = index_of(tree)
    evaluator = StaticEvaluator(index, path)
    extensions = []
    for node in index.calls:
        name = _extension_call(node, index)
        if name is None:
            continue
        ext_name = evaluator.constant(keyword_argument(node, "name", 0) or ast.Constant(""), node.lineno) or f"ext_line{node.lineno}"
        extension = Extension(name, str(ext_name), node.lineno, deferred=id(node) in evaluator.function_of)
        if name == "load_inline":
            for attr, position in (("cpp", 1), ("cuda", 2)):
                value = keyword_argument(node, f"{attr}_sources", position)
                if value is None or (isinstance(value, ast.Constant) and value.value is None):
                    continue
                pieces = evaluator.pieces(value, node.lineno)
                if pieces is None and attr == "cuda":
                    extension.unreadable = (value.lineno, f"cuda_sources `{shown(value)}`")
                elif pieces is None:
                    extension.notes.append(f"line {node.lineno}: {attr}_sources is not a static string expression")
                else:
                    # compiled with the placeholder left empty, as noted: the compiler then says what it lacks
                    setattr(extension, attr, pieces)
                    extension.notes.extend(unread_notes(pieces))
                    # a declaration left incomplete is no evidence that a functions= name is undeclared
                    extension.cpp_read |= attr == "cpp" and not unread_lines(pieces)
            extension.functions = evaluator.names(keyword_argument(node, "functions", 4), node.lineno)
        else:
            value = keyword_argument(node, "sources", 1)
            pieces = evaluator.file_pieces(value, node.lineno) if value is not None else []
            if pieces is None:
                extension.unreadable = (value.lineno, f"sources `{shown(value)}`")
                extension.sources_path_alone = evaluator.path_alone(value, node.lineno)
            extension.files.extend(_source_file(piece.text, path.parent) for piece in pieces or [])
        flags_node = keyword_argument(node, "extra_cuda_cflags")
        cuda_flags, unusable = evaluator.flag_list(flags_node, node.lineno)
        extension.cuda_flags, extension.cuda_flags_static = cuda_flags or [], cuda_flags is not None
        if unusable is not None and flags_node is not None:
            extension.unusable_flags = (flags_node.lineno, unusable)
        extension.cpp_flags = _cpp_flags(node, name, evaluator)
        includes_node = keyword_argument(node, "extra_include_paths")
        folders = evaluator.folders(includes_node, node.lineno)
        if folders is None and includes_node is not None and returns_no_folders(includes_node, tree, text):
            folders = []
        if folders is None and includes_node is not None and is_export_lookup(includes_node, tree, text):
            extension.cutlass_lookup_line = includes_node.lineno
        elif folders is None and includes_node is not None:
            extension.unread_includes_line = includes_node.lineno  # the build's warning says what stood in for them
        extension.include_paths = [_as_torch_resolves(folder, path.parent) for folder in folders or []]
        extension.strs_for_lists = _strs_for_lists(node, name, evaluator)
        extension.not_lists = _not_lists(node, evaluator)
        extension.notes.extend(evaluator.notes)
        evaluator.notes = []
        extensions.append(extension)
    extensions.sort(key=lambda e: e.line)
    settings, putenv = ArchListReader(index, evaluator).read()
    cute_dsl = bool(CUTE_DSL.search(text)) and bool(CUTE_DSL_USE.search(text))
    return SubmissionSources(path, extensions, settings, cute_dsl, text, putenv)


def load_source_files(tree: ast.Module, folder: Path, submission: Path | None = None) -> list[tuple[str, Path]]:
    """(as written, path) of every file the load() calls of a parsed submission compile, found as the
    build finds them (relative ones in `folder`, the submission's), whether they exist or not; the
    sources a static expression does not give are left out. `submission`: the file, whose path is its
    `__file__` (None: a path made from `__file__` is not static)."""
    index = index_of(tree)
    evaluator = StaticEvaluator(index, submission)
    files = []
    for node in index.calls:
        if _extension_call(node, index) == "load":
            value = keyword_argument(node, "sources", 1)
            pieces = evaluator.file_pieces(value, node.lineno) if value is not None else None
            files += [(piece.text, _source_file(piece.text, folder)) for piece in pieces or []]
    return files


def _extension_call(call: ast.Call, index: SyntaxIndex) -> str | None:
    """"load_inline" or "load" for a call of torch.utils.cpp_extension's, else None (torch.load, json.load)."""
    name = call_name(call).split(".")[-1]
    if name == "load_inline" or (name == "load" and ("cpp_extension" in call_name(call) or index.imports_load)):
        return name
    return None


def _source_file(source: str, folder: Path) -> Path:
    return Path(source) if os.path.isabs(source) else folder / source


def _as_torch_resolves(include: str, submission_folder: Path) -> str:
    """An extra_include_paths entry as torch's ninja file names it: stripped, then os.path.abspath, which
    reads a relative one against the working folder of `python submission.py`, the submission's own."""
    return os.path.abspath(os.path.join(submission_folder, include.strip()))


def _strs_for_lists(call: ast.Call, name: str, evaluator: StaticEvaluator) -> list[StrForList]:
    """The call's extra_cflags, extra_ldflags and extra_include_paths that are one str, not a list (extra_cflags
    by position too, as _cpp_flags reads them)."""
    found: list[StrForList] = []
    for argument, position in (("extra_cflags", 5 if name == "load_inline" else 2), ("extra_ldflags", None),
                               ("extra_include_paths", None)):
        node = keyword_argument(call, argument, position)
        value = evaluator.str_for_list(node, call.lineno)
        if isinstance(node, ast.expr) and value is not None:
            found.append(StrForList(argument, node, value))
    return found


def _not_lists(call: ast.Call, evaluator: StaticEvaluator) -> list[NotAList]:
    """The call's extra_ldflags given as a non-empty tuple, and its extra_include_paths given as a pathlib.Path
    or a list holding one (torch 2.13: _prepare_ldflags appends to extra_ldflags; _write_ninja_file_to_build_library
    iterates extra_include_paths and strips each folder)."""
    found: list[NotAList] = []
    flags = keyword_argument(call, "extra_ldflags")
    if isinstance(flags, ast.expr) and evaluator.is_tuple(flags, call.lineno):
        pieces = evaluator.pieces(flags, call.lineno)
        if pieces is None or unread_lines(pieces):  # the flags are not known: the expression is put in a list
            found.append(NotAList("extra_ldflags", flags, "tuple", shown(flags), f"list({shown(flags)})"))
        elif pieces:  # an empty tuple is no flags: torch reads `value or []`
            listed = elements(pieces)
            found.append(NotAList("extra_ldflags", flags, "tuple", repr(tuple(listed)), repr(listed)))
    folders = keyword_argument(call, "extra_include_paths")
    if isinstance(folders, ast.expr) and evaluator.holds_path(folders, call.lineno):
        if not evaluator.is_sequence(folders, call.lineno):
            found.append(NotAList("extra_include_paths", folders, "Path", shown(folders), f"[str({shown(folders)})]"))
        elif isinstance(folders, (ast.List, ast.Tuple)):
            written = [f"str({shown(element)})" if evaluator.holds_path(element, call.lineno) else shown(element)
                       for element in folders.elts]
            found.append(NotAList("extra_include_paths", folders, "Path element", shown(folders),
                                  f"[{', '.join(written)}]"))
        else:
            found.append(NotAList("extra_include_paths", folders, "Path element", shown(folders),
                                  f"[str(folder) for folder in {shown(folders)}]"))
    return found


def _cpp_flags(call: ast.Call, name: str, evaluator: StaticEvaluator) -> list[str] | None:
    """extra_cflags as written (torch >= 2.7 puts sycl_sources before them: position 5 of load_inline,
    2 of load); None where they cannot be known: a non-static value, or *args/**kwargs in the call."""
    if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    node = keyword_argument(call, "extra_cflags", 5 if name == "load_inline" else 2)
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return []
    pieces = evaluator.pieces(node, call.lineno)
    if pieces is None:  # a change in place build cannot follow makes them None too (StaticEvaluator._changed)
        return None
    evaluator.notes.extend(unread_notes(pieces))  # passed on with the placeholder left empty, as cuda flags are
    flags: list[str] = []
    for piece in pieces:  # "-O" + LEVEL is one flag
        if piece.joined and flags:
            flags[-1] += piece.text
        else:
            flags.append(piece.text)
    return flags
