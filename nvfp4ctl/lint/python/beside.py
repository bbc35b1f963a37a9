"""NV011: a file read from beside the submission at run time.

The leaderboard receives submission.py alone and runs it in a folder of its own: a kernel source, header
or table the file reads from its own folder (`open(Path(__file__).with_name("kernel.cuh")).read()`,
`(Path(__file__).parent / "gemm.cu").read_text()`, torch's `load(name, sources=[...])` of such a path
or of a relative one) is not there. A path the file writes itself first (a source it unpacks and
then loads) is fine, and so are the harness's own files (eval.py, reference.py: NV602). Paths are
followed through names assigned in the file (`here = Path(__file__).parent`).
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Callable

from nvfp4ctl.lint.python.index import ModuleIndex, call_name, catches, dotted
from nvfp4ctl.lint.python.whole_file import HARNESS_FILES

Report = Callable[[ast.AST, str, str], None]

READ_METHODS = {"read_text", "read_bytes", "open"}
WRITE_METHODS = {"write_text", "write_bytes"}
OPENERS = {"open", "io.open", "codecs.open"}
FILE_LOADERS = {"load", "fromfile", "loadtxt", "genfromtxt", "safe_open", "load_file"}  # json/np/torch/safetensors
FOLDER_STEPS = {"parent", "parents", "dirname", "with_name", "with_suffix", "with_stem", "joinpath"}
EXISTENCE_FUNCTIONS = {"os.path.exists", "os.path.isfile", "os.path.lexists"}
EXISTENCE_METHODS = {"exists", "is_file"}  # pathlib
MISSING_FILE_ERRORS = {"FileNotFoundError"}  # what reading a missing file raises; catches() knows its bases
SOURCE_FILE = re.compile(r"(?i)^[^/\\:]+(?:[/\\][^/\\:]+)*\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp|hh|inl|ptx|cubin)$")


def check(index: ModuleIndex, report: Report) -> None:
    written = _written_paths(index)
    for node in index.all_nodes:
        if not isinstance(node, ast.Call):
            continue
        for path in _paths_read(node, index):
            if not _beside(path, index) or not _another_file(path, index):
                continue
            spellings = _spellings(path, index)
            if spellings & written:
                continue
            shown = _file_name(path, index) or ast.unparse(path)
            if re.split(r"[\\/]", shown)[-1] in HARNESS_FILES:
                continue  # the harness's own files are there; reading them is NV602's
            if _guarded(node, spellings, index):
                # the file's absence is handled, so nothing fails there; what it holds (a tuned table)
                # still goes unused on the leaderboard, which its author may not know
                report(node, "NV011", f"reads {shown} from beside the file only where it exists: the leaderboard"
                                      " receives submission.py alone, so it will not be there and that branch"
                                      " never runs there; embed its text in the file if the leaderboard run needs it")
            else:
                report(node, "NV011", f"reads {shown} from beside the file at run time: the leaderboard receives"
                                      " submission.py alone, so it will not be there; embed its text in the file"
                                      " (nvfp4ctl export embeds a kernel's .cu and its local headers)")
            break


def _paths_read(call: ast.Call, index: ModuleIndex) -> list[ast.AST]:
    """The paths a call reads: open(P) for reading, P.read_text(), P.read_bytes(), P.open(), the sources
    of torch's cpp_extension.load, np.load(P)/torch.load(P) (json.load(open(P)): the open is the read)."""
    name = index.resolve(call.func) or ""
    if name in OPENERS:
        return [call.args[0]] if call.args and not _writes(call) else []
    if isinstance(call.func, ast.Attribute) and call.func.attr in READ_METHODS:
        return [] if call.func.attr == "open" and _writes(call, first=0) else [call.func.value]
    if name.endswith("cpp_extension.load"):
        sources = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg == "sources"), None)
        items = sources.elts if isinstance(sources, (ast.List, ast.Tuple)) else [sources] if sources else []
        return [item for item in items if _relative_source(item) or not isinstance(item, ast.Constant)]
    if call_name(call) in FILE_LOADERS and call.args and not _opened(call.args[0], index):
        return [call.args[0]]
    return []


