"""`nvfp4ctl export` on the fixture kernels: a valid single-file submission, nothing forbidden in it."""

from __future__ import annotations

import ast
import py_compile
import re
import stat
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from models_common import kernel_beside_a_models_common
from nvfp4ctl.build import build_kernel, flags, sources, toolchain
from nvfp4ctl.build.resources import dump_sass, saved_sass
from nvfp4ctl.cli import app
from nvfp4ctl.errors import UsageError
from nvfp4ctl.export import EXPORT_MARK, export_submission, inline_local_includes, render

FIXTURES = Path(__file__).parents[1] / "build" / "fixtures"
HGMMA_PROBE = FIXTURES / "hgmma_probe.cu"
runner = CliRunner()


@pytest.fixture()
def exported(tmp_path: Path) -> Path:
    output = tmp_path / "submission.py"
    export_submission(HGMMA_PROBE, output)
    return output


def _strings(path: Path) -> dict[str, object]:
    tree = ast.parse(path.read_text())
    return {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id.isupper()
    }


def test_the_submission_is_valid_python_with_custom_kernel(exported: Path) -> None:
    py_compile.compile(str(exported), doraise=True)
    tree = ast.parse(exported.read_text())
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert "custom_kernel" in functions
    body = ast.unparse(functions["custom_kernel"])
    assert "data[4], data[5]" in body and "data[2]" not in body and "data[3]" not in body


def test_nothing_forbidden_and_the_source_is_embedded_once(exported: Path) -> None:
    text = exported.read_text()
    assert "stream" not in text.lower()
    assert "graph" not in text.lower()
    kernel_body = HGMMA_PROBE.read_text().split("#include \"nvfp4_gemm_api.h\"")[1]
    assert text.count(kernel_body.strip()) == 1
    strings = _strings(exported)
    assert strings["CUDA_FLAGS"] == flags.cuda_flags("sm_90a")
    # torch appends the standard its headers need (C++20 from 2.14 on) only where no flag names one
    assert not any(flag.startswith(("-std", "--std")) for flag in strings["CUDA_FLAGS"])  # type: ignore[union-attr]
    assert strings["CPP_FLAGS"] == list(flags.BINDING_CFLAGS) == ["-O1"]  # the binding is not built at -O0
    assert '#include "nvfp4_gemm_api.h"' not in strings["CUDA_SOURCE"]  # type: ignore[operator]
    assert "struct Nvfp4GemmArgs" in strings["CUDA_SOURCE"] and "struct Nvfp4GemmArgs" in strings["CPP_SOURCE"]  # type: ignore[operator]
    assert "PYBIND11_MODULE" in strings["CPP_SOURCE"]  # type: ignore[operator]


def test_the_submission_passes_lint(exported: Path) -> None:
    result = runner.invoke(app, ["lint", str(exported)])
    assert result.exit_code == 0, result.output


def test_a_forbidden_word_in_any_embedded_file_refuses_the_export(tmp_path: Path) -> None:
    kernel = tmp_path / "sm90" / "k.cu"
    kernel.parent.mkdir()
    kernel.write_text(HGMMA_PROBE.read_text().replace("// Test fixture", "// #include <iostream>\n// Test fixture"))
    output = tmp_path / "submission.py"
    result = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", str(output)])
    assert result.exit_code == 2
    assert f'{kernel}:1: contains the word "stream"' in result.output
    assert not output.exists()


def test_a_kernel_whose_file_name_holds_the_forbidden_word_is_exported_without_its_name(tmp_path: Path) -> None:
    """A Stream-K kernel (nvfp4_gemm_streamk.cu) could not be exported: its name went into the docstring, and
    the generated text was refused as one holding "stream". The kernel's hash still says which file it was."""
    kernel = tmp_path / "sm90" / "nvfp4_gemm_StreamK.cu"
    kernel.parent.mkdir()
    kernel.write_text(HGMMA_PROBE.read_text())
    output = tmp_path / "submission.py"
    result = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", str(output)])
    assert result.exit_code == 0, result.output
    text = output.read_text()
    assert "stream" not in text.lower()
    assert text.startswith('"""GPU MODE nvfp4_gemm submission: a kernel for sm_90a (its file name, which holds a word'
                           " the leaderboard refuses, left out), exported by `nvfp4ctl export` (kernel hash ")
    assert runner.invoke(app, ["lint", str(output)]).exit_code == 0


