"""`build submission.py` reads the TORCH_CUDA_ARCH_LIST torch sees in the call, however the file sets it:
an item of os.environ, setdefault, update, |=, through `from os import environ`; os.putenv, which
leaves os.environ unchanged, is not seen. A value build cannot read is said to be so, never taken
for no setting at all."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from nvfp4ctl.build.submission_sources import find_sources
from nvfp4ctl.cli import app

runner = CliRunner()
HEAD = "import os\nfrom os import environ\nfrom torch.utils.cpp_extension import load_inline\nfrom settings import ARCH\n"
TCGEN05 = 'CUDA = "// nvfp4ctl: no-tensor-op\\n__global__ void k() { asm(\\"tcgen05.fence::before_thread_sync;\\"); }"\n'
CALL = 'm = load_inline(name="g", cpp_sources="", cuda_sources=CUDA)\n'


def _sources(tmp_path: Path, setting: str):
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + setting + "\n" + TCGEN05 + CALL)
    sources = find_sources(submission)
    return sources, sources.extensions[0]


@pytest.mark.parametrize(("setting", "arch_list"), [
    ('os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0a")', "9.0a"),
    ('os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"\nos.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0a")', "10.0a"),
    ('os.environ.update({"TORCH_CUDA_ARCH_LIST": "9.0a", "OTHER": "1"})', "9.0a"),
    ('os.environ.update(TORCH_CUDA_ARCH_LIST="9.0a")', "9.0a"),
    ('ENV = {"TORCH_CUDA_ARCH_LIST": "9.0a"}\nos.environ |= ENV', "9.0a"),
    ('environ["TORCH_CUDA_ARCH_LIST"] = "9.0a"', "9.0a"),
    ('KEY = "TORCH_CUDA_ARCH_LIST"\nos.environ[KEY] = "9.0a"', "9.0a"),
    ('os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0a"\nos.environ.pop("TORCH_CUDA_ARCH_LIST")', None),
    ('os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0a"\ndel environ["TORCH_CUDA_ARCH_LIST"]', None),
    ('settings = {}\nsettings["TORCH_CUDA_ARCH_LIST"] = "9.0a"', None),  # a dict of its own, not os.environ
    ('os.putenv("TORCH_CUDA_ARCH_LIST", "9.0a")', None),  # os.environ, which torch reads, is unchanged
    # a setter whose key is a parameter sets what its calls pass; dict(KEY=...) is read as {"KEY": ...}
    ('def _env(k, v):\n    os.environ[k] = v\n_env("CUDA_LAUNCH_BLOCKING", "0")', None),
    ('def _env(k, v):\n    os.environ[k] = v\n_env("OTHER", "1")\n_env(v="9.0a", k="TORCH_CUDA_ARCH_LIST")', "9.0a"),
    ('os.environ.update(dict(CUDA_LAUNCH_BLOCKING="0"))', None),
    ('os.environ.update(dict(TORCH_CUDA_ARCH_LIST="9.0a"))', "9.0a"),
])
def test_the_arch_list_is_read_as_torch_sees_it(tmp_path: Path, setting: str, arch_list: str | None) -> None:
    """setdefault, update, |= and `from os import environ` were not read (the arch came from the code,
    and NV005 and the build's note said none was set); any dict's item named TORCH_CUDA_ARCH_LIST was."""
    sources, extension = _sources(tmp_path, setting)
    assert sources.arch_list_for(extension) == arch_list
    assert sources.torch_picks_gpu_arch(extension) is (arch_list is None)


@pytest.mark.parametrize("setting", [
    'os.environ["TORCH_CUDA_ARCH_LIST"] = ARCH',
    'os.environ.setdefault("TORCH_CUDA_ARCH_LIST", ARCH)',
    'os.environ.update(ARCHES)',
    'os.environ.update(**ARCHES)',
    'for key, value in ARCHES.items():\n    os.environ[key] = value',
    'def _env(k, v):\n    os.environ[k] = v\n_env(ARCH, "9.0a")',  # the call's key is not static
])
def test_an_arch_list_build_cannot_read_is_not_taken_for_none(tmp_path: Path, setting: str) -> None:
    sources, extension = _sources(tmp_path, setting)
    assert sources.arch_list_setting(extension) is not None and sources.arch_list_for(extension) is None
    assert not sources.torch_picks_gpu_arch(extension)


def test_a_setter_passed_around_may_set_it_only_for_a_call_inside_a_function(tmp_path: Path) -> None:
    """A setter whose key is a parameter, passed around rather than called, may set the list wherever it is
    called: for a call in custom_kernel that is a setting build cannot read; a module-level call below it
    runs at import, where nothing shows the function has run, as for any setting inside a function."""
    setter = 'def _env(k, v):\n    os.environ[k] = v\nSETTERS = [_env]'
    sources, extension = _sources(tmp_path, setter)
    assert sources.arch_list_setting(extension) is None and sources.torch_picks_gpu_arch(extension)
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + setter + "\n" + TCGEN05 + "\n\ndef custom_kernel(data):\n    " + CALL)
    sources = find_sources(submission)
    (deferred,) = sources.extensions
    assert sources.arch_list_setting(deferred) is not None and sources.arch_list_for(deferred) is None
    assert not sources.torch_picks_gpu_arch(deferred)


def test_build_says_it_could_not_read_the_arch_list_and_what_it_built_for(tmp_path: Path, compiles: list[str]) -> None:
    """A computed TORCH_CUDA_ARCH_LIST was ignored: the build warned that no TORCH_CUDA_ARCH_LIST was set
    before the call, and that torch would compile sm_100, where it compiles what ARCH holds."""
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + 'os.environ["TORCH_CUDA_ARCH_LIST"] = ARCH\n' + TCGEN05 + CALL)
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said
    assert "no arch is named" not in said and "no TORCH_CUDA_ARCH_LIST" not in said, said
    assert ("g: line 5 (os.environ['TORCH_CUDA_ARCH_LIST'] = ARCH) sets, or may set, TORCH_CUDA_ARCH_LIST to a value"
            " build cannot read without running the file") in said, said
    assert "built here for sm_100a" in said and "the TORCH_CUDA_ARCH_LIST of line 5 is not static" in said, said
    assert compiles == ["g.cu"]


def test_an_unreadable_arch_list_with_nothing_else_is_one_line_and_exit_2(tmp_path: Path, compiles: list[str]) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + 'os.environ["TORCH_CUDA_ARCH_LIST"] = ARCH\n'
                          'm = load_inline(name="g", cpp_sources="", cuda_sources="__global__ void k() {}")\n')
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and "sets, or may set, TORCH_CUDA_ARCH_LIST" in said and "pass --arch" in said, said
    assert "no TORCH_CUDA_ARCH_LIST" not in said and not compiles and "Traceback" not in result.output


def test_an_arch_list_set_by_putenv_is_said_not_to_reach_torch(tmp_path: Path, compiles: list[str]) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + 'os.putenv("TORCH_CUDA_ARCH_LIST", "10.0a")\n' + TCGEN05 + CALL)
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 0 and "g: no arch is named for this call" in said, said
    assert ("(os.putenv on line 5 does not change os.environ, which torch reads:"
            ' set os.environ["TORCH_CUDA_ARCH_LIST"] instead)') in said, said


def test_the_budget_says_that_archs_compiled_apart_overstate_torchs_compile(
        tmp_path: Path, compiles: list[str], monkeypatch: pytest.MonkeyPatch,
        build_two_arch_list: Callable[..., Result]) -> None:
    """"9.0a;10.0a" is one nvcc run in torch, both -gencode flags in it (the host code and the headers
    compiled once); build compiles each arch apart, and the budget line added their times without a word,
    as if the leaderboard paid both runs."""
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    result = build_two_arch_list("", 'one = load_inline(name="one", cpp_sources="", cuda_sources=CUDA,'
                                     ' extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"])\n')
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said
    assert compiles == ["both.cu", "both.cu", "one.cu"]
    assert ("for 3 units" in said and "; both: each arch compiled in an nvcc run of its own here, where torch compiles"
            " them all in one (every -gencode, the host code and the headers once), so this sum overstates that"
            " compile") in said, said
    assert "one: each arch" not in said and "one, both" not in said, said
    assert "the sum of one nvcc run per arch: more than torch's one run" in memory.read_text()


def test_the_budget_of_one_arch_an_extension_says_nothing_of_archs_apart(tmp_path: Path, compiles: list[str]) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + 'os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"\n'
                          'CUDA = "// nvfp4ctl: no-tensor-op\\n__global__ void k(int* p) { p[0] = 1; }"\n'
                          'm = load_inline(name="m", cpp_sources="", cuda_sources=CUDA)\n')
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 0 and "for 1 unit" in said and "overstates" not in said, said


@pytest.mark.parametrize(("arch_list", "place"), [
    ("10.0a; 9.0a", "between 10.0a and 9.0a"), ("10.0a;", "after 10.0a"), ("10.0a  9.0a", "between 10.0a and 9.0a"),
    (" 10.0a", "before 10.0a"), (";", "and no arch")])
def test_an_arch_list_with_an_empty_entry_is_refused_as_torch_refuses_it(tmp_path: Path, compiles: list[str],
                                                                         arch_list: str, place: str) -> None:
    """torch makes each space a ; and splits at ;, so "10.0a; 9.0a" holds an empty entry and
    _get_cuda_arch_flags stops (Unknown CUDA arch ()); build split at blanks and built both archs."""
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + f'os.environ["TORCH_CUDA_ARCH_LIST"] = "{arch_list}"\n' + TCGEN05 + CALL)
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and not compiles and "Traceback" not in result.output, said
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert f'submission.py:5: TORCH_CUDA_ARCH_LIST="{arch_list}" holds an empty entry {place}' in result.output, said
    assert "ValueError: Unknown CUDA arch ()" in said, said


def test_an_arch_list_set_inside_a_function_does_not_reach_a_module_level_call(tmp_path: Path,
                                                                             compiles: list[str]) -> None:
    """A setting inside a function runs when the function is called, maybe never before a module-level call
    written below it: build read the file's line order alone and built for 9.0a, saying nothing."""
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + 'def setup():\n    os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0a"\n' + TCGEN05 + CALL
                          + 'def custom_kernel(data):\n    os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0a"\n'
                          '    return load_inline(name="late", cpp_sources="", cuda_sources=CUDA)\n')
    sources = find_sources(submission)
    early, late = sources.extensions
    assert sources.arch_list_for(early) is None and sources.torch_picks_gpu_arch(early)
    assert sources.arch_list_for(late) == "9.0a"  # set in its own function, before it
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 0 and "g: no arch is named for this call" in said, said
    assert ("(lines 6, 10 set TORCH_CUDA_ARCH_LIST inside a function, which may not have run before this module-level"
            " call: set it at module level, above the call)") in said, said
    assert "late: no arch is named" not in said and compiles == ["g.cu", "late.cu"], said


