"""Our implementation of the helpers GPU MODE's harness utils.py offers submissions.

Same names and call signatures as problems/nvidia/utils.py (and the grouped GEMM's variant, whose
match_reference compares a list of outputs), so a submission that imports them loads and behaves
alike. Messages follow theirs: "Number of mismatched elements: N", "ERROR AT (i, j, l): got want".
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import Any

import torch

from nvfp4ctl.problems.nvfp4_gemm.layout import ceil_div  # noqa: F401  (GPU MODE's utils.ceil_div)


def set_seed(seed: int = 42) -> None:
    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:  # numpy is optional here; torch's and Python's generators are what matter
        pass
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def get_device(use_cuda: bool = True) -> torch.device:
    if use_cuda and torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")


def _details(mismatched: torch.Tensor, received: torch.Tensor, expected: torch.Tensor, max_print: int) -> list[str]:
    count = int(mismatched.count_nonzero().item())
    if count == 0:
        return []
    lines = [f"Number of mismatched elements: {count}"]
    for index in torch.nonzero(mismatched)[:max_print]:
        at = tuple(index.tolist())
        lines.append(f"ERROR AT {at}: {received[at]} {expected[at]}")
    if count > max_print:
        lines.append(f"... and {count - max_print} more mismatched elements.")
    return lines


@torch.no_grad()
def verbose_allclose(
    received: torch.Tensor, expected: torch.Tensor, rtol: float = 1e-05, atol: float = 1e-08, max_print: int = 5
) -> list[str]:
    """[] when |received - expected| <= atol + rtol * |expected| everywhere (NaN and inf must match)."""
    if received.shape != expected.shape:
        return ["SIZE MISMATCH"]
    too_far = torch.abs(received - expected) > atol + rtol * torch.abs(expected)
    nan = torch.logical_xor(torch.isnan(received), torch.isnan(expected))
    posinf = torch.logical_xor(torch.isposinf(received), torch.isposinf(expected))
    neginf = torch.logical_xor(torch.isneginf(received), torch.isneginf(expected))
    return _details(too_far | nan | posinf | neginf, received, expected, max_print)


@torch.no_grad()
def verbose_allequal(received: torch.Tensor, expected: torch.Tensor, max_print: int = 5) -> list[str]:
    return _details(torch.not_equal(received, expected), received, expected, max_print)


def match_reference(
    data: Any, output: Any, reference: Callable[[Any], Any], rtol: float = 1e-05, atol: float = 1e-08
) -> tuple[bool, str]:
    """(True, "") when one output tensor matches reference(data) within the tolerance."""
    reasons = verbose_allclose(output, reference(data), rtol=rtol, atol=atol)
    if reasons:
        return False, "mismatch found! custom implementation doesn't match reference: " + " ".join(reasons)
    return True, ""


def match_reference_list(
    data: Any, output: Any, reference: Callable[[Any], Any], rtol: float = 1e-05, atol: float = 1e-08
) -> tuple[bool, str]:
    """The grouped GEMM's variant: a list of outputs, compared one by one."""
    expected = reference(data)
    if len(output) != len(expected):
        return False, f"output length mismatch: got {len(output)}, expected {len(expected)}"
    for index, (received, wanted) in enumerate(zip(output, expected)):
        reasons = verbose_allclose(received, wanted, rtol=rtol, atol=atol)
        if reasons:
            return False, f"mismatch found! custom implementation doesn't match reference: {index} {reasons}"
    return True, ""


class DeterministicContext:
    """Deterministic algorithms, no TF32 in cuDNN, for the duration of a `with` block."""

    def __init__(self) -> None:
        self.allow_tf32: bool | None = None
        self.deterministic: bool | None = None
        self.cublas: str | None = None

    def __enter__(self) -> DeterministicContext:
        self.cublas = os.environ.get("CUBLAS_WORKSPACE_CONFIG", "")
        self.allow_tf32 = torch.backends.cudnn.allow_tf32
        self.deterministic = torch.backends.cudnn.deterministic
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.deterministic = True
        torch.use_deterministic_algorithms(True)
        return self

    def __exit__(self, *exc_info: object) -> None:
        torch.backends.cudnn.allow_tf32 = bool(self.allow_tf32)
        torch.backends.cudnn.deterministic = bool(self.deterministic)
        torch.use_deterministic_algorithms(False)
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = self.cublas or ""


def clear_l2_cache() -> None:
    """Write 256 MiB on the GPU so that no input stays in L2 (no-op without CUDA)."""
    if torch.cuda.is_available():
        scratch = torch.empty((32, 1024, 1024), dtype=torch.int64, device="cuda")
        scratch.fill_(42)
        del scratch


def clear_l2_cache_large() -> None:
    clear_l2_cache()


def make_match_reference(reference: Callable[[Any], Any], **kwargs: Any) -> Callable[[Any, Any], tuple[bool, str]]:
    """check(data, output) -> (ok, message), comparing output with reference(data)."""

    def wrapped(data: Any, output: Any) -> tuple[bool, str]:
        return match_reference(data, output, reference=reference, **kwargs)

    return wrapped


def make_match_reference_list(reference: Callable[[Any], Any], **kwargs: Any) -> Callable[[Any, Any], tuple[bool, str]]:
    """check(data, outputs) -> (ok, message), comparing every group's output with reference(data)."""

    def wrapped(data: Any, output: Any) -> tuple[bool, str]:
        return match_reference_list(data, output, reference=reference, **kwargs)

    return wrapped


# What every problem's utils.py stand-in exports (GPU MODE's names).
HARNESS_NAMES = ["DeterministicContext", "ceil_div", "clear_l2_cache", "clear_l2_cache_large", "get_device",
                 "make_match_reference", "match_reference", "set_seed", "verbose_allclose", "verbose_allequal"]
