"""Whether a kernel's translation unit compiles another arch's tensor-core instructions for a target arch.

Judged as the target's device pass reads the files (arch_names.device_pass_macros): an instruction inside
`#if __CUDA_ARCH__ >= 1000` is none for sm_90a. The kernel's own files count whole. A local header counts
through the helpers the kernel reaches: a function or macro of the header whose name the kernel's code
(or a helper it reaches, header to header) names, and every definition nvcc emits whatever calls it. nvcc 13
compiled for sm_90a: a `__global__` that is no template, called or not, always (ptxas then refuses its
tcgen05); a non-inline `__device__` function of namespace scope only with relocatable device code (-rdc=true,
-dc); an inline, static or template helper nothing calls never. So one `ptx_helpers.cuh` of tcgen05 and wgmma
helpers serves kernels of both archs. Reaching is told by names, not by a compiler's call graph (an overload,
a function pointer taken elsewhere, a macro built by token pasting escape it): an instruction in a helper
nothing names is reported, not refused. An operator or constructor goes by its class's name (`Commit{}(bar)`
reaches `Commit::operator()`), and a function this scan cannot name counts as reached: nothing could be
seen to leave it out."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from nvfp4ctl.build.arch_names import TENSOR_INSTRUCTIONS, device_pass_macros, live_code_needs
from nvfp4ctl.cpp_lexer import blank
from nvfp4ctl.errors import UsageError
from nvfp4ctl.preprocessor import live_code

_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")
_DIRECTIVE = re.compile(r"^[ \t]*#(?:\\\r?\n|[^\n])*", re.MULTILINE)
_DEFINE = re.compile(r"[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)")
_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_KERNEL = re.compile(r"\b__global__\b")
_DEVICE = re.compile(r"\b__device__\b")
# a template nvcc instantiates only where it is used; `template <>` is a specialisation, a function of its own
_TEMPLATE = re.compile(r"\btemplate\s*<(?!\s*>)")
# what makes a __device__ function inline or internal: emitted only where called, even with -rdc
_NOT_EXTERNAL = re.compile(r"\b(?:inline|__inline__|__forceinline__|static|constexpr|consteval)\b")
_NAMESPACE = re.compile(r"\bnamespace\b\s*([A-Za-z_][\w:]*)?\s*$")
_EXTERN_BLOCK = re.compile(r"\bextern\s*\"[^\"]*\"\s*$")  # extern "C" { ... }
# a class's head, to its end: its attributes, its name (none for an unnamed one), its bases
_CLASS_HEAD = re.compile(r"\b(?:struct|class|union)\b(?:\s*(?:alignas|__align__|__declspec|__attribute__)\s*"
                         r"\((?:[^()]|\([^()]*\))*\))*\s*([A-Za-z_]\w*)?\s*(?:final\b\s*)?(?::(?!:)[^;{}]*)?$")
# an operator's head, and the class it is qualified with out of the class (Commit::operator(), Tile<N>::operator[])
_OPERATOR = re.compile(r"(?:\b([A-Za-z_]\w*)\s*(?:<[^<>]*>)?\s*::\s*)?\boperator\b")
# a lambda's head, kept in a variable of the name it is called by: `auto commit = [] __device__ (uint64_t* bar)`
_LAMBDA_VARIABLE = re.compile(r"\b([A-Za-z_]\w*)\s*=\s*\[[^\[\]]*\]")
# a constructor's member initialisers have begun: `Umma() : bar_{0}` (not `::`); a brace after one of them
# initialises it and belongs to the head
_INITIALISERS = re.compile(r"\)\s*(?:noexcept\s*(?:\([^()]*\)\s*)?)?:(?!:)")
# a head that ends as a function's does: its parameters, then qualifiers or a trailing return type
_FUNCTION_HEAD = re.compile(r"(?:\)|(?:^|[=(,]|\breturn)\s*\[[^\[\]]*\])\s*(?:(?:const|volatile|noexcept|override|final|mutable|constexpr)\b\s*|&&?\s*)*"
                            r"(?:->[^;{}]*)?$")
# the flags that make nvcc compile relocatable device code: every external __device__ function is then kept
_RELOCATABLE = re.compile(r"-(?:rdc|-relocatable-device-code)(?:=|\s+)true|-dc|--device-c", re.IGNORECASE)
# words followed by ( in a function's head that are not its name
_NOT_A_NAME = frozenset({"if", "for", "while", "switch", "catch", "return", "sizeof", "alignof", "decltype",
                         "noexcept", "throw", "alignas", "static_assert", "__attribute__", "__declspec",
                         "__launch_bounds__", "__cluster_dims__", "__align__", "requires", "operator"})


@dataclass(frozen=True)
class Definition:
    name: str | None  # None: a function whose name this scan cannot read
    start: int
    end: int
    # nvcc emits it whatever calls it: a __global__ (each external __device__ too, under -rdc)
    emitted: bool = False

    @property
    def reached_anyway(self) -> bool:
        """Counted whatever names it: nvcc emits it, or nothing could be seen to leave it out."""
        return self.emitted or self.name is None


@dataclass(frozen=True)
class _Block:
    """A "{" still open while the code is read."""
    brace: int
    head: int  # where its head starts
    kind: str  # "namespace" (a named one, an extern "C" block), "internal" (an unnamed namespace), "class",
    #            "function", "initialiser" (a brace of a constructor's member initialisers), "other"
    name: str | None = None  # a class's, a function's


@dataclass(frozen=True)
class UncalledHelper:
    """Another arch's instruction in a header helper the kernel's code never names."""
    header: Path
    line: int
    helper: str | None  # None: outside any function or macro
    needs: tuple[str, str]  # (arch, what), as code_needs gives them


@dataclass(frozen=True)
class TensorCodeUse:
    refused: tuple[str, str] | None  # what the kernel or a helper it reaches needs, another arch than the target
    uncalled: tuple[UncalledHelper, ...]


def relocatable(flags: Iterable[str]) -> bool:
    """Whether nvcc flags (an extension's extra_cuda_cflags) compile relocatable device code."""
    words = list(flags)
    return any(_RELOCATABLE.fullmatch(word) or _RELOCATABLE.fullmatch(f"{word} {after}")
               for word, after in zip(words, [*words[1:], ""]))


def tensor_code_use(kernel_code: str, headers: Iterable[tuple[Path, str]], arch: str,
                    relocatable_code: bool = False, read_as: str | None = None) -> TensorCodeUse:
    """`kernel_code`: the kernel's own device code; `headers`: (path, text) of the local headers it includes;
    `relocatable_code`: compiled with -rdc=true, where each external __device__ function is emitted;
    `read_as`: the arch whose device pass reads the code (default `arch`'s)."""
    macros = device_pass_macros(read_as or arch)
    kernel = live_code(kernel_code, macros)
    own = live_code_needs(kernel)
    if own is not None and own[0] != arch:
        return TensorCodeUse(refused=own, uncalled=())
    read = [(path, live_code(text, macros)) for path, text in headers]
    definitions = {path: _definitions(blank(code).code, relocatable_code) for path, code in read}
    reached = _reached(blank(kernel).code,
                       [(definition, blank(code).code) for path, code in read for definition in definitions[path]])
    uncalled: list[UncalledHelper] = []
    for path, code in read:
        for target, what, instructions in TENSOR_INSTRUCTIONS:
            if target == arch:
                continue
            for found in instructions.finditer(code):
                helper = _around(definitions[path], found.start())
                if helper is not None and (helper.reached_anyway or helper.name in reached):
                    return TensorCodeUse(refused=(target, what), uncalled=())
                uncalled.append(UncalledHelper(path, code.count("\n", 0, found.start()) + 1,
                                               helper.name if helper is not None else None, (target, what)))
    return TensorCodeUse(refused=None, uncalled=tuple(_first_per_helper(uncalled)))


def other_arch_code(kernel_code: str, headers: Iterable[tuple[Path, str]], arch: str) -> tuple[str, str] | None:
    """(arch, what) of another arch's own tensor-core instructions the kernel compiles for that arch (wgmma
    in sm_90a's device pass, tcgen05 in sm_100a's), its headers through the helpers it reaches; None for
    code whose tensor-core instructions (mma.sync, say) any arch runs. An sm_90a kernel's wgmma behind
    `#if __CUDA_ARCH_FEAT_SM90_ALL` counts: built for sm_100a it is compiled out, and what is left (an mma.sync
    side path) is not the kernel."""
    read = list(headers)
    for target, _, _ in TENSOR_INSTRUCTIONS:
        if target == arch:
            continue
        refused = tensor_code_use(kernel_code, read, arch, read_as=target).refused
        if refused is not None and refused[0] == target:
            return refused
    return None


def kernel_other_arch_code(kernel: Path, arch: str, code: str) -> tuple[str, str] | None:
    """other_arch_code of a kernel file whose text `code` its caller has read (for its marks too) and of the
    local headers it includes; None where a header cannot be read (its build says why). A link's headers are
    those beside the file it links to, which the build compiles."""
    from nvfp4ctl.build.read_once import source_text
    from nvfp4ctl.build.sources import local_headers

    try:
        headers = local_headers(kernel.resolve())
        return other_arch_code(code, [(header, source_text(header)) for header in headers], arch)
    except (UsageError, OSError, RuntimeError):  # RuntimeError: a link loop (Python 3.12 and older)
        return None


def _first_per_helper(uncalled: list[UncalledHelper]) -> list[UncalledHelper]:
    """One per helper (its first instruction): a helper of twenty tcgen05 lines is one thing to say."""
    seen: dict[tuple[Path, str | None, int], UncalledHelper] = {}
    for item in uncalled:
        key = (item.header, item.helper, 0 if item.helper is not None else item.line)
        seen.setdefault(key, item)
    return list(seen.values())


def _reached(kernel: str, definitions: list[tuple[Definition, str]]) -> set[str]:
    """The names the kernel's code uses, those definitions counted anyway use, and those the helpers so named
    use in turn."""
    reached = set(_IDENTIFIER.findall(kernel))
    for definition, code in definitions:
        if definition.reached_anyway:
            reached.update(_IDENTIFIER.findall(code[definition.start:definition.end]))
    bodies: dict[str, list[str]] = {}
    for definition, code in definitions:
        if definition.name is not None:
            bodies.setdefault(definition.name, []).append(code[definition.start:definition.end])
    waiting = [name for name in reached if name in bodies]
    visited: set[str] = set()
    while waiting:
        name = waiting.pop()
        if name in visited:
            continue
        visited.add(name)
        for body in bodies[name]:
            for used in _IDENTIFIER.findall(body):
                reached.add(used)
                if used in bodies and used not in visited:
                    waiting.append(used)
    return reached


def _around(definitions: list[Definition], offset: int) -> Definition | None:
    """The outermost definition holding offset (a member function, not the lambda inside it), or None."""
    holding = [definition for definition in definitions if definition.start <= offset < definition.end]
    return min(holding, key=lambda definition: definition.start) if holding else None


def _definitions(code: str, relocatable_code: bool) -> list[Definition]:
    """The functions (head to closing brace) and macros (#define lines) of code whose comments and string
    literals are blanked; blocks that are no function (a namespace, a struct, an if) are left out."""
    found: list[Definition] = []
    directives = list(_DIRECTIVE.finditer(code))
    for directive in directives:
        define = _DEFINE.match(directive.group())
        if define is not None:
            found.append(Definition(define.group(1), directive.start(), directive.end()))
    # braces inside directive lines (a macro's body) are no block of the code around them
    pieces, kept = [], 0
    for directive in directives:
        pieces += [code[kept:directive.start()], " " * (directive.end() - directive.start())]
        kept = directive.end()
    plain = "".join(pieces) + code[kept:]
    opened: list[_Block] = []
    head_start = 0
    for brace in re.finditer(r"[{};]", plain):
        inside_initialiser = bool(opened) and opened[-1].kind == "initialiser"
        if brace.group() == "{":
            head = plain[head_start:brace.start()]
            if inside_initialiser or (_INITIALISERS.search(head) and re.search(r"[\w>]\s*$", head)):
                opened.append(_Block(brace.start(), head_start, "initialiser"))
                continue  # `bar_{0}` is part of the constructor's head
            opened.append(_block(brace.start(), head_start, head, opened))
        elif brace.group() == "}" and opened:
            block = opened.pop()
            if block.kind == "initialiser":
                continue
            # a function's own blocks (an if, a lambda) are part of it: only the outermost is one
            if block.kind == "function" and all(outer.kind != "function" for outer in opened):
                found.append(Definition(block.name, block.head, brace.end(),
                                        _emitted(plain[block.head:block.brace], opened, relocatable_code)))
        elif inside_initialiser:
            continue
        head_start = brace.end()
    return found


def _block(brace: int, head_start: int, head: str, opened: list[_Block]) -> _Block:
    """The block a "{" opens, told by its head."""
    if (namespace := _NAMESPACE.search(head)) is not None:
        return _Block(brace, head_start, "namespace" if namespace.group(1) else "internal")
    if _EXTERN_BLOCK.search(head):
        return _Block(brace, head_start, "namespace")
    if (named_class := _CLASS_HEAD.search(head)) is not None:
        return _Block(brace, head_start, "class", named_class.group(1))
    function_like = bool(_FUNCTION_HEAD.search(head.rstrip()) or _INITIALISERS.search(head))
    enclosing_class = next((outer.name for outer in reversed(opened) if outer.kind == "class"), None)
    name = _function_name(head, enclosing_class)
    if function_like or name is not None:
        return _Block(brace, head_start, "function", name)
    return _Block(brace, head_start, "other")


def _emitted(head: str, opened: list[_Block], relocatable_code: bool) -> bool:
    """Whether nvcc emits the function of this head whatever calls it (checked with nvcc 13 for sm_90a)."""
    if _TEMPLATE.search(head):
        return False
    if _KERNEL.search(head):
        return True
    return (relocatable_code and bool(_DEVICE.search(head)) and not _NOT_EXTERNAL.search(head)
            and all(outer.kind == "namespace" for outer in opened))


def _function_name(head: str, enclosing_class: str | None = None) -> str | None:
    """The name a function's head declares (`__device__ void commit(uint64_t* bar)`: commit; an operator's, its
    class's; a lambda's, its variable's), None for a head that declares none (`namespace ptx`, `struct Umma`,
    `if (done)`, a lambda's `[&](int i)`, an operator outside any class)."""
    if (operator := _OPERATOR.search(head)) is not None:
        return operator.group(1) or enclosing_class
    if (lambda_variable := _LAMBDA_VARIABLE.search(head)) is not None:
        return lambda_variable.group(1)
    for call in _CALLED.finditer(head):
        if call.group(1) not in _NOT_A_NAME:
            return call.group(1)
    return None
