"""Small readings of a submission's syntax shared by its static reads: a call's name and arguments, the terms
of a chain of +, an expression shown as written on one short line."""

from __future__ import annotations

import ast


def added_terms(node: ast.BinOp) -> list[ast.AST]:
    """The terms of a chain of + (a + b + c: [a, b, c]), read without recursion; a parenthesised
    right-hand term (a + (b + c)) is one term."""
    terms: list[ast.AST] = []
    left: ast.AST = node
    while isinstance(left, ast.BinOp) and isinstance(left.op, ast.Add):
        terms.append(left.right)
        left = left.left
    terms.append(left)
    return terms[::-1]


def shown(node: ast.AST, limit: int = 60) -> str:
    """An expression as written, shortened to one short line: a chain of + term by term, as far as
    the line goes (ast.unparse recurses, and a chain of thousands of terms exceeds the limit)."""
    terms = added_terms(node) if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) else [node]
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


def call_name(node: ast.Call) -> str:
    """The name a call is made by, its last two parts at most (cpp_extension.load_inline, load); "" for a call
    of anything but a name or an attribute."""
    func = node.func
    if isinstance(func, ast.Attribute):
        base = func.value.id if isinstance(func.value, ast.Name) else (
            func.value.attr if isinstance(func.value, ast.Attribute) else "")
        return f"{base}.{func.attr}" if base else func.attr
    return func.id if isinstance(func, ast.Name) else ""


def keyword_argument(call: ast.Call, name: str, position: int | None = None) -> ast.AST | None:
    """The argument a call passes for parameter `name`: by its keyword, else at `position` (None: keyword only)."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if position is not None and len(call.args) > position:
        return call.args[position]
    return None
