"""Which parameters of a function that a load_inline call of the file builds its own C++ never names,
and which it reads the data of.

`mod.gemm(a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c)` hands the reference scales to code
lint can read where the call's cpp_sources and cuda_sources fold to text: a parameter the body of
gemm's one definition never names is a value the kernel cannot read, and one whose data the body takes
(`sfa_ref.data_ptr()`, handed to cuBLASLt as the A scale pointer) is a value it reads. Anything less
certain (sources built at run time, overloads, a starred argument before it, a macro naming the
parameter outside the body) leaves the parameter possibly read; the body assigning to it, or taking
its data only inside a check (`TORCH_CHECK(sfa_ref.data_ptr() != nullptr)`), is no certain read.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from nvfp4ctl.cpp_lexer import blank
from nvfp4ctl.lint.cpp.brackets import BracketPairs
from nvfp4ctl.lint.python.index import ModuleIndex, call_name
from nvfp4ctl.lint.python.strings import bound_values, folded_string

_SOURCE_KEYWORDS = {"cpp_sources": 1, "cuda_sources": 2}  # keyword -> position in load_inline(name, cpp, cuda, ...)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_DECLARED_NAME = re.compile(r"(::)?\s*([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?$")
# the ways a torch::Tensor hands out its memory: data_ptr()/data_ptr<T>(), const_/mutable_data_ptr, the
# older data<T>() and the accessors
_DATA_READ = r"\s*(?:\.|->)\s*(?:(?:const_|mutable_)?data_ptr\s*(?:<[^();{}]*>)?|" \
             r"(?:data|accessor|packed_accessor32|packed_accessor64)\s*<[^();{}]*>)\s*\("
# `name = value;` of one statement: a declaration (`auto s = SFA;`) or an assignment (`==`, `<=` are no binding)
_ASSIGNMENT = re.compile(r"(?<![\w.>:])([A-Za-z_]\w*)\s*=(?!=)\s*([^;{}]+);")
# what a declaration's name follows, from the statement's start: its type alone (`at::Tensor`, `const auto&`,
# `torch::Tensor`), so `at::Tensor s(SFA);` declares s where `at::empty_like(SFA);` and `f(SFA);` are calls
_DECLARED_TYPE = re.compile(r"\s*(?:(?:const|volatile|static|constexpr)\s+)*(?:::\s*)?[A-Za-z_]\w*"
                            r"(?:\s*::\s*[A-Za-z_]\w*)*(?:\s*<[^;{}()]*>)?(?:\s*(?:const\b|&|\*))*\s*")
# a statement's first bracket and the name before it: `at::Tensor s(` (one match a statement keeps it linear)
_INITIALISED = re.compile(r"(?:^|(?<=[;{}]))([^;{}()]*?)\b([A-Za-z_]\w*)\s*[({]")
_ENDS_STATEMENT = re.compile(r"\s*;")
# words a type never starts with: `else f(SFA);` and `return s{SFA};` declare nothing
_STATEMENT_WORDS = frozenset({"return", "co_return", "throw", "case", "else", "do", "co_await", "co_yield", "new",
                              "delete", "goto", "using", "typedef", "struct", "class", "union", "enum", "namespace",
                              "template", "typename", "sizeof", "alignof", "decltype", "operator"})
# checks whose arguments only test the tensor: its address there is compared, not read
_CHECKS = re.compile(r"\b(?:TORCH_CHECK\w*|TORCH_INTERNAL_ASSERT\w*|AT_ASSERT\w*|static_assert|assert)\s*\(")


@dataclass(frozen=True)
class CppRead:
    """Where the C++ of an extension function reads the data of the parameter an argument lands in."""

    parameter: str
    text: str  # the line as written, blanks collapsed
    line: int | None  # its line in the Python file, None where the sources do not map back


@dataclass(frozen=True)
class _Definition:
    parameters: list[str | None]
    body: str  # code only: comments and literals blanked
    body_start: int  # offset of the body in the sources' text
    elsewhere: str  # the directives of the rest of the code
    sources: _Sources


@dataclass(frozen=True)
class _Sources:
    text: str
    literals: tuple[tuple[int, ast.Constant | None], ...]  # (offset in text, the literal that part is, if one)

    def line_of(self, offset: int) -> int | None:
        """The file line of an offset of text, where its part is one literal whose lines are the file's."""
        start, literal = max((part for part in self.literals if part[0] <= offset), key=lambda part: part[0])
        if literal is None or not isinstance(literal.value, str) or literal.end_lineno is None \
                or literal.end_lineno - literal.lineno != literal.value.count("\n"):
            return None  # an escaped newline: the value's lines are not the file's
        return literal.lineno + literal.value.count("\n", 0, offset - start)


