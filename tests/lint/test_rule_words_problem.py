"""`--list-rules` shows NV003 and NV702 in the words of the task's problem: its API header and launch
function, a benchmark shape of its own in its own dimensions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nvfp4ctl.lint.rule_words import rules_for
from nvfp4ctl.lint.rules import RULES_BY_CODE
from nvfp4ctl.problems import get_problem, problem_names
from nvfp4ctl.project import shipped


def _words(problem: str) -> dict[str, dict[str, str]]:
    return {rule.code: {"bad": rule.bad, "good": rule.good} for rule in rules_for(problem)
            if rule.code in ("NV003", "NV702")}


@pytest.mark.parametrize("problem", [p for p in problem_names() if p != "nvfp4_gemm"])
def test_another_problems_kernel_source_names_its_own_header_and_launch(problem: str) -> None:
    api = get_problem(problem).kernel_api
    good = _words(problem)["NV003"]["good"]
    assert good.startswith(f'#include "{api.header}"\ncudaError_t {api.launch_function}(const {api.args_struct}& args)')
    assert "nvfp4_gemm_api.h" not in good and "Nvfp4GemmArgs" not in good
    # the header declares that very function with that very struct
    header = (shipped("kernels") / "common" / api.header).read_text(encoding="utf-8")
    assert re.search(rf"cudaError_t {api.launch_function}\(const {api.args_struct}& args\);", header)


def test_the_gemv_branch_example_is_a_gemv_benchmark_in_m_k_l() -> None:
    assert _words("nvfp4_gemv")["NV702"] == {"bad": "if (m, k, l) == (7168, 16384, 1): return fast(data)",
                                           "good": "cfg = pick_tile(m, k, l)"}
    assert "128, 7168, 16384" not in json.dumps(_words("nvfp4_dual_gemm"))
    assert _words("nvfp4_group_gemm")["NV702"]["bad"] == "if (m, n, k) == (80, 4096, 7168): return fast(data)"


def test_the_gemms_words_stay_rules_py_s() -> None:
    for code in ("NV003", "NV702"):
        rule = RULES_BY_CODE[code]
        assert _words("nvfp4_gemm")[code] == {"bad": rule.bad, "good": rule.good}


def test_list_rules_under_a_gemv_task(tmp_path: Path, monkeypatch) -> None:
    from nvfp4ctl.cli import app
    from cli_streams import separate_streams_runner

    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    (tmp_path / "task.yml").write_text(get_problem("nvfp4_gemv").task_file.read_text())
    monkeypatch.chdir(tmp_path)
    result = separate_streams_runner().invoke(app, ["lint", "--list-rules", "--format", "json"])
    rules = {rule["code"]: rule for rule in json.loads(result.stdout)["rules"]}
    assert rules["NV003"]["good"].startswith('#include "nvfp4_gemv_api.h"\ncudaError_t nvfp4_gemv_launch(')
    assert rules["NV702"]["bad"].startswith("if (m, k, l) == (7168, 16384, 1)")
