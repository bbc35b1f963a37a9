"""What a submission.py compiles: the CUDA/C++ sources, flags and arch of every
`torch.utils.cpp_extension.load_inline(...)` / `load(...)` call, read statically from its AST.

Source expressions are evaluated without running the file: string constants (raw or not), implicit
and `+` concatenations, lists/tuples, names bound anywhere in the file to such values (the last
binding before the call wins), f-strings whose placeholders are names of int/str constants, and
`textwrap.dedent(...)`. Each piece keeps the .py line its text starts on, so the compiler's
errors can be pointed back at the submission (`#line` directives in the generated .cu).
"""

from __future__ import annotations

import ast
import os
import re
import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path

from nvfp4ctl.build.compiler_errors import display_path
from nvfp4ctl.cpp_lexer import blank
from nvfp4ctl.errors import UsageError
from nvfp4ctl.submission_text import read_submission

# an arch option as nvcc reads it, at the start of a word (-DX=-arch=sm_90a is a define): searched in the
# flags' words joined with spaces, so `-gencode arch=...` and `-arch sm_90a` count too
ARCH_FLAG = re.compile(r"(?<!\S)(?:(?:-gencode|--generate-code)[= ]?arch=compute_(\w+),code=\[?(?:sm|compute)_(\w+))"
                       r"|(?<!\S)(?:(?:-arch|--gpu-architecture)[= ]?(?:sm|compute)_(\w+))")
# nvcc 13.0's arch where no option names one: `nvcc --dryrun` runs ptxas -arch=sm_75, the first entry of
# `nvcc --list-gpu-code` (13.0 dropped the older ones)
NVCC_DEFAULT_ARCH = "sm_75"
_ARCH_LIST_ENTRY = re.compile(r"(\d+)\.(\d+a?)(?:\+PTX)?")
# nvcc's arch options whose arch build cannot know: the GPU of the machine nvcc runs on, every arch it
# knows; and -code without -arch, which nvcc refuses ("-arch option not specified")
_MACHINE_ARCH = re.compile(r"(?<!\S)(?:-arch|--gpu-architecture)[= ]?(native|all-major|all)(?!\S)")
_ARCH_OPTION = re.compile(r"(?<!\S)(?:-arch|--gpu-architecture)(?:[= ]|$)")
_CODE_OPTION = re.compile(r"(?<!\S)(?:-code|--gpu-code)[= ]?\S+")
# the GPU GPU MODE's NVFP4 problems run on, and the TORCH_CUDA_ARCH_LIST torch makes of it where nothing
# names an arch (_get_cuda_arch_flags: the visible GPU's capability, plus PTX)
LEADERBOARD_GPU = "B200"
LEADERBOARD_GPU_ARCH = ("10.0+PTX", "sm_100")
TCGEN05 = re.compile(r"\btcgen05\.|\bUTCCP|SM100_MMA_|Sm100\b|cutlass::arch::Sm100")
WGMMA = re.compile(r"\bwgmma\.|SM90_64x|cutlass::arch::Sm90\b")
CUTE_DSL = re.compile(r"^\s*(?:import\s+cutlass\.cute|from\s+cutlass\s+import\s+cute|import\s+cutlass\b.*$|"
                      r"from\s+cutlass\.cute)", re.MULTILINE)
CUTE_DSL_USE = re.compile(r"@cute\.(?:kernel|jit)\b|\bcute\.compile\(")


@dataclass(frozen=True)
class Piece:
    text: str
    line: int  # the .py line the text's first character is on
    joined: bool = False  # continues the previous piece (a concatenation), not a new source of a list


def join_pieces(pieces: list[Piece]) -> str:
    """The text load_inline compiles: list elements joined by newlines, concatenations directly."""
    text = ""
    for piece in pieces:
        text += ("" if piece.joined or not text else "\n") + piece.text
    return text


# A user header (a quoted include) or a using-declaration may declare a function where a text scan of
# cpp_sources cannot see it; <torch/extension.h> and the like declare none of the user's.
_DECLARED_ELSEWHERE = re.compile(r'^\s*#\s*include\s*"|\busing\s+(?!namespace\b)[\w:]*::\w+\s*;', re.MULTILINE)


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
    notes: list[str] = field(default_factory=list)  # what could not be read statically
    # load_inline's functions= names, None when absent or not static; cpp_read: cpp_sources was read
    functions: list[str] | None = None
    cpp_read: bool = False
    # (line, what): device code is given (cuda_sources / load's sources) but not as a static expression,
    # so build cannot see it; unlike an absent cuda_sources, this must not pass as host code only
    unreadable: tuple[int, str] | None = None
    # (line, why): extra_cuda_cflags torch itself fails on (a str, a flag that is not a str)
    unusable_flags: tuple[int, str] | None = None

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


ARCH_LIST = "TORCH_CUDA_ARCH_LIST"
# values torch reads as "the visible GPUs' archs" (_get_cuda_arch_flags: `if not _arch_list or _arch_list == "native"`)
GPU_PICKED_ARCH_LISTS = ("", "native")


@dataclass(frozen=True)
class ArchListSetting:
    """A statement of the file that changes os.environ's TORCH_CUDA_ARCH_LIST, which torch reads in the
    call: `os.environ[...] = ...`, `.setdefault(...)`, `.update(...)`, `|=`, or its removal."""

    line: int
    value: str | None  # None: not a static value (a computed one, an update() whose keys build cannot read)
    deferred: bool  # inside a function: it runs when the function is called, not known here
    kind: str = "set"  # set | setdefault (only where none is set) | unset (del, pop)
    written: str = ""  # the statement, short, for messages


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
        name, else nvcc's default where torch adds no arch flag (one of the flags holds "arch"), else every
        arch of the TORCH_CUDA_ARCH_LIST set before the call (torch compiles each), else the arch build
        infers (arch())."""
        from nvfp4ctl.build import torch_nvcc

        named = named_arch(torch_nvcc.shell_words(extension.cuda_flags))
        if named is not None:
            return (named[0],), f"{extension.name}'s flag {named[1]}"
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
        try:
            arch, why = self.arch(requested)
        except UsageError:
            raise UsageError(f"{self.path}:{unread.line}: {unread.written} sets, or may set, TORCH_CUDA_ARCH_LIST to a"
                             " value build cannot read without running the file, and nothing else names the arch;"
                             " pass --arch, or set it to a string constant") from None
        return (arch,), f"{why}; the TORCH_CUDA_ARCH_LIST of line {unread.line} is not static"

    def arch(self, requested: str | None) -> tuple[str, str]:
        """(arch, where it came from) where no TORCH_CUDA_ARCH_LIST applies and torch adds its own arch
        flag, which on the leaderboard names the GPU's (torch_picks_gpu_arch): the -gencode/-arch of another
        extension's flags, --arch, tcgen05 -> sm_100a, wgmma -> sm_90a."""
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
        raise UsageError(f"{self.path}: cannot tell the arch (no -gencode/-arch flag, no TORCH_CUDA_ARCH_LIST,"
                         " no tcgen05 or wgmma in the code); pass --arch")


