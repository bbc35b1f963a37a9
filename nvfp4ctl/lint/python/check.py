"""Run every Python rule on one file: parse (never import), index, rules, embedded C++."""

from __future__ import annotations

import ast
import codecs
import sys

from nvfp4ctl.lint.config import LintConfig
from nvfp4ctl.lint.cpp import rules as cpp_rules
from nvfp4ctl.lint.diagnostic import Finding
from nvfp4ctl.lint.python import beside, caching, extensions, local_imports, timed, whole_file
from nvfp4ctl.lint.python.constants import indexing_with
from nvfp4ctl.lint.python.embedded import fragments
from nvfp4ctl.lint.python.facts import using
from nvfp4ctl.lint.python.findings import node_finding
from nvfp4ctl.lint.python.index import ModuleIndex
from nvfp4ctl.lint.python.parsing import PARSE_ERRORS, parsed_quietly
from nvfp4ctl.lint.source import SourceFile
from nvfp4ctl.submission_text import coding_line_problem
from nvfp4ctl.lint.submission import CUSTOM_KERNEL, STAR_IMPORT, SUBMISSION_NAME
from nvfp4ctl.runner.entry_point import misspelt_entry_point, misspelt_words


def check(source: SourceFile, config: LintConfig) -> list[Finding]:
    refused = _coding_line_refused(source)
    if refused is not None:
        return [refused]
    try:
        tree = parsed_quietly(source.text, filename=str(source.path))
    except PARSE_ERRORS as error:
        line = getattr(error, "lineno", None) or 1
        col = max((getattr(error, "offset", None) or 1) - 1, 0)
        offset = source.line_starts[min(line, len(source.line_starts)) - 1] + col
        return [Finding(min(offset, len(source.text)), "NV001",
                        f"not valid Python {sys.version_info.major}.{sys.version_info.minor}"
                        f" ({getattr(error, 'msg', error)}); only the text rules ran")]
    findings: list[Finding] = _entry_point(source, tree)

    def report(node: ast.AST, code: str, message: str) -> None:
        findings.append(node_finding(source, node, code, message))

    with using(config.problem), indexing_with(tree):  # tuple indices and names of the task's problem, the file's index constants
        index = ModuleIndex(tree)
        whole_file.check(index, report)
        timed.check(index, report, config.benchmark_shapes, config.shape_dims)
        caching.check(index, report)
        beside.check(index, report)
        local_imports.check(index, report, source.path)
    findings.extend(extensions.check(source, tree))
    for fragment in fragments(index.all_nodes, source):
        findings.extend(cpp_rules.check(fragment, config))
    return findings


def _coding_line_refused(source: SourceFile) -> Finding | None:
    """NV001 where the coding line names an encoding Python refuses (`# coding: nosuch`, latin-1 after a
    byte order mark): python stops there before any line runs, as check and build say."""
    data = (codecs.BOM_UTF8 if source.byte_order_mark else b"") + source.text.encode("utf-8", "surrogatepass")
    problem = coding_line_problem(data)
    if problem is None:
        return None
    line, reason = problem
    return Finding(source.offset(line, 0), "NV001", f"not valid Python ({reason}); only the text rules ran")


def _entry_point(source: SourceFile, tree: ast.Module) -> list[Finding]:
    """NV002 for a file named as a submission with no custom_kernel at all (a star import may bring one),
    and for any file lint reads that has no code at all: only a file the user named or a submission*.py
    gets here empty, and nothing empty can be a submission, whatever its name."""
    if not tree.body:
        return [Finding(0, "NV002", f"{source.path.name} has no code (it is empty, or only comments): a submission"
                                   " defines custom_kernel(data), which the leaderboard calls")]
    uncallable = _uncallable_entry_point(source, tree)
    if uncallable:
        return uncallable
    if not SUBMISSION_NAME.match(source.path.name) or CUSTOM_KERNEL.search(source.text) or STAR_IMPORT.search(source.text):
        return []
    misspelt = misspelt_entry_point(tree)
    if misspelt is not None:  # the line and the name check gives
        return [Finding(source.ast_offset(misspelt.lineno, misspelt.col_offset), "NV002",
                        f"{misspelt_words(misspelt.name)}: the leaderboard calls custom_kernel(data)")]
    return [Finding(0, "NV002", f"{source.path.name} has no custom_kernel (def, assignment or import): the leaderboard"
                               " calls custom_kernel(data)")]


def _uncallable_entry_point(source: SourceFile, tree: ast.Module) -> list[Finding]:
    """NV002 for a module-level `def custom_kernel` that `custom_kernel(data)` cannot call (five
    parameters for the tuple's elements, a required keyword-only one, none at all): the file
    imports and lints clean otherwise, and the harness's call raises a TypeError on every test."""
    findings = []
    for at, node in enumerate(tree.body):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != "custom_kernel":
            continue
        if not all(_keeps_the_signature(decorator) for decorator in node.decorator_list) or _bound_again(tree.body[at + 1 :]):
            continue  # a wrapper of the user's may take the tuple and unpack it
        arguments = node.args
        positional = [*arguments.posonlyargs, *arguments.args]
        required = len(positional) - len(arguments.defaults)
        required_keywords = [arg.arg for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default is None]
        if required <= 1 and (positional or arguments.vararg) and not required_keywords:
            continue
        offset = source.ast_offset(node.lineno, node.col_offset)  # the `def` (or `async`), decorators aside
        width = source.text.index("custom_kernel", offset) + len("custom_kernel") - offset
        findings.append(Finding(offset, "NV002", f"custom_kernel({ast.unparse(arguments)}) cannot be called as"
                                                 " custom_kernel(data): the leaderboard passes the input tuple as its"
                                                 " one argument", width))
    return findings


def _bound_again(statements: list[ast.stmt]) -> bool:
    """Whether a later module-level statement binds custom_kernel again (`custom_kernel = wrap(custom_kernel)`,
    another def, an import): the def is then not what the harness calls."""
    for statement in statements:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and statement.name == "custom_kernel":
            return True
        if isinstance(statement, (ast.Import, ast.ImportFrom)) and any(
                (alias.asname or alias.name.split(".")[0]) == "custom_kernel" for alias in statement.names):
            return True
        targets = (statement.targets if isinstance(statement, ast.Assign)
                   else [statement.target] if isinstance(statement, (ast.AnnAssign, ast.AugAssign)) else [])
        if any(isinstance(name, ast.Name) and name.id == "custom_kernel" for target in targets for name in ast.walk(target)):
            return True
    return False


# Decorators that call the function with the arguments they are given: the def's own parameters are what
# custom_kernel(data) meets. Any other decorator may adapt them.
_SIGNATURE_KEEPING = frozenset({"wraps", "no_grad", "inference_mode", "enable_grad", "compile", "cache", "lru_cache"})


def _keeps_the_signature(decorator: ast.expr) -> bool:
    called = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = called.attr if isinstance(called, ast.Attribute) else called.id if isinstance(called, ast.Name) else ""
    return name in _SIGNATURE_KEEPING