def test_an_arch_list_set_in_the_calls_function_follows_the_module_level_one(tmp_path: Path) -> None:
    """Every module-level statement runs before custom_kernel, so its own setting is the last one torch
    sees, whatever the line order; it lost to a module-level setting written below it."""
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + TCGEN05 + 'def custom_kernel(data):\n    os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"\n'
                          '    return load_inline(name="late", cpp_sources="", cuda_sources=CUDA)\n'
                          'os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0a"\n')
    sources = find_sources(submission)
    assert sources.arch_list_for(sources.extensions[0]) == "10.0a"


@pytest.mark.parametrize("setting, may_set", [
    # a function called at module level above the call may set it there: a setting build cannot read
    ('def _setup():\n    os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"\n_setup()', True),
    ('def _env(k, v):\n    os.environ[k] = v\ndef _setup():\n    _env("TORCH_CUDA_ARCH_LIST", "10.0a")\n_setup()', True),
    # its settings' order and branches are not read: one of them, not the last written, would be wrong
    ('def _setup():\n    if True:\n        os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0a"\n'
     '    os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"\n_setup()', True),
    # ... one never called before it does not, nor a call that runs none of its body
    ('def _setup():\n    os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"', False),
    ('async def _setup():\n    os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"\n_setup()', False),
    ('def _setup():\n    os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"\n    yield\n_setup()', False),
    ('import contextlib\n@contextlib.contextmanager\ndef _setup():\n    os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"\n'
     '    yield\n_setup()', False),
    # a name defined twice: which definition a call runs is not read
    ('def _setup():\n    os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0a"\n_setup()\n'
     'def _setup():\n    os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"', False),
])
def test_a_function_called_at_module_level_may_set_it_where_it_is_called(tmp_path: Path, setting: str,
                                                                         may_set: bool) -> None:
    """A setting inside a function reached no module-level call: `_setup()` called above load_inline was
    taken for nothing set, so build said it could not tell the arch and NV005 that none was named. Where
    the call runs the function's body it may set the list: a setting build cannot read, never a value read
    in the wrong order; where it runs none of it (async, a generator, a decorator), or another definition
    of the name may run, the setting stays the function's."""
    sources, extension = _sources(tmp_path, setting)
    setting_read = sources.arch_list_setting(extension)
    assert (setting_read is not None) is may_set
    assert sources.arch_list_for(extension) is None and sources.torch_picks_gpu_arch(extension) is not may_set


