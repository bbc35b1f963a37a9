"""`dump --layout` covers every scale tensor of the task's problem (dual: sfa, sfb1, sfb2; groups)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.problems import get_problem


def layout(problem: str, shape: str, *extra: str) -> dict:
    result = CliRunner().invoke(app, ["dump", "--layout", "--task", str(get_problem(problem).task_file),
                                      "--shape", shape, "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout[result.stdout.index("{"):])["layout"]


@pytest.mark.parametrize("problem, shape, operands, batches", [
    ("nvfp4_dual_gemm", "256,384,512", ["A", "B1", "B2"], 3),
    ("nvfp4_gemv", "256,512,2", ["A", "B"], 4),  # b's scales: its 128 padded rows
    ("nvfp4_group_gemm", "128,256,256;256,128,512", ["A[1]", "B[1]", "A[2]", "B[2]"], 4),
])
def test_every_scale_tensor_is_located_and_verified(problem: str, shape: str, operands: list[str], batches: int) -> None:
    payload = layout(problem, shape, "--row", "100", "--kblock", "3")
    assert payload["problem"] == problem
    assert [entry["operand"] for entry in payload["scales"]] == operands
    assert all(entry["ok"] for entry in payload["scales"])
    assert len(payload["storage"]) == batches and all(entry["ok"] for entry in payload["storage"])


def test_a_k_block_of_one_group_only_is_located_there() -> None:
    # group 2's K = 512 has k-blocks 0..31, group 1's K = 256 only 0..15
    payload = layout("nvfp4_group_gemm", "200,136,256;64,128,512", "--kblock", "20")
    assert [entry["operand"] for entry in payload["scales"]] == ["A[2]", "B[2]"]
    assert all(entry["ok"] and entry["k_block"] == 20 for entry in payload["scales"])


def test_a_k_block_no_operand_of_the_row_has_names_their_ranges() -> None:
    result = CliRunner().invoke(app, ["dump", "--layout", "--task", str(get_problem("nvfp4_group_gemm").task_file),
                                      "--shape", "200,136,256;64,128,512", "--row", "130", "--kblock", "20"])
    assert result.exit_code == 2
    assert ("--kblock 20: not a scale k-block of row 130 in this shape (group 1 sfa 0..15, group 1 sfb 0..15)"
            in result.output)
    assert "Traceback" not in result.output


@pytest.mark.parametrize("problem, shape, sizes, text", [
    ("nvfp4_gemm", "128,128,64", {"m": 128, "n": 128, "k": 64, "l": 1}, "m=128 n=128 k=64"),
    ("nvfp4_dual_gemm", "128,128,64", {"m": 128, "n": 128, "k": 64, "l": 1}, "m=128 n=128 k=64"),
    ("nvfp4_gemv", "128,256", {"m": 128, "k": 256, "l": 1}, "m=128 k=256"),
    ("nvfp4_group_gemm", "96,128,256;128,128,256", {"g": 2, "m": [96, 128], "n": [128, 128], "k": [256, 256]},
     "g=2 m=96,128 n=128 k=256"),
])
def test_the_layout_shape_is_the_same_json_type_for_every_problem(problem: str, shape: str, sizes: dict,
                                                                    text: str) -> None:
    """A list for the GEMMs and a string for the GEMV and the grouped GEMM: a script had to branch on the problem."""
    payload = layout(problem, shape)
    assert payload["shape"] == sizes and payload["shape_text"] == text


def test_the_grouped_tables_name_each_group_as_check_does() -> None:
    result = CliRunner().invoke(app, ["dump", "--layout", "--task", str(get_problem("nvfp4_group_gemm").task_file),
                                      "--shape", "96,128,256;128,128,256"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "group 1 sfa" in result.output and "group 2 sfb_permuted vs to_blocked(ref)" in result.output
    assert "sfa[" not in result.output and "sfb[" not in result.output


def test_the_readme_names_the_gemm_only_tools_as_a_grouped_gemm_folder_finds_them(tmp_path, monkeypatch) -> None:
    """The README's "Bring your own tcgen05 kernel" did not say which of its tools work for the GEMM alone."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = " ".join(readme.split("## Bring your own tcgen05 kernel", 1)[1].split("\n## ", 1)[0].split())
    assert ("Some of these tools are the GEMM's alone: `--simulate --shape M,N,K` simulates the GEMM" in section
            and "`check --dump` and `dump --runtime` run the GEMM's kernels" in section
            and "`dump --umma` without values reads nvfp4ctl's CUTLASS GEMM kernel" in section
            and "descriptor values (`--idesc`/`--desc-a`/`--desc-b`), `build` and `lint` work for every problem"
            in section), section
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "log" / "MEMORY.md"))
    assert CliRunner().invoke(app, ["init", "--problem", "nvfp4_group_gemm", str(tmp_path / "g")]).exit_code == 0
    monkeypatch.chdir(tmp_path / "g")

    def run(*args: str):
        return CliRunner().invoke(app, list(args))

    kernel_read = run("dump", "--umma")
    assert kernel_read.exit_code == 2 and "CUTLASS sm_100a kernel for nvfp4_gemm" in kernel_read.output
    assert run("dump", "--runtime", "--shape", "128,128,512").exit_code == 2
    assert "an nvfp4_gemm kernel's MMAs" in run("check", "--dump").output
    grouped_shape = run("dump", "--umma", "--idesc", "0x08200480", "--simulate", "--shape", "128,128,256;128,128,256")
    assert grouped_shape.exit_code == 2 and "so its --shape is the GEMM's" in grouped_shape.output
    values = run("dump", "--umma", "--mma", "128,128,64", "--idesc", "0x08200480")
    assert values.exit_code == 0, values.output
    assert run("lint").exit_code == 0


def test_a_groups_padding_is_said_to_be_stored_and_not_compared() -> None:
    """Group 1's M = 96 fills 96 of its 128-row tile: the table's "bytes" read 1536 where sfa_permuted stores 2048,
    with no word that the 32 padding rows were left out on purpose."""
    task = str(get_problem("nvfp4_group_gemm").task_file)
    result = CliRunner().invoke(app, ["dump", "--layout", "--task", task, "--shape", "96,128,256;128,256,512"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "bytes compared" in said, said
    assert ("padding: the rows and k-blocks filling a partial 128-row or 4-k-block tile are stored but compared"
            " nowhere (group 1 sfa: 1536 of 2048 bytes compared; 1 of 4 batches): GPU MODE's generator leaves them"
            " random, to_blocked zeros them, and no kernel may read them") in said, said
    payload = layout("nvfp4_group_gemm", "96,128,256;128,256,512")
    assert [(entry["bytes_compared"], entry["bytes_stored"]) for entry in payload["storage"]] == [
        (1536, 2048), (2048, 2048), (4096, 4096), (8192, 8192)]
    full = CliRunner().invoke(app, ["dump", "--layout", "--task", task, "--shape", "128,128,256;256,128,512"],
                              env={"COLUMNS": "200"})
    assert full.exit_code == 0 and "padding" not in full.output, full.output
