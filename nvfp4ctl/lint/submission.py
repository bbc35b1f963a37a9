"""What counts as a submission: the Python files the competition rules are about.

A GPU MODE submission is one .py file with `custom_kernel(data)`. In a folder, lint applies the
rules to a .py file only when it defines or imports `custom_kernel`, or is named submission*.py;
other Python files (benchmark scripts, helpers, the project's own tools) are never sent to the
server, so the rules do not apply to them. A file the user names on the command line is always
checked: they asked for it. C++ sources are always checked (they end up inside submissions).

A file `nvfp4ctl export` wrote says on its first line which problem's kernel API it calls (a plain-torch
export, which problem it is); lint judges it by that problem, whatever the task's is, read as export reads
it to refuse writing over another problem's export (export_header.exported_problem). So is a file whose
name starts with a problem's name (`nvfp4_dual_gemm_submission.py`, as kernels/torch_dequant names its
starters): a project keeps one problem's task.yml beside the other problems' starters (named_problem).
So is a file whose CUDA source (a load_inline string, or a file beside it that load(sources=[...])
compiles) includes exactly one problem's API header, or that calls exactly one problem's C ABI entry
point on a module (`module.nvfp4_gemv(...)`): that is the problem whose inputs it reads (api_problem).
A plain-torch file names none of these, and both the GEMM's and the GEMV's tuples have 7 elements; init's
starters (kernels/torch_dequant/) say theirs on their docstring's first line ("NVFP4 GEMV for GPU MODE's
nvfp4_gemv in plain torch: ..."), read as strictly as the export mark (starter_problem): where no task.yml
of the user's is in use, check and build run a starter copied away from its task.yml on its own problem's
task. Lint judges it by the task in use, under which a starter of another problem fails every call.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from nvfp4ctl.build.submission_sources import load_source_files
from nvfp4ctl.export_header import exported_problem
from nvfp4ctl.preamble import past_preamble
from nvfp4ctl.preprocessor import live_code

SUBMISSION_NAME = re.compile(r"^submission.*\.py$", re.IGNORECASE)
# A definition, an assignment or an import of the name, at any indentation (definitions under an
# `if` or `try` count); a mention in a docstring or a call does not.
CUSTOM_KERNEL = re.compile(
    r"^[ \t]*(?:(?:async[ \t]+)?def[ \t]+custom_kernel\b|custom_kernel[ \t]*(?::[^=\n]*)?=(?!=)"
    r"|(?:from[ \t]+\S+[ \t]+)?import[ \t][^\n#]*\bcustom_kernel\b)",
    re.MULTILINE,
)


STAR_IMPORT = re.compile(r"^[ \t]*from[ \t]+\S+[ \t]+import[ \t]+\*", re.MULTILINE)


# The docstring's first line of init's plain-torch starters (kernels/torch_dequant/), up to the problem's
# name. Strict on purpose: a user's own file that merely mentions a problem keeps the task's problem.
STARTER_HEADER = re.compile(r'\A"""NVFP4 [^\n]* for GPU MODE\'s (\w+) in plain torch[:\s]')
STARTER_REASON = "its docstring's first line, an init starter's"


def starter_problem(text: str) -> str | None:
    """The known problem an init starter (or a file that kept its first line) is for; None for any other file."""
    match = STARTER_HEADER.match(past_preamble(text))
    if match is None:
        return None
    from nvfp4ctl.problems import problem_names

    return match.group(1) if match.group(1) in problem_names() else None


def is_submission(path: Path, text: str) -> bool:
    return bool(SUBMISSION_NAME.match(path.name)) or bool(CUSTOM_KERNEL.search(text))


def named_problem(path: Path) -> str | None:
    """The known problem a file's name starts with (`<problem>.py` or `<problem>_*.py`), the longest
    when several do; None for any other name."""
    from nvfp4ctl.problems import problem_names

    stem = path.stem.lower()
    fits = [name for name in problem_names() if stem == name or stem.startswith(name + "_")]
    return max(fits, key=len, default=None)


