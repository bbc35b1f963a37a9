"""bench's hint for a host-bound submission: a load_inline/load call that builds its C++ at -O0."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.bench.binding_hint import unoptimised_bindings

HEAD = "from torch.utils.cpp_extension import load, load_inline\n"


def _hints(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "submission.py"
    path.write_text(HEAD + body)
    return unoptimised_bindings(path)


@pytest.mark.parametrize("call", [
    'load_inline(name="g", cpp_sources="int f();", cuda_sources="int f() { return 1; }", functions=["f"])',
    'load_inline("g", "int f();", "", None, ["f"], ["-g"])',  # positional extra_cflags (after sycl_sources)
    'load_inline(name="g", cpp_sources="", cuda_sources="", extra_cflags=["-O3", "-O0"])',  # the last -O wins
    'load_inline(name="g", cpp_sources="", cuda_sources="", extra_cflags=None)',  # the default, spelled out
    'load(name="g", sources=["binding.cpp", "kernel.cu"], extra_cuda_cflags=["-O3"])',  # -O3 for nvcc only
])
def test_a_binding_built_at_o0_is_named_with_its_line(tmp_path: Path, call: str) -> None:
    hints = _hints(tmp_path, f"\n\nmod = {call}\n")
    assert len(hints) == 1
    assert hints[0].startswith("submission.py:4: ") and "name='g'" in hints[0] and 'extra_cflags=["-O1"] or higher' in hints[0]


@pytest.mark.parametrize("call", [
    'load_inline(name="g", cpp_sources="", cuda_sources="", extra_cflags=["-O3"])',
    'load_inline(name="g", cpp_sources="", cuda_sources="", extra_cflags=["-g -O2"])',  # one string, two flags
    'load_inline("g", "", "", None, None, ["-Ofast"])',
    'load_inline(name="g", cpp_sources="", cuda_sources="", extra_cflags=("-O4",))',  # gcc reads -O4 as -O3
    'load(name="g", sources=["kernel.cu"])',  # no C++ file: nvcc compiles everything
    'load_inline(name="g", cpp_sources="", cuda_sources="", extra_cflags=FLAGS)',  # bound to an optimising list
    'load_inline(name="g", cpp_sources="", cuda_sources="", extra_cflags=flags_from_somewhere())',  # unknown: no guess
    'load_inline("g", "", "", **OPTIONS)',  # keywords from a dict: unknown
    'load_inline(*ARGS)',
])
def test_no_hint_when_optimised_or_unknown(tmp_path: Path, call: str) -> None:
    assert _hints(tmp_path, f'FLAGS = ["-O3"]\nmod = {call}\n') == []


def test_files_that_are_not_python_or_do_not_parse_give_no_hint(tmp_path: Path) -> None:
    assert _hints(tmp_path, "def broken(:\n") == []
    kernel = tmp_path / "k.cu"
    kernel.write_text("__global__ void k() {}\n")
    assert unoptimised_bindings(kernel) == []


def test_concatenated_flags_are_one_flag(tmp_path: Path) -> None:
    assert len(_hints(tmp_path, 'LEVEL = "0"\nmod = load_inline(name="g", cpp_sources="", extra_cflags=["-O" + LEVEL])\n')) == 1
    assert _hints(tmp_path, 'LEVEL = "2"\nmod = load_inline(name="g", cpp_sources="", extra_cflags=["-O" + LEVEL])\n') == []


def test_a_file_that_is_not_utf8_gives_no_hint_and_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "submission.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + HEAD.encode() + b'mod = load_inline(name="g", cpp_sources="")\n')
    assert unoptimised_bindings(path) == []


@pytest.mark.parametrize("flags", ['BASE + ["-O3"]', '["-O3"] + ["-g"]', '("-g",) + ("-O2",)'])
def test_lists_added_together_stay_separate_flags(tmp_path: Path, flags: str) -> None:
    body = f'BASE = ["-std=c++17"]\nmod = load_inline(name="g", cpp_sources="", extra_cflags={flags})\n'
    assert _hints(tmp_path, body) == []


@pytest.mark.parametrize("change", ['FLAGS.append("-O3")', 'FLAGS.extend(["-O3"])', 'FLAGS[0] = "-O3"',
                                    'BASE.insert(0, "-O2")', ""])
def test_a_flag_list_changed_in_place_is_not_read_as_written(tmp_path: Path, change: str) -> None:
    body = f'BASE = ["-g"]\nFLAGS = BASE\n{change}\nmod = load_inline(name="g", cpp_sources="", extra_cflags=FLAGS)\n'
    assert len(_hints(tmp_path, body)) == (0 if change else 1)  # changed: no guess, -O0 may be wrong


@pytest.mark.parametrize("change", ['ALIAS = FLAGS\nALIAS.append("-O3")', 'FLAGS[0] += " -O3"', "del FLAGS[0]"])
def test_changes_through_an_alias_or_an_item_are_changes_too(tmp_path: Path, change: str) -> None:
    body = f'FLAGS = ["-g"]\n{change}\nmod = load_inline(name="g", cpp_sources="", extra_cflags=FLAGS)\n'
    assert _hints(tmp_path, body) == []

