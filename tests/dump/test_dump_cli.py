"""`nvfp4ctl dump` through the CLI: --umma (with and without CuTe), --layout, --runtime without a B200."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli_streams import separate_streams_runner

from nvfp4ctl.cli import app

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, ["dump", *args])


def invoke_apart(*args: str):
    """dump with stdout and stderr apart on every click (result.stderr: the progress and notices)."""
    return separate_streams_runner().invoke(app, ["dump", *args])


def test_needs_a_mode() -> None:
    result = invoke()
    assert result.exit_code == 2
    assert "choose what to dump" in result.output


@pytest.mark.parametrize("shape", ["128,256", "a,b,c", "128,256,0"])
def test_bad_shape_is_a_usage_error(shape: str) -> None:
    result = invoke("--layout", "--shape", shape)
    assert result.exit_code == 2
    assert "expected M,N,K or M,N,K,L" in result.output


def test_a_bad_layout_shape_is_said_before_torch_is_imported(tmp_path: Path) -> None:
    """The shape error took 2.8 s of CPU, nearly all of it importing torch to make inputs never made."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    probe = ("import json, sys\nfrom nvfp4ctl.cli import app\n"
             "try:\n    app(['dump', '--layout', '--shape', '1,2'], prog_name='nvfp4ctl')\n"
             "except SystemExit as e:\n    print(json.dumps([e.code, 'torch' in sys.modules]))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(root)))
    assert "--shape 1,2: expected M,N,K or M,N,K,L" in done.stderr, done.stderr
    assert done.stdout.splitlines()[-1] == "[2, false]", done.stdout


def test_a_bad_shape_is_said_before_umma_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """--umma comes first and its first run compiles for a minute or more: the shape's line came after."""
    from nvfp4ctl.umma import crosscheck

    def never(*args: object) -> None:
        raise AssertionError("--umma ran before --shape was read")

    monkeypatch.setattr(crosscheck, "check_kernel", never)
    for mode in ("--layout", "--runtime"):
        result = invoke("--umma", mode, "--kernel", "default", "--shape", "1,2")
        assert result.exit_code == 2 and "--shape 1,2: expected M,N,K" in result.output, (mode, result.output)


def test_layout_needs_a_shape() -> None:
    result = invoke("--layout")
    assert result.exit_code == 2 and "--layout needs --shape M,N,K or M,N,K,L (nvfp4_gemm;" in result.output


@pytest.mark.parametrize("problem, wanted", [
    ("nvfp4_gemv", "--layout needs --shape M,K or M,K,L (nvfp4_gemv; e.g. --shape 7168,16384)"),
    ("nvfp4_group_gemm", "--layout needs --shape M1,N1,K1;M2,N2,K2;... (nvfp4_group_gemm;"),
])
def test_layout_without_a_shape_names_the_task_problems_syntax(problem: str, wanted: str) -> None:
    """`dump --layout` in a GEMV or grouped GEMM folder asked for the GEMM's M,N,K[,L], which those refuse."""
    from nvfp4ctl.problems import get_problem

    result = invoke("--layout", "--task", str(get_problem(problem).task_file))
    assert result.exit_code == 2 and wanted in result.output, result.output


def test_umma_without_cute_shows_expected_values() -> None:
    result = invoke("--umma", "--no-cute")
    assert result.exit_code == 0, result.output
    assert "umma: 2 configs, 0 mismatches (not cross-checked)" in result.output
    assert "idesc 0x08100480" in result.output and "idesc 0x08200480" in result.output
    assert "1024 B" in result.output  # SBO of the 128-byte swizzle atom


def test_umma_says_its_smem_descriptors_are_at_address_0_not_the_kernels_own() -> None:
    """smem_a and smem_b were listed with one value (0x4000404000010000) and no word on why: CuTe's template
    with both buffers at shared address 0, where the kernel's own A and B lie apart."""
    result = invoke("--umma", "--no-cute")
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said
    assert "smem_a 0x4000404000010000 smem_b 0x4000404000010000" in said, said
    assert ("smem_a, smem_b, smem_a_k1: stage 0's descriptors with each operand's buffer placed at shared address 0"
            " (on the host CuTe cannot take a real shared address), so start holds the K step's offset alone; the"
            " kernel's own carry each buffer's address, A's and B's apart") in said, said
    payload = json.loads(invoke_apart("--umma", "--no-cute", "--json").stdout)
    assert payload["umma"]["smem_descriptors"].startswith("smem_a, smem_b, smem_a_k1: stage 0's descriptors")


def _fake_host_proof(monkeypatch: pytest.MonkeyPatch, cache: Path) -> list[str]:
    """nvcc and CUTLASS as if installed; compiling the host proof writes a marker line to stderr (where
    the notice goes) and an empty program, which prints nothing. Returns the commands run."""
    import subprocess
    import sys

    from nvfp4ctl.build import toolchain
    from nvfp4ctl.umma import host_proof

    ran: list[str] = []

    def run(command: list[str], timeout_s: float, what: str | None = None) -> subprocess.CompletedProcess[str]:
        ran.append(Path(command[0]).name)
        if command[0] == "nvcc":
            # flushed, as a compiler's own writes reach the stream at once: click < 8.2's CliRunner reads
            # result.stderr without flushing sys.stderr, and a line left in its buffer never arrives
            sys.stderr.write("<compile starts>\n")
            sys.stderr.flush()
            Path(command[command.index("-o") + 1]).write_text("")
        return subprocess.CompletedProcess(command, 0, "")

    monkeypatch.setenv("NVFP4CTL_CACHE", str(cache))
    monkeypatch.setattr(host_proof, "toolchain_missing", lambda: None)
    monkeypatch.setattr(toolchain, "nvcc_path", lambda: Path("nvcc"))
    monkeypatch.setattr(toolchain, "nvcc_version", lambda: "nvcc 13.0")
    monkeypatch.setattr(toolchain, "cutlass_version", lambda: "4.2")
    monkeypatch.setattr(toolchain, "cutlass_include_dirs", lambda: [])
    monkeypatch.setattr(host_proof, "_run", run)
    return ran