def ignores_argument(call: ast.Call, node: ast.AST, index: ModuleIndex) -> bool:
    """Is node (or the argument of call holding it) given to a parameter that the visible C++ of the
    called extension function never names?"""
    landed = _landing(call, node, index)
    if landed is None:
        return False
    definition, name = landed
    word = re.compile(rf"\b{re.escape(name)}\b")
    return not word.search(definition.body) and not word.search(definition.elsewhere)


def reads_argument(call: ast.Call, node: ast.AST, index: ModuleIndex) -> CppRead | None:
    """Where the visible C++ of the called extension function takes the data of the parameter node (or the
    argument of call holding it) lands in, or None where it does not for certain."""
    landed = _landing(call, node, index)
    if landed is None:
        return None
    definition, name = landed
    body, word = definition.body, re.escape(name)
    if re.search(rf"\b{word}\b", definition.elsewhere) or re.search(rf"\b{word}\s*=(?!=)", body):
        return None  # a macro may stand for it, or the body points the name at another tensor
    parens = BracketPairs(body)
    checked = [(m.end() - 1, parens.closing(m.end() - 1)) for m in _CHECKS.finditer(body)]
    holders = _holders(body, name, definition.elsewhere)
    for at in sorted(_data_reads(body, holders, parens)):
        if any(opening < at < closing for opening, closing in checked):
            continue
        at += definition.body_start
        text = definition.sources.text
        line_end = text.find("\n", at)
        written = text[text.rfind("\n", 0, at) + 1 : line_end if line_end >= 0 else len(text)]
        return CppRead(name, " ".join(written.split()), definition.sources.line_of(at))
    return None


def _holders(body: str, name: str, elsewhere: str) -> set[str]:
    """The parameter's name and the local names the body points at it, each bound once: `auto s = SFA;`,
    `const at::Tensor& s = SFA;`, `at::Tensor s(SFA);`, `auto s{SFA};`, an alias of an alias, or a ternary
    that may pick it (`auto s = flag ? SFA : SFA_perm;`). A name bound twice, or named by a macro, may hold
    something else when read."""
    bound: dict[str, list[str]] = {}
    for match in _ASSIGNMENT.finditer(body):
        bound.setdefault(match.group(1), []).append(match.group(2))
    for declared, value in _initialisations(body):
        bound.setdefault(declared, []).append(value)
    holders = {name}
    grown = True
    while grown:
        grown = False
        for alias, values in bound.items():
            if alias not in holders and len(values) == 1 and _may_pick(values[0], holders) \
                    and not re.search(rf"\b{re.escape(alias)}\b", elsewhere):
                holders.add(alias)
                grown = True
    return holders


def _initialisations(body: str) -> list[tuple[str, str]]:
    """Each name a declaration of one name initialises directly or by braces, and the one expression it is
    given: `at::Tensor s(SFA);` and `auto s{SFA};` bind s as `auto s = SFA;` does. Two arguments
    (`at::Tensor s(x, y)`) make another object, and are no binding."""
    parens, braces = BracketPairs(body), BracketPairs(body, "{", "}")
    found: list[tuple[str, str]] = []
    for match in _INITIALISED.finditer(body):
        declared_type = match.group(1)
        first = _IDENTIFIER.search(declared_type)
        if first is None or first.group() in _STATEMENT_WORDS or not _DECLARED_TYPE.fullmatch(declared_type):
            continue
        opening = match.end() - 1
        closing = (parens if body[opening] == "(" else braces).closing(opening)
        value = body[opening + 1 : closing]
        if _ENDS_STATEMENT.match(body, closing + 1) and _top_level(value, ",") is None:
            found.append((match.group(2), value))
    return found