def device_code(extension: Extension) -> str:
    """The device code of one extension: its cuda_sources, or the .cu/.cuh files load() compiles."""
    return extension.cuda_text + "".join(path.read_text(errors="replace") for path in extension.device_files
                                         if path.is_file())


def code_needs(code: str) -> tuple[str, str] | None:
    """(arch-specific target, what in the code needs it) of device code: tcgen05 / SM100 -> sm_100a,
    wgmma / SM90 -> sm_90a; None for code any arch of its family assembles."""
    if TCGEN05.search(code):
        return "sm_100a", "tcgen05 / SM100 instructions"
    if WGMMA.search(code):
        return "sm_90a", "wgmma / SM90 instructions"
    return None


def naming_the_arch(arch: str) -> str:
    """How a submission names an arch-specific target (sm_100a) for torch's compile: the flag, or the
    TORCH_CUDA_ARCH_LIST entry, set before the call."""
    number = arch.removeprefix("sm_").removesuffix("a")
    return (f'extra_cuda_cflags=["-gencode=arch=compute_{number}a,code=sm_{number}a"], or'
            f' os.environ["TORCH_CUDA_ARCH_LIST"] = "{number[:-1]}.{number[-1]}a" before the call')


def named_arch(words: list[str]) -> tuple[str, str] | None:
    """(arch, the option as written) of the first arch option among nvcc's words, else None."""
    match = ARCH_FLAG.search(" ".join(words))
    if match is None:
        return None
    number = next(group for group in match.groups() if group)
    return f"sm_{number}", match.group(0)


def arch_list_arches(arch_list: str, where: str) -> tuple[str, ...]:
    """Every arch of a TORCH_CUDA_ARCH_LIST as torch reads it (_get_cuda_arch_flags: each space made a ;,
    then split at ;, each entry compiled): "10.0" is sm_100 and "10.0a" sm_100a (tcgen05 and wgmma need
    the a), "+PTX" adds PTX to it. `where` is the file:line of the setting, for the refusals."""
    entries = arch_list.replace(" ", ";").split(";")
    if "" in entries:
        # "10.0a; 9.0a", "10.0a;" and "10.0a  9.0a" hold an empty entry, which torch refuses: split at
        # blanks, they built every arch as if torch would
        place = _empty_entry_place(entries)
        raise UsageError(f'{where}: TORCH_CUDA_ARCH_LIST="{arch_list}" holds an empty entry {place}:'
                         " torch makes each space a ; and splits at ;, and stops on it (_get_cuda_arch_flags:"
                         " ValueError: Unknown CUDA arch ()); separate the archs with one ; or one space")
    arches: list[str] = []
    for item in entries:
        entry = _ARCH_LIST_ENTRY.fullmatch(item)
        if entry is None:
            raise UsageError(f"{where}: TORCH_CUDA_ARCH_LIST={arch_list}: build reads entries such as 10.0a or 9.0a+PTX,"
                             f" not {item}; write the arch's number")
        arches.append(f"sm_{entry.group(1)}{entry.group(2)}")
    return tuple(dict.fromkeys(arches))


def _empty_entry_place(entries: list[str]) -> str:
    """Where the first empty entry of a split TORCH_CUDA_ARCH_LIST is, as a message says it."""
    named = [entry for entry in entries if entry]
    if not named:
        return "and no arch"
    at = entries.index("")
    if at == 0:
        return f"before {named[0]}"
    if not any(entries[at + 1:]):
        return f"after {entries[at - 1]}"
    following = next(entry for entry in entries[at + 1:] if entry)
    return f"between {entries[at - 1]} and {following}"


def unknown_arch(words: list[str]) -> str | None:
    """Why build cannot tell the arch nvcc compiles nvcc's words `words` for, else None: -arch=native
    (the GPU of the machine nvcc runs on), -arch=all / all-major (every arch nvcc knows, none with the
    a), -code without -arch (which nvcc refuses)."""
    line = " ".join(words)
    machine = _MACHINE_ARCH.search(line)
    if machine is not None and machine.group(1) == "native":
        return (f"{machine.group(0)} compiles for the GPU of the machine nvcc runs on: sm_100, without the a, on the"
                f" {LEADERBOARD_GPU} that runs GPU MODE's NVFP4 problems, and none here")
    if machine is not None:
        return (f"{machine.group(0)} compiles for every arch nvcc knows, none of them an arch-specific (a) one, where"
                " tcgen05 and wgmma do not assemble")
    code = _CODE_OPTION.search(line)
    if code is not None and not _ARCH_OPTION.search(line):
        return f"{code.group(0)} without -arch: nvcc stops (\"-arch option not specified\"), in torch's build too"
    return None


_IN_PLACE = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "__iadd__"})