def test_umma_says_it_compiles_before_the_compile_and_not_on_a_cache_hit(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A first --umma compiled CuTe's host proof for over a minute with nothing on the screen."""
    ran = _fake_host_proof(monkeypatch, tmp_path / "cache")
    notice = "umma: compiling CuTe's host proof for nvfp4_gemm_sm100.cu (once per kernel and toolchain, about 1-2"
    first = invoke_apart("--umma", "--kernel", "default")
    assert ran == ["nvcc", "sm100_host_proof"], ran
    assert notice in first.stderr and "--no-cute skips it" in first.stderr, first.stderr
    assert first.stderr.index(notice) < first.stderr.index("<compile starts>"), first.stderr
    assert notice not in first.stdout  # --json's document stays whole
    again = invoke_apart("--umma", "--kernel", "default")
    assert ran[2:] == ["sm100_host_proof"], ran  # built: run, not compiled
    assert "compiling" not in again.stdout + again.stderr, again.stderr  # result.output: stdout alone on click < 8.2
    assert "compiling" not in invoke("--umma", "--kernel", "default", "--no-cute").output


def test_umma_keys_the_host_proof_once_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key (the kernel, its headers and the proof hashed, nvcc asked its version) was worked out twice: once
    to tell whether the proof is to be compiled, again to build or run it."""
    from nvfp4ctl.umma import host_proof

    _fake_host_proof(monkeypatch, tmp_path / "cache")
    key = host_proof._key
    keyed: list[Path] = []
    monkeypatch.setattr(host_proof, "_key", lambda kernel: keyed.append(kernel) or key(kernel))
    for run in ("compiles", "runs what is built"):
        keyed.clear()
        result = invoke_apart("--umma", "--kernel", "default")
        assert result.exit_code == 1, result.stdout + result.stderr  # the stand-in proof reports no config
        assert len(keyed) == 1, (run, keyed)


def test_without_a_terminal_a_long_compile_is_said_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """stderr no terminal (CliRunner's): no spinner, and the minute or two after the notice was silent."""
    import time

    from nvfp4ctl.umma import host_proof

    _fake_host_proof(monkeypatch, tmp_path / "cache")
    run = host_proof._run

    def slow(command: list[str], timeout_s: float, what: str | None = None) -> object:
        if command[0] == "nvcc":
            time.sleep(0.6)
        return run(command, timeout_s, what)

    monkeypatch.setattr(host_proof, "_run", slow)
    monkeypatch.setattr("nvfp4ctl.progress_lines.PLAIN_LINE_EVERY_S", 0.1)
    result = invoke_apart("--umma", "--kernel", "default")
    said = [line for line in result.stderr.splitlines() if line.startswith("compiling CuTe's host proof: ")]
    assert len(said) >= 3, result.stderr
    assert "compiling CuTe's host proof: " not in result.stdout  # -q: test_the_compile_notice_is_progress_that_q_drops


def test_a_host_proof_compile_past_its_limit_is_a_timeout_naming_the_compile_and_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A compiler that did not finish was a warning (the whole nvcc command, `timed out after 900 seconds`)
    and exit 0, the configs shown as not cross-checked, as if nvcc or CUTLASS were absent."""
    from nvfp4ctl.build import toolchain
    from nvfp4ctl.umma import host_proof

    real_run = host_proof._run
    _fake_host_proof(monkeypatch, tmp_path / "cache")
    nvcc = tmp_path / "nvcc"
    nvcc.write_text("#!/bin/sh\nexec sleep 30\n")  # a stand-in compiler that never finishes in time
    nvcc.chmod(0o755)
    monkeypatch.setattr(toolchain, "nvcc_path", lambda: nvcc)
    monkeypatch.setattr(host_proof, "_run", real_run)  # the compiler run for real
    monkeypatch.setattr(host_proof, "COMPILE_TIMEOUT_S", 0.5)
    result = invoke_apart("--umma", "--kernel", "default")
    assert result.exit_code == 3, result.stdout + result.stderr
    assert ("error: the CuTe host proof's compile (nvcc) ran past 0.5 s and was stopped; the limit is fixed:"
            " --no-cute shows the expected encoding without CuTe's") in result.stderr.splitlines(), result.stderr
    assert "not cross-checked" not in result.stdout + result.stderr
    assert not list((tmp_path / "cache" / "sm100-host-proof").glob("*/sm100_host_proof"))


def test_a_host_proof_that_cannot_run_is_one_line_and_exit_2_not_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A proof program that would not start (a cached build that is no program, a cache on a noexec mount) was a
    warning, `CuTe's encoder not consulted (could not run sm100_host_proof: ...)`, and exit 0: nothing proved."""
    from nvfp4ctl.umma import host_proof

    real_run = host_proof._run
    _fake_host_proof(monkeypatch, tmp_path / "cache")
    monkeypatch.setattr(host_proof, "_run", real_run)  # the program run for real
    monkeypatch.setattr(host_proof, "_key", lambda kernel: "0123456789abcdef")
    built = tmp_path / "cache" / "sm100-host-proof" / "0123456789abcdef" / host_proof.PROOF_BINARY
    built.parent.mkdir(parents=True)
    built.write_text("not a program\n")  # no execute permission: it cannot start
    result = invoke_apart("--umma", "--kernel", "default")
    assert result.exit_code == 2, result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith("error: the CuTe host proof could not run (could not run"
                                                     " sm100_host_proof: "), result.stderr
    assert errors[0].endswith("): --no-cute shows the expected encoding without CuTe's"), errors
    assert "warning" not in result.stderr and "not cross-checked" not in result.stdout + result.stderr


def test_no_nvcc_or_cutlass_for_the_host_proof_stays_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl.umma import host_proof

    _fake_host_proof(monkeypatch, tmp_path / "cache")
    monkeypatch.setattr(host_proof, "toolchain_missing", lambda: "nvcc not found")
    result = invoke_apart("--umma", "--kernel", "default")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert ("warning: CuTe's encoder not consulted (nvcc not found); showing the expected encoding only"
            in result.stderr.splitlines()), result.stderr


def test_the_compile_notice_is_progress_that_q_drops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_host_proof(monkeypatch, tmp_path / "cache")
    result = separate_streams_runner().invoke(app, ["-q", "dump", "--umma", "--kernel", "default"])
    assert "<compile starts>" in result.stderr and "compiling" not in result.stdout + result.stderr, result.stderr


def test_umma_json_without_cute() -> None:
    result = invoke("--umma", "--no-cute", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout[result.stdout.index("{"):])
    configs = payload["umma"]["configs"]
    assert [c["name"] for c in configs] == ["m128_n64", "general"]
    assert configs[0]["raw"]["idesc"] == "0x08100480"
    n_dim = next(f for f in configs[1]["fields"] if f["descriptor"] == "idesc" and f["field"] == "n_dim")
    assert n_dim["expected"] == 128 >> 3


def test_umma_takes_default_by_name() -> None:
    """`--kernel default` is nvfp4ctl's own kernel here too, as in check, bench and export."""
    result = invoke("--umma", "--no-cute", "--kernel", "default")
    assert result.exit_code == 0, result.output
    assert "umma: 2 configs, 0 mismatches (not cross-checked)" in result.output


def test_umma_on_a_hand_written_kernel_points_to_its_own_values(tmp_path: Path) -> None:
    kernel = tmp_path / "mine.cu"
    kernel.write_text("__global__ void k() {}\n")
    result = invoke("--umma", "--no-cute", "--kernel", str(kernel))
    assert result.exit_code == 2
    assert "--from-log FILE" in result.output and "--idesc HEX" in result.output


def test_umma_flags_a_config_that_disagrees(tmp_path: Path) -> None:
    kernel = tmp_path / "k.cu"  # a table whose tile is not 128 bytes deep cannot use the 128B swizzle
    kernel.write_text('template <>\nstruct ConfigById<0> : GemmConfig<128, 64, 128> {\n'
                      '  static constexpr const char* kName = "shallow";\n};\n')
    result = invoke("--umma", "--no-cute", "--kernel", str(kernel))
    assert result.exit_code == 1
    assert "a 64-byte K row needs another swizzle than 128B" in result.output
    wrong = "0:shallow 128x64x128: a 64-byte K row needs another swizzle than 128B"  # names its config already
    assert (f"umma: 1 config, 3 mismatches (smem_a: {wrong}; smem_b: {wrong}; smem_a_k1: {wrong}) (not cross-checked)"
            in " ".join(result.output.split())), result.output


def test_layout_locates_and_verifies(tmp_path: Path) -> None:
    result = invoke("--layout", "--shape", "256,384,512,2", "--row", "200", "--kblock", "5", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout[result.stdout.index("{"):])["layout"]
    sfa = payload["scales"][0]
    # row 200, k-block 5, K=512 (32 k-blocks, 8 atoms per row block): atom 1*8+1, then (200%32)*16 + 2*4 + 1
    assert sfa["offset"] == (1 * 8 + 1) * 512 + 8 * 16 + 2 * 4 + 1
    assert sfa["index6"] == [8, 2, 1, 1, 1, 0] and sfa["ok"]
    assert len(payload["storage"]) == 4 and all(entry["ok"] for entry in payload["storage"])


def test_layout_row_out_of_range() -> None:
    result = invoke("--layout", "--shape", "128,256,256", "--row", "300")
    assert result.exit_code == 2 and "--row 300: not a scale row of this shape (sfa 0..127, sfb 0..255)" in result.output
    negative = invoke("--layout", "--shape", "128,256,256", "--row", "-1")
    assert negative.exit_code == 2 and "--row -1: not a scale row of this shape (sfa 0..127, sfb 0..255)" in negative.output


def test_layout_table_output() -> None:
    result = invoke("--layout", "--shape", "128,256,256")
    assert result.exit_code == 0, result.output
    assert "layout: 128x256x256 l=1, 2 scale batches checked (sfa, sfb), 0 mismatches" in result.output


def test_layout_makes_its_inputs_on_the_cpu_under_nvfp4ctl_device_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """--layout made its inputs on CUDA whenever torch saw one, where check and bench honour
    NVFP4CTL_DEVICE=cpu; a value that is neither is refused as they refuse it."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # a GPU is there, the setting says the CPU
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    result = invoke_apart("--layout", "--shape", "128,256,256", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["layout"]["device"] == "cpu"
    tables = invoke("--layout", "--shape", "128,256,256")
    assert tables.exit_code == 0 and "(inputs generated on cpu)" in tables.output, tables.output
    monkeypatch.setenv("NVFP4CTL_DEVICE", "gpu")
    refused = invoke("--layout", "--shape", "128,256,256")
    assert refused.exit_code == 2 and "NVFP4CTL_DEVICE=gpu: expected cpu or cuda (unset: cuda)" in refused.output


def test_runtime_without_sm100_gpu_says_so() -> None:
    import torch

    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 10:
        pytest.skip("this machine has an SM100 GPU")
    result = invoke("--runtime", "--shape", "128,256,256")
    assert result.exit_code == 2
    assert "needs an SM100 (B200) GPU" in result.output
    assert len([line for line in result.output.splitlines() if line.strip()]) == 1


def test_layout_of_a_shape_with_partial_tiles_compares_real_scales_only() -> None:
    # M, N not multiples of 128 and K not of 64: the generator's padding is random, to_blocked's zero
    result = invoke("--layout", "--shape", "100,100,64", "--json")
    assert result.exit_code == 0, result.output
    storage = json.loads(result.stdout[result.stdout.index("{"):])["layout"]["storage"]
    assert [(entry["bytes_compared"], entry["mismatches"]) for entry in storage] == [(400, 0), (400, 0)]


def test_a_wrong_real_scale_is_still_found() -> None:
    import torch

    from nvfp4ctl.dump.layout import check_storage
    from nvfp4ctl.problems import get_problem

    problem = get_problem("nvfp4_gemm")
    data = problem.generate_input(problem.parse_shape("100,100,64", 1111), device="cpu")
    scales = problem.scale_tensors(data)
    operand, ref, permuted = scales[0]
    flat = permuted.view(torch.uint8).reshape(-1)
    flat[0] ^= 0x7F  # row 0, k-block 0: a real scale
    assert [(c.mismatches, c.first_mismatch) for c in check_storage(scales)][0] == (1, 0)


def test_simulate_with_inputs_bigger_than_memory_is_one_line(monkeypatch) -> None:
    from nvfp4ctl.problems import base, get_problem

    def too_big(*args, **kwargs):
        raise AssertionError("inputs were made for a shape whose inputs and output alone exceed the memory")

    monkeypatch.setattr(type(get_problem("nvfp4_gemm")), "generate_input", too_big)
    monkeypatch.setattr(base, "_device_bytes", lambda device: 16.0 * 2**30)
    result = invoke("--umma", "--simulate", "--mma", "128,128,64", "--shape", "1048576,1048576,1048576")
    assert result.exit_code == 2, result.output
    assert ("m=1048576 n=1048576 k=1048576: too large: its inputs and output need at least 3200.0 GiB, more than"
            " the 16.0 GiB of cpu memory") in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_a_decimal_descriptor_too_wide_as_hex_gets_its_hex_value() -> None:
    result = invoke("--umma", "--idesc", "135267456")  # 0x08100480 printed with %u
    assert result.exit_code == 2
    assert "--idesc 135267456: wider than 32 bits (read as hexadecimal; as a decimal it is 0x8100480)" in result.output


def test_options_that_would_do_nothing_are_refused(tmp_path: Path) -> None:
    log = tmp_path / "out.txt"
    log.write_text("")
    for args, message in ((["--umma", "--no-cute", "--row", "5"], "--row goes with --layout"),
                          (["--umma", "--no-cute", "--shape", "1,2,3"], "--shape goes with --layout, --runtime, --simulate"),
                          (["--umma", "--from-log", str(log), "--idesc", "0x08100480"],
                           "not used with --from-log, which reads the values from the file")):
        result = invoke(*args)
        assert result.exit_code == 2 and message in result.output, (args, result.output)


def test_default_by_name_is_nvfp4ctls_kernel_in_a_kernels_folder_of_yours(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """In a folder with a kernels/ of your own (sm90/ only, say), `--kernel default` is still nvfp4ctl's
    kernel, as in check, bench and export; it read <you>/kernels/sm100/nvfp4_gemm_sm100.cu ('kernel not
    found', exit 2). The bare default reads your kernels/ folder, as before."""
    (tmp_path / "kernels" / "sm90").mkdir(parents=True)
    (tmp_path / "kernels" / "sm90" / "mine.cu").write_text("// nvfp4ctl: arch=sm_90a\n")
    monkeypatch.chdir(tmp_path)
    result = invoke("--umma", "--no-cute", "--kernel", "default")
    assert result.exit_code == 0, result.output
    assert "umma: 2 configs, 0 mismatches (not cross-checked)" in result.output
    bare = invoke("--umma", "--no-cute")
    assert bare.exit_code == 2 and "kernels/sm100/nvfp4_gemm_sm100.cu" in bare.output
    assert "(--kernel PATH for yours, --kernel default for nvfp4ctl's)" in " ".join(bare.output.split())


@pytest.mark.parametrize("text", ["", "1/1 pass\nnvfp4ctl:umma k=1 idesc=0x08100480\n"])
def test_a_saved_output_without_umma_lines_is_an_input_error(tmp_path: Path, text: str) -> None:
    log = tmp_path / "b200.log"
    log.write_text(text)
    result = invoke("--umma", "--from-log", str(log))
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert f"--from-log {log}: no `nvfp4ctl:umma k=0 ...` line in it" in flat
    assert "`nvfp4ctl check --dump` on a B200 first" in flat
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_simulate_with_no_values_given_says_so_instead_of_checking_the_config_against_itself() -> None:
    result = invoke("--umma", "--simulate", "--mma", "128,128,64", "--no-cute")
    assert result.exit_code == 0, result.output
    assert "umma values: none given" in result.output
    assert "checked against the config" not in result.output


def test_one_descriptor_is_counted_in_the_singular() -> None:
    result = invoke("--umma", "--mma", "128,128,64", "--idesc", "0x08100480", "--no-cute")
    assert "umma values: 1 descriptor checked against the config" in result.output, result.output
    result = invoke("--umma", "--idesc", "0x08100480")
    assert "umma values: 1 descriptor decoded (no --mma: nothing to check against), 0 mismatches" in result.output


def test_a_kernel_is_logged_only_where_one_was_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--layout checks the task's inputs and your own --idesc values need no kernel: the run log named
    nvfp4ctl's CUTLASS kernel as their target, and a kernels/ folder of yours without it stopped
    --idesc with "kernel not found"."""
    from nvfp4ctl import runlog
    from nvfp4ctl.workspace import memory_path

    (tmp_path / "kernels" / "sm90").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    for args in (["--layout", "--shape", "128,128,128"], ["--umma", "--idesc", "0x08100480"]):
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        assert runlog.read(memory_path())[-1].target == "-", args
    assert invoke("--umma", "--no-cute", "--kernel", "default").exit_code == 0
    assert "nvfp4_gemm_sm100.cu@" in runlog.read(memory_path())[-1].target


@pytest.mark.parametrize("args, message", [
    (["--layout", "--shape", "128,128,128", "--kernel", "default"],
     "--kernel goes with --umma (without your own values) or --runtime"),
    (["--umma", "--idesc", "0x08100480", "--kernel", "default"],
     "--kernel goes with --umma (without your own values) or --runtime"),
    (["--umma", "--idesc", "0x08100480", "--task", "task.yml"],
     "--task goes with --layout or --runtime, or with --umma reading nvfp4ctl's kernel (no --kernel PATH)"),
])
def test_a_kernel_or_task_that_would_not_be_read_is_refused(args: list[str], message: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2 and message in result.output, result.output


def _checks_of_the_shipped_kernel(rows: tuple = (), problems: tuple = ()) -> list:
    """Its two configs as CuTe's values would check them: the first with `rows` and `problems`."""
    from nvfp4ctl.umma import crosscheck
    from nvfp4ctl.umma.configs import parse_configs, shipped_kernel

    first, second = parse_configs(shipped_kernel())
    return [crosscheck.ConfigCheck(first, {}, rows, problems, True), crosscheck.ConfigCheck(second, {}, (), (), True)]


def test_one_mismatch_is_counted_in_the_singular_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """The summary, and so the run log, said "umma: 1 config, 1 mismatch" alone; now it names it, as the
    summary of your own values does."""
    from nvfp4ctl import runlog
    from nvfp4ctl.umma import crosscheck
    from nvfp4ctl.workspace import memory_path

    one_wrong_field = crosscheck.FieldRow("idesc", "n_dim", "[17,23)", 16, 8, "N=128")
    checks = _checks_of_the_shipped_kernel((one_wrong_field,))
    monkeypatch.setattr(crosscheck, "check_kernel", lambda kernel, use_cute, entry=None: (checks, None))
    result = invoke("--umma", "--json", "--kernel", "default")
    assert result.exit_code == 1, result.output
    assert runlog.read(memory_path())[-1].result == "umma: 2 configs, 1 mismatch (0:m128_n64 idesc.n_dim = 16, expected 8)"


def test_mismatches_of_nvfp4ctls_kernel_are_named_under_q(monkeypatch: pytest.MonkeyPatch) -> None:
    """-q drops the field tables, which were the only place a wrong field was named: the summary counted it."""
    from nvfp4ctl import runlog
    from nvfp4ctl.commands import dump
    from nvfp4ctl.umma import crosscheck
    from nvfp4ctl.workspace import memory_path

    rows = tuple(crosscheck.FieldRow("smem_b", "sbo", "[32,46)", value, 64, "stride") for value in (1, 2, 3))
    checks = _checks_of_the_shipped_kernel(rows, ("smem_a: reserved bits set (0x4)", "CuTe reported nothing for config 0"))
    monkeypatch.setattr(crosscheck, "check_kernel", lambda kernel, use_cute, entry=None: (checks, None))
    result = invoke("--umma", "-q", "--kernel", "default")
    assert result.exit_code == 1, result.output
    line = ("umma: 2 configs, 5 mismatches (0:m128_n64 smem_b.sbo = 1, expected 64; 0:m128_n64 smem_b.sbo = 2,"
            " expected 64; 0:m128_n64 smem_b.sbo = 3, expected 64; +2 more)")
    assert "sbo" not in result.output.replace(line, ""), result.output  # the table is dropped
    assert line in " ".join(result.output.split()), result.output
    assert runlog.read(memory_path())[-1].result == line
    # what is no one field names its config where its words do not
    assert dump._findings(checks[0])[3:] == ["0:m128_n64 smem_a: reserved bits set (0x4)",
                                             "CuTe reported nothing for config 0"]


@pytest.mark.parametrize("problem", ["nvfp4_gemv", "nvfp4_group_gemm", "nvfp4_dual_gemm"])
@pytest.mark.parametrize("kernel", [(), ("--kernel", "default")], ids=["bare", "default"])
def test_umma_for_a_problem_without_nvfp4ctls_kernel_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  problem: str, kernel: tuple[str, ...]) -> None:
    """In a GEMV or grouped GEMM folder `dump --umma` checked the GEMM's CUTLASS kernel, exit 0, without
    a word; with a flat kernels/ of the folder's own it said the GEMM's kernel was not found."""
    folder = tmp_path / problem
    assert runner.invoke(app, ["init", "--problem", problem, str(folder)]).exit_code == 0
    monkeypatch.chdir(folder)
    for flat in ((), ("kernels",)):
        if flat:
            (folder / "kernels").mkdir()
            (folder / "kernels" / "mine.cu").write_text("__global__ void k() {}\n")
        result = invoke("--umma", "--no-cute", *kernel)
        assert result.exit_code == 2, result.output
        assert " ".join(result.output.split()) == (
            "error: dump --umma reads nvfp4ctl's CUTLASS sm_100a kernel for nvfp4_gemm"
            f" (kernels/sm100/nvfp4_gemm_sm100.cu), but task.yml is for {problem}, for which nvfp4ctl has no such"
            " kernel; pass the values your kernel uses (--idesc, --desc-a, --desc-b, --tmem-*, --mma) or --from-log"
            " FILE, or --kernel PATH for a CUTLASS kernel of yours")


@pytest.mark.parametrize("problem", ["nvfp4_gemv", "nvfp4_group_gemm", "nvfp4_dual_gemm"])
@pytest.mark.parametrize("kernel", [(), ("--kernel", "default"), ("--kernel", "mine.cu")],
                         ids=["bare", "default", "yours"])
def test_runtime_for_another_problem_is_refused_with_any_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               problem: str, kernel: tuple[str, ...]) -> None:
    """--runtime runs the kernel through the GEMM's binding on the GEMM's inputs: with --kernel PATH in a
    GEMV folder it went on to the GPU, where the bare --runtime was refused; refused as check --dump is,
    before any GPU is looked for."""
    from nvfp4ctl.dump import runtime

    def no_gpu_needed() -> None:
        raise AssertionError("--runtime looked for a GPU before refusing the task's problem")

    monkeypatch.setattr(runtime, "sm100_gpu", no_gpu_needed)
    folder = tmp_path / problem
    assert runner.invoke(app, ["init", "--problem", problem, str(folder)]).exit_code == 0
    monkeypatch.chdir(folder)
    (folder / "mine.cu").write_text('#include "nvfp4_gemm_api.h"\n__global__ void k() {}\n')
    for shape in (("--shape", "128,128,256"), ()):  # the problem first: no --shape to give only to be refused
        result = invoke("--runtime", *kernel, *shape)
        assert result.exit_code == 2, result.output
        assert " ".join(result.output.split()) == (
            "error: dump --runtime runs a debug build of an nvfp4_gemm kernel (C = A·Bᵀ on its inputs); this task is"
            f" {problem}"), result.output
    # a kernel of another problem where nvfp4ctl's own GEMM task stands in is judged by its API header, as check's
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gemv.cu").write_text('#include "nvfp4_gemv_api.h"\n__global__ void k() {}\n')
    shipped = invoke("--runtime", "--kernel", "gemv.cu", "--shape", "128,128,256")
    assert shipped.exit_code == 2 and "this task is nvfp4_gemv" in shipped.output, shipped.output
    # a GEMM task.yml named with --task is the way out, and is no option that does nothing
    from nvfp4ctl.problems import get_problem

    monkeypatch.setattr(runtime, "sm100_gpu", lambda: None)
    monkeypatch.chdir(folder)
    gemm_task = str(get_problem("nvfp4_gemm").task_file)
    taken = invoke("--runtime", "--kernel", "mine.cu", "--shape", "128,128,256", "--task", gemm_task)
    assert taken.exit_code == 2 and "needs an SM100 (B200) GPU" in taken.output, taken.output


def test_umma_says_which_kernel_and_problem_it_checks() -> None:
    from nvfp4ctl.problems import get_problem

    result = invoke("--umma", "--no-cute", "--kernel", "default")
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert first.startswith("umma: the dispatch configs of ") and first.endswith("nvfp4_gemm_sm100.cu (nvfp4_gemm kernel)")
    # --task picks the problem it must be for, as it does for --layout
    other = invoke("--umma", "--no-cute", "--task", str(get_problem("nvfp4_gemv").task_file))
    assert other.exit_code == 2 and "is for nvfp4_gemv, for which nvfp4ctl has no such kernel" in other.output


@pytest.mark.parametrize("mode", [["--umma", "--no-cute"], ["--runtime", "--shape", "128,128,256"]])
def test_a_folder_given_as_the_kernel_is_said_to_be_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        mode: list[str]) -> None:
    """As build and export say it: "kernel not found" sent one looking for a folder that is there."""
    (tmp_path / "kernels").mkdir()
    monkeypatch.chdir(tmp_path)
    result = invoke(*mode, "--kernel", "kernels")
    assert result.exit_code == 2, result.output
    assert result.output == "error: kernels is a folder, not a kernel source: name a .cu file in it\n"


