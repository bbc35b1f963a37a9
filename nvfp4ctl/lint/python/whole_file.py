"""Python rules that apply to the whole file, timed or not: graphs, harness tampering, installs at
import, device printing in kernels, inline PTX."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from nvfp4ctl.lint.cpp.scopes import DEBUG_WORD
from nvfp4ctl.lint.python.index import ModuleIndex, call_name, dotted
from nvfp4ctl.lint.python.strings import bound_values, folded_string

Report = Callable[[ast.AST, str, str], None]

GRAPH_NAMES = re.compile(r"^(?:CUDAGraph|make_graphed_callables|graph_pool_handle|do_bench_cudagraph|cudaGraph\w*|cuGraph\w*|CUDAGraphTree\w*)$")
GRAPH_MODULE_ATTRS = {("torch.cuda", "graph"), ("torch.cuda", "graphs"), ("torch.cuda.graphs", "graph")}
GRAPH_COMPILE_MODES = {"reduce-overhead", "max-autotune"}
TIMING_ATTRS = {
    "Event", "synchronize", "elapsed_time", "record", "perf_counter", "perf_counter_ns", "time", "time_ns",
    "monotonic", "monotonic_ns", "process_time", "clear_l2_cache", "clear_l2_cache_large", "do_bench", "Timer",
}
HARNESS_MODULES = {"utils", "eval", "eval_better_bench", "reference", "task"}
HARNESS_FILES = {"eval.py", "eval_better_bench.py", "utils.py", "reference.py", "task.py", "task.yml"}
FILE_FUNCTIONS = {
    "open", "Path", "PurePath", "join", "remove", "unlink", "rename", "replace", "copy", "copy2", "copyfile",
    "move", "rmtree", "read_text", "write_text", "read_bytes", "write_bytes", "exists", "isfile", "chmod",
    "truncate", "getsource", "getsourcefile", "spec_from_file_location", "with_name", "joinpath", "glob", "listdir",
}
FRAME_CALLS = {"sys._getframe", "inspect.currentframe", "inspect.stack", "inspect.getouterframes", "inspect.getframeinfo"}
SUBPROCESS_CALLS = re.compile(r"^(?:subprocess\.\w+|os\.(?:system|popen|exec\w*|spawn\w*|posix_spawn\w*)|pip\..*|runpy\.run_module|sh\.\w+)$")
SHELL_CALLS = {"run", "call", "check_call", "check_output", "Popen", "system", "popen", "main", "getoutput",
               "getstatusoutput", "spawnv", "spawnvp", "execv", "execvp", "execl", "execlp", "run_module"}
PIP_INSTALL = re.compile(r"\bpip3?\s+install\b|-m\s+pip\b")
KERNEL_DECORATORS = re.compile(r"(?:^|\.)(?:jit|kernel|autotune)$")
DEVICE_PRINTS = {"printf", "device_print", "print_tensor"}


def check(index: ModuleIndex, report: Report) -> None:
    graph_seen = _graphs(index, report)
    _replay(index, report, graph_seen)
    _compile_modes(index, report)
    _monkeypatching(index, report)
    _harness_access(index, report)
    _installs(index, report)
    _device_prints(index, report)
    _inline_asm(index, report)  # NV901: reported only when the profile or --select turns it on


def _graphs(index: ModuleIndex, report: Report) -> bool:
    seen = False
    for node in index.all_nodes:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if GRAPH_NAMES.match(alias.name) or (node.module, alias.name) in GRAPH_MODULE_ATTRS:
                    report(node, "NV201", f"imports the CUDA graph API {node.module}.{alias.name}: graphs are forbidden")
                    seen = True
        elif isinstance(node, (ast.Attribute, ast.Name)) and not isinstance(index.parents.get(node), ast.Attribute):
            if "raph" not in (node.attr if isinstance(node, ast.Attribute) else node.id) and not (
                    isinstance(node, ast.Attribute) and "raph" in (dotted(node) or "")):
                continue  # every graph API name contains "Graph" or "graph"
            name = index.resolve(node)
            if name is None:
                continue
            hit = _graph_api(name)
            if hit is not None and not isinstance(getattr(node, "ctx", None), ast.Store):
                report(node, "NV201", f"CUDA graph API {hit}: graphs are forbidden")
                seen = True
        elif isinstance(node, ast.Call) and call_name(node) == "getattr" and len(node.args) >= 2:
            hit = _graph_getattr(node, index)
            if hit is not None:
                report(node, "NV201", f"CUDA graph API {hit}: graphs are forbidden")
                seen = True
    return seen


def _graph_api(name: str) -> str | None:
    """The graph API a resolved dotted name reaches (torch.cuda.CUDAGraph -> CUDAGraph, torch.cuda.graph
    -> torch.cuda.graph), None where it reaches none."""
    parts = name.split(".")
    hit = next((p for p in parts if GRAPH_NAMES.match(p)), None)
    if hit is None:
        for i in range(1, len(parts)):
            if (".".join(parts[:i]), parts[i]) in GRAPH_MODULE_ATTRS:
                return ".".join(parts[: i + 1])
    return hit


def _graph_getattr(call: ast.Call, index: ModuleIndex) -> str | None:
    """The graph API getattr(torch.cuda, "CUDA" + "Graph") looks up: the same as torch.cuda.CUDAGraph
    spelled out, where the attribute's name folds to a string and the object is a name lint can resolve."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "getattr"):
        return None  # a method named getattr is no builtin lookup
    owner = index.resolve(call.args[0]) if isinstance(call.args[0], (ast.Name, ast.Attribute)) else None
    attribute = folded_string(call.args[1], index)
    if owner is None or not attribute or "." in attribute:
        return None
    return _graph_api(f"{owner}.{attribute}")