def _may_pick(expression: str, holders: set[str]) -> bool:
    """Is the expression one of the names, or a ternary with one as a branch (`flag ? SFA : SFA_perm`)?"""
    expression = _unwrapped(expression)
    if expression in holders:
        return True
    question = _top_level(expression, "?")
    if question is None:
        return False
    branches = expression[question + 1 :]
    colon = _top_level(branches, ":")
    return colon is not None and any(_may_pick(branch, holders) for branch in (branches[:colon], branches[colon + 1 :]))


def _unwrapped(expression: str) -> str:
    """The expression without blanks around it and the parentheses wrapping it whole: `((SFA))` is SFA."""
    expression = expression.strip()
    while expression.startswith("(") and BracketPairs(expression).closing(0) == len(expression) - 1:
        expression = expression[1:-1].strip()
    return expression


def _top_level(expression: str, char: str) -> int | None:
    """The offset of the first char outside brackets (`::` is no ternary's colon), or None."""
    depth = 0
    for at, found in enumerate(expression):
        if found in "([{":
            depth += 1
        elif found in ")]}":
            depth -= 1
        elif found == char and depth == 0 and expression[at - 1 : at + 2].count(":") < 2:
            return at
    return None


def _data_reads(body: str, holders: set[str], parens: BracketPairs) -> set[int]:
    """Where the body takes the data of one of the names (`s.data_ptr()`), or of a parenthesised expression
    that may be one (`(flag ? SFA : SFA_perm).data_ptr()`)."""
    names = "|".join(re.escape(holder) for holder in sorted(holders))
    found = {match.start() for match in re.finditer(rf"\b(?:{names}){_DATA_READ}", body)}
    opened_at = {parens.closing(match.start()): match.start() for match in re.finditer(r"\(", body)}
    for match in re.finditer(rf"\){_DATA_READ}", body):
        opening = opened_at.get(match.start())
        if opening is not None and _passes_through(body[:opening]) and _may_pick(body[opening + 1 : match.start()], holders):
            found.add(opening)
    return found


_CAST = re.compile(r"\b(?:static|const)_cast\s*<[^<>;]*>\s*$")


def _passes_through(before: str) -> bool:
    """Whether the parentheses opening after `before` hold the tensor itself: an expression's, or a cast's
    (`static_cast<at::Tensor>(SFA)`), not a call's arguments (`at::empty_like(SFA)` makes another tensor)."""
    before = before.rstrip()
    if _CAST.search(before):
        return True
    word = re.search(r"\w+$", before)
    if word is not None:
        return word.group() in _BEFORE_AN_EXPRESSION
    return not before.endswith((")", "]", ">"))


_BEFORE_AN_EXPRESSION = frozenset({"return", "co_return", "throw", "case", "else", "do", "co_await"})


def _landing(call: ast.Call, node: ast.AST, index: ModuleIndex) -> tuple[_Definition, str] | None:
    """The definition of the called function and the name of the parameter node's argument lands in."""
    argument = _argument_holding(call, node, index)
    if argument is None or argument not in call.args:
        return None  # a keyword: load_inline's bindings take positions only
    at = call.args.index(argument)
    if any(isinstance(earlier, ast.Starred) for earlier in call.args[: at + 1]):
        return None
    definition = _definition(call, index)
    if definition is None or at >= len(definition.parameters) or definition.parameters[at] is None:
        return None
    return definition, definition.parameters[at]  # type: ignore[return-value]


def _argument_holding(call: ast.Call, node: ast.AST, index: ModuleIndex) -> ast.AST | None:
    """The argument of call that node is, or sits inside (`sfa_ref.contiguous()`)."""
    held = node
    for parent in index.ancestors(node):
        if parent is call:
            return held
        held = parent
    return None


