"""nvfp4ctl's stand-in for GPU MODE's nvfp4_group_gemm utils.py (our implementations).

Its match_reference compares a list of outputs, one per group, as the grouped GEMM's own does.
"""

from collections.abc import Callable
from typing import Any

from nvfp4ctl.problems.common.harness_utils import (
    DeterministicContext,
    ceil_div,
    clear_l2_cache,
    clear_l2_cache_large,
    get_device,
    match_reference_list,
    set_seed,
    verbose_allclose,
    verbose_allequal,
)

__all__ = [
    "DeterministicContext",
    "ceil_div",
    "clear_l2_cache",
    "clear_l2_cache_large",
    "get_device",
    "make_match_reference",
    "match_reference",
    "set_seed",
    "verbose_allclose",
    "verbose_allequal",
]

match_reference = match_reference_list


def make_match_reference(reference: Callable[[Any], Any], **kwargs: Any) -> Callable[[Any, Any], tuple[bool, str]]:
    """check(data, outputs) -> (ok, message), comparing every group's output with reference(data)."""

    def wrapped(data: Any, output: Any) -> tuple[bool, str]:
        return match_reference_list(data, output, reference=reference, **kwargs)

    return wrapped
