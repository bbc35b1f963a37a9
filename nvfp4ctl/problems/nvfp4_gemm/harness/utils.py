"""nvfp4ctl's stand-in for GPU MODE's utils.py beside nvfp4_gemm submissions (our implementations)."""

from collections.abc import Callable
from typing import Any

from nvfp4ctl.problems.common.harness_utils import (
    DeterministicContext,
    ceil_div,
    clear_l2_cache,
    clear_l2_cache_large,
    get_device,
    match_reference,
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


def make_match_reference(reference: Callable[[Any], Any], **kwargs: Any) -> Callable[[Any, Any], tuple[bool, str]]:
    """check(data, output) -> (ok, message), comparing output with reference(data)."""

    def wrapped(data: Any, output: Any) -> tuple[bool, str]:
        return match_reference(data, output, reference=reference, **kwargs)

    return wrapped
