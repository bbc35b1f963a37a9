"""Where a scale lives in the permuted tensor, and proof on real inputs that the permuted storage
is `to_blocked` of the reference scales (the layout the B200 kernel reads in place)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems.nvfp4_gemm.formats import SF_VEC
from nvfp4ctl.problems.nvfp4_gemm.layout import ATOM_BYTES, ATOM_K, ATOM_ROWS, ceil_div, scale_offset, to_blocked

# (operand label, reference scales (rows, sf_k, l), permuted scales): "A", "B1", "A[2]" (group 3)
ScaleTensors = list[tuple[str, torch.Tensor, torch.Tensor]]


@dataclass(frozen=True)
class ScaleLocation:
    operand: str  # "A" (sfa) or "B" (sfb)
    row: int
    k_block: int
    batch: int
    offset: int  # byte inside its batch
    batch_bytes: int  # bytes per batch: rest_mn * rest_k * 512
    index6: tuple[int, int, int, int, int, int]  # into the (32, 4, rest_mn, 4, rest_k, l) view

    @property
    def storage_offset(self) -> int:
        return self.batch * self.batch_bytes + self.offset


def locate(operand: str, rows: int, k: int, row: int, k_block: int, batch: int = 0) -> ScaleLocation:
    sf_k = ceil_div(k, SF_VEC)
    if not 0 <= row < rows:
        raise UsageError(f"--row {row}: operand {operand} has rows 0..{rows - 1}")
    if not 0 <= k_block < sf_k:
        raise UsageError(f"--kblock {k_block}: k={k} has k-blocks 0..{sf_k - 1}")
    index6 = (row % 32, (row // 32) % 4, row // ATOM_ROWS, k_block % ATOM_K, k_block // ATOM_K, batch)
    batch_bytes = ceil_div(rows, ATOM_ROWS) * ceil_div(sf_k, ATOM_K) * ATOM_BYTES
    return ScaleLocation(operand, row, k_block, batch, scale_offset(row, k_block, sf_k), batch_bytes, index6)


@dataclass(frozen=True)
class StorageCheck:
    operand: str
    batch: int
    bytes_compared: int  # the real scales' bytes: a partial tile's padding is compared nowhere (check_storage)
    mismatches: int
    first_mismatch: int | None  # byte offset inside the batch
    bytes_stored: int  # the batch's bytes in the permuted storage, padding included

    @property
    def padded(self) -> bool:
        return self.bytes_stored > self.bytes_compared

    @property
    def ok(self) -> bool:
        return self.mismatches == 0


def permuted_batches(permuted: torch.Tensor) -> torch.Tensor:
    """The permuted (32, 4, rest, 4, rest_k, l) view -> its storage as (l, bytes) uint8."""
    storage = permuted.permute(5, 2, 4, 0, 1, 3)  # (l, rest, rest_k, 32, 4, 4): generate_input's order
    if not storage.is_contiguous():
        raise UsageError("the permuted scale tensor does not keep generate_input's storage order")
    return storage.reshape(storage.shape[0], -1).view(torch.uint8)


def check_storage(scales: ScaleTensors) -> list[StorageCheck]:
    """Per scale tensor and batch (the problem's pairs, problem.scale_tensors): permuted storage ==
    to_blocked(reference) byte for byte, at every real scale. The padding of a partial 128-row or
    4-block tile is compared nowhere: GPU MODE's generator leaves it random, to_blocked zeros it, and
    no kernel may read it."""
    results = []
    for operand, ref, permuted in scales:
        batches = permuted_batches(permuted).cpu()
        real = to_blocked(torch.ones(ref.shape[:2], dtype=torch.uint8)).view(torch.uint8) != 0
        for batch in range(ref.shape[2]):
            want = to_blocked(ref[:, :, batch].cpu()).view(torch.uint8)
            got = batches[batch]
            if got.numel() != want.numel():
                results.append(StorageCheck(operand, batch, min(got.numel(), want.numel()), abs(got.numel() - want.numel()), 0,
                                            got.numel()))
                continue
            bad = ((got != want) & real).nonzero()
            results.append(StorageCheck(operand, batch, int(real.sum()), int(bad.numel()),
                                        int(bad[0]) if bad.numel() else None, got.numel()))
    return results


def scale_at(where: ScaleLocation, scales: ScaleTensors) -> tuple[int, int]:
    """(reference byte, permuted-storage byte) of one scale: equal when the layout is right."""
    pairs = {operand: (ref, permuted) for operand, ref, permuted in scales}
    ref, permuted = pairs[where.operand]
    ref_byte = int(ref[where.row, where.k_block, where.batch].view(torch.uint8))
    stored = permuted_batches(permuted)[where.batch, where.offset]
    return ref_byte, int(stored)
