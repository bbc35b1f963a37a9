"""NV005: device code that needs sm_100a or sm_90a (tcgen05, wgmma) in a load_inline/load call that names
no arch. torch then compiles for the GPU it runs on plus PTX (10.0+PTX on a B200: sm_100, without the a),
where those instructions do not assemble, so the submission fails to build on the leaderboard."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.lint import lint_text

runner = CliRunner()

TCGEN05 = 'CUDA = r"""__global__ void k() { asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%0];" :: "l"(0)); }"""\n'
WGMMA = 'CUDA = r"""__global__ void k() { asm volatile("wgmma.fence.sync.aligned;"); }"""\n'
PLAIN = 'CUDA = r"""__global__ void k(float* x) { x[0] = 1.0f; }"""\n'
HEAD = "import os\nfrom torch.utils.cpp_extension import load_inline\n"
CALL = 'module = load_inline("gemm", "void k();", CUDA{flags})\n'
ENTRY = "\n\ndef custom_kernel(data):\n    return data[-1]\n"


def nv005(text: str) -> list[tuple[int, int, str]]:
    return [(d.line, d.col, d.message) for d in lint_text(text) if d.code == "NV005"]


def test_tcgen05_with_no_arch_named_is_said_at_the_call_with_the_fix() -> None:
    text = HEAD + TCGEN05 + CALL.format(flags="") + ENTRY
    [(line, col, message)] = nv005(text)
    assert (line, col) == (4, 1)
    assert message == (
        "load_inline('gemm') names no arch (no arch flag, no TORCH_CUDA_ARCH_LIST set before it): torch compiles for"
        " the GPU it runs on, 10.0+PTX (sm_100, without the a) on the B200, where its tcgen05 / SM100 instructions do"
        ' not assemble; name sm_100a: extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"], or'
        ' os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a" before the call')


def test_wgmma_names_sm_90a() -> None:
    [(_, _, message)] = nv005(HEAD + WGMMA + CALL.format(flags="") + ENTRY)
    assert "its wgmma / SM90 instructions" in message
    assert message.endswith('name sm_90a: extra_cuda_cflags=["-gencode=arch=compute_90a,code=sm_90a"], or'
                            ' os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0a" before the call')


@pytest.mark.parametrize("text", [
    HEAD + TCGEN05 + CALL.format(flags=', extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"]') + ENTRY,
    HEAD + TCGEN05 + CALL.format(flags=', extra_cuda_cflags=["-arch=sm_100a", "-O3"]') + ENTRY,
    HEAD + 'os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"\n' + TCGEN05 + CALL.format(flags="") + ENTRY,
    # set at module level, the call inside custom_kernel: the setting runs first
    HEAD + TCGEN05 + "\n\ndef custom_kernel(data):\n    return load_inline('gemm', 'void k();', CUDA)\n"
    + 'os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"\n',
    # code any arch of its family assembles
    HEAD + PLAIN + CALL.format(flags="") + ENTRY,
])
def test_an_arch_named_or_not_needed_is_said_nothing_of(text: str) -> None:
    assert nv005(text) == []


def test_an_arch_list_set_after_the_call_does_not_name_its_arch() -> None:
    text = HEAD + TCGEN05 + CALL.format(flags="") + 'os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"\n' + ENTRY
    assert [line for line, _, _ in nv005(text)] == [4]