def _opened(node: ast.AST, index: ModuleIndex) -> bool:
    """A file object (open(P), or a name assigned one): the open() that made it is the read reported."""
    values = [node, *(_assigned(node.id, index) if isinstance(node, ast.Name) else [])]
    return any(isinstance(inner, ast.Call) and (index.resolve(inner.func) or "") in OPENERS | {"Path.open"}
               or isinstance(inner, ast.Call) and call_name(inner) == "open" for value in values for inner in ast.walk(value))


def _bare(node: ast.AST) -> ast.AST:
    """p for str(p), os.fspath(p) and Path(p): the same path."""
    while isinstance(node, ast.Call) and call_name(node) in ("str", "fspath", "Path") and len(node.args) == 1:
        node = node.args[0]
    return node


def _guarded(read: ast.Call, spellings: set[str], index: ModuleIndex) -> bool:
    """Does the file handle the path being absent around this read: under a test of its existence
    (if os.path.exists(P), P.is_file() and ..., ... if P.exists() else ...), or inside a try whose
    handler catches the missing file (FileNotFoundError, OSError, Exception)? The path is given as its
    _spellings."""
    child: ast.AST = read
    for parent in index.ancestors(read):
        if isinstance(parent, (ast.If, ast.IfExp, ast.While)) and _tests_existence(parent.test, spellings, index):
            return True
        if isinstance(parent, ast.BoolOp) and any(_tests_existence(value, spellings, index)
                                                  for value in parent.values[:parent.values.index(child)]):
            return True
        if isinstance(parent, ast.Try) and child in parent.body and any(
                catches(handler, MISSING_FILE_ERRORS, index) for handler in parent.handlers):
            return True
        child = parent
    return False


def _tests_existence(test: ast.AST, spellings: set[str], index: ModuleIndex) -> bool:
    for call in ast.walk(test):
        if not isinstance(call, ast.Call):
            continue
        if (index.resolve(call.func) or "") in EXISTENCE_FUNCTIONS and call.args:
            tested = call.args[0]
        elif isinstance(call.func, ast.Attribute) and call.func.attr in EXISTENCE_METHODS:
            tested = call.func.value
        else:
            continue
        if _spellings(tested, index) & spellings:
            return True
    return False


def _writes(call: ast.Call, first: int = 1) -> bool:
    """Does an open() (mode at args[first], or mode=) write (w, a, x, +)?"""
    mode = call.args[first] if len(call.args) > first else next((k.value for k in call.keywords if k.arg == "mode"), None)
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and bool(set(mode.value) & set("wax+"))


def _relative_source(node: ast.AST) -> bool:
    """"kernel.cu", "csrc/gemm.cpp": a relative path to a source, read from the folder the file runs in."""
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(SOURCE_FILE.match(node.value))


def _beside(path: ast.AST, index: ModuleIndex, depth: int = 0) -> bool:
    """Is a path built from __file__ (directly or through names the file assigns), or a relative
    path to a source file (what torch's load reads from the folder it runs in)?"""
    if _relative_source(path):
        return True
    return any(isinstance(inner, ast.Name) and (inner.id == "__file__" or depth < 3 and any(
        _beside(value, index, depth + 1) for value in _assigned(inner.id, index))) for inner in ast.walk(path))


def _another_file(path: ast.AST, index: ModuleIndex, depth: int = 0) -> bool:
    """Does a path name a file other than the submission itself (open(__file__) reads the file, which
    is there): a string in it, or a step to its folder (.parent, dirname, with_name), through names?"""
    for inner in ast.walk(path):
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str) and inner.value:
            return True
        if isinstance(inner, ast.Attribute) and inner.attr in FOLDER_STEPS or isinstance(inner, ast.Name) and (
                inner.id in FOLDER_STEPS or depth < 3 and any(_another_file(v, index, depth + 1) for v in _assigned(inner.id, index))):
            return True
    return False


