"""A CuTe DSL submission whose cute.compile raises is a failed compile: one line with the DSL's first words
(its messages open with a newline), exit 1 as a .cu that does not compile; an error before any compile keeps
"no kernel reached cute.compile" (exit 2). A stand-in cutlass package plays the DSL."""

from __future__ import annotations

import sys
from pathlib import Path

from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.problems import get_problem

# the DSL's compile errors open with a newline, the words on the next line
STAND_IN_CUTE = '''\
def compile(function, *args, **kwargs):
    raise RuntimeError("\\nerror: 'cute.copy' op operand #0 must be a tensor in shared memory\\n  at kernel.py:12")
'''


def _stand_in_dsl(tmp_path: Path, cute_source: str) -> Path:
    site = tmp_path / "site"
    cute = site / "cutlass" / "cute"
    cute.mkdir(parents=True)
    (site / "cutlass" / "__init__.py").write_text("")
    (cute / "__init__.py").write_text(cute_source)
    (cute / "runtime.py").write_text("")
    return site


def _build(tmp_path: Path, body: str, cute_source: str = STAND_IN_CUTE):
    submission = tmp_path / "submission.py"
    submission.write_text("import cutlass.cute as cute\n\n\ndef custom_kernel(data):\n" + body)
    env = {"PYTHONPATH": str(_stand_in_dsl(tmp_path, cute_source)), "COLUMNS": "200",
           "NVFP4CTL_MEMORY": str(tmp_path / "MEMORY.md"), "NVFP4CTL_CACHE": str(tmp_path / "cache")}
    task = get_problem("nvfp4_gemv").task_file
    return CliRunner().invoke(app, ["build", str(submission), "--python", sys.executable, "--task", str(task)], env=env)


def _errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error")]


def test_a_failed_cute_compile_says_its_first_words_and_exits_1(tmp_path: Path) -> None:
    result = _build(tmp_path, "    return cute.compile(custom_kernel, data)\n")
    assert _errors(result.output) == [
        "error: CuTe DSL submission: cute.compile failed on CPU inputs of nvfp4_gemv 128x256: RuntimeError: error:"
        " 'cute.copy' op operand #0 must be a tensor in shared memory"], result.output
    assert result.exit_code == 1, result.output


def test_an_error_before_any_compile_still_says_no_kernel_reached_it(tmp_path: Path) -> None:
    result = _build(tmp_path, "    if data:\n        raise ValueError('\\nunsupported layout\\nmore')\n"
                              "    return cute.compile(custom_kernel, data)\n")
    assert _errors(result.output) == [
        "error: CuTe DSL submission: no kernel reached cute.compile on CPU inputs of nvfp4_gemv 128x256"
        " (ValueError: unsupported layout)"], result.output
    assert result.exit_code == 2, result.output


# the real DSL (nvidia-cutlass-dsl 4.8.1) colours its words for a terminal even when its error is caught
COLOURED_CUTE = '''\
def compile(function, *args, **kwargs):
    raise RuntimeError("\\n\\x1b[91m\\x1b[1merror[INTERNAL]:\\x1b[0m The compiler could not build valid IR for this code.")
'''


def test_a_failed_cute_compile_says_its_words_without_their_terminal_colours(tmp_path: Path) -> None:
    result = _build(tmp_path, "    return cute.compile(custom_kernel, data)\n", COLOURED_CUTE)
    assert _errors(result.output) == [
        "error: CuTe DSL submission: cute.compile failed on CPU inputs of nvfp4_gemv 128x256: RuntimeError:"
        " error[INTERNAL]: The compiler could not build valid IR for this code."], result.output
    assert "\x1b" not in result.output
