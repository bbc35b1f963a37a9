"""Our generate_input on CUDA against digests of GPU MODE's own, computed on a GPU and committed as data.

The data comes from tests/problems/gpu_mode_digests.py (its docstring says which GPU MODE files to
copy and the command); their code is not in this repository. Until the JSON exists these tests skip.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

DIGESTS = Path(__file__).resolve().parent / "data" / "gpu_mode_digests.json"


def _cases() -> list[Any]:
    if not DIGESTS.is_file():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{DIGESTS.name} not generated yet"), id="no-data")]
    document = json.loads(DIGESTS.read_text(encoding="utf-8"))
    return [
        pytest.param(case, id=f"{case['problem']}-{index}") for index, case in enumerate(document["cases"])
    ]


@pytest.mark.gpu
@pytest.mark.parametrize("case", _cases())
def test_our_inputs_have_gpu_mode_digests(case: dict[str, Any]) -> None:
    import torch

    from nvfp4ctl.problems.common.digest import digests, our_generate_input, rng_after

    data = our_generate_input(case["problem"], case["args"], device="cuda")
    ours = digests(case["problem"], data)
    by_label = {record["label"]: record for record in ours["tensors"]}
    assert [record["label"] for record in case["tensors"]] == list(by_label)
    for want in case["tensors"]:
        assert by_label[want["label"]] == want, want["label"]
    assert ours["values"] == case["values"]
    assert rng_after("cuda") == case["rng_after"], "a different number of random draws"
    del data
    torch.cuda.empty_cache()


def test_digest_data_is_well_formed_when_present() -> None:
    if not DIGESTS.is_file():
        pytest.skip(f"{DIGESTS.name} not generated yet")
    document = json.loads(DIGESTS.read_text(encoding="utf-8"))
    problems = {case["problem"] for case in document["cases"]}
    assert problems == {"nvfp4_gemm", "nvfp4_dual_gemm", "nvfp4_group_gemm", "nvfp4_gemv"}
    for case in document["cases"]:
        assert all(len(record["sha256"]) == 64 for record in case["tensors"])


@pytest.mark.parametrize("case", _cases())
def test_every_digest_case_is_a_case_of_its_problem(case: dict[str, Any]) -> None:
    """The cases test GPU MODE's generator, so a task's own stricter rule (the GEMV's K multiple of 64)
    must not refuse one (K = 272 did, and only the GPU run saw it)."""
    from nvfp4ctl.problems import get_problem

    spec = get_problem(case["problem"])
    parsed = spec.parse_case(dict(case["args"]), "test", task_rules=False)
    assert parsed.seed == case["args"]["seed"]


def test_the_task_rule_still_holds_for_task_files() -> None:
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.problems.fields import FieldError

    with pytest.raises(FieldError, match="multiple of 64"):
        get_problem("nvfp4_gemv").parse_case({"m": 96, "k": 272, "l": 3, "seed": 7}, "test")
