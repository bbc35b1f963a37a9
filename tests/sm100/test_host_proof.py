"""Host proofs for the sm_100a kernel: CuTe's own objects for the kernel's configs, evaluated on the
CPU, against nvfp4ctl's independent Python (scale layout, descriptors, TMEM columns, dispatch)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.problems.nvfp4_gemm.layout import scale_offset
from nvfp4ctl.umma.configs import parse_configs, select_config
from nvfp4ctl.umma.crosscheck import check_config
from nvfp4ctl.umma.host_proof import cute_scale_layout, cute_select, cute_umma_facts

# (m, n, k, l): several 128-row blocks, k-block counts that are and are not multiples of 4
# (K = 320 -> 20 k-blocks; K = 96 -> 6, padded to 8), batches > 1, the smallest task shape.
LAYOUT_SHAPES = [(128, 256, 256, 1), (384, 256, 512, 2), (256, 128, 320, 3), (128, 384, 96, 2), (512, 128, 1024, 1)]


@pytest.mark.parametrize("m,n,k,l", LAYOUT_SHAPES)
def test_kernel_scale_layout_is_the_permuted_layout(proof_kernel: Path, m: int, n: int, k: int, l: int) -> None:
    layouts = cute_scale_layout(proof_kernel, m, n, k, l)
    sf_k = k // 16
    configs = parse_configs(proof_kernel)
    assert {key[0] for key in layouts} == {config.id for config in configs}
    for (config_id, operand), rows in layouts.items():
        mn = m if operand == "A" else n
        batch_bytes = -(-mn // 128) * -(-sf_k // 4) * 512
        assert len(rows) == mn * l, f"{config_id=} {operand=}: CuTe printed {len(rows)} rows"
        for (batch, row), offsets in rows.items():
            want = [batch * batch_bytes + scale_offset(row, kb, sf_k) for kb in range(sf_k)]
            assert offsets == want, (
                f"{m=}, {n=}, {k=}, {l=}: config {config_id} SF{operand} row {row} batch {batch}: "
                f"first difference at k-block {next(i for i, (a, b) in enumerate(zip(offsets, want)) if a != b)}")


def test_cute_descriptors_match_expected_per_config(proof_kernel: Path) -> None:
    facts = cute_umma_facts(proof_kernel)
    configs = parse_configs(proof_kernel)
    assert sorted(facts) == [config.id for config in configs]
    for config in configs:
        check = check_config(config, facts[config.id])
        bad = [f"{row.descriptor}.{row.field}: CuTe {row.actual}, expected {row.expected}"
               for row in check.rows if not row.ok]
        assert check.mismatches == 0, f"config {config.label()}: {bad + list(check.problems)}"
        assert facts[config.id].stages >= 4, f"config {config.label()}: only {facts[config.id].stages} stages"


def test_dispatch_mirror_agrees_with_the_kernel(proof_kernel: Path) -> None:
    shapes = [(128, 256, 256, 1), (128, 1536, 7168, 1), (128, 3072, 1536, 1), (256, 7168, 256, 1),
              (256, 7168, 2048, 1), (2304, 4608, 7168, 1), (384, 7168, 2304, 1), (512, 512, 7168, 1),
              (512, 4096, 512, 1), (512, 1536, 7168, 1), (128, 7168, 16384, 1), (128, 4096, 7168, 1),
              (128, 7168, 2048, 1), (128, 192, 256, 2), (256, 192, 256, 1), (100, 256, 256, 1),
              (128, 256, 320, 1), (0, 256, 256, 1), (256, 256, 256, 0)]
    picks = cute_select(proof_kernel, shapes)
    assert {shape: pick.config_id for shape, pick in picks.items()} == {shape: select_config(*shape) for shape in shapes}
    for shape, pick in picks.items():
        if pick.config_id >= 0:  # CUTLASS accepts every shape the dispatch takes, without a workspace
            assert pick.implementable and pick.workspace_bytes == 0, f"{shape}: {pick}"