@pytest.mark.parametrize("setting, arch_list", [
    # the setter's own value, not a parameter, is read where the setter is written
    ('def _set(k):\n    os.environ[k] = "10.0a"\n_set("TORCH_CUDA_ARCH_LIST")', "10.0a"),
    ('ARCH_OF_OURS = "10.0a"\ndef _set(k):\n    os.environ[k] = ARCH_OF_OURS\n_set("TORCH_CUDA_ARCH_LIST")', "10.0a"),
])
def test_a_setter_with_a_value_of_its_own_sets_that_value(tmp_path: Path, setting: str, arch_list: str) -> None:
    """Its value was taken for one build cannot read, as the value of a call's argument is."""
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + setting + "\n" + TCGEN05 + "\n\ndef custom_kernel(data):\n    " + CALL)
    sources = find_sources(submission)
    assert sources.arch_list_for(sources.extensions[0]) == arch_list


def test_a_helper_nested_in_custom_kernel_is_read_at_its_calls(tmp_path: Path) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + TCGEN05 + "\n\ndef custom_kernel(data):\n    def _env(k, v):\n        os.environ[k] = v\n"
                          '    _env("TORCH_CUDA_ARCH_LIST", "10.0a")\n    ' + CALL)
    sources = find_sources(submission)
    assert sources.arch_list_for(sources.extensions[0]) == "10.0a"
    submission.write_text(HEAD + TCGEN05 + "\n\ndef custom_kernel(data):\n    def _env(k, v):\n        os.environ[k] = v\n"
                          '    _env("OTHER", "1")\n    ' + CALL)
    sources = find_sources(submission)
    assert sources.arch_list_setting(sources.extensions[0]) is None