class _Evaluator:
    """Static values of the expressions a load_inline call is made of."""

    def __init__(self, tree: ast.Module) -> None:
        self.bindings: dict[str, list[tuple[int, ast.AST]]] = {}
        augmented: dict[int, ast.AugAssign] = {}  # NAME += x is bound as NAME + x, made here: its statement
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.bindings.setdefault(target.id, []).append((node.lineno, node.value))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                self.bindings.setdefault(node.target.id, []).append((node.lineno, node.value))
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                added = ast.BinOp(ast.Name(node.target.id, ast.Load()), ast.Add(), node.value,
                                  lineno=node.lineno, col_offset=node.col_offset)
                augmented[id(added)] = node
                self.bindings.setdefault(node.target.id, []).append((node.lineno, added))
        # flags.append("-O3") after flags = [...]: the binding above no longer says what the call gets
        self.mutated = {node.func.value.id for node in ast.walk(tree)
                        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and isinstance(node.func.value, ast.Name) and node.func.attr in _IN_PLACE}
        self.mutated |= {target.value.id for node in ast.walk(tree)
                         for target in (node.targets if isinstance(node, (ast.Assign, ast.Delete))
                                        else [node.target] if isinstance(node, ast.AugAssign) else [])
                         if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)}
        # ALIAS = FLAGS: either name's change in place changes the other's list, so each name of a group joined
        # by such bindings is changed where any is, and changed through another name where another is
        groups = {name: {name} for name in self.bindings}
        for name, bound in self.bindings.items():
            for _, value in bound:
                if isinstance(value, ast.Name) and value.id != name:
                    joined = groups[name] | groups.setdefault(value.id, {value.id})
                    for member in joined:
                        groups[member] = joined
        direct = set(self.mutated)
        self._through_alias = {name for name, group in groups.items() if (group - {name}) & direct}
        self.mutated |= self._through_alias
        self._changes = _in_place_changes(tree, self.mutated)
        self._block = _statement_blocks(tree)
        self._block.update((made, self._block[id(statement)]) for made, statement in augmented.items()
                           if id(statement) in self._block)
        self._augmented = augmented
        self._function_of = _enclosing_functions(tree)
        self._function_of.update((made, self._function_of[id(statement)]) for made, statement in augmented.items()
                                 if id(statement) in self._function_of)
        self._locals = _function_locals(tree, self._function_of)
        self._function_spans = sorted(((node.lineno, node.end_lineno or node.lineno, node) for node in ast.walk(tree)
                                       if isinstance(node, _FUNCTIONS)), key=lambda span: span[0])
        self.notes: list[str] = []

    def _owner(self, name: str, node: ast.AST) -> ast.AST | None:
        """The function whose own variable `name` is where node uses it (None: the module's): the innermost
        function around it that binds the name and does not declare it global."""
        function = self._function_of.get(id(node))
        while function is not None and name not in self._locals.get(id(function), ()):
            function = self._function_of.get(id(function))
        return function

    def _function_at(self, line: int) -> ast.AST | None:
        """The innermost function whose body holds the line, None at module level."""
        inner = None
        for start, end, function in self._function_spans:
            if start < line <= end or (start == line and isinstance(function, ast.Lambda)):
                inner = function
        return inner

    def _branch_added(self, name: str, bound: tuple[int, ast.AST]) -> bool:
        """Whether the binding is `NAME += [...]` in another block than the list it adds to (an `if`, a loop,
        a function): whether it runs before the read is not static, as for an append there."""
        statement = self._augmented.get(id(bound[1]))
        if statement is None:
            return False
        previous = self._bound(name, bound[0])
        if previous is None or not self._is_sequence(previous[1], previous[0]):
            return False
        return self._block.get(id(previous[1])) != self._block.get(id(statement))

    def changed_in_place(self, node: ast.AST, before: int, depth: int = 0) -> bool:
        """Whether node is, or is built from, a name that some statement changes in place."""
        for name in (n for n in ast.walk(node) if isinstance(n, ast.Name)):
            if name.id in self.mutated:
                return True
            bound = self._bound(name.id, before)
            if bound is not None and self._branch_added(name.id, bound):
                return True
            if bound is not None and depth < 20 and self.changed_in_place(bound[1], bound[0], depth + 1):
                return True
        return False

    def _bound(self, name: str, before: int) -> tuple[int, ast.AST] | None:
        candidates = [(line, value) for line, value in self.bindings.get(name, []) if line < before]
        return candidates[-1] if candidates else None

    def pieces(self, node: ast.AST, before: int, depth: int = 0) -> list[Piece] | None:
        if depth > 20:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [Piece(node.value, node.lineno)]
        if isinstance(node, ast.JoinedStr):
            text = []
            for value in node.values:
                if isinstance(value, ast.Constant):
                    text.append(str(value.value))
                elif isinstance(value, ast.FormattedValue):
                    constant = self.constant(value.value, before)
                    if constant is None:
                        self.notes.append(f"line {node.lineno}: an f-string placeholder is not a constant; left empty")
                        constant = ""
                    text.append(str(constant))
            return [Piece("".join(text), node.lineno)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            # a + b + c nests on the left, one level a term: walked as one chain, so a source of
            # hundreds of concatenated strings is read at the depth of one
            terms = _added_terms(node)
            out = self.pieces(terms[0], before, depth + 1)
            sequence = self._is_sequence(terms[0], before)  # [a] + [b]: two elements, not one string
            for term in terms[1:]:
                right = self.pieces(term, before, depth + 1)
                if out is None or right is None:
                    return None
                out += right if sequence else [replace(piece, joined=True) if index == 0 else piece
                                               for index, piece in enumerate(right)]
            return out
        if isinstance(node, (ast.List, ast.Tuple)):
            out: list[Piece] = []
            for element in node.elts:
                part = self.pieces(element, before, depth + 1)
                if part is None:
                    return None
                out.extend(replace(piece, joined=False) if index == 0 else piece for index, piece in enumerate(part))
            return out
        if isinstance(node, ast.Name):
            bound = self._bound(node.id, before)
            if bound is None or self._branch_added(node.id, bound):
                return None
            out = self.pieces(bound[1], bound[0], depth + 1)
            return out if out is None or node.id not in self.mutated else self._changed(node.id, bound, out, before)
        if isinstance(node, ast.Call) and _call_name(node) in ("dedent", "textwrap.dedent") and node.args:
            inner = self.pieces(node.args[0], before, depth + 1)
            if inner is None:
                return None
            return [Piece(textwrap.dedent(join_pieces(inner)), inner[0].line)] if inner else []
        return None

    def _changed(self, name: str, bound: tuple[int, ast.AST], out: list[Piece], before: int) -> list[Piece] | None:
        """A list bound to `name` as the changes that run between its binding and the read at `before` leave
        it: append, extend and insert of static values, each a statement of the binding's own block (they
        run, in order, before the line); None where any other change may reach it (a change in another
        block, a branch or another function, through another name, a remove, pop or item assignment), which
        build cannot follow without running the file. A change the read cannot see is left out: one after
        a read in the same run of code, one in a function defined after a module-level read, one of another
        function's own variable of the name. Module-level changes all run before a read inside a function
        (custom_kernel's), wherever they are written."""
        if name in self._through_alias:
            return None
        binding_line, value = bound
        owner = self._owner(name, value)
        block = self._block.get(id(value))
        read_in = self._function_at(before)
        elements = _elements(out)
        for line, change, node in self._changes.get(name, []):
            if self._owner(name, node) is not owner:
                continue  # another function's variable of the same name: another list
            changed_in = self._function_of.get(id(node))
            if changed_in is read_in and (line <= binding_line or line >= before):
                continue  # before the binding (another list), or after the read
            if changed_in is None and read_in is not None and line <= binding_line:
                continue  # the list bound before this one
            if changed_in is not None and changed_in is not read_in and read_in is None and line >= before:
                continue  # a function defined after a module-level read cannot run before it
            if change is None or block is None or self._block.get(id(change)) != block:
                return None
            call = change.value
            assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            if call.keywords or any(isinstance(argument, ast.Starred) for argument in call.args):
                return None
            if call.func.attr in ("append", "insert") and len(call.args) == (1 if call.func.attr == "append" else 2):
                value = call.args[-1]
                element = None if self._is_sequence(value, line) else self.pieces(value, line)
                at = len(elements) if call.func.attr == "append" else self.constant(call.args[0], line)
                if element is None or not isinstance(at, int) or isinstance(at, bool):
                    return None
                elements.insert(at, [replace(piece, joined=index > 0) for index, piece in enumerate(element)])
            elif call.func.attr == "extend" and len(call.args) == 1 and self._is_sequence(call.args[0], line):
                added = self.pieces(call.args[0], line)
                if added is None:
                    return None
                elements.extend(_elements(added))
            else:
                return None
        return [piece for element in elements for piece in element]

    def _is_sequence(self, node: ast.AST, before: int, depth: int = 0) -> bool:
        if isinstance(node, (ast.List, ast.Tuple)):
            return True
        if isinstance(node, ast.BinOp) and depth < 20:
            return self._is_sequence(_added_terms(node)[0], before, depth + 1)
        if isinstance(node, ast.Name) and depth < 20 and (bound := self._bound(node.id, before)):
            return self._is_sequence(bound[1], bound[0], depth + 1)
        return False

    def constant(self, node: ast.AST, before: int) -> int | float | str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)):
            return node.value
        if isinstance(node, ast.Name):
            bound = self._bound(node.id, before)
            return None if bound is None else self.constant(bound[1], bound[0])
        return None

    def names(self, node: ast.AST | None, before: int) -> list[str] | None:
        """load_inline's functions=: a name, a list of names or a {name: docstring} dict; None when
        absent or not static (nothing to check)."""
        if node is None or (isinstance(node, ast.Constant) and node.value is None):
            return None
        if isinstance(node, ast.Name):
            bound = self._bound(node.id, before)
            return None if bound is None or node.id in self.mutated else self.names(bound[1], bound[0])
        if isinstance(node, ast.Dict):
            keys = [self.constant(key, before) if key is not None else None for key in node.keys]
            return [str(key) for key in keys] if all(isinstance(key, str) for key in keys) else None
        if isinstance(node, (ast.List, ast.Tuple)):
            names = [self.constant(element, before) for element in node.elts]
            return [str(name) for name in names] if all(isinstance(name, str) for name in names) else None
        name = self.constant(node, before)
        return [name] if isinstance(name, str) else None

    def flag_list(self, node: ast.AST | None, before: int) -> tuple[list[str] | None, str | None]:
        """(extra_cuda_cflags as torch gets them, why torch fails on them, else None). torch strips each
        element: a str is iterated character by character ("-O3" is the flags -, O and 3, which nvcc
        refuses), an int has no .strip(). An element made of several pieces ("-O" + LEVEL) is one flag.
        A value that is not static is None, with a note: built without them."""
        if node is None or (isinstance(node, ast.Constant) and node.value is None):
            return [], None
        foreign = self._non_string_element(node, before)
        if foreign is not None:
            return [], _foreign_flag(*foreign)
        pieces = self.pieces(node, before)
        if pieces is None and self.changed_in_place(node, before):
            self.notes.append(f"line {node.lineno}: extra_cuda_cflags is a list changed in place where build cannot"
                              " follow it without running the file (only append, extend, insert and += of static"
                              " values, each a statement of the list's own block, are followed); built without them")
            return None, None
        if pieces is None:
            self.notes.append(f"line {node.lineno}: extra_cuda_cflags is not a static expression; built without them")
            return None, None
        if not self._is_sequence(node, before):
            text = join_pieces(pieces)
            if not text:  # torch reads `flags or []`: an empty string is no flags
                return [], None
            return [], (f"is a str ({text!r}), not a list: torch reads each of its characters as a flag and nvcc"
                        f" fails; give a list, {text.split()!r}")
        flags: list[str] = []
        for piece in pieces:
            if piece.joined and flags:
                flags[-1] += piece.text
            else:
                flags.append(piece.text)
        return flags, None

    def _non_string_element(self, node: ast.AST, before: int, depth: int = 0) -> tuple[str, str] | None:
        """(the element as written, its type) of the first element of a list of flags that is statically not a
        str (3, None, b"-O3", a list, a tuple, a dict, a name bound to one), else None. An element whose value
        is not static is left to pieces(), which says so."""
        if depth > 20:
            return None
        if isinstance(node, ast.Name):
            bound = self._bound(node.id, before)
            return None if bound is None else self._non_string_element(bound[1], bound[0], depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            for term in _added_terms(node):
                if self._is_sequence(term, before):
                    found = self._non_string_element(term, before, depth + 1)
                    if found is not None:
                        return found
            return None
        if isinstance(node, (ast.List, ast.Tuple)):
            for element in node.elts:
                kind = self._type_other_than_str(element, before)
                if kind is not None:
                    return _shown(element), kind
        return None

    def _type_other_than_str(self, node: ast.AST, before: int, depth: int = 0) -> str | None:
        """The type of a value statically known not to be a str, as a message names it (an int, None, a
        list), else None: a str, or a value build cannot tell without running the file."""
        if depth > 20:
            return None
        if isinstance(node, ast.Constant):
            return None if isinstance(node.value, str) else _kind_of(node.value)
        for types, kind in _DISPLAYS:
            if isinstance(node, types):
                return kind
        if isinstance(node, ast.Name):
            bound = self._bound(node.id, before)
            return None if bound is None else self._type_other_than_str(bound[1], bound[0], depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # [a] + [b] is a list, "-O" + "3" a str
            return self._type_other_than_str(_added_terms(node)[0], before, depth + 1)
        return None

    def strings(self, node: ast.AST | None, before: int) -> list[str]:
        if node is None:
            return []
        pieces = self.pieces(node, before)
        return [piece.text for piece in pieces] if pieces is not None else []


def _elements(pieces: list[Piece]) -> list[list[Piece]]:
    """The pieces of a list, element by element (a joined piece continues its element)."""
    elements: list[list[Piece]] = []
    for piece in pieces:
        if piece.joined and elements:
            elements[-1].append(piece)
        else:
            elements.append([replace(piece, joined=False)])
    return elements


def _in_place_changes(tree: ast.Module, names: set[str]) -> dict[str, list[tuple[int, ast.Expr | None, ast.AST]]]:
    """(line, statement, node) of each change in place of the names: the statement where it is a call of
    append, extend or insert standing alone (NAME.append(...)), which build can follow; None for any
    other (an item assigned or deleted, remove, pop, a call inside an expression), which it cannot."""
    changes: dict[str, list[tuple[int, ast.Expr | None, ast.AST]]] = {}
    followed: set[int] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
                and isinstance(node.value.func.value, ast.Name) and node.value.func.value.id in names
                and node.value.func.attr in ("append", "extend", "insert")):
            changes.setdefault(node.value.func.value.id, []).append((node.lineno, node, node))
            followed.add(id(node.value))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and id(node) not in followed and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id in names and node.func.attr in _IN_PLACE):
            changes.setdefault(node.func.value.id, []).append((node.lineno, None, node))
        targets = (node.targets if isinstance(node, (ast.Assign, ast.Delete))
                   else [node.target] if isinstance(node, ast.AugAssign) else [])
        for target in targets:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id in names:
                changes.setdefault(target.value.id, []).append((node.lineno, None, node))
    for found in changes.values():
        found.sort(key=lambda change: change[0])
    return changes


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _enclosing_functions(tree: ast.Module) -> dict[int, ast.AST]:
    """The innermost function (a def or a lambda) whose body holds each node, by id (they run when it is
    called); module-level nodes, and a function's defaults and decorators, are absent."""
    enclosing: dict[int, ast.AST] = {}
    for node in ast.walk(tree):  # outer functions come first, so an inner one overwrites its nodes
        if isinstance(node, _FUNCTIONS):
            body = node.body if isinstance(node.body, list) else [node.body]
            enclosing.update((id(child), node) for statement in body for child in ast.walk(statement))
    return enclosing


