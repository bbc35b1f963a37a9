"""Is an output right? The check command's test (GPU MODE's verbose_allclose), reduced to a count and
the first miss for the bench's correctness pass over all 50 outputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nvfp4ctl.check.result import index_names

DIM_NAMES_MNL = ("m", "n", "l")


@dataclass(frozen=True)
class Mismatch:
    wrong: int
    total: int
    index: tuple[int, ...]
    got: float
    want: float
    dims: tuple[str, ...] = DIM_NAMES_MNL  # the problem's output_dims, as check names them (GEMV: m, 1, l)

    def describe(self) -> str:
        names = (index_names(self.dims) if len(self.index) == len(self.dims)
                 else tuple(f"d{i}" for i in range(len(self.index))))
        # a dimension of fixed size 1 reads as its one index, as check's "(m, 0, l)" does
        where = ", ".join(name if name.isdigit() else f"{name}={i}" for name, i in zip(names, self.index))
        return (f"{self.wrong} of {self.total} elements differ; first at ({where}): "
                f"got {self.got:g}, want {self.want:g}")


def first_mismatch(got: Any, want: Any, rtol: float, atol: float,
                   dims: tuple[str, ...] = DIM_NAMES_MNL) -> Mismatch | str | None:
    """None when `got` passes; a Mismatch, or a sentence when it is not even a tensor of the right shape.
    `dims`: the problem's output_dims, which name the first miss's coordinates."""
    import torch

    if isinstance(want, list):  # one output per group (the grouped GEMM)
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return f"custom_kernel returned {type(got).__name__}, expected a list of {len(want)} tensors (one per group)"
        for group, (one_got, one_want) in enumerate(zip(got, want)):
            found = first_mismatch(one_got, one_want, rtol, atol, dims)
            if found is not None:
                return f"group {group + 1}: {found.describe() if isinstance(found, Mismatch) else found}"
        return None
    if not isinstance(got, torch.Tensor):
        return f"custom_kernel returned {type(got).__name__}, not a tensor"
    if got.shape != want.shape:
        return f"output shape {tuple(got.shape)}, want {tuple(want.shape)}"
    from nvfp4ctl.check.compare import mismatch_mask
    from nvfp4ctl.check.output import device_mistake, dtype_mistake

    # as check refuses them: an output on another device is a failure, not moved to the reference's
    if (refused := device_mistake(got, want) or dtype_mistake(got, want)) is not None:
        return refused
    with torch.no_grad():
        wrong = mismatch_mask(got, want, rtol, atol)
        count = int(wrong.count_nonzero().item())
        if count == 0:
            return None
        index = tuple(int(i) for i in torch.nonzero(wrong)[0].tolist())
        return Mismatch(count, want.numel(), index, float(got[index].item()), float(want[index].item()), dims)