HEADER_REASON, NAME_REASON = "its nvfp4ctl export header", "its file name"
FOLDER_REASON = "the task.yml above it"  # lint's alone: a file judged by the task.yml of the folder it lies in
# Where a file's problem comes from its place or its name, the user put it there on purpose: said with
# -v. Any other reason (an export header, another problem's C ABI in its code) is a file that would
# fail every test on the task's leaderboard: warned (lint.judged_as).
PLAIN_REASONS = (NAME_REASON, FOLDER_REASON)


def names_its_problem(text: str, path: Path) -> tuple[str, str] | None:
    """(problem, why) for a Python file that names its own problem: an export header, else the one
    problem's C ABI its code uses (load() sources looked for beside `path`), else a file name that starts
    with a problem's name; None for a file judged as the task's problem. Lint and check read it alike."""
    exported = exported_problem(text)
    if exported is not None:
        return exported, HEADER_REASON
    uses = api_problem(text, path.parent, path)  # before the name: what the code calls outweighs what the file is called
    if uses is not None:
        return uses
    named = named_problem(path)
    return (named, NAME_REASON) if named is not None else None


INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.MULTILINE)


def api_problem(text: str, folder: Path | None = None, file: Path | None = None) -> tuple[str, str] | None:
    """(problem, why) for a Python file whose code, not a comment or a docstring's prose, uses one
    problem's C ABI: a string (CUDA source for load_inline) that #includes its API header, a source
    file of a cpp_extension.load() call that does (found in `folder`, the file's, as the build finds
    it, a path made from `__file__` where `file`, the file's path, is given; read, never compiled), or
    a call of its entry point as a module's attribute. None where it uses none, or several problems'
    (a file for more than one is judged as the task's)."""
    from nvfp4ctl.problems import all_problems

    apis = {p.name: p.kernel_api for p in all_problems() if p.kernel_api is not None}
    loads_files = folder is not None and "cpp_extension" in text  # load()'s import or its module's name
    if not loads_files and not any(api.header in text or api.function in text for api in apis.values()):
        return None  # the common case: no parse
    try:
        tree = ast.parse(text.removeprefix("\ufeff"))  # a byte order mark, as python drops it
    except (SyntaxError, ValueError, RecursionError):  # lint's own rules say what is wrong with it
        return None
    headers = {api.header: name for name, api in apis.items()}
    functions = {api.function: name for name, api in apis.items()}
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for header in _api_headers(node.value, headers):
                found.setdefault(headers[header], f"it includes {header}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in functions:
            found.setdefault(functions[node.func.attr], f"it calls {node.func.attr}(), that problem's C ABI entry point")
    if loads_files and folder is not None:  # nvfp4ctl.build's package loads its builder only when asked
        for written, path in load_source_files(tree, folder, file):
            for header in _api_headers(_read(path), headers):
                found.setdefault(headers[header], f"its load() source {written} includes {header}")
    return next(iter(found.items())) if len(found) == 1 else None


def _api_headers(code: str, headers: dict[str, str]) -> list[str]:
    """The problems' API headers that C++ text includes, not in a comment or an #if 0 group."""
    names = (include.strip().rsplit("/", 1)[-1] for include in INCLUDE.findall(live_code(code)))
    return [name for name in names if name in headers]


def _read(path: Path) -> str:
    """A load() source's text; "" where it is missing or unreadable (the build says so, lint has no evidence)."""
    from nvfp4ctl.build.read_once import source_bytes  # read once per command where one build reads it again

    try:  # a regular file only: a FIFO or a device named there would block the read or never end
        return source_bytes(path).decode("utf-8", errors="replace") if path.is_file() else ""
    except (OSError, ValueError):  # ValueError: a NUL in the written name
        return ""