def _function_locals(tree: ast.Module, function_of: dict[int, ast.AST]) -> dict[int, set[str]]:
    """The names each function binds as its own variables (assigned, parameters), by the function's id:
    not those it declares global or nonlocal."""
    bound: dict[int, set[str]] = {}
    shared: dict[int, set[str]] = {}
    for node in ast.walk(tree):
        function = function_of.get(id(node))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and function is not None:
            bound.setdefault(id(function), set()).add(node.id)
        elif isinstance(node, _FUNCTIONS):
            arguments = node.args
            bound.setdefault(id(node), set()).update(
                argument.arg for argument in arguments.posonlyargs + arguments.args + arguments.kwonlyargs
                + [extra for extra in (arguments.vararg, arguments.kwarg) if extra is not None])
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and function is not None:
            shared.setdefault(id(function), set()).update(node.names)
    return {function: names - shared.get(function, set()) for function, names in bound.items()}


def _statement_blocks(tree: ast.Module) -> dict[int, int]:
    """The block (the statement list) each statement is in, by id, and each assigned value's, which is
    its statement's: a change in place is followed only where it runs in the same straight run."""
    blocks: dict[int, int] = {}
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if not isinstance(body, list):
                continue
            for statement in body:
                if not isinstance(statement, ast.stmt):
                    continue
                blocks[id(statement)] = id(body)
                if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
                    blocks[id(statement.value)] = id(body)
    return blocks