@pytest.mark.parametrize(("name", "read"), [("probe\udcff.cu", "probe\\xff.cu"), ("a\\b.cu", "a\\b.cu")])
def test_a_kernels_file_name_reads_in_the_docstring_as_messages_show_it(tmp_path: Path, name: str, read: str) -> None:
    """A name holding a byte that is not UTF-8 (probe\\xff.cu, Python's probe\\udcff.cu) crashed the export with
    a traceback (UnicodeEncodeError writing the file); one holding a backslash put an escape into the docstring."""
    kernel = tmp_path / "sm90" / name
    kernel.parent.mkdir()
    kernel.write_text(HGMMA_PROBE.read_text())
    output = tmp_path / "submission.py"
    result = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", str(output)])
    assert result.exit_code == 0, result.output
    docstring = ast.get_docstring(ast.parse(output.read_text(encoding="utf-8")))
    assert docstring is not None and docstring.startswith(f"GPU MODE nvfp4_gemm submission: {read} for sm_90a,")
    assert runner.invoke(app, ["lint", str(output)]).exit_code == 0


def test_the_forbidden_word_in_a_kernel_is_refused_naming_each_line(tmp_path: Path) -> None:
    kernel = tmp_path / "sm90" / "k.cu"
    kernel.parent.mkdir()
    lines = HGMMA_PROBE.read_text().splitlines(keepends=True)
    lines[2:2] = ["// one stream per call\n"]
    lines[5:5] = ["// STREAM-K tiles: upstream of the epilogue\n"]
    kernel.write_text("".join(lines))
    output = tmp_path / "submission.py"
    result = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", str(output)])
    assert result.exit_code == 2 and not output.exists()
    assert f'{kernel}:3: contains the word "stream" 3 times (lines 3 and 6); the leaderboard' in " ".join(result.output.split())


def test_the_default_kernel_must_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "kernels").mkdir()  # the user's kernels/ without a B200 kernel
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["export", "-o", str(tmp_path / "s.py")])
    assert result.exit_code == 2 and "pass --kernel" in result.output


def test_outside_a_kernels_folder_export_asks_which_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["export", "-o", str(tmp_path / "s.py")])
    assert result.exit_code == 2 and "--kernel default" in result.output and not (tmp_path / "s.py").exists()


def test_headers_are_inlined_once_per_translation_unit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "a.h").write_text('#pragma once\n#include "b.h"\nint a;\n')
    (tmp_path / "common" / "b.h").write_text("#pragma once\nint b;\n")
    (tmp_path / "common" / "torch_binding.cpp").write_text("")  # what makes common/ an override of nvfp4ctl's
    kernel = tmp_path / "k.cu"
    kernel.write_text('#include "../common/a.h"\n#include "b.h"\n#include <cute/tensor.hpp>\n')
    monkeypatch.setattr(sources, "kernels_dir", lambda: tmp_path)
    text, used = inline_local_includes(kernel)
    assert [p.name for p in used] == ["a.h", "b.h"]
    assert text.count("int b;") == 1 and "#pragma once" not in text and "#include <cute/tensor.hpp>" in text


def test_a_header_of_a_kernels_common_that_is_no_override_is_inlined(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A model's kernels/common/rope.cuh (no binding there, so nvfp4ctl's own kernels/common/ is used): export
    said '#include "rope.cuh" not found' and wrote nothing. Now inlined, after nvfp4ctl's headers."""
    kernel, common = kernel_beside_a_models_common(tmp_path, "nvfp4_gemv_api.h", "#pragma once\nint rope;\n")
    monkeypatch.chdir(tmp_path)
    text, used = inline_local_includes(kernel)
    assert [p.name for p in used] == ["nvfp4_gemv_api.h", "rope.cuh"] and used[1] == (common / "rope.cuh").resolve()
    assert "int rope;" in text and '#include "rope.cuh"' not in text
    submission = render(sources.build_inputs(kernel), "sm_90a")
    assert "int rope;" in submission.text and (common / "rope.cuh").resolve() in submission.embedded


def _instructions(sass: str) -> list[str]:
    """SASS instructions without addresses and encodings."""
    return [line.split("*/", 1)[1].split("/*")[0].strip() for line in sass.splitlines() if re.match(r"\s+/\*[0-9a-f]{4,}\*/", line)]


