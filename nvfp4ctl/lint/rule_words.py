"""The rules as `--list-rules` shows them for one problem: its tuple's names and indices in the rules that
speak of them (NV401's permuted scales are 6-8 in the dual GEMM, 2 in the grouped GEMM), its C ABI (NV003)
and its benchmark shapes (NV702).

rules.RULES holds the GEMM's words; for the GEMM every rule here is that one, word for word. The
findings get the same names from the same layout (python/facts.py `using`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from nvfp4ctl.lint.python.facts import layout_for
from nvfp4ctl.lint.rules import RULES, Rule
from nvfp4ctl.problems.records import TupleLayout

SUFFIXES = ("_permuted", "_reordered_tensors", "_tensors", "_ref")


def _short(name: str) -> str:
    """sfa for sfa_ref and sfa_permuted, sfasfb for sfasfb_reordered_tensors, abc for abc_tensors."""
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _scale_name(layout: TupleLayout, index: int) -> str:
    """The short name a reference scale and its permuted one share (sfa for 2 and 4 in the GEMM)."""
    if index in layout.permuted_scales:
        index = layout.reference_scales[layout.permuted_scales.index(index)]
    return _short(layout.name(index))


def _unpacking(layout: TupleLayout, bound: tuple[int, ...]) -> str:
    """`a, b, sfa, sfb, _, _, c = data` binding the scales at `bound` (the others are `_`)."""
    scales = {*layout.reference_scales, *layout.permuted_scales}
    names = [(_scale_name(layout, i) if i in bound else "_") if i in scales else _short(layout.name(i))
             for i in range(len(layout.names))]
    return f"{', '.join(names)} = data"


def _launch(layout: TupleLayout) -> str:
    """launch(a, b, sfa.data_ptr(), sfb.data_ptr(), c): the operands of an unpacking, scales by address."""
    pointer = "" if layout.nested else ".data_ptr()"  # the grouped GEMM's scales are lists
    words = [f"{_scale_name(layout, i)}{pointer}" if i in layout.reference_scales else _short(layout.name(i))
             for i in range(len(layout.names)) if i not in layout.permuted_scales]
    return f"launch({', '.join(words)})"


def _indices(which: tuple[int, ...]) -> str:
    return ("tuple indices " if len(which) > 1 else "tuple index ") + ", ".join(str(i) for i in which)


def _reference_scales(rule: Rule, layout: TupleLayout) -> dict[str, str]:
    permuted = "/".join(layout.name(i) for i in layout.permuted_scales)
    reference = ", ".join(str(i) for i in layout.reference_scales)
    launch = _launch(layout)
    return {
        "why": f"The timed path must use {permuted} ({_indices(layout.permuted_scales)}), not the reference "
               f"scales ({reference}); an extension given a reference scale without its permuted one can only read the "
               "reference one, and a load_inline function whose C++ in the file takes the data of the parameter a"
               " reference scale lands in reads it. Unpacking them into an unused name is fine.",
        "bad": f"{_unpacking(layout, layout.reference_scales)}\n{launch}",
        "good": f"{_unpacking(layout, layout.permuted_scales)}\n{launch}",
    }


def _to_blocked(rule: Rule, layout: TupleLayout) -> dict[str, str]:
    group = "[g][0]" if layout.nested else ""  # a group's sfa of the lists of (sfa, sfb) pairs
    reference, permuted = layout.name(layout.reference_scales[0]), layout.name(layout.permuted_scales[0])
    return {"bad": f"scale_a = to_blocked({reference}{group}[:, :, 0])", "good": f"scale_a = {permuted}{group}"}


def _passed_on(rule: Rule, layout: TupleLayout) -> dict[str, str]:
    every = [layout.name(i) if i in layout.reference_scales else _short(layout.name(i)) for i in range(len(layout.names))]
    kept = [name for i, name in enumerate(every) if i not in layout.reference_scales]
    return {"bad": f"_mod.gemm({', '.join(every)})", "good": f"_mod.gemm({', '.join(kept)})"}


def _copied_b(rule: Rule, layout: TupleLayout) -> dict[str, str]:
    if layout.nested:
        return {"why": "Each group's b is already (N, K) K-major for C_g = A_g @ B_g^T; a transposed copy costs"
                       " more than the GEMM.",
                "bad": "for a, b, c in abc_tensors:\n    b_t = b.t().contiguous()",
                "good": "for a, b, c in abc_tensors:\n    run(a, b.t())  # a view, no copy"}
    names = [layout.name(i) for i in layout.b_operands]
    if not names:
        return {"why": "b is already K-major (its first row the vector); a transposed copy costs more than the GEMV.",
                "bad": "b_t = b.t().contiguous()", "good": "run(a, b.t())  # a view, no copy"}
    if len(names) == 1:
        return {}
    products = " and ".join(f"A @ {name.upper()}^T" for name in names)
    return {"why": f"{' and '.join(names)} are already (N, K) K-major for {products}; a transposed copy costs more"
                   " than the GEMM.",
            "bad": f"{names[0]}_t = {names[0]}.t().contiguous()", "good": f"run(a, {names[0]}.t())  # a view, no copy"}


def _returns_output(rule: Rule, layout: TupleLayout) -> dict[str, str]:
    if layout.output is not None:
        returned = f"data[{layout.output}]"
    else:
        group, at = layout.group_output or (0, 0)
        returned = f"[abc[{at}] for abc in data[{group}]]"
    return {"bad": rule.bad.replace("data[6]", returned), "good": rule.good.replace("data[6]", returned)}


def _another_problems_input(rule: Rule, layout: TupleLayout) -> dict[str, str]:
    from nvfp4ctl.problems import all_problems

    other = next(p for p in all_problems() if len(p.layout.names) != len(layout.names))
    return {"bad": f"{_unpacking(other.layout, other.layout.permuted_scales)}  # {other.name}'s {len(other.layout.names)}",
            "good": _own_unpacking(layout)}


def _unpack_count(rule: Rule, layout: TupleLayout) -> dict[str, str]:
    return {"good": _own_unpacking(layout)}  # the bad, 3 names, fits no problem's input


def _own_unpacking(layout: TupleLayout) -> str:
    return f"{_unpacking(layout, layout.permuted_scales)}  # the task's own {len(layout.names)}"


def _kernel_source(rule: Rule, problem: Any) -> dict[str, str]:
    """A kernel source with code: the problem's own API header and launch function."""
    api = problem.kernel_api
    if api is None:
        return {}
    return {"good": f'#include "{api.header}"\ncudaError_t {api.launch_function}(const {api.args_struct}& args) {{ ... }}'}