_DISPLAYS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    ((ast.List, ast.ListComp), "a list"), (ast.Tuple, "a tuple"), ((ast.Dict, ast.DictComp), "a dict"),
    ((ast.Set, ast.SetComp), "a set"))
_UNHASHABLE = ("a list", "a dict", "a set")


def _foreign_flag(shown: str, kind: str) -> str:
    """Why torch fails on a flag that is no str: it hashes every flag (its extension versioner), which a list,
    a dict or a set fails, then calls .strip() on each, which a str and bytes have, then looks for "arch"
    in each (_get_cuda_arch_flags), which bytes fail."""
    what = "which is no str" if kind == "None" else f"{kind}, not a str"
    if kind in _UNHASHABLE:
        fails = f"torch hashes each flag and fails (TypeError: unhashable type: '{kind.split()[-1]}')"
    elif kind == "bytes":  # bytes have .strip(): torch fails when it looks for "arch" in them
        fails = "torch looks for \"arch\" in each flag and fails (TypeError)"
    else:
        fails = "torch calls .strip() on each flag and fails (AttributeError)"
    fix = (f"add its flags to the list instead ([...] + {shown})" if kind in ("a list", "a tuple")
           else "write it as a string")
    return f"hold {shown}, {what}: {fails}; {fix}"


