"""C++/CUDA written inside Python string literals (load_inline sources, kernel templates).

A literal counts when its value looks like C++ or it is passed as cpp_sources/cuda_sources. The
fragment handed to the C++ rules is the literal's body exactly as written in the file, with each
escape replaced by a same-length stand-in ("\\\\n" -> " \\n"), so offsets map straight back.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from nvfp4ctl.lint.cpp.rules import Fragment
from nvfp4ctl.lint.source import SourceFile

LOOKS_LIKE_CPP = re.compile(
    r"#\s*include\b|__global__|__device__|\basm\s*(?:volatile\s*)?\(|torch::Tensor|extern\s+\"C\"|"
    r"template\s*<|cudaError_t|#\s*pragma\b|#\s*define\b|<<<|\bcuda\w*\(|\bcublasLt\w*|\bcute::|\bcutlass::"
)
SOURCE_KEYWORDS = {"cpp_sources", "cuda_sources", "sources", "cpp_source", "cuda_source", "src"}
_PREFIX = re.compile(r"([rRbBuUfF]*)('''|\"\"\"|'|\")")
_ESCAPE = re.compile(r"\\(\r\n|.)", re.DOTALL)


def fragments(nodes: list[ast.AST], source: SourceFile) -> list[Fragment]:
    """C++ fragments among a module's nodes (every node of the tree, as ast.walk lists them)."""
    literals: list[ast.AST] = []
    keyword_values: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.keyword) and node.arg in SOURCE_KEYWORDS:
            for inner in ast.walk(node.value):
                keyword_values.add(id(inner))
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in keyword_values or LOOKS_LIKE_CPP.search(node.value):
                literals.append(node)
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
            if id(node) in keyword_values or LOOKS_LIKE_CPP.search(text):
                literals.append(node)
    found: list[Fragment] = []
    seen: set[int] = set()
    for node in literals:
        if getattr(node, "end_lineno", None) is None:
            continue
        start = source.ast_offset(node.lineno, node.col_offset)
        end = source.ast_offset(node.end_lineno, node.end_col_offset)
        if start in seen:
            continue  # a JoinedStr's constant parts share its span on older Pythons
        seen.add(start)
        found.extend(_split_tokens(source.text[start:end], start))
    return found


def _split_tokens(segment: str, base: int) -> list[Fragment]:
    """One fragment per literal; implicitly concatenated pieces ("a" "b") are joined into one text
    where everything between their bodies (quotes, prefixes, blanks) becomes spaces."""
    simple = _single_token_body(segment, base)
    if simple is not None:
        return [simple]
    line_starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", segment)]
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("(" + segment + ")").readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    joined = [ch if ch in "\r\n" else " " for ch in segment]
    for token in tokens:
        if token.type != tokenize.STRING:
            continue
        (start_row, start_col), (end_row, end_col) = token.start, token.end
        start = line_starts[start_row - 1] + start_col - (1 if start_row == 1 else 0)
        end = line_starts[end_row - 1] + end_col - (1 if end_row == 1 else 0)
        body = _single_token_body(segment[start:end], start)
        if body is not None:
            joined[body.base : body.base + len(body.text)] = body.text
    return [Fragment("".join(joined), base)]


def _single_token_body(token: str, base: int) -> Fragment | None:
    match = _PREFIX.match(token)
    if match is None:
        return None
    prefix, quote = match.groups()
    if "b" in prefix.lower() or not token.endswith(quote) or len(token) < len(prefix) + 2 * len(quote):
        return None
    body = token[len(prefix) + len(quote) : len(token) - len(quote)]
    if quote in body.replace("\\" + quote[0], ""):
        return None  # several tokens glued together: let the tokenizer split them
    if "r" not in prefix.lower():
        body = _ESCAPE.sub(_same_length_escape, body)
    return Fragment(body, base + len(prefix) + len(quote))


def _same_length_escape(match: re.Match[str]) -> str:
    char = match.group(1)
    if char in ("n", "\n", "\r\n", "\r"):
        return " " + ("\n" if char == "n" else char)
    if char in "\"'":
        return " " + char
    return " " * len(match.group(0))