@pytest.mark.parametrize("args, said", [
    # the task's problem first: a --shape given only to be told --runtime is the GEMM's
    (["--runtime"], "dump --runtime runs a debug build of an nvfp4_gemm kernel (C = A·Bᵀ on its inputs); this task is"
                    " nvfp4_gemv"),
    (["--umma", "--simulate", "--shape", "128,256"],
     "--shape 128,256: expected M,N,K or M,N,K,L as positive integers, e.g. --shape 128,7168,16384; --simulate runs"
     " the MMA values on nvfp4_gemm inputs (C = A·Bᵀ), so its --shape is the GEMM's M,N,K[,L], not nvfp4_gemv's"),
    (["--layout", "--shape", "128,256", "--row", "128"], "--row 128: not a scale row of this shape (sfa 0..127, sfb 0..127)"),
    (["--layout", "--shape", "128,256", "--kblock", "16"],
     "--kblock 16: not a scale k-block of row 0 in this shape (sfa 0..15, sfb 0..15)"),
])
def test_a_gemv_folders_mistakes_are_said_first_and_before_torch_is_imported(tmp_path: Path, args: list[str],
                                                                               said: str) -> None:
    """They came after 2.4-3 s of torch's import and input generation, or after another mistake was fixed."""
    import os
    import subprocess
    import sys

    from nvfp4ctl.problems import get_problem

    root = Path(__file__).resolve().parents[2]
    (tmp_path / "task.yml").write_text(get_problem("nvfp4_gemv").task_file.read_text())
    probe = ("import json, sys\nfrom nvfp4ctl.cli import app\n"
             f"try:\n    app(['dump', *{args!r}], prog_name='nvfp4ctl')\n"
             "except SystemExit as e:\n    print(json.dumps([e.code, 'torch' in sys.modules]))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(root), NVFP4CTL_MEMORY=str(tmp_path / "M.md")))
    assert " ".join(done.stderr.split()).startswith(f"error: {said}"), done.stderr
    assert done.stdout.splitlines()[-1] == "[2, false]", done.stdout


@pytest.mark.parametrize("problem, shape", [("nvfp4_gemm", "128,256,64,2"), ("nvfp4_dual_gemm", "128,384,128"),
                                            ("nvfp4_gemv", "256,512,2"), ("nvfp4_group_gemm", "96,128,256;64,192,512")])
def test_the_scale_extents_read_from_the_shape_are_those_of_the_inputs(problem: str, shape: str) -> None:
    """--row and --kblock are judged on them before any input is made."""
    from nvfp4ctl.problems import get_problem

    spec = get_problem(problem)
    case = spec.parse_shape(shape, 1)
    made = [(operand, ref.shape[0], ref.shape[1]) for operand, ref, _ in spec.scale_tensors(spec.make_input(case, "cpu"))]
    assert spec.scale_extents(case) == made


@pytest.mark.parametrize("mode", [("--umma", "--no-cute"), ("--layout", "--shape", "128,256,256"),
                                  ("--umma", "--idesc", "0x08100480")])
def test_every_json_document_names_its_version(mode: tuple[str, ...]) -> None:
    """As lint's does: --layout's layout.shape changed from a list to sizes by name, and a script had no
    key to tell the two documents apart."""
    from nvfp4ctl.commands.dump import JSON_VERSION

    result = invoke_apart(*mode, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["version"] == JSON_VERSION == 1, result.stdout


@pytest.mark.parametrize("modes", [["--layout"], ["--umma", "--no-cute"], ["--umma", "--no-cute", "--layout"]])
def test_runtime_without_an_sm100_gpu_is_refused_before_any_other_mode_prints(
        monkeypatch: pytest.MonkeyPatch, modes: list[str]) -> None:
    """`dump --layout --runtime` with no B200 printed the whole layout report, then the refusal (exit 2)."""
    from nvfp4ctl.dump import runtime

    monkeypatch.setattr(runtime, "sm100_gpu", lambda: None)
    result = invoke(*modes, "--runtime", "--shape", "128,128,256")
    assert result.exit_code == 2, result.output
    assert result.output == ("error: dump --runtime needs an SM100 (B200) GPU; none here (use --umma and --layout"
                             " without one)\n")


def test_runtime_of_a_shape_the_kernel_cannot_run_is_refused_before_the_layout_report(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl.dump import runtime
    from nvfp4ctl.umma import configs

    monkeypatch.setattr(runtime, "sm100_gpu", lambda: "NVIDIA B200")
    monkeypatch.setattr(configs, "select_config", lambda m, n, k, l: configs.NO_CONFIG)
    result = invoke("--layout", "--runtime", "--shape", "128,128,256")
    assert result.exit_code == 2, result.output
    assert result.output == "error: --shape 128,128,256,1: the sm100 kernel does not support this shape\n"


def test_runtime_of_a_shape_too_large_for_the_gpu_is_refused_before_the_debug_build(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """--runtime's child made its inputs with generate_input, after minutes of CUTLASS build, so a shape whose
    inputs and output alone exceed the GPU's memory was a crash of the debug run, not check's "too large"."""
    from nvfp4ctl.dump import runtime
    from nvfp4ctl.problems import base
    from nvfp4ctl.umma import configs

    def no_build(*args: object, **kwargs: object) -> None:
        raise AssertionError("the debug build ran for a shape too large for the GPU")

    monkeypatch.setattr(runtime, "sm100_gpu", lambda: "NVIDIA B200")
    monkeypatch.setattr(configs, "select_config", lambda m, n, k, l: 0)
    monkeypatch.setattr(base, "_device_bytes", lambda device: 16.0 * 2**30)
    monkeypatch.setattr(runtime, "run_debug_kernel", no_build)
    result = invoke("--layout", "--runtime", "--shape", "1048576,1048576,1048576")
    assert result.exit_code == 2, result.output
    assert result.output == ("error: m=1048576 n=1048576 k=1048576: too large: its inputs and output need at least"
                             " 3200.0 GiB, more than the 16.0 GiB of cuda memory\n")


@pytest.mark.parametrize("mode", [
    ["--layout", "--shape", "128,256,256"],
    ["--umma", "--idesc", "0x08200480", "--desc-a", "0x4000404000010040", "--desc-b", "0x4000400100400440",
     "--simulate", "--shape", "128,128,512"],
    ["--umma", "--idesc", "0x08200480", "--mma", "128,128,64"],
    ["--umma", "--from-log", "saved.log"],
    ["--runtime", "--shape", "128,256,256"],
], ids=["layout", "simulate", "own-values", "from-log", "runtime"])
def test_a_mode_that_needs_torch_says_it_is_not_installed(mode: list[str], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Without torch these modes ended in a ModuleNotFoundError traceback, exit 1 and "internal error" in
    the run log; build says the same line with exit 2."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "saved.log").write_text("nvfp4ctl:umma k=0\n")
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError, as without it
    result = invoke(*mode)
    assert result.exit_code == 2, result.output
    assert result.output.strip() == "error: torch is not installed (pip install torch)"


def test_umma_reading_the_kernel_needs_no_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    result = invoke("--umma", "--no-cute", "--kernel", "default")
    assert result.exit_code == 0, result.output


def test_a_from_log_line_past_the_line_limit_is_one_line_not_read_whole(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A log written as one line without a line break (hundreds of MB of a kernel's printf run together) was
    read whole into memory, to end in "no `nvfp4ctl:umma k=0 ...` line in it"."""
    from nvfp4ctl.commands import dump

    monkeypatch.setattr(dump, "MAX_LOG_LINE_CHARS", 1000)
    log = tmp_path / "run.log"
    log.write_text("check · nvfp4_gemm\n" + "nvfp4ctl:umma k=0 " * 200 + "\n")  # 3600 characters, no break among them
    result = invoke_apart("--umma", "--from-log", str(log))
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [
        f"error: --from-log {log}: line 2 runs past 1,000 characters without a line break: not a saved output of"
        " `nvfp4ctl check --dump`, whose lines are short; keep its lines as printed, one to a line"], result.stderr
    asked: list[int] = []  # what each read of the file asked for
    real_open = Path.open

    class Counted:
        def __init__(self, path: Path, *args: Any, **kwargs: Any) -> None:
            self.file = real_open(path, *args, **kwargs)

        def __enter__(self) -> Counted:
            return self

        def __exit__(self, *raised: object) -> None:
            self.file.close()

        def readline(self, size: int = -1) -> str:
            asked.append(size)
            return self.file.readline(size)

    monkeypatch.setattr(Path, "open", lambda path, *args, **kwargs: Counted(path, *args, **kwargs))
    with pytest.raises(dump.UsageError):
        list(dump._log_lines(log))
    assert asked and all(0 < size <= 1001 for size in asked), asked  # never a whole line, whatever its length
    monkeypatch.setattr(Path, "open", real_open)
    log.write_text("x" * 1000 + "\n")  # at the limit: read, a line like any other
    assert list(dump._log_lines(log)) == ["x" * 1000]


@pytest.mark.parametrize("mode, said", [
    (["--layout"], "--layout needs --shape"),
    (["--umma", "--from-log", "saved.log", "--shape", "1,2"], "--shape 1,2: expected M,N,K"),
    (["--runtime", "--kernel", "nosuch.cu", "--shape", "128,128,256"], "kernel not found: nosuch.cu"),
], ids=["layout-without-shape", "from-log-bad-shape", "runtime-missing-kernel"])
def test_the_users_own_mistakes_are_said_before_a_missing_torch(mode: list[str], said: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """As check and bench do: a mistake the user can fix now comes first, not after installing torch."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "saved.log").write_text("nvfp4ctl:umma k=0\n")
    monkeypatch.setitem(sys.modules, "torch", None)
    result = invoke(*mode)
    assert result.exit_code == 2, result.output
    assert said in result.output and "torch is not installed" not in result.output


REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("kernel", ["kernels/sm90/nvfp4_gemm_sm90.cu", "kernels/naive/nvfp4_gemv_naive.cu"])
def test_umma_on_an_sm90a_kernel_is_one_line_before_any_listing(kernel: str) -> None:
    """It printed "the dispatch configs of X" and the minute-long compile note before its error."""
    result = invoke_apart("--umma", "--kernel", str(REPO / kernel))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {REPO / kernel} is an sm_90a kernel (")
    assert line.endswith("dump --umma is for sm_100a tcgen05 kernels")


def test_umma_on_a_link_to_an_sm90a_kernel_is_refused_as_the_kernel_itself(tmp_path: Path) -> None:
    """The link's own folder says nothing: it went on to list the H100 kernel's configs."""
    link = tmp_path / "h100.cu"
    link.symlink_to(REPO / "kernels/sm90/nvfp4_gemm_sm90.cu")
    result = invoke_apart("--umma", "--kernel", str(link))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {link} is an sm_90a kernel (its sm90/ folder, as h100.cu links to")


def test_umma_on_a_kernel_without_a_dispatch_table_is_one_line_before_any_listing(tmp_path: Path) -> None:
    kernel = tmp_path / "sm100" / "mine.cu"
    kernel.parent.mkdir()
    kernel.write_text("// a hand-written tcgen05 kernel\n__global__ void k() {}\n")
    result = invoke_apart("--umma", "--kernel", str(kernel))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {kernel}: no `struct ConfigById<N> : GemmConfig<M, N, K>` dispatch entries found")


@pytest.mark.parametrize("head, says", [
    (b"\x1f\x8b\x08\x08", "it is gzip-compressed (its bytes start 1f 8b): zcat it into a plain file first"),
    ("nvfp4ctl:umma k=0\n".encode("utf-16"), "it looks like UTF-16 text (its bytes start with UTF-16's byte order"
                                             " mark): convert it to UTF-8 first (iconv -f UTF-16 -t UTF-8)"),
    ("nvfp4ctl:umma k=0\n".encode("utf-16-le"), "it looks like UTF-16 text (it has NUL bytes)"),
], ids=["gzip", "utf16-bom", "utf16-no-bom"])
def test_a_saved_output_that_is_gzip_or_utf16_says_so(tmp_path: Path, head: bytes, says: str) -> None:
    """It said "no nvfp4ctl:umma k=0 ... line in it" with nothing on why: the lines were there, unreadable."""
    log = tmp_path / "b200.log"
    log.write_bytes(head + b"\x00\x01rest")
    result = invoke("--umma", "--from-log", str(log))
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert f"--from-log {log}: no `nvfp4ctl:umma k=0 ...` line in it: {says}" in flat


def test_a_saved_output_is_read_a_line_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 400 MB log was read whole (956 MB resident): its text is never asked for at once."""
    log = tmp_path / "b200.log"
    log.write_text("noise\n" * 1000 + _SAVED_RUN)
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    read_text, read_bytes = Path.read_text, Path.read_bytes

    def not_the_log(read):  # noqa: ANN001, ANN202
        def reading(self: Path, *args: object, **kwargs: object):  # noqa: ANN202
            assert self != log, "the log was read whole"
            return read(self, *args, **kwargs)
        return reading

    monkeypatch.setattr(Path, "read_text", not_the_log(read_text))
    monkeypatch.setattr(Path, "read_bytes", not_the_log(read_bytes))
    result = invoke("--umma", "--from-log", str(log), "--shape", "128,128,512")
    assert result.exit_code == 0, result.output
    assert "dump: 8 MMAs of the first output tile" in result.output
    assert "b200.log" in memory.read_text()  # the run log's digest of the file read it in pieces too


# one run's lines as `check --dump` keeps them (tests/umma/targets/prints_umma_lines.py's, K=512)
_SAVED_RUN = "nvfp4ctl:umma config mma=128,128,64 swizzle=128B block_k=256\n" + "".join(
    f"nvfp4ctl:umma k={step} idesc=0x08200480 desc_a=0x{(0x40004040 << 32) | (1 << 16) | ((0x400 + 32 * (step % 4)) >> 4):016x}"
    f" desc_b=0x{(0x40004040 << 32) | (1 << 16) | ((0x4400 + 32 * (step % 4)) >> 4):016x} tmem_d=0x00000000"
    f" tmem_sfa=0x{128 + 4 * (step % 4):08x} tmem_sfb=0x{144 + 4 * (step % 4):08x} acc={int(step > 0)}\n"
    for step in range(8))


@pytest.mark.parametrize("folder", ["it's mine", 'the "fast" one'])
def test_umma_refuses_a_kernel_path_with_a_quote_before_compiling_the_proof(tmp_path: Path, folder: str) -> None:
    """nvcc's -include writes the path into a quoted #include: `"` was "Stray '\"' character" and `'` a
    mangled name, each said as the proof's own failure."""
    from nvfp4ctl.project import shipped

    kernel = tmp_path / folder / "mine.cu"
    kernel.parent.mkdir()
    kernel.write_bytes(shipped("kernels/sm100/nvfp4_gemm_sm100.cu").read_bytes())
    result = invoke_apart("--umma", "--kernel", str(kernel))
    assert result.exit_code == 2, result.output
    quote = "'" if "'" in folder else '"'
    assert result.stderr.strip() == (f"error: {kernel}: CuTe's host proof cannot include a kernel whose path holds"
                                     f" {quote} (nvcc's -include reads it as part of a quoted name): rename the file"
                                     " or its folder, or pass --no-cute")
    assert result.stdout == ""
    assert invoke("--umma", "--no-cute", "--kernel", str(kernel)).exit_code == 0


@pytest.mark.parametrize("columns", ["40", "10"])
@pytest.mark.parametrize("mode", [("--umma", "--no-cute"), ("--layout", "--shape", "128,256,256")])
def test_a_narrow_terminal_gets_every_value_of_dumps_tables_whole(mode: tuple[str, ...], columns: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """At COLUMNS=40 the tables folded their cells a letter or two at a time (`0x`/`44`); at COLUMNS=10
    --layout printed tables with every value gone, and exit 0. Now such a table is one record per row."""
    from table_words import has_a_table, missing_words

    monkeypatch.setenv("COLUMNS", "400")
    wide = invoke(*mode)
    monkeypatch.setenv("COLUMNS", columns)
    narrow = invoke(*mode)
    assert (wide.exit_code, narrow.exit_code) == (0, 0), narrow.output
    assert not has_a_table(narrow.output)
    assert missing_words(narrow.output, wide.output) == []
    if columns == "40":  # each value named by its column, where the line holds both
        assert ("offset: 0" if "--layout" in mode else "expected: 8") in narrow.output


@pytest.mark.parametrize("mode", [("--umma", "--no-cute"), ("--layout", "--shape", "128,256,256")])
def test_a_terminal_that_holds_every_word_still_gets_dumps_tables(mode: tuple[str, ...],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from table_words import has_a_table

    monkeypatch.setenv("COLUMNS", "120")
    result = invoke(*mode)
    assert result.exit_code == 0 and has_a_table(result.output)
    assert "│ idesc     │ n_dim        │ [17,23) │" in result.output if "--umma" in mode else \
        "│ sfa    │   0 │       0 │      0 │                  0,0,0,0,0,0 │ 0x44 │   0x44 │     ok │" in result.output