def _kind_of(value: object) -> str:
    """A constant's type as a message names it: an int, a float, None, bytes."""
    if value is None or isinstance(value, bytes):
        return "None" if value is None else "bytes"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _added_terms(node: ast.BinOp) -> list[ast.AST]:
    """The terms of a chain of + (a + b + c: [a, b, c]), read without recursion; a parenthesised
    right-hand term (a + (b + c)) is one term."""
    terms: list[ast.AST] = []
    left: ast.AST = node
    while isinstance(left, ast.BinOp) and isinstance(left.op, ast.Add):
        terms.append(left.right)
        left = left.left
    terms.append(left)
    return terms[::-1]


def _shown(node: ast.AST, limit: int = 60) -> str:
    """An expression as written, shortened to one short line: a chain of + term by term, as far as
    the line goes (ast.unparse recurses, and a chain of thousands of terms exceeds the limit)."""
    terms = _added_terms(node) if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) else [node]
    text = ""
    for index, term in enumerate(terms):
        try:
            part = ast.unparse(term)
        except RecursionError:
            part = "…"
        part = f"({part})" if index and isinstance(term, ast.BinOp) and isinstance(term.op, ast.Add) else part
        text = f"{text} + {part}" if index else part
        if len(text) > limit:
            break
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        base = func.value.id if isinstance(func.value, ast.Name) else (
            func.value.attr if isinstance(func.value, ast.Attribute) else "")
        return f"{base}.{func.attr}" if base else func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _keyword(call: ast.Call, name: str, position: int | None = None) -> ast.AST | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if position is not None and len(call.args) > position:
        return call.args[position]
    return None


def find_sources(path: Path, shown: str | None = None) -> SubmissionSources:
    """`shown`: the file as messages name it (default: relative to the working folder where under it)."""
    shown = shown or display_path(path)
    text = read_submission(path, shown)  # as check reads it: a file that is not UTF-8 is the same line
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as error:
        raise UsageError(f"{shown}:{error.lineno}: not valid Python ({error.msg})") from error
    except (RecursionError, MemoryError) as error:  # Python's parser gives up on a very deep expression
        raise UsageError(f"{shown}: an expression is nested too deeply for Python's parser ({error}): build reads the"
                         " sources without running the file and cannot read this one (python cannot compile it"
                         " either); join fewer terms with +, or give the pieces as a list") from None
    return sources_in(path, text, tree)


def sources_in(path: Path, text: str, tree: ast.Module) -> SubmissionSources:
    """The extensions of a submission already read and parsed (lint has both)."""
    evaluator = _Evaluator(tree)
    in_functions = set(evaluator._function_of)
    extensions = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _extension_call(node, tree)
        if name is None:
            continue
        ext_name = evaluator.constant(_keyword(node, "name", 0) or ast.Constant(""), node.lineno) or f"ext_line{node.lineno}"
        extension = Extension(name, str(ext_name), node.lineno, deferred=id(node) in in_functions)
        if name == "load_inline":
            for attr, position in (("cpp", 1), ("cuda", 2)):
                value = _keyword(node, f"{attr}_sources", position)
                if value is None or (isinstance(value, ast.Constant) and value.value is None):
                    continue
                pieces = evaluator.pieces(value, node.lineno)
                if pieces is None and attr == "cuda":
                    extension.unreadable = (value.lineno, f"cuda_sources `{_shown(value)}`")
                elif pieces is None:
                    extension.notes.append(f"line {node.lineno}: {attr}_sources is not a static string expression")
                else:
                    setattr(extension, attr, pieces)
                    extension.cpp_read |= attr == "cpp"
            extension.functions = evaluator.names(_keyword(node, "functions", 4), node.lineno)
        else:
            value = _keyword(node, "sources", 1)
            pieces = evaluator.pieces(value, node.lineno) if value is not None else []
            if pieces is None:
                extension.unreadable = (value.lineno, f"sources `{_shown(value)}`")
            extension.files.extend(_source_file(piece.text, path.parent) for piece in pieces or [])
        flags_node = _keyword(node, "extra_cuda_cflags")
        cuda_flags, unusable = evaluator.flag_list(flags_node, node.lineno)
        extension.cuda_flags, extension.cuda_flags_static = cuda_flags or [], cuda_flags is not None
        if unusable is not None and flags_node is not None:
            extension.unusable_flags = (flags_node.lineno, unusable)
        extension.cpp_flags = _cpp_flags(node, name, evaluator)
        extension.include_paths = [_as_torch_resolves(folder, path.parent)
                                   for folder in evaluator.strings(_keyword(node, "extra_include_paths"), node.lineno)]
        extension.notes.extend(evaluator.notes)
        evaluator.notes = []
        extensions.append(extension)
    extensions.sort(key=lambda e: e.line)
    settings, putenv = _ArchListReader(tree, evaluator, in_functions).read()
    cute_dsl = bool(CUTE_DSL.search(text)) and bool(CUTE_DSL_USE.search(text))
    return SubmissionSources(path, extensions, settings, cute_dsl, text, putenv)