def test_a_function_called_only_below_the_call_sets_nothing_before_it(tmp_path: Path) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + 'def _setup():\n    os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"\n' + TCGEN05 + CALL
                          + "_setup()\n")
    sources = find_sources(submission)
    assert sources.arch_list_setting(sources.extensions[0]) is None


def test_a_setter_method_called_through_an_instance_may_set_it(tmp_path: Path) -> None:
    """A method whose key is a parameter, called as Env().set(...): no call by its bare name, so none was
    read and the setting vanished (NV005 fired, build took the GPU's arch); it is one build cannot read."""
    setting = ('class Env:\n    def set(self, key, value):\n        os.environ[key] = value\n'
               'Env().set("TORCH_CUDA_ARCH_LIST", "10.0a")')
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + setting + "\n" + TCGEN05 + "\n\ndef custom_kernel(data):\n    " + CALL)
    sources = find_sources(submission)
    (extension,) = sources.extensions
    assert sources.arch_list_setting(extension) is not None and not sources.torch_picks_gpu_arch(extension)


def test_setters_calling_setters_are_read_in_linear_time(tmp_path: Path) -> None:
    """Each setter's calls were found by a walk of the whole file and read again through every setter that
    calls it: 14 helpers calling the one below twice took 35 s, 1,000 setters 76 s."""
    import time

    chain = "def e0(k, v):\n    os.environ[k] = v\n" + "".join(
        f"def e{i}(k, v):\n    e{i - 1}(k, v)\n    e{i - 1}(k, v)\n" for i in range(1, 20)) + 'e19("OTHER", "1")\n'
    many = "".join(f'def s{i}(k, v):\n    os.environ[k] = v\ns{i}("X{i}", "1")\n' for i in range(2_000))
    # a function of 1,000 settings called 1,000 times: each setting was copied to each call
    wide = ("def _setup():\n" + '    os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"\n' * 1_000 + "_setup()\n" * 1_000)
    for setting in (chain, many, wide):
        began = time.process_time()
        sources, extension = _sources(tmp_path, setting)
        sources.arch_list_setting(extension)
        assert time.process_time() - began < 4