def test_a_loaded_source_file_is_read_for_its_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """load(sources=[...]): the .cu file beside the submission is the device code."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gemm.cu").write_text('__global__ void k() { asm volatile("tcgen05.fence::before_thread_sync;"); }\n')
    (tmp_path / "submission.py").write_text("from torch.utils.cpp_extension import load\n"
                                            'module = load("gemm", sources=["gemm.cu"])\n' + ENTRY)
    result = runner.invoke(app, ["lint", "submission.py"])
    assert result.exit_code == 0, result.output  # a warning
    assert "submission.py:2:1: NV005 load('gemm') names no arch" in result.output


@pytest.mark.parametrize("setting", [
    'os.environ["TORCH_CUDA_ARCH_LIST"] = ARCH',  # computed: build cannot read it, it may name the arch
    'os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "10.0a")',
    'os.environ.update({"TORCH_CUDA_ARCH_LIST": "10.0a"})',
    'os.environ.update(TORCH_CUDA_ARCH_LIST="10.0a")',
    'from os import environ\nenviron["TORCH_CUDA_ARCH_LIST"] = "10.0a"',
])
def test_an_arch_list_set_otherwise_or_not_static_is_said_nothing_of(setting: str) -> None:
    """NV005 said that no TORCH_CUDA_ARCH_LIST was set where the file set one by setdefault or update, or to
    a value build cannot read."""
    assert nv005(HEAD + "from settings import ARCH\n" + setting + "\n" + TCGEN05 + CALL.format(flags="") + ENTRY) == []


def test_an_arch_list_set_by_putenv_is_said_not_to_reach_torch() -> None:
    """os.putenv leaves os.environ, which torch reads, unchanged: the call still names no arch."""
    text = HEAD + 'os.putenv("TORCH_CUDA_ARCH_LIST", "10.0a")\n' + TCGEN05 + CALL.format(flags="") + ENTRY
    [(line, _, message)] = nv005(text)
    assert line == 5 and message.endswith('(os.putenv on line 3 does not change os.environ, which torch reads:'
                                          ' set os.environ["TORCH_CUDA_ARCH_LIST"] instead)'), message


@pytest.mark.parametrize("flags", [
    'FLAGS = ["-O3"]\nif CUDA:\n    FLAGS.append("-gencode=arch=compute_100a,code=sm_100a")\n',  # a change not followed
    "FLAGS = pick_flags()\n",
])
def test_flags_build_cannot_read_are_not_said_to_name_no_arch(flags: str) -> None:
    """extra_cuda_cflags that are not static may name the arch: NV005 said the call had no arch flag."""
    text = HEAD + TCGEN05 + flags + CALL.format(flags=", extra_cuda_cflags=FLAGS") + ENTRY
    assert nv005(text) == []


def test_flags_appended_in_place_name_the_arch() -> None:
    text = (HEAD + TCGEN05 + 'FLAGS = ["-O3"]\nFLAGS.append("-gencode=arch=compute_100a,code=sm_100a")\n'
            + CALL.format(flags=", extra_cuda_cflags=FLAGS") + ENTRY)
    assert nv005(text) == []


def test_an_arch_list_set_inside_a_function_does_not_reach_a_module_level_call() -> None:
    """A TORCH_CUDA_ARCH_LIST set inside a function written above a module-level call was taken for set
    before it (line order only), though the function may never run before the call: NV005 said nothing."""
    text = (HEAD + 'def setup():\n    os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"\n' + TCGEN05
            + CALL.format(flags="") + ENTRY)
    [(line, _, message)] = nv005(text)
    assert line == 6 and message.endswith(
        "(line 4 sets TORCH_CUDA_ARCH_LIST inside a function, which may not have run before this module-level call:"
        " set it at module level, above the call)"), message


def test_an_arch_list_set_in_the_calls_own_function_before_it_names_its_arch() -> None:
    text = (HEAD + TCGEN05 + "\n\ndef custom_kernel(data):\n    os.environ['TORCH_CUDA_ARCH_LIST'] = '10.0a'\n"
            "    return load_inline('gemm', 'void k();', CUDA)\n")
    assert nv005(text) == []


def test_flags_appended_at_module_level_after_custom_kernel_name_the_arch() -> None:
    """The append runs at import, before custom_kernel's call: NV005 said the call named no arch."""
    text = (HEAD + TCGEN05 + 'FLAGS = ["-O3"]\n\n\ndef custom_kernel(data):\n'
            "    return load_inline('gemm', 'void k();', CUDA, extra_cuda_cflags=FLAGS)\n"
            'FLAGS.append("-gencode=arch=compute_100a,code=sm_100a")\n')
    assert nv005(text) == []


@pytest.mark.parametrize("setting", [
    'def _env(k, v):\n    os.environ[k] = v\n_env("CUDA_LAUNCH_BLOCKING", "0")\n',
    'os.environ.update(dict(CUDA_LAUNCH_BLOCKING="0"))\n',
])
def test_another_variable_set_by_a_helper_or_dict_leaves_the_call_naming_no_arch(setting: str) -> None:
    """A setter whose key is a parameter, and update(dict(...)), were taken to set TORCH_CUDA_ARCH_LIST to a
    value build cannot read: NV005 said nothing of a call that names no arch."""
    lines = [line for line, _, _ in nv005(HEAD + setting + TCGEN05 + CALL.format(flags="") + ENTRY)]
    assert lines == [len((HEAD + setting + TCGEN05).splitlines()) + 1]