class _ArchListReader:
    """The statements that change os.environ's TORCH_CUDA_ARCH_LIST: an item set or deleted, setdefault,
    update, pop and |=, on os.environ however it is reached (import os as o, from os import environ, a
    name bound to it). A key or a value build cannot read is kept as a setting whose value is unknown:
    it may set the list, so nothing may say that none is set. os.putenv changes the environment of child
    processes only, not os.environ: torch does not see it."""

    def __init__(self, tree: ast.Module, evaluator: _Evaluator, in_functions: set[int]) -> None:
        self.evaluator = evaluator
        self.in_functions = in_functions
        self.tree = tree
        self.modules = {"os"}
        self.environs: set[str] = set()
        self.putenvs: set[str] = set()
        # the module's own functions, and where each is called by its name: made in this one walk, so that
        # reading a setter's calls costs its calls, not a walk of the file per setter
        # plain functions (a def of the module's or of a function's body, not a method, not async, no decorator,
        # no yield: a call runs its body), each name defined once, with its calls by name
        self.plain_functions: set[int] = set()
        self.definitions: dict[str, int] = {}  # a method's name counts too: it may be the one a call runs
        self.calls_of: dict[str, list[ast.Call]] = {}
        self.name_uses: dict[str, int] = {}
        self.expanded: set[int] = set()  # functions whose module-level calls were given their unknown setting
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for statement in node.body:
                    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.definitions[statement.name] = self.definitions.get(statement.name, 0) + 1
                        if isinstance(statement, ast.FunctionDef) and not isinstance(node, ast.ClassDef) \
                                and not statement.decorator_list and not _yields(statement):
                            self.plain_functions.add(id(statement))
            if isinstance(node, ast.Import):
                self.modules.update(alias.asname or alias.name for alias in node.names if alias.name == "os")
            elif isinstance(node, ast.ImportFrom) and node.module == "os":
                self.environs.update(alias.asname or alias.name for alias in node.names if alias.name == "environ")
                self.putenvs.update(alias.asname or alias.name for alias in node.names if alias.name == "putenv")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                self.calls_of.setdefault(node.func.id, []).append(node)
            elif isinstance(node, ast.Name):
                self.name_uses[node.id] = self.name_uses.get(node.id, 0) + 1
        self.settings: list[ArchListSetting] = []
        self.putenv_lines: list[int] = []

    def read(self) -> tuple[list[ArchListSetting], list[int]]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Subscript) and self._is_environ(target.value, node.lineno):
                        self._keyed(node, target.slice, node.value, "set")
            elif isinstance(node, ast.Delete):
                for target in node.targets:
                    if isinstance(target, ast.Subscript) and self._is_environ(target.value, node.lineno):
                        self._keyed(node, target.slice, None, "unset")
            elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.BitOr) and self._is_environ(node.target, node.lineno):
                self._mapping(node, node.value)
            elif isinstance(node, ast.Call):
                self._call(node)
        self.settings.sort(key=lambda setting: setting.line)
        return self.settings, sorted(self.putenv_lines)

    def _call(self, node: ast.Call) -> None:
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr == "putenv" and isinstance(func.value, ast.Name)
                and func.value.id in self.modules) or (isinstance(func, ast.Name) and func.id in self.putenvs):
            key = self.evaluator.constant(node.args[0], node.lineno) if node.args else None
            if key == ARCH_LIST:
                self.putenv_lines.append(node.lineno)
            return
        if not isinstance(func, ast.Attribute) or not self._is_environ(func.value, node.lineno):
            return
        if func.attr in ("setdefault", "pop") and node.args:
            value = node.args[1] if func.attr == "setdefault" and len(node.args) > 1 else None
            if func.attr == "setdefault" and value is None:  # setdefault(key) sets nothing readable: None is no str
                return
            self._keyed(node, node.args[0], value, "setdefault" if func.attr == "setdefault" else "unset")
        elif func.attr == "update":
            self._mappings_of(node, node)
        elif func.attr == "clear":
            self._add(node, None, "unset")

    def _mappings_of(self, call: ast.Call, node: ast.AST) -> None:
        """The entries of update(...) or dict(...) `call` (made at `node`): its mappings and keywords."""
        for argument in call.args:
            self._mapping(node, argument)
        for keyword in call.keywords:
            if keyword.arg is None:
                self._mapping(node, keyword.value)
            elif keyword.arg == ARCH_LIST:
                self._add(node, keyword.value, "set")

    def _keyed(self, node: ast.AST, key: ast.AST, value: ast.AST | None, kind: str) -> None:
        """One key of os.environ set, set by default or unset: a key build cannot read may be this one. A key
        that is a parameter of a module-level function only called by name (def _env(k, v): os.environ[k] =
        v) is read at each call, from the argument the call passes; one level only, so the reading stays
        linear: an argument that is no constant is a key build cannot read."""
        name = self.evaluator.constant(key, node.lineno)
        if name == ARCH_LIST:
            self._add(node, value, kind)
        elif name is None and kind != "unset":
            calls = self._calls_passing(node, key)
            if calls is None:
                self._add(node, None, kind, readable=False)
                return
            for call, argument_of, parameters in calls:
                passed_key = argument_of(key)
                given = self.evaluator.constant(passed_key, call.lineno) if passed_key is not None else None
                if given == ARCH_LIST:
                    if isinstance(value, ast.Name) and value.id in parameters:  # the value the call passes
                        passed_value = argument_of(value)
                        self._add(call, passed_value, kind, readable=passed_value is not None)
                    else:  # the function's own value: read where the function is written
                        self._add(node, value, kind)
                elif given is None:
                    self._add(call, None, kind, readable=False)

    def _called_only_by_name(self, function: ast.AST | None) -> list[ast.Call] | None:
        """The calls of a plain function (self.plain_functions), its name defined once, that is used only by
        calling it by its name, each with its arguments spelled out (no *args, no **kwargs); None for anything
        else (a method, an async def, a generator, a decorated function, one passed around or never called):
        where or whether its body runs is not known."""
        if not isinstance(function, ast.FunctionDef) or id(function) not in self.plain_functions \
                or self.definitions.get(function.name, 0) != 1:
            return None
        calls = self.calls_of.get(function.name, [])
        if not calls or self.name_uses.get(function.name, 0) != len(calls) or any(
                isinstance(argument, ast.Starred) for call in calls for argument in call.args) or any(
                keyword.arg is None for call in calls for keyword in call.keywords):
            return None
        return calls

    def _calls_passing(self, node: ast.AST, key: ast.AST) -> list[tuple[ast.Call, object, set[str]]] | None:
        """Where key is a parameter of the plain function around node, called only by name: each call, with
        what it passes for a parameter (a function of the parameter's Name; None where it passes nothing
        readable) and the function's parameters; None otherwise."""
        function = self.evaluator._function_of.get(id(node))
        calls = self._called_only_by_name(function)
        if calls is None or not isinstance(key, ast.Name):
            return None
        assert isinstance(function, ast.FunctionDef)
        parameters = [argument.arg for argument in function.args.posonlyargs + function.args.args]
        keyword_only = [argument.arg for argument in function.args.kwonlyargs]
        if key.id not in parameters + keyword_only or function.args.vararg or function.args.kwarg:
            return None

        def passed(call: ast.Call):
            def argument_of(parameter: ast.AST | None) -> ast.AST | None:
                if not isinstance(parameter, ast.Name) or parameter.id not in parameters + keyword_only:
                    return None
                for keyword in call.keywords:
                    if keyword.arg == parameter.id:
                        return keyword.value
                if parameter.id in parameters and parameters.index(parameter.id) < len(call.args):
                    return call.args[parameters.index(parameter.id)]
                return None  # its default: not read
            return argument_of

        return [(call, passed(call), {*parameters, *keyword_only}) for call in calls]

    def _mapping(self, node: ast.AST, mapping: ast.AST) -> None:
        """update(...) or |= with a dict: its TORCH_CUDA_ARCH_LIST entry, or an unknown setting where the
        dict or one of its keys is not static."""
        if isinstance(mapping, ast.Name):
            bound = self.evaluator._bound(mapping.id, node.lineno)
            if bound is None or mapping.id in self.evaluator.mutated:
                self._add(node, None, "set", readable=False)
                return
            mapping = bound[1]
        if isinstance(mapping, ast.Call) and _call_name(mapping) == "dict":  # dict(KEY=...), dict({...}, KEY=...)
            self._mappings_of(mapping, node)
            return
        if not isinstance(mapping, ast.Dict):
            self._add(node, None, "set", readable=False)
            return
        for key, value in zip(mapping.keys, mapping.values):
            if key is None:  # {**other}
                self._mapping(node, value)
            else:
                self._keyed(node, key, value, "set")

    def _add(self, node: ast.AST, value: ast.AST | None, kind: str, readable: bool = True) -> None:
        text = None
        if readable and value is not None:
            constant = self.evaluator.constant(value, node.lineno)
            text = str(constant) if isinstance(constant, str) else None
        elif readable and kind == "unset":
            text = ""
        deferred = id(node) in self.in_functions
        self.settings.append(ArchListSetting(node.lineno, text, deferred, kind, _shown(node)))
        function = self.evaluator._function_of.get(id(node))
        if deferred and id(function) not in self.expanded:
            # a plain function called by its name at module level may set it there: what it leaves is not read
            # (its settings' order, branches and the calls between them), so each such call is one setting of
            # a value build cannot read, once per function however many settings it holds
            self.expanded.add(id(function))
            for call in self._called_only_by_name(function) or []:
                if id(call) not in self.in_functions:
                    self.settings.append(ArchListSetting(call.lineno, None, False, "set", _shown(call)))

    def _is_environ(self, node: ast.AST, before: int, depth: int = 0) -> bool:
        if isinstance(node, ast.Attribute):
            return node.attr == "environ" and isinstance(node.value, ast.Name) and node.value.id in self.modules
        if isinstance(node, ast.Name):
            if node.id in self.environs:
                return True
            bound = self.evaluator._bound(node.id, before)
            return bound is not None and depth < 20 and self._is_environ(bound[1], bound[0], depth + 1)
        return False