def _replay(index: ModuleIndex, report: Report, graph_seen: bool) -> None:
    for node in index.all_nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "replay":
            if graph_seen:
                report(node.func, "NV201", "replays a CUDA graph: graphs are forbidden")
            else:
                report(node.func, "NV202", ".replay() looks like CUDA graph replay; launch the kernel every call")


def _compile_modes(index: ModuleIndex, report: Report) -> None:
    for node in index.all_nodes:
        if isinstance(node, ast.Call):
            name = index.resolve(node.func) or ""
            if name == "torch._dynamo.optimize" or name.endswith("torch._dynamo.optimize"):
                _dynamo_optimize(node, index, report)
                continue
            if not (name == "torch.compile" or name.endswith("torch.compile")):
                continue
            for keyword in node.keywords:
                for argument, given in _compile_arguments(keyword, index):
                    for value in _values_of(given, index):
                        _compile_argument(argument, value, keyword.value, index, report)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr == "cudagraphs" and _truthy(node.value):
                    report(target, "NV203", "turns on CUDA graphs in torch.compile's config")


def _dynamo_optimize(call: ast.Call, index: ModuleIndex, report: Report) -> None:
    """NV203 for torch._dynamo.optimize("cudagraphs") or optimize(backend="cudagraphs"): the older
    spelling of torch.compile(..., backend="cudagraphs"), whose backend is its first argument."""
    given = [*call.args[:1], *(keyword.value for keyword in call.keywords if keyword.arg == "backend")]
    for backend in given:
        if any(_cudagraphs_backend(value, index) for value in _values_of(backend, index)):
            report(backend, "NV203", "torch._dynamo.optimize's cudagraphs backend runs the function as a CUDA graph;"
                                     " use the default backend")


def _compile_arguments(keyword: ast.keyword, index: ModuleIndex) -> list[tuple[str, ast.AST]]:
    """(argument, value) a keyword gives torch.compile: itself (`mode=...`), or each item of a mapping
    it splats (`**{"mode": "reduce-overhead"}`, `**kw` of `kw = dict(mode="max-autotune")`)."""
    if keyword.arg is not None:
        return [(keyword.arg, keyword.value)]
    found: list[tuple[str, ast.AST]] = []
    for mapping in _values_of(keyword.value, index):
        if isinstance(mapping, ast.Dict):
            found.extend((key.value, value) for key, value in zip(mapping.keys, mapping.values)
                         if isinstance(key, ast.Constant) and isinstance(key.value, str))
        elif isinstance(mapping, ast.Call) and isinstance(mapping.func, ast.Name) and mapping.func.id == "dict":
            found.extend((item.arg, item.value) for item in mapping.keywords if item.arg is not None)
    return found