def test_a_native_arch_list_is_the_gpus_as_for_none(tmp_path: Path) -> None:
    """torch reads TORCH_CUDA_ARCH_LIST="native" as unset: the visible GPUs' archs (10.0+PTX on the B200,
    where tcgen05 does not assemble). build refused it, exit 2, as an entry it could not read."""
    sources, extension = _sources(tmp_path, 'os.environ["TORCH_CUDA_ARCH_LIST"] = "native"')
    assert sources.torch_picks_gpu_arch(extension)
    assert sources.extension_arches(extension, None) == (("sm_100a",), "the code uses tcgen05 / SM100")
    assert sources.no_arch_named(extension) == ("no arch flag; TORCH_CUDA_ARCH_LIST is 'native' before it, which torch"
                                                " reads as unset")


def test_a_unit_of_several_gencodes_is_labelled_with_every_arch_it_compiles(tmp_path: Path, compiles: list[str],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Two -gencode flags are one nvcc run compiling both archs; build labelled the unit, the extension's line
    and the result with the first alone (arch sm_90a (g's flag -gencode=arch=compute_90a,code=sm_90a))."""
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load_inline\n"
                          'CUDA = "// nvfp4ctl: no-tensor-op\\n__global__ void k(int* p) { p[0] = 1; }"\n'
                          'm = load_inline(name="g", cpp_sources="", cuda_sources=CUDA, extra_cuda_cflags=['
                          '"-gencode=arch=compute_90a,code=sm_90a", "-gencode=arch=compute_100a,code=sm_100a"])\n')
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said
    assert compiles == ["g.cu"]  # one nvcc run, as torch's
    assert ("archs sm_90a, sm_100a (g's flags -gencode=arch=compute_90a,code=sm_90a,"
            " -gencode=arch=compute_100a,code=sm_100a)") in said, said
    assert "g.cu (sm_90a, sm_100a): " in said and "1 unit built for sm_90a, sm_100a in " in said, said
    assert "overstates" not in said, said