def _definition(call: ast.Call, index: ModuleIndex) -> _Definition | None:
    """The one C++ definition of the called function in the sources of the load_inline call that built
    its module, or None."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return None
    values = bound_values(func.value, index)
    if len(values) != 1 or not isinstance(values[0], ast.Call) or call_name(values[0]) != "load_inline":
        return None
    # found once per module and function: each reference scale passed to it asks, and each ask would
    # fold, blank and bracket-match all the module's C++ again
    key = ("inline definition", id(values[0]), func.attr)
    if key not in index.memo:
        index.memo[key] = _find_definition(values[0], func.attr, index)
    return index.memo[key]  # type: ignore[return-value]


def _find_definition(load: ast.Call, function: str, index: ModuleIndex) -> _Definition | None:
    sources = _sources(load, index)
    if sources is None:
        return None
    code = blank(sources.text).code
    parens, braces = BracketPairs(code), BracketPairs(code, "{", "}")
    found: list[_Definition] = []
    for match in re.finditer(rf"\b{re.escape(function)}\s*\(", code):
        before = code[: match.start()].rstrip()
        if not before or before.endswith(("->", ".", "::")) or not (before[-1].isalnum() or before[-1] in "_>&*"):
            continue  # a call or a qualified name, not a definition's declarator
        opening = match.end() - 1
        closing = parens.closing(opening)
        after = code[closing + 1 :].lstrip()
        if not after.startswith("{"):
            continue  # a declaration (`;`) or a call
        brace = len(code) - len(after)
        end = braces.closing(brace)
        directives = "\n".join(line for line in (code[:brace] + code[end:]).splitlines() if line.lstrip().startswith("#"))
        found.append(_Definition(_parameters(code[opening + 1 : closing]), code[brace + 1 : end], brace + 1,
                                 directives, sources))
    return found[0] if len(found) == 1 else None


def _sources(load: ast.Call, index: ModuleIndex) -> _Sources | None:
    """The text of cpp_sources and cuda_sources (a str or a list of them), or None where any is unknown."""
    texts: list[str] = []
    literals: list[tuple[int, ast.Constant | None]] = []
    length = 0
    for keyword, position in _SOURCE_KEYWORDS.items():
        value = next((k.value for k in load.keywords if k.arg == keyword),
                     load.args[position] if len(load.args) > position else None)
        if value is None:
            continue
        parts = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        for part in parts:
            folded = folded_string(part, index)
            if folded is None:
                return None
            literals.append((length, _literal(part, index)))
            literals.append((length + len(folded), None))  # the newline joining it to the next
            length += len(folded) + 1
            texts.append(folded)
    return _Sources("\n".join(texts), tuple(literals)) if texts else None


def _literal(part: ast.AST, index: ModuleIndex) -> ast.Constant | None:
    """The one string literal a source part is, written there or bound once to its name (CUDA = r\"\"\"...\"\"\")."""
    if isinstance(part, ast.Name):
        values = bound_values(part, index)
        part = values[0] if len(values) == 1 and values[0] is not None else part
    return part if isinstance(part, ast.Constant) else None


def _parameters(declarator: str) -> list[str | None]:
    """Each parameter's name (None where it has none or lint cannot tell), split at top-level commas."""
    pieces: list[str] = []
    depth, start = 0, 0
    for at, char in enumerate(declarator):
        if char in "(<[{":
            depth += 1
        elif char in ")>]}":
            depth -= 1
        elif char == "," and depth == 0:
            pieces.append(declarator[start:at])
            start = at + 1
    pieces.append(declarator[start:])
    names: list[str | None] = []
    for piece in pieces:
        declared = piece.split("=", 1)[0].strip()
        tail = _DECLARED_NAME.search(declared)  # `torch::Tensor` and `const T&` name no parameter
        named = tail is not None and not tail.group(1) and len(_IDENTIFIER.findall(declared)) > 1
        names.append(tail.group(2) if named and tail.group(2) not in ("const", "volatile") else None)
    return names