def _yields(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a def is a generator: calling it runs none of its body. Its own body only, not the functions
    and lambdas defined in it."""
    waiting: list[ast.AST] = list(function.body)
    while waiting:
        node = waiting.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            waiting.extend(ast.iter_child_nodes(node))
    return False


def load_source_files(tree: ast.Module, folder: Path) -> list[tuple[str, Path]]:
    """(as written, path) of every file the load() calls of a parsed submission compile, found as the
    build finds them (relative ones in `folder`, the submission's), whether they exist or not; the
    sources a static expression does not give are left out."""
    evaluator = _Evaluator(tree)
    files = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _extension_call(node, tree) == "load":
            value = _keyword(node, "sources", 1)
            pieces = evaluator.pieces(value, node.lineno) if value is not None else None
            files += [(piece.text, _source_file(piece.text, folder)) for piece in pieces or []]
    return files


def _extension_call(call: ast.Call, tree: ast.Module) -> str | None:
    """"load_inline" or "load" for a call of torch.utils.cpp_extension's, else None (torch.load, json.load)."""
    name = _call_name(call).split(".")[-1]
    if name == "load_inline" or (name == "load" and ("cpp_extension" in _call_name(call) or _imports_load(tree))):
        return name
    return None


def _source_file(source: str, folder: Path) -> Path:
    return Path(source) if os.path.isabs(source) else folder / source


def _as_torch_resolves(include: str, submission_folder: Path) -> str:
    """An extra_include_paths entry as torch's ninja file names it: stripped, then os.path.abspath, which
    reads a relative one against the working folder of `python submission.py`, the submission's own."""
    return os.path.abspath(os.path.join(submission_folder, include.strip()))


def _cpp_flags(call: ast.Call, name: str, evaluator: _Evaluator) -> list[str] | None:
    """extra_cflags as written (torch >= 2.7 puts sycl_sources before them: position 5 of load_inline,
    2 of load); None where they cannot be known: a non-static value, or *args/**kwargs in the call."""
    if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    node = _keyword(call, "extra_cflags", 5 if name == "load_inline" else 2)
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return []
    pieces = evaluator.pieces(node, call.lineno)
    if pieces is None:  # a change in place build cannot follow makes them None too (_Evaluator._changed)
        return None
    flags: list[str] = []
    for piece in pieces:  # "-O" + LEVEL is one flag
        if piece.joined and flags:
            flags[-1] += piece.text
        else:
            flags.append(piece.text)
    return flags


def _imports_load(tree: ast.Module) -> bool:
    """`from torch.utils.cpp_extension import load` makes a bare load(...) the extension loader."""
    return any(isinstance(node, ast.ImportFrom) and node.module == "torch.utils.cpp_extension"
               and any(alias.name == "load" for alias in node.names) for node in ast.walk(tree))