def _compile_argument(argument: str, value: ast.AST, at: ast.AST, index: ModuleIndex, report: Report) -> None:
    """NV203 where one argument of torch.compile turns on CUDA graphs, reported at what the call gives."""
    mode = folded_string(value, index) if argument == "mode" else None
    if mode in GRAPH_COMPILE_MODES:
        report(at, "NV203", f'torch.compile(mode="{mode}") captures CUDA graphs; '
                            'use mode="max-autotune-no-cudagraphs" or the default')
    if argument == "backend" and _cudagraphs_backend(value, index):
        report(at, "NV203", "torch.compile's cudagraphs backend runs the function as a CUDA graph; use the default backend")
    if argument == "options" and isinstance(value, ast.Dict):
        for key, option in zip(value.keys, value.values):
            option_name = folded_string(key, index) if key is not None else None
            if option_name is not None and option_name.endswith("cudagraphs") and _truthy(option):
                report(key, "NV203", f'torch.compile option "{option_name}" turns on CUDA graphs')


def _cudagraphs_backend(value: ast.AST, index: ModuleIndex) -> bool:
    """backend="cudagraphs" (also "cuda" + "graphs", folded as NV201 reads a name), or dynamo's backend
    function itself (`from torch._dynamo.backends.cudagraphs import cudagraphs`,
    `torch._dynamo.backends.cudagraphs.cudagraphs`)."""
    text = folded_string(value, index)
    if text is not None or isinstance(value, ast.Constant):
        return text == "cudagraphs"
    name = index.resolve(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
    return name is not None and name.startswith("torch.") and name.split(".")[-1] == "cudagraphs"


def _values_of(node: ast.AST, index: ModuleIndex) -> list[ast.AST]:
    """The expression itself, or for a plain name every value bound to it in the scope it is read from
    (`MODE = "reduce-overhead"` ... `torch.compile(f, mode=MODE)`; a parameter's default), not another
    function's local of that name; a name the file never assigns (an import) is itself."""
    if not isinstance(node, ast.Name):
        return [node]
    return [value for value in bound_values(node, index) if value is not None] or [node]


def _truthy(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and bool(node.value)


def _monkeypatching(index: ModuleIndex, report: Report) -> None:
    for node in index.all_nodes:
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in targets:
            if isinstance(target, ast.Attribute):
                name = index.resolve(target) or ""
                root = (dotted(target) or "").split(".")[0]
                if (index.is_imported_root(target) or root in HARNESS_MODULES) and (
                    target.attr in TIMING_ATTRS or name.split(".")[0] in HARNESS_MODULES):
                    report(target, "NV601", f"replaces {name}: timing and the harness must stay as they are")
        if isinstance(node, ast.Call):
            func = call_name(node)
            if func in ("setattr", "delattr") and len(node.args) >= 2:
                obj, attr = node.args[0], node.args[1]
                if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
                    name = index.resolve(obj) or ""
                    if (index.is_imported_root(obj) or name.split(".")[0] in HARNESS_MODULES) and (
                        attr.value in TIMING_ATTRS or name.split(".")[0] in HARNESS_MODULES):
                        report(node, "NV601", f"replaces {name}.{attr.value}: timing and the harness must stay as they are")
            elif func == "patch" and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                parts = node.args[0].value.split(".")
                if parts[-1] in TIMING_ATTRS or parts[0] in HARNESS_MODULES:
                    report(node, "NV601", f"patches {node.args[0].value}: timing and the harness must stay as they are")


def _harness_access(index: ModuleIndex, report: Report) -> None:
    for node in index.all_nodes:
        if isinstance(node, ast.Call):
            name = index.resolve(node.func) or ""
            if name in FRAME_CALLS:
                report(node, "NV602", f"{name}() reaches into the caller's frames (the harness)")
        elif isinstance(node, ast.Attribute) and node.attr == "f_back":
            report(node, "NV602", "f_back reaches into the caller's frames (the harness)")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 256:
            base = re.split(r"[\\/]", node.value)[-1]
            if base in HARNESS_FILES and _used_as_path(node, index):
                report(node, "NV602", f'touches the harness file "{base}"')


def _used_as_path(node: ast.AST, index: ModuleIndex) -> bool:
    """Is a string an argument of a file operation or part of a path expression (dir / "eval.py")?"""
    for ancestor in index.ancestors(node):
        if isinstance(ancestor, ast.Call) and call_name(ancestor) in FILE_FUNCTIONS:
            return True
        if isinstance(ancestor, ast.BinOp) and isinstance(ancestor.op, ast.Div):
            return True
        if isinstance(ancestor, ast.stmt):
            return False
    return False


def _at_import(index: ModuleIndex) -> list[ast.AST]:
    """Nodes that run when the module is imported (not function bodies, not `if __name__ == ...`)."""
    nodes: list[ast.AST] = []
    stack: list[ast.AST] = list(index.tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            nodes.extend(node.decorator_list if not isinstance(node, ast.Lambda) else [])
            continue
        if isinstance(node, ast.If) and "__name__" in ast.dump(node.test):
            continue
        nodes.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return nodes


def _installs(index: ModuleIndex, report: Report) -> None:
    import_time = {id(node) for node in _at_import(index)}
    for node in index.all_nodes:
        if not isinstance(node, ast.Call):
            continue
        name = index.resolve(node.func) or ""
        if id(node) in import_time and SUBPROCESS_CALLS.match(name):
            report(node, "NV603", f"{name}() runs at import: no subprocesses or installs when the harness loads the file")
            continue
        if call_name(node) not in SHELL_CALLS:
            continue
        words = [c.value for arg in node.args for c in ast.walk(arg) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
        if PIP_INSTALL.search(" ".join(words)) or ("pip" in words and "install" in words):
            report(node, "NV603", "installs packages at run time: the harness's environment is fixed")


def _is_kernel(function: ast.AST, index: ModuleIndex) -> str | None:
    """'triton' / 'cute' for @triton.jit / @cute.kernel / @cute.jit functions, else None."""
    for decorator in getattr(function, "decorator_list", []):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = index.resolve(target) or ""
        if KERNEL_DECORATORS.search(name):
            return "triton" if "triton" in name else "cute"
    return None


def guarded_by_debug(node: ast.AST, index: ModuleIndex) -> bool:
    for ancestor in index.ancestors(node):
        if isinstance(ancestor, (ast.If, ast.IfExp, ast.While)) and DEBUG_WORD.search(ast.unparse(ancestor.test)):
            return True
        if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return bool(DEBUG_WORD.search(ancestor.name))
    return False


# each DSL's compile-time flag, so the print is compiled out unless asked for
DEBUG_FLAG_FIX = {
    "cute": "wrap it in `if const_expr(DEBUG):`",
    "triton": "give the kernel a `DEBUG: tl.constexpr` parameter and wrap it in `if DEBUG:`",
}


def _device_prints(index: ModuleIndex, report: Report) -> None:
    for node in index.all_nodes:
        if not isinstance(node, ast.Call):
            continue
        name = call_name(node)
        if name not in DEVICE_PRINTS and name != "print":
            continue
        kernel = _is_kernel(index.enclosing_function(node), index)
        if kernel is None or (name == "print" and kernel != "triton"):
            continue  # print() in a CuTe jit function runs once, at trace time
        if not guarded_by_debug(node, index):
            report(node.func, "NV802", f"{dotted(node.func) or name}() in a {kernel} kernel without a debug flag; "
                                       f"{DEBUG_FLAG_FIX[kernel]}")


def _inline_asm(index: ModuleIndex, report: Report) -> None:
    for node in index.all_nodes:
        if isinstance(node, ast.Call) and call_name(node) in ("inline_asm", "inline_asm_elementwise"):
            report(node.func, "NV901", "handwritten PTX (inline asm); profile cutlass-only wants CUTLASS/CuTe calls")
