"""Which parameters of a function that a load_inline call of the file builds its own C++ never names.

`mod.gemm(a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c)` hands the reference scales to code
lint can read where the call's cpp_sources and cuda_sources fold to text: a parameter the body of
gemm's one definition never names is a value the kernel cannot read. Anything less certain (sources
built at run time, overloads, a starred argument before it, a macro naming the parameter outside the
body) leaves the parameter read.
"""

from __future__ import annotations

import ast
import re

from nvfp4ctl.cpp_lexer import blank
from nvfp4ctl.lint.cpp.brackets import BracketPairs
from nvfp4ctl.lint.python.index import ModuleIndex, call_name
from nvfp4ctl.lint.python.strings import bound_values, folded_string

_SOURCE_KEYWORDS = {"cpp_sources": 1, "cuda_sources": 2}  # keyword -> position in load_inline(name, cpp, cuda, ...)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_DECLARED_NAME = re.compile(r"(::)?\s*([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?$")


def ignores_argument(call: ast.Call, node: ast.AST, index: ModuleIndex) -> bool:
    """Is node (or the argument of call holding it) given to a parameter that the visible C++ of the
    called extension function never names?"""
    argument = _argument_holding(call, node, index)
    if argument is None or argument not in call.args:
        return False  # a keyword: load_inline's bindings take positions only
    at = call.args.index(argument)
    if any(isinstance(earlier, ast.Starred) for earlier in call.args[: at + 1]):
        return False
    definition = _definition(call, index)
    if definition is None:
        return False
    parameters, body, elsewhere = definition
    if at >= len(parameters) or parameters[at] is None:
        return False
    name = parameters[at]
    word = re.compile(rf"\b{re.escape(name)}\b")
    return not word.search(body) and not word.search(elsewhere)


def _argument_holding(call: ast.Call, node: ast.AST, index: ModuleIndex) -> ast.AST | None:
    """The argument of call that node is, or sits inside (`sfa_ref.contiguous()`)."""
    held = node
    for parent in index.ancestors(node):
        if parent is call:
            return held
        held = parent
    return None


def _definition(call: ast.Call, index: ModuleIndex) -> tuple[list[str | None], str, str] | None:
    """(parameter names, body, the directives of the rest of the code) of the one C++ definition of the
    called function in the sources of the load_inline call that built its module, or None."""
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


def _find_definition(load: ast.Call, function: str, index: ModuleIndex) -> tuple[list[str | None], str, str] | None:
    text = _sources(load, index)
    if text is None:
        return None
    code = blank(text).code
    parens, braces = BracketPairs(code), BracketPairs(code, "{", "}")
    found: list[tuple[list[str | None], str, str]] = []
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
        found.append((_parameters(code[opening + 1 : closing]), code[brace + 1 : end], directives))
    return found[0] if len(found) == 1 else None


def _sources(load: ast.Call, index: ModuleIndex) -> str | None:
    """The text of cpp_sources and cuda_sources (a str or a list of them), or None where any is unknown."""
    texts: list[str] = []
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
            texts.append(folded)
    return "\n".join(texts) if texts else None


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