def test_the_exported_cuda_source_compiles_to_the_builds_sass(exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What load_inline compiles on the server is what `nvfp4ctl build` compiled and checked. (A CPU
    torch cannot link load_inline's module, so the CUDA half is compiled with nvcc and load_inline's
    flags; the GPU tests run the whole submission.)"""
    from torch.utils.cpp_extension import COMMON_NVCC_FLAGS

    if toolchain.sass_tools() is None:
        pytest.skip("cuobjdump/nvdisasm missing: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm")
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    built = build_kernel(HGMMA_PROBE, "sm_90a")
    strings = _strings(exported)
    source = tmp_path / "cuda.cu"
    source.write_text(strings["CUDA_SOURCE"])  # type: ignore[arg-type]
    command = [str(toolchain.nvcc_path()), *COMMON_NVCC_FLAGS, *strings["CUDA_FLAGS"], "-c", str(source), "-o", str(tmp_path / "cuda.o")]  # type: ignore[misc]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    exported_sass = _instructions(dump_sass(tmp_path / "cuda.o") or "")
    assert exported_sass and exported_sass == _instructions(saved_sass(built.entry) or "")


def test_export_warns_when_the_kernel_never_ran_on_its_arch(tmp_path: Path) -> None:
    kernel = tmp_path / "marked.cu"
    kernel.write_text(HGMMA_PROBE.read_text().replace("\n", "\n// nvfp4ctl: never-run-on sm_90a\n", 1))
    result = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", str(tmp_path / "submission.py")])
    assert result.exit_code == 0, result.output
    assert "never run on sm_90a" in " ".join(result.output.split())
    unmarked = runner.invoke(app, ["export", "--kernel", str(HGMMA_PROBE), "-o", str(tmp_path / "other.py")])
    assert "never run" not in unmarked.output


def test_export_warns_when_the_kernel_defines_no_launch_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no task.yml here: kernels of every problem export (a task's is refused)
    kernel = tmp_path / "no_entry.cu"
    kernel.write_text('// nvfp4ctl: arch=sm_90a\n#include "nvfp4_gemv_api.h"\n__global__ void k(float* p) { p[0] = 1.f; }\n')
    result = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", str(tmp_path / "submission.py")])
    assert result.exit_code == 0, result.output  # a static look may miss a macro-made definition: a warning
    assert ("no definition of nvfp4_gemv_unsupported() or nvfp4_gemv_launch() found in no_entry.cu or its headers"
            in " ".join(result.output.split()))
    defined = runner.invoke(app, ["export", "--kernel", str(HGMMA_PROBE), "-o", str(tmp_path / "other.py")])
    assert "no definition" not in defined.output
    kernel.write_text(kernel.read_text() + "const char* nvfp4_gemv_unsupported(int, int, int) { return nullptr; }\n"
                      "auto nvfp4_gemv_launch(const Nvfp4GemvArgs& args) -> cudaError_t { return cudaSuccess; }\n")
    trailing = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", str(tmp_path / "t.py")])
    assert "no definition" not in trailing.output, trailing.output
    for shipped in sorted((Path(__file__).resolve().parents[2] / "kernels").glob("*/*.cu")):
        assert runner.invoke(app, ["export", "--kernel", str(shipped), "-o", str(tmp_path / "s.py"), "--force"]).output \
            .find("no definition") < 0, shipped


def _b200_results_of_the_shipped_kernels() -> dict[str, str]:
    """docs/sm100_kernel.md's "ran on a B200" cell of each sm_100a kernel its table compares, by the kernel's
    path: the columns in the order the table's header names the kernels ("no" where it never ran)."""
    doc = (Path(__file__).parents[2] / "docs" / "sm100_kernel.md").read_text(encoding="utf-8")
    rows = [line for line in doc.splitlines() if line.startswith("| ")]
    kernels = [f"kernels/sm100/{name}" for name in re.findall(r"`(\w+\.cu)`", rows[0])]
    [row] = [line for line in rows if line.startswith("| ran on a B200 |")]
    cells = [cell.split("(")[0].strip().strip("*") for cell in row.strip().strip("|").split("|")[1:]]
    assert len(cells) == len(kernels) == 2, (kernels, cells)
    return dict(zip(kernels, cells))


def test_a_shipped_kernel_the_docs_say_never_ran_carries_its_never_run_mark() -> None:
    """export warns while a kernel has never run on its GPU: the CUTLASS fallback, "not run" in the proof table
    (now docs/sm100_kernel.md's) as the tcgen05 kernel is, had no mark, and its export said nothing. Remove a
    kernel's mark, and write its result in the table, once a B200 ran it."""
    from nvfp4ctl.export import never_run_on

    root = Path(__file__).parents[2]
    for kernel, result in _b200_results_of_the_shipped_kernels().items():
        marked = never_run_on(root / kernel)
        assert marked == (("sm_100a",) if result == "no" else ()), (kernel, result, marked)


def test_exporting_the_cutlass_fallback_warns_it_never_ran_on_a_b200(tmp_path: Path) -> None:
    from nvfp4ctl.project import kernels_dir

    kernel = kernels_dir() / "sm100" / "nvfp4_gemm_sm100.cu"
    result = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", str(tmp_path / "x.py")])
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said
    assert "nvfp4_gemm_sm100.cu has never run on sm_100a (its `nvfp4ctl: never-run-on` mark)" in said, said


def _export(*args: str):
    return runner.invoke(app, ["export", "--kernel", str(HGMMA_PROBE), *args])


def test_a_file_an_export_did_not_write_is_never_replaced_without_force(tmp_path: Path) -> None:
    mine = tmp_path / "submission.py"
    mine.write_text("def custom_kernel(data):\n    return data[6]\n")
    result = _export("-o", str(mine))
    assert result.exit_code == 2 and "is not an earlier export: nothing was written" in " ".join(result.output.split())
    assert mine.read_text().startswith("def custom_kernel")
    assert _export("-o", str(mine), "--force").exit_code == 0
    assert "exported by `nvfp4ctl export`" in mine.read_text().splitlines()[0]
    assert _export("-o", str(mine)).exit_code == 0  # an earlier export is replaced freely


def test_a_read_only_output_is_never_replaced_not_even_with_force(tmp_path: Path) -> None:
    """A chmod a-w submission.py was replaced anyway (the new copy needs only the folder's permission)."""
    output = tmp_path / "submission.py"
    assert _export("-o", str(output)).exit_code == 0  # an unedited export: replaced freely while writable
    before = output.read_text()
    output.chmod(0o444)
    for extra in ((), ("--force",)):
        result = _export("-o", str(output), *extra)
        assert result.exit_code == 2, result.output
        flat = " ".join(result.output.split())
        assert f"error: {output} is read-only: nothing was written (chmod u+w it, or -o another path)" in flat
        assert result.exception is None or isinstance(result.exception, SystemExit)
    assert output.read_text() == before and stat.S_IMODE(output.stat().st_mode) == 0o444
    assert [p.name for p in tmp_path.iterdir()] == ["submission.py"]


@pytest.mark.parametrize("target, message", [(".", "a folder; name the file to write"),
                                             ("afile/x.py", "afile: not a folder, so -o")])
def test_an_output_that_cannot_be_written_is_one_line(tmp_path: Path, target: str, message: str) -> None:
    (tmp_path / "afile").write_text("")
    result = _export("-o", str(tmp_path / target))
    assert result.exit_code == 2 and message in " ".join(result.output.split())
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_for_a_problem_without_our_b200_kernel_export_does_not_suggest_it(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    assert runner.invoke(app, ["init", "--problem", "nvfp4_dual_gemm", str(tmp_path)]).exit_code == 0
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["export", "-o", str(tmp_path / "s.py")])
    assert result.exit_code == 2 and "pass --kernel PATH" in result.output and "B200 kernel" not in result.output
    # what --kernel default does for this problem, the plain-torch submission, is all it is offered for
    assert "--kernel default for nvfp4ctl's exact plain-torch submission" in " ".join(result.output.split())


def test_an_edited_export_is_kept_an_empty_file_is_replaced_a_link_is_written_through(tmp_path: Path) -> None:
    output = tmp_path / "submission.py"
    assert _export("-o", str(output)).exit_code == 0
    assert re.search(r"Body sha256 [0-9a-f]{16}\.$", output.read_text().splitlines()[0])
    output.write_text(output.read_text() + "# tuned by hand\n")
    result = _export("-o", str(output))
    assert result.exit_code == 2 and "is an earlier export edited since" in " ".join(result.output.split())
    assert output.read_text().endswith("# tuned by hand\n")
    empty = tmp_path / "empty.py"
    empty.write_text("")
    assert _export("-o", str(empty)).exit_code == 0 and EXPORT_MARK in empty.read_text()
    link = tmp_path / "link.py"
    link.symlink_to(empty)
    assert _export("-o", str(link)).exit_code == 0 and link.is_symlink()
    assert not list(tmp_path.glob(".*tmp"))  # no staging file left behind


@pytest.mark.parametrize("preamble", ["#!/usr/bin/env python3\n", "\ufeff#!/usr/bin/env python3\n"])
def test_an_export_with_a_shebang_line_above_its_docstring_is_still_an_earlier_export(tmp_path: Path,
                                                                                      preamble: str) -> None:
    """lint reads such a file as an export (past_preamble); export refused to replace it as "not an earlier export".
    The new export keeps the user's `#!` line, where it dropped it, and the byte order mark before it, where it
    dropped that."""
    output = tmp_path / "submission.py"
    assert _export("-o", str(output)).exit_code == 0
    exported_text = output.read_text(encoding="utf-8")
    output.write_text(preamble + exported_text, encoding="utf-8")
    result = _export("-o", str(output))
    assert result.exit_code == 0, result.output
    assert output.read_text(encoding="utf-8") == preamble + exported_text
    assert _export("-o", str(output)).exit_code == 0  # kept again, once
    assert output.read_text(encoding="utf-8") == preamble + exported_text
    output.write_text(preamble + exported_text + "# tuned by hand\n", encoding="utf-8")
    result = _export("-o", str(output))
    assert result.exit_code == 2 and "is an earlier export edited since" in " ".join(result.output.split())
    assert output.read_text(encoding="utf-8").endswith("# tuned by hand\n")
    assert _export("-o", str(output), "--force").exit_code == 0  # still an export of theirs: its line stays
    assert output.read_text(encoding="utf-8") == preamble + exported_text


@pytest.mark.parametrize("above, kept", [
    ("\ufeff#!/usr/bin/env python3\n", "\ufeff#!/usr/bin/env python3\n"),
    # a mark below the `#!` line is inside the Python source, which Python refuses: the export's own text there
    ("#!/usr/bin/env python3\n\ufeff", "#!/usr/bin/env python3\n"),
])
def test_a_byte_order_mark_stays_where_the_user_had_it_only_before_the_kept_shebang_line(
        tmp_path: Path, above: str, kept: str) -> None:
    """The mark before the `#!` line was dropped (the file's first bytes changed); the file's bytes are kept as they
    were: the mark first, then the line, and never the mark moved below it."""
    output = tmp_path / "submission.py"
    assert _export("-o", str(output)).exit_code == 0
    exported = output.read_bytes()
    output.write_bytes(above.encode() + exported)
    result = _export("-o", str(output))
    assert result.exit_code == 0, result.output
    assert output.read_bytes() == kept.encode() + exported
    assert output.read_bytes().startswith(b"\xef\xbb\xbf#!" if above.startswith("\ufeff") else b"#!/usr/bin/env python3\n\"")
    output.write_bytes(b"\xef\xbb\xbf")  # a file of a mark alone holds nothing to lose: replaced, no --force
    assert _export("-o", str(output)).exit_code == 0 and output.read_bytes() == exported


def test_the_size_said_is_the_file_written_with_the_kept_shebang_line(tmp_path: Path) -> None:
    """The "wrote … KiB" size was the export's own text's: a `#!` line kept above it was left out. It is KiB,
    as build and tune write sizes, where it said "65 kB" for 66,963 bytes (1024-byte units named kB)."""
    output = tmp_path / "submission.py"
    assert _export("-o", str(output)).exit_code == 0
    output.write_text("\ufeff#!/" + "x" * 4000 + "\n" + output.read_text(encoding="utf-8"), encoding="utf-8")
    result = _export("-o", str(output))
    assert result.exit_code == 0, result.output
    said = re.search(r"wrote \S+ \((\d+\.\d) KiB\)", " ".join(result.output.split()))
    assert said and said.group(1) == f"{output.stat().st_size / 1024:.1f}", (result.output, output.stat().st_size)


@pytest.mark.parametrize("force", [(), ("--force",)])
def test_a_shebang_line_holding_the_forbidden_word_is_refused_and_nothing_written(tmp_path: Path,
                                                                                 force: tuple[str, ...]) -> None:
    """The kept `#!` line went above the new export after its "stream" checks: the file written was one the
    leaderboard rejects (lint: an error at 1:14)."""
    output = tmp_path / "submission.py"
    assert _export("-o", str(output)).exit_code == 0
    before = "#!/home/me/upstream/venv/bin/python\n" + output.read_text(encoding="utf-8")
    output.write_text(before, encoding="utf-8")
    result = _export("-o", str(output), *force)
    assert result.exit_code == 2, result.output
    assert " ".join(result.output.split()) == (
        f'error: {output}:1: its #! line (#!/home/me/upstream/venv/bin/python), which export keeps above the new'
        ' export, contains the word "stream"; the leaderboard rejects any submission containing it (any case),'
        ' so nothing was written (change or remove the line, or -o another path)')
    assert output.read_text(encoding="utf-8") == before


def test_a_plain_torch_export_refuses_a_shebang_line_holding_the_forbidden_word(tmp_path: Path) -> None:
    from nvfp4ctl.export import export_plain_torch

    starter = Path(__file__).parents[2] / "kernels" / "torch_dequant" / "nvfp4_dual_gemm_submission.py"
    output = tmp_path / "dual.py"
    before = "#!/opt/STREAMS/bin/python3\n" + export_plain_torch(starter, output, "nvfp4_dual_gemm")
    output.write_text(before, encoding="utf-8")
    with pytest.raises(UsageError, match=r"dual.py:1: its #! line \(#!/opt/STREAMS/bin/python3\)"):
        export_plain_torch(starter, output, "nvfp4_dual_gemm")
    assert output.read_text(encoding="utf-8") == before


def test_a_users_own_file_with_a_shebang_line_is_replaced_whole_with_force(tmp_path: Path) -> None:
    output = tmp_path / "submission.py"
    output.write_text("#!/usr/bin/env python3\ndef custom_kernel(data):\n    return data[6]\n", encoding="utf-8")
    assert _export("-o", str(output), "--force").exit_code == 0
    assert output.read_text(encoding="utf-8").startswith('"""GPU MODE ')


def test_a_replaced_export_keeps_its_mode_and_a_symlink_loop_is_one_line(tmp_path: Path) -> None:
    output = tmp_path / "submission.py"
    assert _export("-o", str(output)).exit_code == 0
    output.chmod(0o600)
    assert _export("-o", str(output)).exit_code == 0 and (output.stat().st_mode & 0o777) == 0o600
    loop = tmp_path / "loop.py"
    loop.symlink_to(loop)
    result = _export("-o", str(loop))
    assert result.exit_code == 2 and "cannot write" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_an_angle_bracket_include_of_a_local_header_is_inlined_as_the_build_finds_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`#include <rope.cuh>` of a header in kernels/common/ (an -I folder of the build) was kept as it is, so the
    submission failed to build on the leaderboard, which has no such header; CUDA and CUTLASS headers stay."""
    kernel, common = kernel_beside_a_models_common(tmp_path, "nvfp4_gemv_api.h", "#pragma once\nint rope;\n")
    kernel.write_text(kernel.read_text().replace('"rope.cuh"', "<rope.cuh>") + "#include <cuda_fp16.h>\n"
                      "#include <cute/tensor.hpp>\n#include <rope.cuh>\n")
    monkeypatch.chdir(tmp_path)
    text, used = inline_local_includes(kernel)
    assert [p.name for p in used] == ["nvfp4_gemv_api.h", "rope.cuh"] and used[1] == (common / "rope.cuh").resolve()
    assert text.count("int rope;") == 1 and "// (already inlined above) #include <rope.cuh>" in text
    assert "#include <cuda_fp16.h>" in text and "#include <cute/tensor.hpp>" in text
    submission = render(sources.build_inputs(kernel), "sm_90a")
    assert "int rope;" in submission.text and (common / "rope.cuh").resolve() in submission.embedded


def test_a_byte_order_mark_at_the_start_of_an_inlined_file_is_left_out(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """nvcc skips a UTF-8 BOM at a file's start, so the kernel built; inlined, a header's BOM (and the kernel's,
    after load_inline's own includes) sat mid-source, where the leaderboard's nvcc failed on `\\U0000feff`.
    A BOM elsewhere in a file is its text, kept."""
    kernel, common = kernel_beside_a_models_common(tmp_path, "nvfp4_gemm_api.h", "\ufeff#pragma once\nint rope;\n")
    kernel.write_text("\ufeff" + HGMMA_PROBE.read_text() + '#include "rope.cuh"\nconst char* kept = "\ufeff";\n')
    monkeypatch.chdir(tmp_path)
    text, used = inline_local_includes(kernel)
    assert used[-1] == (common / "rope.cuh").resolve()
    assert text.startswith(HGMMA_PROBE.read_text()[:20]) and "----\nint rope;\n// ---- end of rope.cuh" in text
    assert text.count("\ufeff") == 1 and 'kept = "\ufeff"' in text
    submission = render(sources.build_inputs(kernel), "sm_90a")
    assert submission.text.count("\ufeff") == 1


def _refused_export_including(folder: Path, include: str) -> tuple[Path, int, Path, str]:
    """(kernel, the include's line, the output not written, export's output flattened) for the HGMMA probe with
    `include` added in `folder`, whose export must be refused (exit 2)."""
    kernel = folder / "k.cu"
    kernel.write_text(HGMMA_PROBE.read_text().replace('#include "nvfp4_gemm_api.h"',
                                                      f'#include "nvfp4_gemm_api.h"\n{include}'))
    line = kernel.read_text().splitlines().index(include) + 1
    output = folder / "submission.py"
    result = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", str(output)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)  # a refusal, no traceback
    return kernel, line, output, " ".join(result.output.split())


def test_an_angle_bracket_include_of_a_header_beside_the_kernel_alone_stops_the_export(tmp_path: Path) -> None:
    """The compiler looks beside the including file only for a quoted include: the build fails on it as the
    leaderboard would, so export says how to write it, where it wrote a submission that could not build."""
    (tmp_path / "my_helpers.cuh").write_text("#pragma once\nint helper;\n")
    kernel, line, output, flat = _refused_export_including(tmp_path, "#include <my_helpers.cuh>")
    assert (f"{kernel}:{line}: #include <my_helpers.cuh> names {tmp_path / 'my_helpers.cuh'}, beside the file, where"
            ' the compiler looks only for #include "my_helpers.cuh"') in flat
    assert "nothing was written" in flat and not output.exists()


def test_a_quoted_include_that_is_nowhere_stops_the_export(tmp_path: Path) -> None:
    kernel, line, output, flat = _refused_export_including(tmp_path, '#include "my_tiles.cuh"')
    assert (f'{kernel}:{line}: #include "my_tiles.cuh" not found where the build looks for it: not at'
            f" {tmp_path / 'my_tiles.cuh'} (from the file's folder), nor in the build's -I folder ") in flat
    assert "nothing was written" in flat and not output.exists()
    assert flat.endswith("(fix the path, or put the header where the build looks; a header of the leaderboard"
                         ' machine\'s is included as <my_tiles.cuh>)'), flat


def test_a_header_of_the_users_out_of_reach_after_a_move_names_where_it_was_looked_for(tmp_path: Path,
                                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """After `git mv gemm problems/gemm`, `#include "../../../common/nv_util.cuh"` reaches no file: export said to
    include "a header the server has as <...>", wrong advice for a header of the user's, and named folders, not
    the path the include leads to from the file."""
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "nv_util.cuh").write_text("#pragma once\n")
    kernel = tmp_path / "problems" / "gemm" / "kernels" / "sm100" / "k.cu"
    kernel.parent.mkdir(parents=True)
    kernel.write_text('#include "nvfp4_gemm_api.h"\n#include "../../../common/nv_util.cuh"\n')
    monkeypatch.chdir(kernel.parent.parent.parent)
    result = runner.invoke(app, ["export", "--kernel", "kernels/sm100/k.cu", "-o", "s.py"])
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert (f'kernels/sm100/k.cu:2: #include "../../../common/nv_util.cuh" not found where the build looks for it:'
            f" not at {tmp_path / 'problems' / 'common' / 'nv_util.cuh'} (from the file's folder), nor in") in flat, flat
    assert flat.endswith("nothing was written (fix the path, or put the header where the build looks)"), flat
    assert "<" not in flat and not (kernel.parents[2] / "s.py").exists()


def test_a_missing_include_inside_an_inlined_header_is_named_at_the_header(tmp_path: Path) -> None:
    (tmp_path / "tiles.cuh").write_text('#pragma once\n#include "gone.cuh"\n')
    kernel = tmp_path / "k.cu"
    kernel.write_text('#include "tiles.cuh"\n')
    with pytest.raises(UsageError, match=rf'{re.escape(str(tmp_path / "tiles.cuh"))}:2: #include "gone.cuh" not found'):
        inline_local_includes(kernel)


@pytest.mark.parametrize("name", ["cute/tensor.hpp", "cutlass/gemm/collective/collective_builder.hpp",
                                  "cuda_fp16.h", "cuda_fp4.h", "cuda/barrier", "cuda_runtime.h", "mma.h",
                                  "cooperative_groups/reduce.h", "sm_90_rt.h", "vector_types.h", "stdint.h",
                                  "cstdint", "torch/extension.h"])
def test_headers_the_leaderboard_has_stay_includes(tmp_path: Path, name: str) -> None:
    kernel = tmp_path / "k.cu"
    kernel.write_text(f'#include "{name}"\nint x;\n')
    text, used = inline_local_includes(kernel)
    assert f'#include "{name}"' in text and used == []


@pytest.mark.parametrize("where", ["kernel", "header"])
def test_a_file_that_is_not_utf8_is_one_line_naming_it(tmp_path: Path, where: str) -> None:
    latin1 = "// 1.5 \u00b5s per call\n".encode("latin-1")  # a Latin-1 µ in a comment
    kernel = tmp_path / "k.cu"
    source = HGMMA_PROBE.read_bytes()
    if where == "kernel":
        kernel.write_bytes(source + latin1)
        bad, line = kernel, source.count(b"\n") + 1
    else:
        bad, line = tmp_path / "notes.cuh", 2
        bad.write_bytes(b"#pragma once\n" + latin1)
        kernel.write_bytes(source + b'#include "notes.cuh"\n')
    output = tmp_path / "submission.py"
    result = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", str(output)])
    assert result.exit_code == 2, result.output
    assert f"{bad}:{line}: not UTF-8 (byte 0xb5)" in " ".join(result.output.split())
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not output.exists()


_SKIPPED_INCLUDES = ('/* #include "gone_block.cuh" */\n'
                     '// #include "gone_line.cuh"\n'
                     'int x;  // a comment that goes on \\\n#include "gone_continued.cuh"\n'
                     '#if 0\n#include "old.cuh"\n#ifdef FOO\n#include "gone_nested.cuh"\n#endif\n'
                     '#elif defined(BAR)\n#include "bar.cuh"\n#else\n#include "new.cuh"\n#endif\n')


def test_includes_the_preprocessor_skips_are_neither_refused_nor_inlined(tmp_path: Path) -> None:
    for name in ("old.cuh", "bar.cuh", "new.cuh"):
        (tmp_path / name).write_text(f"#pragma once\nint {name[:-4]}_tiles;\n")
    kernel = tmp_path / "k.cu"
    kernel.write_text(_SKIPPED_INCLUDES)
    text, used = inline_local_includes(kernel)
    assert [path.name for path in used] == ["bar.cuh", "new.cuh"]
    assert "old_tiles" not in text and "bar_tiles" in text and "new_tiles" in text
    # the user's text stays as written: the skipped includes, comments and #if 0 body included
    assert text.startswith(_SKIPPED_INCLUDES.split('#include "bar.cuh"')[0])
    assert '#include "old.cuh"\n' in text and '#include "new.cuh"' not in text


def test_an_include_under_a_macro_is_still_followed(tmp_path: Path) -> None:
    kernel = tmp_path / "k.cu"
    kernel.write_text('#if 0\n#else\n#ifdef USE_TILES\n#include "gone.cuh"\n#endif\n#endif\n')
    with pytest.raises(UsageError, match=rf'{re.escape(str(kernel))}:4: #include "gone.cuh" not found'):
        inline_local_includes(kernel)


def test_a_comment_after_an_inlined_include_stays_a_comment(tmp_path: Path) -> None:
    (tmp_path / "tiles.cuh").write_text("#pragma once\nint tiles;\n")
    kernel = tmp_path / "k.cu"
    kernel.write_text('#include "tiles.cuh" /* the tile\n   shapes */\n#include "tiles.cuh" // again\nint x;\n')
    text, _ = inline_local_includes(kernel)
    assert text == ("// ---- inlined tiles.cuh ----\nint tiles;\n// ---- end of tiles.cuh ----\n /* the tile\n"
                    '   shapes */\n// (already inlined above) #include "tiles.cuh"\n // again\nint x;\n')


def test_a_kernel_with_no_build_in_the_cache_gets_a_hint_to_build_it(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """export does not compile (a minute or more); a kernel with no cache entry as it is now has never
    built here or failed to: a hint says so and names `build`. Files and the nvcc banner only."""
    from nvfp4ctl.build import builder, cache
    from nvfp4ctl.build.report import BuildReport, TensorOpCheck

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(toolchain, "nvcc_version", lambda: "Cuda compilation tools, release 13.0")
    monkeypatch.setattr(builder, "_compile_and_inspect", lambda *args: pytest.fail("export compiled the kernel"))
    kernel = tmp_path / "mine.cu"
    kernel.write_text(HGMMA_PROBE.read_text())

    def export() -> str:
        result = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", str(tmp_path / "submission.py"), "--force"])
        assert result.exit_code == 0, result.output
        return " ".join(result.output.split())

    hint = (f"hint: {kernel} as it is now has no build for sm_90a in nvfp4ctl's cache (never built here, or its build"
            f" failed): export does not compile it; `nvfp4ctl build --arch sm_90a {kernel}` does and names the first"
            " compiler error")
    assert hint in export()
    entry = cache.entry_dir(kernel, "sm_90a", cache.cache_key(sources.build_inputs(kernel), "sm_90a", builder.build_mode()))
    entry.mkdir(parents=True)
    BuildReport(source=kernel, arch="sm_90a", key=entry.name, entry=entry, module_name=None, functions=(),
                tensor_op=TensorOpCheck(expected="HGMMA", found=(), match=None, checked=True),
                compile_s=1.0).save()  # what a build that succeeded leaves
    assert "hint:" not in export()
    kernel.write_text(kernel.read_text() + "// edited since its build\n")
    assert hint in export()


def test_no_hint_where_nothing_can_be_told_or_for_nvfp4ctls_own_kernels(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(toolchain, "nvcc_version", lambda: "Cuda compilation tools, release 13.0")
    ours = runner.invoke(app, ["export", "--kernel", "default", "-o", str(tmp_path / "ours.py")])
    assert ours.exit_code == 0 and "hint:" not in ours.output, ours.output

    def no_nvcc() -> str:
        raise UsageError("nvcc not found")

    monkeypatch.setattr(toolchain, "nvcc_version", no_nvcc)
    kernel = tmp_path / "mine.cu"
    kernel.write_text(HGMMA_PROBE.read_text())
    result = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", str(tmp_path / "mine.py")])
    assert result.exit_code == 0 and "hint:" not in result.output, result.output


def test_one_test_says_an_exports_first_line_for_export_and_build(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """export's refusal and build's reading of the CUTLASS lookup each wrote the test out themselves."""
    from nvfp4ctl import export
    from nvfp4ctl.build.export_lookup import is_export_lookup
    from nvfp4ctl.project import kernels_dir

    output = tmp_path / "submission.py"
    export_submission(kernels_dir() / "sm100" / "nvfp4_gemm_sm100.cu", output)  # a CUTLASS kernel: the lookup
    text = output.read_text(encoding="utf-8")
    first, body = text.split("\n", 1)
    assert export.export_lines(text) == export.export_lines("\ufeff#!/usr/bin/env python3\n" + text) == (first, body)
    assert export.export_lines(body) is None and export.export_lines("#!/usr/bin/env python3\n") is None
    tree = ast.parse(text)
    [lookup] = [node.value for node in ast.walk(tree) if isinstance(node, ast.keyword) and node.arg == "extra_include_paths"]
    assert is_export_lookup(lookup, tree, text)
    monkeypatch.setattr(export, "export_lines", lambda text: None)  # build asks export's own test
    assert not is_export_lookup(lookup, tree, text)
