"""extra_cuda_cflags given as a list the file changes in place (FLAGS.append(...), FLAGS += [...]) are the
flags torch gets at the call: build follows append, extend and insert in the list's own run of
statements, and says the flags are not static where it cannot follow a change, never building with
the list as first assigned without a word."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build.submission_sources import find_sources
from nvfp4ctl.cli import app

runner = CliRunner()
HEAD = "from torch.utils.cpp_extension import load_inline\nLEVEL = '3'\n"
CALL = ('m = load_inline(name="g", cpp_sources="", extra_cuda_cflags=FLAGS,'
        ' cuda_sources="// nvfp4ctl: no-tensor-op\\n__global__ void k() { asm(\\"wgmma.fence.sync.aligned;\\"); }")\n')
GENCODE = "-gencode=arch=compute_90a,code=sm_90a"


@pytest.mark.parametrize(("changes", "flags"), [
    (f'FLAGS.append("{GENCODE}")', ["-O3", GENCODE]),
    (f'FLAGS += ["{GENCODE}"]', ["-O3", GENCODE]),
    (f'FLAGS.extend(["-Xptxas", "-v"])\nFLAGS.insert(0, "-O" + LEVEL)', ["-O3", "-O3", "-Xptxas", "-v"]),
    (f'FLAGS.append("-DMODE=" + LEVEL)\nFLAGS += ("{GENCODE}",)', ["-O3", "-DMODE=3", GENCODE]),
])
def test_flags_changed_in_place_are_read_as_torch_gets_them(tmp_path: Path, changes: str, flags: list[str]) -> None:
    """FLAGS.append(...) was not read: the build compiled with ["-O3"], for an arch other than the one
    the appended -gencode names, and said nothing."""
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + 'FLAGS = ["-O3"]\n' + changes + "\n" + CALL + 'FLAGS.append("-DLATER")\n')
    sources = find_sources(submission)
    (extension,) = sources.extensions
    assert extension.cuda_flags == flags and not extension.notes
    if GENCODE in flags:
        assert sources.extension_arches(extension, "sm_100a")[0] == ("sm_90a",)


def test_flags_changed_in_place_inside_custom_kernel_are_followed(tmp_path: Path) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + "def custom_kernel(data):\n    FLAGS = ['-O3']\n"
                          f"    FLAGS.append('{GENCODE}')\n    " + CALL)
    (extension,) = find_sources(submission).extensions
    assert extension.cuda_flags == ["-O3", GENCODE] and not extension.notes


@pytest.mark.parametrize("changes", [
    f'if LEVEL:\n    FLAGS.append("{GENCODE}")',  # a branch: whether it runs is not static
    f'def more():\n    FLAGS.append("{GENCODE}")',
    f'ALIAS = FLAGS\nALIAS.append("{GENCODE}")',
    'FLAGS.remove("-O3")',
    'FLAGS[0] = "-O2"',
    'FLAGS.append(pick())',
    'FLAGS.extend("-O2")',  # a str extends by its characters
    f'if LEVEL:\n    FLAGS += ["{GENCODE}"]',  # read as if the branch always ran
    f'ALIAS = FLAGS\nALIAS.append("-DX")\nFLAGS.append("{GENCODE}")',  # only the direct change was read
])
def test_flags_changed_where_build_cannot_follow_are_said_not_static(tmp_path: Path, compiles: list[str],
                                                                      changes: str) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + 'FLAGS = ["-O3"]\n' + changes + "\n" + CALL)
    (extension,) = find_sources(submission).extensions
    assert extension.cuda_flags == []
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_100a"])
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said
    assert "extra_cuda_cflags is a list changed in place where build cannot follow it" in said, said
    assert "built without them" in said, said
    # the flags may name the arch: not said to name none
    assert "no arch is named" not in said and "no arch flag" not in said, said


def test_a_name_changed_in_place_in_another_function_leaves_a_module_level_call_readable(
        tmp_path: Path, compiles: list[str]) -> None:
    """custom_kernel's own `source` and `FLAGS`, changed in place after the module-level call, made the
    module-level ones unreadable: 'cuda_sources `source` is not a static string expression', exit 2."""
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + 'source = "// nvfp4ctl: no-tensor-op\\n__global__ void k() {}"\n'
                          f'FLAGS = ["-O3", "{GENCODE}"]\n'
                          'm = load_inline(name="g", cpp_sources="", cuda_sources=source, extra_cuda_cflags=FLAGS,'
                          ' extra_cflags=FLAGS)\n'
                          "def custom_kernel(data):\n    source = []\n    source.append(data[0])\n"
                          "    FLAGS = []\n    FLAGS.append(data[1])\n    return source\n")
    (extension,) = find_sources(submission).extensions
    assert extension.unreadable is None and "__global__ void k()" in extension.cuda_text
    assert extension.cuda_flags == ["-O3", GENCODE] and extension.cpp_flags == ["-O3", GENCODE]
    assert not extension.notes
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output


def test_flags_changed_at_module_level_after_custom_kernel_reach_its_call(tmp_path: Path) -> None:
    """The module runs before custom_kernel is called: an append written below it was ignored, the flags
    read as ["-O3"], for another arch."""
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + 'FLAGS = ["-O3"]\ndef custom_kernel(data):\n    ' + CALL
                          + f'FLAGS.append("{GENCODE}")\n')
    sources = find_sources(submission)
    (extension,) = sources.extensions
    assert extension.cuda_flags == ["-O3", GENCODE] and not extension.notes
    assert sources.extension_arches(extension, "sm_100a")[0] == ("sm_90a",)


def test_a_change_through_an_alias_makes_the_flags_not_static(tmp_path: Path) -> None:
    """FLAGS.append(...) read through ALIAS = FLAGS was missed: built with ["-O3"] without a word."""
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + f'FLAGS = ["-O3"]\nALIAS = FLAGS\nFLAGS.append("{GENCODE}")\n'
                          + CALL.replace("extra_cuda_cflags=FLAGS", "extra_cuda_cflags=ALIAS"))
    (extension,) = find_sources(submission).extensions
    assert extension.cuda_flags == [] and not extension.cuda_flags_static
    assert any("changed in place where build cannot follow it" in note for note in extension.notes)


def test_a_file_appending_to_its_flags_before_each_of_thousands_of_calls_is_read_in_n_log_n() -> None:
    """Each read of a list changed in place scanned every change of its name in the file: 3,000 calls, each
    after FLAGS = [...] and three appends, took 8 s of CPU to read. A read bisects the changes' lines."""
    import ast
    import time

    from nvfp4ctl.build.static_values import StaticEvaluator
    from nvfp4ctl.build.syntax_index import index_of

    text = "".join(f"FLAGS = ['-O{i % 4}']\nFLAGS.append('-DA{i}')\nFLAGS.append('-DB{i}')\nFLAGS.extend(['-DC{i}'])\n"
                   f"m{i} = load_inline(name='m{i}', extra_cuda_cflags=FLAGS)\n" for i in range(3_000))
    tree = ast.parse(text)
    index = index_of(tree)
    calls = [node.value for node in tree.body if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)]
    began = time.process_time()
    evaluator = StaticEvaluator(index)
    flags = [evaluator.flag_list(call.keywords[-1].value, call.lineno)[0] for call in calls]
    spent = time.process_time() - began
    assert len(flags) == 3_000 and flags[-1] == ["-O3", "-DA2999", "-DB2999", "-DC2999"]
    assert flags[0] == ["-O0", "-DA0", "-DB0", "-DC0"] and not evaluator.notes
    assert spent < 2, f"{spent:.2f} s of CPU for 3,000 reads of a list changed 9,000 times"
