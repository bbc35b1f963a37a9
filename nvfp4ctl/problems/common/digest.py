"""sha256 digests of an input tuple's tensors, to compare our generate_input with GPU MODE's.

Each tensor is recorded by dtype, shape, strides, storage offset, device type and the sha256 of its
elements' bytes in logical (row-major) order, so two tensors share a record exactly when they are
bit-identical views of the same layout. The dual GEMM's permuted scales are the exception: GPU MODE
leaves their padding uninitialised (see nvfp4_dual_gemm/inputs.py), so there every byte that no
reference scale maps to is zeroed before hashing and the record says "padding": "masked".
"""

from __future__ import annotations

import ctypes
import hashlib
from collections.abc import Mapping
from typing import Any

import torch

from nvfp4ctl.problems.common.tensors import flat_tensors
from nvfp4ctl.problems.nvfp4_gemm.layout import scale_offsets

_INTS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def tensor_bytes(tensor: torch.Tensor) -> bytes:
    """The elements' bytes in logical order (integer view: no float copy kernel needed, NaNs kept)."""
    flat = tensor.view(_INTS[tensor.element_size()]).contiguous().cpu().reshape(-1)
    size = flat.numel() * flat.element_size()
    if size == 0:
        return b""
    return bytes((ctypes.c_char * size).from_address(flat.data_ptr()))


def mask_padding(permuted: torch.Tensor, mn: int, sf_k: int) -> torch.Tensor:
    """A copy of a permuted scale view with every byte outside the (mn, sf_k) mapping set to 0."""
    storage = permuted.view(torch.uint8).permute(5, 2, 4, 0, 1, 3).contiguous()  # (l, rest, rest_k, 32, 4, 4)
    l = storage.shape[0]
    flat = storage.reshape(l, -1)
    keep = torch.zeros(flat.shape[1], dtype=torch.bool, device=flat.device)
    keep[scale_offsets(mn, sf_k, device=flat.device).reshape(-1)] = True
    masked = flat * keep.to(torch.uint8)
    return masked.view(storage.shape).permute(3, 4, 1, 5, 2, 0).view(permuted.dtype)


def tensor_record(
    label: str, tensor: torch.Tensor, padding: str = "kept", hashed: torch.Tensor | None = None
) -> dict[str, Any]:
    """Layout of `tensor` and the sha256 of `hashed` (default: the tensor itself)."""
    return {
        "label": label,
        "dtype": str(tensor.dtype).removeprefix("torch."),
        "shape": list(tensor.shape),
        "stride": list(tensor.stride()),
        "storage_offset": tensor.storage_offset(),
        "device": tensor.device.type,
        "padding": padding,
        "sha256": hashlib.sha256(tensor_bytes(tensor if hashed is None else hashed)).hexdigest(),
    }


def digests(problem: str, data: Any) -> dict[str, Any]:
    """{"tensors": [record per tensor, in tuple order], "values": {label: non-tensor entries}}."""
    from nvfp4ctl.problems import get_problem

    spec = get_problem(problem)
    # where GPU MODE leaves the permuted scales' padding uninitialised, only the mapped bytes count
    masked = dict(zip(spec.layout.permuted_scales, spec.layout.reference_scales)) if spec.padding_uninitialised else {}
    records = []
    for label, tensor in flat_tensors(data):
        padding, hashed = "kept", None
        index = int(label.strip("[]").split("][")[0])
        if index in masked:
            mn, sf_k, _ = data[masked[index]].shape
            padding, hashed = "masked", mask_padding(tensor, mn, sf_k)
        records.append(tensor_record(label, tensor, padding, hashed))
    values = {}
    if spec.layout.nested:  # the grouped tuple ends with problem_sizes, a list of (m, n, k, l)
        values[f"[{len(data) - 1}]"] = [list(size) for size in data[-1]]
    return {"tensors": records, "values": values}


def rng_after(device: str) -> dict[str, str]:
    """sha256 of the next draws of the generators in use: equal iff both runs made the same draws."""
    draws = {"cpu": torch.rand(16, dtype=torch.float32)}
    if device != "cpu":
        draws[device] = torch.rand(16, dtype=torch.float32, device=device)
    return {name: hashlib.sha256(tensor_bytes(values)).hexdigest() for name, values in draws.items()}


def our_generate_input(problem: str, args: Mapping[str, Any], device: str = "cuda") -> Any:
    """Our generate_input called with GPU MODE's keyword arguments (a task.yml test entry). The cases
    may break a task's own rules (a GEMV K of 272): they test the generator, not a task file."""
    from nvfp4ctl.problems import get_problem

    spec = get_problem(problem)
    return spec.generate_input(spec.parse_case(dict(args), "test", task_rules=False), device=device)