def _assigned(name: str, index: ModuleIndex) -> list[ast.AST]:
    return index.assignments(index.tree, name)


def _file_name(path: ast.AST, index: ModuleIndex, depth: int = 0) -> str | None:
    """The file a path names, for the message: the last string in it (kernel.cuh), through names."""
    strings = [n.value for n in ast.walk(path) if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value]
    if strings:
        return strings[-1]
    if isinstance(path, ast.Name) and depth < 3:
        for value in _assigned(path.id, index):
            found = _file_name(value, index, depth + 1)
            if found:
                return found
    return None


def _written_paths(index: ModuleIndex) -> set[str]:
    """Paths the file writes (P.write_text(...), open(P, "w")), as ast dumps (_spellings): a source it
    writes itself before loading it is there when it is read."""
    written: set[str] = set()
    for node in index.all_nodes:
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr in WRITE_METHODS:
            written |= _spellings(node.func.value, index)
        elif (index.resolve(node.func) or "") in OPENERS and node.args and _writes(node):
            written |= _spellings(node.args[0], index)
    return written


def _spellings(path: ast.AST, index: ModuleIndex) -> set[str]:
    """A path as written and with the names it uses replaced by their one value (as ast dumps), so that
    open(src_path, "w") with src_path = os.path.join(build, "k.cu") and a later
    load(sources=[os.path.join(build, "k.cu")]) are seen to name one file."""
    written, resolved = _bare(path), _bare(_ResolveNames(index).visit(copy.deepcopy(path)))
    spellings = {ast.dump(written), ast.dump(resolved)}
    for spelled in (written, resolved):
        parts = _joined_parts(spelled)
        if parts is not None and len(parts) > 1:
            spellings.add("joined:" + "|".join(parts))
    return spellings


def _joined_parts(path: ast.AST) -> list[str] | None:
    """The pieces a path is joined from, whichever way it is joined, as ast dumps: Path(build) / "k.cu",
    os.path.join(build, "k.cu"), Path(build, "k.cu") and Path(build).joinpath("k.cu") all give
    [build, "k.cu"]. None where a piece is absolute ("/k.cu" replaces what comes before it in
    os.path.join, never in a / b: the spellings differ) or empty."""
    path = _bare(path)
    if isinstance(path, ast.BinOp) and isinstance(path.op, ast.Div):
        pieces: list[ast.AST] | None = [path.left, path.right]
    elif isinstance(path, ast.Call) and not path.keywords and path.args and (
            dotted(path.func) in ("os.path.join", "posixpath.join", "path.join", "join")
            or call_name(path) in ("Path", "PurePath", "PosixPath")):
        pieces = list(path.args)
    elif isinstance(path, ast.Call) and isinstance(path.func, ast.Attribute) and path.func.attr == "joinpath" \
            and not path.keywords:
        pieces = [path.func.value, *path.args]
    else:
        pieces = None
    if pieces is None:
        if isinstance(path, ast.Constant) and isinstance(path.value, str) and (not path.value or path.value.startswith("/")):
            return None
        return [ast.dump(path)]
    parts: list[str] = []
    for piece in pieces:
        inner = _joined_parts(piece)
        if inner is None:
            return None
        parts.extend(inner)
    return parts


class _ResolveNames(ast.NodeTransformer):
    """Each name assigned exactly once in the file becomes its value (str()/fspath() dropped), three
    levels deep; a name assigned more than once, or never, stays as it is."""

    def __init__(self, index: ModuleIndex, depth: int = 0) -> None:
        self.index, self.depth = index, depth

    def visit_Name(self, node: ast.Name) -> ast.AST:  # noqa: N802 (NodeTransformer's naming)
        values = _assigned(node.id, self.index)
        if self.depth >= 3 or len(values) != 1:
            return node
        return _bare(_ResolveNames(self.index, self.depth + 1).visit(copy.deepcopy(values[0])))
