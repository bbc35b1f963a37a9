"""The host proofs' compiles (umma/host_proof.host_binary) are ended with every tool nvcc started, as a
kernel's build is (compile.run_compiler): a stand-in nvcc starts a tool of its own and waits for it."""

from __future__ import annotations

import os
import re
import signal
import textwrap
from pathlib import Path

import pytest

from process_tree import stand_in_toolkit, wait_dead
from nvfp4ctl.build import compile as build_compile
from nvfp4ctl.build import toolchain
from nvfp4ctl.errors import ExitCode, FailuresFound, ToolTimeout, UsageError
from nvfp4ctl.umma import host_proof


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads process states from /proc (Linux)")
def test_a_host_proof_compile_past_its_timeout_is_ended_with_what_it_started(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """subprocess.run's timeout killed nvcc alone: its cudafe++/cicc/ptxas compiled on into a staging
    folder already deleted."""
    tool_pid = tmp_path / "tool.pid"
    nvcc = stand_in_toolkit(tmp_path / "cuda", tool_pid) / "bin" / "nvcc"
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(toolchain, "nvcc_path", lambda: nvcc)
    monkeypatch.setattr(host_proof, "COMPILE_TIMEOUT_S", 1.0)
    entry = tmp_path / "cache" / "proof"
    with pytest.raises(ToolTimeout, match=r"^the proof's compile \(nvcc\) ran past 1 s and was stopped; the limit is fixed$"):
        host_proof.host_binary(entry, "proof", ["-O1", "proof.cu"], "the proof")
    tool = int(tool_pid.read_text())
    dead = wait_dead(tool, build_compile.STOP_GRACE_S + 5.0)
    if not dead:
        os.kill(tool, signal.SIGKILL)  # not left running by the test either
    assert dead, "nvcc's tool outlived the host proof's timeout"
    assert not entry.exists()


def test_a_host_proof_compiles_in_the_working_folder_with_its_output(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel's folder given relative to the working folder is an -I as given: nvcc runs there, and its
    output (the error line a failed compile names) comes back as text."""
    nvcc = tmp_path / "nvcc"
    nvcc.write_text(textwrap.dedent("""\
        #!/bin/sh
        pwd
        echo "proof.cu(3): error: identifier \\"x\\" is undefined" >&2
        exit 1
    """))
    nvcc.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(toolchain, "nvcc_path", lambda: nvcc)
    done = host_proof._run([str(nvcc), "-Ikernels", "proof.cu"], 5.0)
    assert (done.returncode, done.stdout.splitlines()[0]) == (1, str(work))
    with pytest.raises(FailuresFound, match=r'^the proof did not compile: proof.cu\(3\): error: identifier "x" is undefined$'):
        host_proof.host_binary(tmp_path / "cache" / "proof", "proof", ["-Ikernels", "proof.cu"], "the proof")


def test_a_host_proof_compile_past_its_timeout_is_a_timeout_and_one_that_cannot_start_is_an_input_error(
        tmp_path: Path) -> None:
    """A compiler that did not finish was `could not run nvcc: Command [...] timed out after 900 seconds`, a
    UsageError (exit 2) with the whole command in it."""
    nvcc = tmp_path / "nvcc"
    nvcc.write_text("#!/bin/sh\nexec sleep 30\n")
    nvcc.chmod(0o755)
    with pytest.raises(ToolTimeout) as timed_out:
        host_proof._run([str(nvcc), "proof.cu"], 0.5, "the proof's compile")
    assert timed_out.value.exit_code == ExitCode.TIMEOUT
    assert str(timed_out.value) == "the proof's compile (nvcc) ran past 0.5 s and was stopped; the limit is fixed"
    with pytest.raises(ToolTimeout, match=r"^nvcc ran past 0.5 s and was stopped; the limit is fixed$"):
        host_proof._run([str(nvcc)], 0.5)  # a program run, not named: the program's own name
    with pytest.raises(UsageError, match=r"^could not run absent: "):
        host_proof._run([str(tmp_path / "absent")], 5.0)


def test_the_host_proof_compiles_the_kernel_named_not_its_folders_shipped_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The proof did `#include "nvfp4_gemm_sm100.cu"` with the kernel's folder on the include path: --kernel
    wide.cu was checked as the nvfp4_gemm_sm100.cu beside it, and a kernel under another name alone in its
    folder failed "nvfp4_gemm_sm100.cu: No such file or directory"."""
    folder = tmp_path / "sm100"
    folder.mkdir()
    wide = folder / "wide.cu"
    wide.write_text("// another config\n")
    (folder / "nvfp4_gemm_sm100.cu").write_text("// the shipped one\n")
    compiled: list[list[str]] = []
    monkeypatch.setattr(toolchain, "cutlass_include_dirs", lambda: [tmp_path / "cutlass"])
    monkeypatch.setattr(host_proof, "_proof_entry", lambda kernel: tmp_path / "cache" / "proof")
    monkeypatch.setattr(host_proof, "host_binary",
                        lambda entry, name, args, what, *kernel: compiled.append(args) or entry / name)
    host_proof.proof_binary(wide)
    (args,) = compiled
    assert args[-1] == str(host_proof.PROOF_SOURCE)
    assert "-DNVFP4CTL_CONFIG_ONLY=1" in args
    assert args[args.index("-include") + 1] == str(wide.resolve())
    source = host_proof.PROOF_SOURCE.read_text()
    assert not re.search(r'^\s*#\s*include\s+"[^"]*\.cu"', source, re.MULTILINE), "the proof includes a kernel by name"


def test_a_host_proof_compile_error_in_the_kernel_reads_as_the_kernel_not_compiling(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It read "the CuTe host proof did not compile: my2/sm100/nvfp4_gemm_sm100.cu(64): error: ...", as if
    the tool's check had failed; an error in the proof's own code still names the proof."""
    kernel = tmp_path / "sm100" / "mine.cu"
    kernel.parent.mkdir()
    kernel.write_text("// broken\n")
    nvcc = tmp_path / "nvcc"
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(toolchain, "nvcc_path", lambda: nvcc)
    for failing, expected in ((kernel, f"{kernel} does not compile: {kernel}(64): error: Shap is not a template"),
                              (tmp_path / "proof.cu", f"the proof did not compile: {tmp_path / 'proof.cu'}(64): error:"
                                                      " Shap is not a template")):
        nvcc.write_text(f'#!/bin/sh\necho "{failing}(64): error: Shap is not a template" >&2\nexit 1\n')
        nvcc.chmod(0o755)
        with pytest.raises(FailuresFound) as failed:
            host_proof.host_binary(tmp_path / "cache" / "proof", "proof", ["proof.cu"], "the proof", kernel)
        assert str(failed.value) == expected
        assert failed.value.exit_code == ExitCode.FAILURES


def test_the_proofs_cache_key_follows_a_header_beside_the_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key hashed the kernel and the API header alone: an edit to a header of the kernel's own reused the
    proof built from the old one."""
    monkeypatch.setattr(toolchain, "nvcc_version", lambda: "12.9")
    monkeypatch.setattr(host_proof, "machine_cutlass_key", lambda: "cutlass 4.2")
    kernel = tmp_path / "mine" / "mine.cu"
    kernel.parent.mkdir()
    kernel.write_text('#include "mine_configs.h"\n')
    header = kernel.parent / "mine_configs.h"
    header.write_text("constexpr int kNumStages = 4;\n")
    before = host_proof._key(kernel)
    header.write_text("constexpr int kNumStages = 6;\n")
    assert host_proof._key(kernel) != before


@pytest.mark.parametrize("line", [
    "{kernel}(24): error: identifier \"x\" is undefined",
    "{kernel}(24): catastrophic error: cannot open source file \"mine.h\"",
    "{kernel}:24:10: fatal error: ../common/nvfp4_gemm_api.h: No such file or directory",
    "{kernel}:30:5: error: x was not declared in this scope",
])
def test_an_error_in_the_kernel_names_the_kernel_in_either_compilers_form(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str) -> None:
    """gcc's `path:line:col: fatal error:` (the preprocessor, the host compiler) was blamed on the proof."""
    kernel = tmp_path / "mine" / "mine.cu"
    kernel.parent.mkdir()
    kernel.write_text("")
    error = line.format(kernel=kernel)
    nvcc = tmp_path / "nvcc"
    nvcc.write_text(f"#!/bin/sh\necho 'In file included from <command-line>:'\necho '{error}' >&2\nexit 1\n")
    nvcc.chmod(0o755)
    monkeypatch.setattr(toolchain, "nvcc_path", lambda: nvcc)
    with pytest.raises(FailuresFound) as failed:
        host_proof.host_binary(tmp_path / "cache" / "proof", "proof", ["proof.cu"], "the proof", kernel)
    assert str(failed.value) == f"{kernel} does not compile: {error}"
    assert not host_proof._in_folder_of(error.replace(str(kernel), str(tmp_path / "proof.cu")), kernel)


def _cutlass_or_none() -> list[Path] | None:
    try:
        toolchain.nvcc_path()
        return toolchain.cutlass_include_dirs()
    except UsageError:
        return None


@pytest.mark.skipif(_cutlass_or_none() is None, reason="needs nvcc and CUTLASS's headers")
def test_the_proof_preprocesses_a_copy_of_the_shipped_kernel_alone_in_its_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The proof was compiled without kernels/common on the include path: the kernel's
    `#include "../common/nvfp4_gemm_api.h"` was found only beside the shipped tree. nvcc -E, the proof's
    own arguments: the preprocessor alone, seconds."""
    from nvfp4ctl.project import shipped

    kernel = tmp_path / "alone" / "mine.cu"
    kernel.parent.mkdir()
    kernel.write_bytes(shipped("kernels/sm100/nvfp4_gemm_sm100.cu").read_bytes())
    monkeypatch.chdir(tmp_path)  # no kernels/ of the user's here: the shipped common headers serve
    done = host_proof._run([str(toolchain.nvcc_path()), "-E", *host_proof.proof_compile_args(kernel), "-o", str(tmp_path / "proof.ii")], 300.0)
    assert done.returncode == 0, done.stdout[-2000:]


def test_the_proofs_include_folders_are_the_builds_without_the_kernels_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The proof added -I<kernel folder>, which the build does not: it found an `#include <x.cuh>` beside the
    kernel that the build cannot, and proved a kernel that does not build. Its key follows the folders too, so
    a proof built with that -I is not taken for one built without it."""
    from nvfp4ctl.build.sources import header_search

    kernel = tmp_path / "mine" / "k.cu"
    kernel.parent.mkdir()
    kernel.write_text('#include "nvfp4_gemm_api.h"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(toolchain, "cutlass_include_dirs", lambda: [tmp_path / "cutlass" / "include"])
    folders = [arg[2:] for arg in host_proof.proof_compile_args(kernel) if arg.startswith("-I")]
    assert folders == [str(path) for path in (*header_search(kernel), tmp_path / "cutlass" / "include")]
    assert str(kernel.parent) not in folders
    monkeypatch.setattr(toolchain, "nvcc_version", lambda: "13.0")
    monkeypatch.setattr(host_proof, "machine_cutlass_key", lambda: "cutlass 4.2")
    before = host_proof._key(kernel)
    monkeypatch.setattr(toolchain, "cutlass_include_dirs", lambda: [tmp_path / "other" / "include"])
    assert host_proof._key(kernel) != before


def test_the_proofs_cache_key_takes_folders_whose_names_are_not_utf8(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernels/common/ of the user's in a folder named with a byte that is not UTF-8 (u\\xff), or a CUTLASS
    checkout's, crashed `dump --umma` with a traceback (UnicodeEncodeError hashing the folders for the key)."""
    from nvfp4ctl.build.sources import header_search

    user = tmp_path / "u\udcff"
    (user / "kernels" / "common").mkdir(parents=True)
    (user / "kernels" / "common" / "torch_binding.cpp").write_text("// the user's binding\n")
    kernel = user / "kernels" / "k.cu"
    kernel.write_text('#include "nvfp4_gemm_api.h"\n')
    monkeypatch.chdir(user)
    assert user / "kernels" / "common" in header_search(kernel)  # the user's folder is one the key hashes
    monkeypatch.setattr(toolchain, "nvcc_version", lambda: "13.0")
    monkeypatch.setattr(host_proof, "machine_cutlass_key", lambda: [str(tmp_path / "cutlass\udcfe"), "stamp"])
    first = host_proof._key(kernel)
    monkeypatch.setattr(host_proof, "machine_cutlass_key", lambda: [str(tmp_path / "cutlass\udcfd"), "stamp"])
    assert host_proof._key(kernel) != first  # each checkout its own proof


@pytest.mark.skipif(_cutlass_or_none() is None, reason="needs nvcc and CUTLASS's headers")
def test_the_proof_finds_a_quoted_header_beside_the_kernel_and_not_an_angled_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As the build: `#include "x.cuh"` beside the kernel is found, `#include <x.cuh>` is not (nvcc -E, the
    proof's own arguments: the preprocessor alone, seconds)."""
    from nvfp4ctl.project import shipped

    kernel = tmp_path / "alone" / "mine.cu"
    kernel.parent.mkdir()
    (kernel.parent / "beside.cuh").write_text("#pragma once\n")
    code = shipped("kernels/sm100/nvfp4_gemm_sm100.cu").read_text()
    monkeypatch.chdir(tmp_path)

    def preprocessed(include: str) -> host_proof.subprocess.CompletedProcess[str]:
        kernel.write_text(f"{include}\n{code}")
        return host_proof._run([str(toolchain.nvcc_path()), "-E", *host_proof.proof_compile_args(kernel),
                                "-o", str(tmp_path / "proof.ii")], 300.0)

    quoted = preprocessed('#include "beside.cuh"')
    assert quoted.returncode == 0, quoted.stdout[-2000:]
    angled = preprocessed("#include <beside.cuh>")
    assert angled.returncode != 0 and "beside.cuh" in angled.stdout