def _benchmark_branch(rule: Rule, problem: Any) -> dict[str, str]:
    """A branch on the problem's first benchmark shape, in its own dimensions (the GEMV's m, k, l)."""
    from nvfp4ctl.lint.benchmark_shapes import shipped_shapes

    shapes = shipped_shapes(problem.name)
    if not shapes:
        return {}
    dims = ", ".join(problem.benchmark_dims)
    numbers = ", ".join(str(dim) for dim in shapes[0])
    return {"bad": f"if ({dims}) == ({numbers}): return fast(data)", "good": f"cfg = pick_tile({dims})"}


# rules whose words are the problem's own beyond its tuple: its C ABI, its benchmark shapes
PROBLEM_WORDS: dict[str, Callable[[Rule, Any], dict[str, str]]] = {
    "NV003": _kernel_source,
    "NV702": _benchmark_branch,
}

WORDS: dict[str, Callable[[Rule, TupleLayout], dict[str, str]]] = {
    "NV001": _returns_output,
    "NV002": _returns_output,
    "NV006": _another_problems_input,
    "NV007": _unpack_count,
    "NV401": _reference_scales,
    "NV402": _to_blocked,
    "NV403": _passed_on,
    "NV501": _copied_b,
}


def rules_for(problem: str | None) -> tuple[Rule, ...]:
    """Every rule, in the words of `problem`'s input tuple (None: the GEMM's)."""
    from nvfp4ctl.problems import DEFAULT_PROBLEM, get_problem

    layout, own = layout_for(problem), get_problem(problem or DEFAULT_PROBLEM)
    worded = []
    for rule in RULES:
        if rule.code in WORDS:
            rule = replace(rule, **WORDS[rule.code](rule, layout))
        if rule.code in PROBLEM_WORDS:
            rule = replace(rule, **PROBLEM_WORDS[rule.code](rule, own))
        worded.append(rule)
    return tuple(worded)
