"""What `build` does with what it cannot compile: device code it cannot read statically, paths that
are no kernel source, and an --arch the submission's own flags override. No compiler runs here."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import submission_build
from nvfp4ctl.build.submission_sources import Extension, SubmissionSources, find_sources
from nvfp4ctl.cli import app

runner = CliRunner()

DYNAMIC = '''import os
from torch.utils.cpp_extension import load_inline
src = open(os.path.join(os.path.dirname(__file__), "k.cu")).read()
m = load_inline(name="dyn", cpp_sources="void run();", cuda_sources=src, functions=["run"])
def custom_kernel(data): return data[6]
'''


def _flat(text: str) -> str:
    return " ".join(text.split())  # the console wraps long lines at the terminal's width


@pytest.fixture()
def no_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a unit was compiled")

    monkeypatch.setattr(submission_build, "_build_unit", refuse)


def test_cuda_sources_read_at_run_time_is_a_usage_error_not_host_code(tmp_path: Path, no_compiler: None) -> None:
    (tmp_path / "k.cu").write_text("void run(){}\n")
    submission = tmp_path / "submission.py"
    submission.write_text(DYNAMIC)
    (extension,) = find_sources(submission).extensions
    assert extension.unreadable == (4, "cuda_sources `src`") and not extension.cuda
    for arch in (["--arch", "sm_100a"], []):  # without --arch too: not "cannot tell the arch"
        result = runner.invoke(app, ["build", str(submission), *arch])
        assert result.exit_code == 2, result.output
        said = _flat(result.output)
        assert said.startswith(f"error: {submission}:4: dyn's cuda_sources `src` is not a static string expression")
        assert "reads the sources statically" in said and "host code only" not in said and "built for" not in said


def test_load_sources_read_at_run_time_is_a_usage_error(tmp_path: Path, no_compiler: None) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text("import glob\nfrom torch.utils.cpp_extension import load\n"
                          "m = load(name='ext',\n         sources=glob.glob('*.cu'))\n")
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_100a"])
    assert result.exit_code == 2 and f"{submission}:4: ext's sources `glob.glob('*.cu')`" in _flat(result.output)


@pytest.mark.parametrize("cuda", ["", ", cuda_sources=None", ", cuda_sources=[]"])
def test_absent_or_empty_cuda_sources_is_host_code_only(tmp_path: Path, no_compiler: None, cuda: str) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load_inline\n"
                          f"m = load_inline(name='host', cpp_sources='int f();'{cuda}, functions=['f'])\n")
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_100a"])
    assert result.exit_code == 0, result.output
    assert "host: no cuda_sources: host code only" in _flat(result.output)


@pytest.mark.parametrize("cuda", ["", ", cuda_sources=[]"])
def test_host_code_alone_needs_no_arch(tmp_path: Path, no_compiler: None, cuda: str) -> None:
    """No device code, no --arch: it said "cannot tell the arch ... pass --arch", for code built for none."""
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load_inline\n"
                          f"m = load_inline(name='host', cpp_sources='int f();'{cuda}, functions=['f'])\n")
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output
    said = _flat(result.output)
    assert "cannot tell the arch" not in said and "host code only" in said and "arch sm_" not in said


def test_a_missing_load_source_is_named_before_the_arch_is_asked_for(tmp_path: Path, no_compiler: None) -> None:
    """Without --arch it said "cannot tell the arch ... pass --arch"; passing it only led to the missing file."""
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load\n"
                          "m = load(name='g', sources=['gemm.cu'], extra_cuda_cflags=['-O3'])\n")
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 2, result.output
    said = _flat(result.output)
    assert "load() source" in said and "gemm.cu does not exist" in said and "cannot tell the arch" not in said


FLAGGED = '''from torch.utils.cpp_extension import load_inline
m = load_inline(name="own", cpp_sources="", cuda_sources="__global__ void k() {}",
                extra_cuda_cflags=[FLAGS])
'''


NO_TENSOR_OP = "// nvfp4ctl: no-tensor-op\\n"


@pytest.mark.parametrize("flags, option, built_for, warned", [
    ('"-gencode=arch=compute_100a,code=sm_100a"', "sm_90a", "sm_100a", True),
    ('"-gencode=arch=compute_100a,code=sm_100a"', "sm_100a", "sm_100a", False),
    ('"-O3"', "sm_90a", "sm_90a", False),  # no arch of its own: --arch decides
])
def test_arch_option_is_said_unused_when_the_submission_names_its_arch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: str, option: str, built_for: str, warned: bool) -> None:
    """Code without tensor-core code (its no-tensor-op mark) builds for its own arch: a warning, exit 0."""
    submission = tmp_path / "submission.py"
    submission.write_text(FLAGGED.replace("FLAGS", flags).replace('cuda_sources="', f'cuda_sources="{NO_TENSOR_OP}'))
    archs: list[str] = []

    def build_extension(sources: SubmissionSources, extension: Extension, arch: str) -> list[object]:
        archs.append(arch)
        return []

    monkeypatch.setattr(submission_build, "build_extension", build_extension)
    result = runner.invoke(app, ["build", str(submission), "--arch", option])
    assert result.exit_code == 0, result.output
    assert archs == [built_for]
    said = _flat(result.output)
    assert ("warning: --arch sm_90a not used: the submission's own settings decide the arch, here sm_100a"
            " (own's flag -gencode=arch=compute_100a,code=sm_100a)" in said) == warned
    assert ("not used" in said) == warned


# an instruction of each arch's tensor cores, as an export's inlined kernel or a hand-written one holds them
TENSOR_CODE = {"sm_100a": '__global__ void k() { asm volatile(\\"tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [0];\\"); }',
               "sm_90a": '__global__ void k() { asm volatile(\\"wgmma.fence.sync.aligned;\\"); }'}
WHAT = {"sm_100a": "tcgen05 / SM100 instructions", "sm_90a": "wgmma / SM90 instructions"}
EXPORTED = '"""GPU MODE nvfp4_gemm submission: k.cu for OWN, exported by `nvfp4ctl export` (kernel hash 0). Body sha256 0."""\n'


@pytest.mark.parametrize("exported", [True, False])
@pytest.mark.parametrize("option", ["sm_90a", "sm_100a"])
def test_an_arch_option_the_submission_does_not_build_is_refused(tmp_path: Path, no_compiler: None, option: str,
                                                                 exported: bool) -> None:
    """An sm_100a export built with --arch sm_90a warned "--arch sm_90a not used", built sm_100a and exited 0:
    a per-arch CI gate passed without building that arch. Refused in one line, as export refuses it; only an
    export is sent back to export, for a kernel written for --arch (nvfp4ctl's own GEMM one named), where it
    said "export the kernel with --arch", which export refuses."""
    own = "sm_90a" if option == "sm_100a" else "sm_100a"
    submission = tmp_path / "submission.py"
    text = FLAGGED.replace("FLAGS", f'"-gencode=arch=compute_{own[3:]},code={own}"').replace(
        '"__global__ void k() {}"', f'"{TENSOR_CODE[own]}"')
    submission.write_text((EXPORTED.replace("OWN", own) if exported else "") + text)
    result = runner.invoke(app, ["build", str(submission), "--arch", option])
    assert result.exit_code == 2, result.output
    said = _flat(result.output)
    gpu = "H100" if option == "sm_90a" else "B200"
    export_again = (f", or export a kernel written for {option} (nvfp4ctl's {gpu} one:"
                    f" `nvfp4ctl export --kernel default --arch {option}`)" if exported else "")
    assert said == (f"error: {submission} is built for {own} (own's flag -gencode=arch=compute_{own[3:]},code={own}),"
                    f" not for --arch {option}: its {WHAT[own]} would not run there; pass --arch {own}{export_again};"
                    " nothing was built"), said


def test_an_export_refused_for_another_arch_names_no_kernel_where_nvfp4ctl_ships_none(tmp_path: Path,
                                                                                     no_compiler: None) -> None:
    """A dual GEMM's sm_100a export built with --arch sm_90a: nvfp4ctl ships no H100 dual GEMM kernel, so the
    advice names none (`--kernel default --arch sm_90a` is refused for that problem)."""
    task = tmp_path / "task.yml"
    task.write_text("problem: nvfp4_dual_gemm\ntests:\n  - {m: 256, n: 512, k: 256, l: 1, seed: 1111}\n")
    submission = tmp_path / "submission.py"
    submission.write_text(EXPORTED.replace("nvfp4_gemm", "nvfp4_dual_gemm").replace("OWN", "sm_100a") + FLAGGED.replace(
        "FLAGS", '"-gencode=arch=compute_100a,code=sm_100a"').replace('"__global__ void k() {}"', f'"{TENSOR_CODE["sm_100a"]}"'))
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_90a", "--task", str(task)])
    assert result.exit_code == 2, result.output
    said = _flat(result.output)
    assert "; pass --arch sm_100a, or export a kernel written for sm_90a; nothing was built" in said, said


@pytest.mark.parametrize("flags, built_for", [
    ('"-gencode=arch=compute_100a,code=sm_100a"', "sm_100a"),
    ('"-gencode=arch=compute_100,code=sm_100"', "sm_100"),
    ('"-arch=sm_100"', "sm_100"),
    ('"-arch=native"', "sm_100"),
    ('"-Xcompiler=-march=native"', "sm_75"),  # holds "arch": torch adds none, and nvcc builds its default
])
def test_plain_cuda_built_with_another_arch_option_builds_its_own_with_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: str, built_for: str) -> None:
    """Plain CUDA (no tensor-core instruction, no mark) whose flags name another arch was refused, "its
    tensor-core code would not run there; pass --arch sm_100 (or sm_75), or export the kernel", an --arch build
    rejects and an export for a file export never wrote: such code runs on either arch."""
    submission = tmp_path / "submission.py"
    submission.write_text(FLAGGED.replace("FLAGS", flags))
    archs: list[str] = []

    def build_extension(sources: SubmissionSources, extension: Extension, arch: str) -> list[object]:
        archs.append(arch)
        return []

    monkeypatch.setattr(submission_build, "build_extension", build_extension)
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_90a"])
    assert result.exit_code == 0, result.output
    assert archs == [built_for]
    said = _flat(result.output)
    assert f"warning: --arch sm_90a not used: the submission's own settings decide the arch, here {built_for}" in said
    assert "export" not in said and "would not run" not in said


def test_tensor_code_of_the_arch_option_itself_is_built_for_the_submissions_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """wgmma code whose flags name sm_100a, built with --arch sm_90a: its instructions are --arch's, so
    nothing says they would not run there; the build of its own arch says what happens on the leaderboard."""
    submission = tmp_path / "submission.py"
    submission.write_text(FLAGGED.replace("FLAGS", '"-gencode=arch=compute_100a,code=sm_100a"').replace(
        '"__global__ void k() {}"', f'"{TENSOR_CODE["sm_90a"]}"'))
    archs: list[str] = []
    monkeypatch.setattr(submission_build, "build_extension", lambda sources, extension, arch: archs.append(arch) or [])
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_90a"])
    assert result.exit_code == 0, result.output
    assert archs == ["sm_100a"] and "not used" in _flat(result.output)


@pytest.mark.parametrize("name, message", [
    ("config.cuh", "config.cuh is not a kernel source: a kernel is a .cu file; headers are compiled as part of the"
                   " kernel that includes them"),
    ("binding.cpp", "binding.cpp is not a kernel source: a kernel is a .cu file"),
    ("sm90", "sm90 is a folder, not a kernel source"),
])
def test_a_path_that_is_no_kernel_source_is_one_usage_line(tmp_path: Path, name: str, message: str) -> None:
    path = tmp_path / name
    if path.suffix:
        path.write_text("#pragma once\n")
    else:
        path.mkdir()
        (path / "k.cu").write_text("__global__ void k() {}\n")
    result = runner.invoke(app, ["build", str(path), "--arch", "sm_90a"])
    assert result.exit_code == 2
    assert _flat(result.output).startswith(f"error: {tmp_path}/{message}")
    assert "Don't know what to do" not in result.output and "no such kernel source" not in result.output


def test_a_folder_named_like_a_submission_is_said_to_be_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "dir.py"
    folder.mkdir()
    result = runner.invoke(app, ["build", str(folder)])
    assert result.exit_code == 2
    assert _flat(result.output) == f"error: {folder} is a folder, not a submission: name a .py file in it"


@pytest.mark.parametrize("names", [["notes.txt", "submission.py"], ["a.py", "b.py"], ["k.cu", "submission.py"]])
def test_a_submission_with_other_files_names_what_build_takes(tmp_path: Path, names: list[str]) -> None:
    paths = [tmp_path / name for name in names]
    for path in paths:
        path.write_text("x = 1\n")
    result = runner.invoke(app, ["build", *map(str, paths)])
    assert result.exit_code == 2
    assert _flat(result.output) == ("error: build takes one submission (.py) or any number of kernel sources (.cu);"
                                    f" got {', '.join(map(str, paths))}")


def test_a_fifo_named_py_is_refused_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check of the problem a submission names itself read the file first: a FIFO blocked the build for ever."""
    import os
    import signal

    os.mkfifo(tmp_path / "fifo.py")
    monkeypatch.chdir(tmp_path)
    def blocked(*_: object) -> None:
        raise RuntimeError("the build blocked on the FIFO")  # no OSError: the read's own handling would take it

    before = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(20)
    try:
        result = runner.invoke(app, ["build", "fifo.py"])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)
    assert result.exit_code == 2 and _flat(result.output) == "error: fifo.py is not a regular file: a submission is a .py file"


def test_a_device_file_is_not_a_regular_file() -> None:
    result = runner.invoke(app, ["build", "/dev/null", "--arch", "sm_90a"])
    assert result.exit_code == 2 and _flat(result.output) == "error: /dev/null is not a regular file: a kernel source is a .cu file"


PLAIN_CUDA = '''from torch.utils.cpp_extension import load_inline
CUDA_SOURCE = r"""MARK
__global__ void k(float* p) { p[0] = 1.0f; }
"""
m = load_inline(name="plain", cpp_sources="", cuda_sources=CUDA_SOURCE, extra_cuda_cflags=["-gencode=arch=compute_90a,code=sm_90a"])
'''


@pytest.mark.parametrize("mark, code, shown", [
    ("// nvfp4ctl: no-tensor-op", 0, "none (declared)"),  # an export of kernels/naive/ carries the kernel's line
    ("// a plain kernel", 1, "no HGMMA; found none"),
])
def test_a_submission_unit_that_declares_no_tensor_op_passes_without_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mark: str, code: int, shown: str) -> None:
    from nvfp4ctl.build.report import BuildReport, FunctionUsage, TensorOpCheck

    submission = tmp_path / "submission.py"
    submission.write_text(PLAIN_CUDA.replace("MARK", mark))

    def compiled(sources: SubmissionSources, extension: Extension, arch: str, name: str, code: str,
                 path: Path | None) -> submission_build.ExtensionBuild:  # the SASS of a kernel without MMA
        report = BuildReport(source=sources.path, arch=arch, key="k", entry=tmp_path, module_name=None,
                             functions=(FunctionUsage("_Z1kPf", True, 8, 0, 0, 0, 0),),
                             tensor_op=TensorOpCheck(expected="HGMMA", found=(), match=None, checked=True), compile_s=1.0)
        return submission_build.ExtensionBuild(extension, name, report=report, seconds=1.0)

    monkeypatch.setattr(submission_build, "_build_unit", compiled)
    monkeypatch.setenv("COLUMNS", "200")
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == code, result.output
    assert shown in result.output


def test_a_submission_cache_hit_shows_this_runs_time_as_a_kernels_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The table's time of a hit was the first compile's (97.0 s here) where a kernel's hit shows what
    this run took; the budget line still counts the compile, which the leaderboard pays afresh."""
    import os
    import re

    from nvfp4ctl import runlog
    from nvfp4ctl.build import cache
    from nvfp4ctl.build.report import BuildReport, FunctionUsage, TensorOpCheck

    submission = tmp_path / "submission.py"
    submission.write_text(PLAIN_CUDA.replace("MARK", "// nvfp4ctl: no-tensor-op"))
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    key = "f" * 64
    monkeypatch.setattr(submission_build, "_key", lambda *args: key)
    entry = cache.cache_root() / f"submission-plain-sm_90a-{key[:16]}"  # as a first build left it
    entry.mkdir(parents=True)
    BuildReport(source=submission, arch="sm_90a", key=key, entry=entry, module_name=None,
                functions=(FunctionUsage("_Z1kPf", True, 8, 0, 0, 0, 0),),
                tensor_op=TensorOpCheck(expected="HGMMA", found=(), match=None, checked=True), compile_s=97.0).save()

    def no_compiler(*args: object, **kwargs: object) -> None:
        raise AssertionError("nvcc ran for a cache hit")

    monkeypatch.setattr(submission_build, "_command", no_compiler)
    monkeypatch.setenv("COLUMNS", "200")
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output
    header = next(line for line in result.output.splitlines() if "unit: kernel" in line)
    row = next(line for line in result.output.splitlines() if "plain.cu:" in line)
    assert re.search(r"\btime\b", header) and "compile" not in header
    assert re.search(r"│\s+0\.\d s\s+│\s+hit\s+│$", row), row
    assert "compile: 97.0 s for 1 unit" in _flat(result.output)
    # the line says what its total counts, not that the hit's row shows the first compile's time (it shows 0.x s)
    assert "a cache hit shows the first compile's time" not in _flat(result.output)
    assert "a cache hit counts its first compile's time: the leaderboard compiles from scratch)" in _flat(result.output)
    assert runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1].result.endswith(", 1 cached")


def test_submission_build_errors_name_the_file_as_the_compiler_errors_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_compiler: None) -> None:
    """Relative to the working folder, as a compiler error's `#line` name is shown: one said the absolute
    path, another the bare file name, which neither links from another folder."""
    folder = tmp_path / "dual"
    folder.mkdir()
    (folder / "dynamic.py").write_text(DYNAMIC)
    (folder / "undeclared.py").write_text(
        "from torch.utils.cpp_extension import load_inline\n"
        'mod = load_inline("ext", "void gemm(torch::Tensor a);", functions=["gemm", "gemm_v2"],\n'
        '                  extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"])\n')
    (folder / "missing.py").write_text("from torch.utils.cpp_extension import load\n"
                                       "m = load(name='ext', sources=['gone.cu'],\n"
                                       "         extra_cuda_cflags=['-gencode=arch=compute_100a,code=sm_100a'])\n")
    monkeypatch.chdir(tmp_path)
    dynamic = runner.invoke(app, ["build", str(folder / "dynamic.py")])
    assert dynamic.exit_code == 2 and _flat(dynamic.output).startswith("error: dual/dynamic.py:4: dyn's cuda_sources")
    undeclared = runner.invoke(app, ["build", str(folder / "undeclared.py")])
    assert "error: dual/undeclared.py:2: ext's functions= names gemm_v2" in _flat(undeclared.output)
    missing = runner.invoke(app, ["build", str(folder / "missing.py")])
    assert missing.exit_code == 2, missing.output
    assert "error: dual/missing.py:2: load() source dual/gone.cu does not exist" in _flat(missing.output)


def _timed_units(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: set[str]) -> None:
    """_build_unit as a fresh build of 83.8 s this run, 78.6 s of it nvcc's; units named in `failing` fail."""
    from nvfp4ctl.build.report import BuildReport, FunctionUsage, TensorOpCheck

    def compiled(sources: SubmissionSources, extension: Extension, arch: str, name: str, code: str,
                 path: Path | None) -> submission_build.ExtensionBuild:
        if extension.name in failing:
            return submission_build.ExtensionBuild(extension, name, error=f"{sources.path}:3: error: nope",
                                                   seconds=6.2, compile_s=5.0)
        report = BuildReport(source=sources.path, arch=arch, key="k", entry=tmp_path, module_name=None,
                             functions=(FunctionUsage("_Z1kPf", True, 8, 0, 0, 0, 0),),
                             tensor_op=TensorOpCheck(expected="HGMMA", found=(), match=None, checked=True), compile_s=78.6)
        return submission_build.ExtensionBuild(extension, name, report=report, seconds=83.8, compile_s=78.6)

    monkeypatch.setattr(submission_build, "_build_unit", compiled)
    monkeypatch.setenv("COLUMNS", "200")


def test_the_table_time_and_the_budget_line_say_what_each_measures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The row's 83.8 s (this run: torch's flags, nvcc, the SASS read) and the line's 78.6 s (nvcc's own, what
    the leaderboard's compile pays) differ for one unit: each says which it is."""
    submission = tmp_path / "submission.py"
    submission.write_text(PLAIN_CUDA.replace("MARK", "// nvfp4ctl: no-tensor-op"))
    _timed_units(tmp_path, monkeypatch, failing=set())
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output
    header = next(line for line in result.output.splitlines() if "unit: kernel" in line)
    assert "time (this run)" in header and "83.8 s" in result.output
    said = _flat(result.output)
    assert "compile: 78.6 s for 1 unit = 65% of the leaderboard's 120 s" in said
    assert "(nvcc's own time, measured here; the table's time is this run's, which adds torch's flags and the SASS read;" in said


def test_quiet_keeps_the_result_line_of_a_submission_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """-q drops the table a result line sums up: the budget line was an info line, so -q printed nothing."""
    submission = tmp_path / "submission.py"
    submission.write_text(PLAIN_CUDA.replace("MARK", "// nvfp4ctl: no-tensor-op"))
    _timed_units(tmp_path, monkeypatch, failing=set())
    result = runner.invoke(app, ["-q", "build", str(submission)])
    assert result.exit_code == 0, result.output
    assert "unit: kernel" not in result.output
    assert "compile: 78.6 s for 1 unit = 65% of the leaderboard's 120 s" in _flat(result.output)


def test_a_failed_compile_is_not_counted_against_the_leaderboards_budget(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text(PLAIN_CUDA.replace("MARK", "// nvfp4ctl: no-tensor-op"))
    _timed_units(tmp_path, monkeypatch, failing={"plain"})
    alone = runner.invoke(app, ["build", str(submission)])
    assert alone.exit_code == 1, alone.output
    said = _flat(alone.output)
    assert "compile: failed (1 unit): no compile time to measure against the leaderboard's 120 s" in said
    assert "5.0 s" not in said and "% of the leaderboard's" not in said
    two = tmp_path / "two.py"
    two.write_text(PLAIN_CUDA.replace("MARK", "// nvfp4ctl: no-tensor-op")
                   + PLAIN_CUDA.splitlines()[-1].replace('"plain"', '"other"') + "\n")
    both = runner.invoke(app, ["build", str(two)])
    assert both.exit_code == 1, both.output
    said = _flat(both.output)
    assert "compile: 78.6 s for 1 unit = 65% of the leaderboard's 120 s" in said
    assert "compiles from scratch); 1 unit that failed to compile not counted" in said


def test_a_copy_of_a_submission_whose_cuda_is_the_same_is_a_cache_hit(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry was keyed by the .py's name and the `#line` marks naming it: sub_missing.py, submission.py
    with its Python edited, recompiled CUDA identical to submission.py's. What the compile reads stays in
    the key: the CUDA, the extension's name (torch's -DTORCH_EXTENSION_NAME), the flags."""
    import sys

    compiled: list[str] = []

    def command(extension: Extension, unit: Path, arch: str, code: str, folder: Path) -> list[str]:
        compiled.append(f"{extension.name}: {code}")
        return [sys.executable, "-c", "pass"]  # a compile that succeeds and leaves no object behind

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(submission_build, "_command", command)
    monkeypatch.setattr(submission_build.resources, "dump_sass", lambda binary: None)
    monkeypatch.setenv("COLUMNS", "200")
    source = PLAIN_CUDA.replace("MARK", "// nvfp4ctl: no-tensor-op")

    def build(name: str, text: str) -> str:
        (tmp_path / name).write_text(text)
        result = runner.invoke(app, ["build", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
        return next(line for line in result.output.splitlines() if "plain.cu:" in line or "other.cu:" in line)

    assert build("submission.py", source).endswith("built │") and len(compiled) == 1
    assert build("sub_missing.py", "import math  # the Python moved the CUDA down a line\n" + source).endswith("hit │")
    assert len(compiled) == 1
    build("edited.py", source.replace("p[0] = 1.0f", "p[0] = 2.0f"))
    build("renamed.py", source.replace('name="plain"', 'name="other"'))
    build("flags.py", source.replace('extra_cuda_cflags=[', 'extra_cuda_cflags=["-O2", '))
    assert len(compiled) == 4


def test_nothing_to_compile_is_no_failed_compile() -> None:
    """A load_inline without cuda_sources (host code only) compiles no unit and none fails: the line
    must not read "compile: failed"."""
    from nvfp4ctl.commands.build_submission import _budget_line

    assert _budget_line(0.0, 0, failed=0) == ("compile: no device code to compile", False)
    assert _budget_line(0.0, 0, failed=1)[0].startswith("compile: failed (1 unit)")


def test_quiet_keeps_the_result_line_of_a_submission_with_nothing_to_compile(tmp_path: Path, no_compiler: None) -> None:
    """init's plain-torch starter: `-q build` printed nothing, where the line is the command's result."""
    submission = tmp_path / "submission.py"
    submission.write_text("import torch\n\ndef custom_kernel(data):\n    return data[6]\n")
    result = runner.invoke(app, ["-q", "build", str(submission)])
    assert result.exit_code == 0, result.output
    assert "nothing to compile" in _flat(result.output)


@pytest.mark.parametrize("text, says_check_runs_it", [
    ("import torch\n\ndef custom_kernel(data):\n    return data[6]\n", True),
    ("import torch\n", False),
    ("def custom_kernal(data):\n    return data[6]\n", False),
])
def test_a_submission_with_nothing_to_compile_is_sent_to_check_only_where_check_runs_it(
        tmp_path: Path, no_compiler: None, text: str, says_check_runs_it: bool) -> None:
    """Without custom_kernel, "`nvfp4ctl check` runs it as it is" was false: check refuses it, exit 2."""
    submission = tmp_path / "submission.py"
    submission.write_text(text)
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output
    output = _flat(result.output)
    assert "nothing to compile" in output
    assert ("`nvfp4ctl check` runs it as it is" in output) is says_check_runs_it, output
    assert ("`nvfp4ctl check` refuses it as it is" in output) is not says_check_runs_it, output


@pytest.mark.parametrize("named", [True, False])
def test_submission_time_is_refused_for_a_submission(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     no_compiler: None, named: bool) -> None:
    """--submission-time times a kernel's export; given a submission.py (named, or the folder's own) it
    was never passed on: the build ran, exit 0, and nothing was timed."""
    import os

    from nvfp4ctl import runlog

    (tmp_path / "task.yml").write_text("tests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\n")
    (tmp_path / "submission.py").write_text(PLAIN_CUDA.replace("MARK", "// nvfp4ctl: no-tensor-op"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "300")
    result = runner.invoke(app, ["build", "--submission-time", *(["submission.py"] if named else [])])
    assert result.exit_code == 2, result.output
    said = _flat(result.output)
    assert said.startswith("error: --submission-time applies to kernel sources (.cu), timing `python submission.py`"
                           " of their export; for submission.py, build's `compile:` line is its compile time")
    assert len(result.output.strip().splitlines()) == 1, result.output  # one line, nothing compiled
    assert runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1].exit_code == "2"


def test_tensor_code_in_a_header_the_load_source_includes_is_refused_for_another_arch(
        tmp_path: Path, no_compiler: None) -> None:
    """A load() kernel whose tcgen05 sits in the helpers it includes needs sm_100a as much as one writing it inline."""
    (tmp_path / "umma.cuh").write_text('__device__ void commit() { asm volatile("tcgen05.commit.cta_group::1.b64 [0];"); }\n')
    (tmp_path / "k.cu").write_text('#include "umma.cuh"\n__global__ void k() { commit(); }\n')
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load\n"
                          "m = load(name='own', sources=['k.cu'], extra_cuda_cflags=['-gencode=arch=compute_100a,code=sm_100a'])\n")
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_90a"])
    assert result.exit_code == 2, result.output
    assert "its tcgen05 / SM100 instructions would not run there; pass --arch sm_100a; nothing was built" in _flat(result.output)


def _load_kernel_beside(tmp_path: Path, kernel: str, header: str) -> Path:
    """A submission whose load() builds k.cu for sm_100a, k.cu including ptx_helpers.cuh."""
    (tmp_path / "ptx_helpers.cuh").write_text(header)
    (tmp_path / "k.cu").write_text(kernel)
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load\n"
                          "m = load(name='own', sources=['k.cu'], extra_cuda_cflags=['-gencode=arch=compute_100a,code=sm_100a'])\n")
    return submission


SHARED_HELPERS = ('#pragma once\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000\n'
                  '__device__ __forceinline__ void umma_commit() { asm volatile("tcgen05.commit.cta_group::1.b64 [0];"); }\n'
                  '#endif\n__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;"); }\n')


def test_guarded_tcgen05_helpers_of_an_included_header_are_not_refused_for_sm_90a(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wgmma kernel including one ptx_helpers.cuh for both archs, its tcgen05 helpers under
    `#if __CUDA_ARCH__ >= 1000`, was refused with "its tcgen05 / SM100 instructions would not run there"."""
    submission = _load_kernel_beside(tmp_path, '#include "ptx_helpers.cuh"\n__global__ void k() { wgmma_fence(); }\n',
                                     SHARED_HELPERS)
    archs: list[str] = []
    monkeypatch.setattr(submission_build, "build_extension", lambda sources, extension, arch: archs.append(arch) or [])
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_90a"])
    assert result.exit_code == 0, result.output
    assert archs == ["sm_100a"] and "would not run" not in _flat(result.output)


def test_an_uncalled_tcgen05_helper_of_an_included_header_is_a_warning_naming_its_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unguarded but called by nothing: nvcc emits no code for it, so it is not refused; the warning says where."""
    unguarded = SHARED_HELPERS.replace("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000\n", "").replace("#endif\n", "")
    submission = _load_kernel_beside(tmp_path, '#include "ptx_helpers.cuh"\n__global__ void k(float* p) { p[0] = 1.0f; }\n',
                                     unguarded)
    monkeypatch.setattr(submission_build, "build_extension", lambda sources, extension, arch: [])
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_90a"])
    assert result.exit_code == 0, result.output
    assert (f"warning: {tmp_path / 'ptx_helpers.cuh'}:2: tcgen05 / SM100 code in umma_commit, which own's code never"
            " calls: not counted against --arch sm_90a (nvcc emits no code for a helper nothing calls)") in _flat(result.output)


@pytest.mark.parametrize(("header", "flags"), [
    ('__global__ void umma_probe() { asm volatile("tcgen05.commit.cta_group::1.b64 [0];"); }\n', ""),
    ('__device__ void umma_probe() { asm volatile("tcgen05.commit.cta_group::1.b64 [0];"); }\n', ", '-rdc=true'")])
def test_a_header_definition_nvcc_compiles_uncalled_is_refused_for_another_arch(
        tmp_path: Path, no_compiler: None, header: str, flags: str) -> None:
    """A header's kernel that nothing launches (or, with -rdc=true, its external __device__ function) was a
    warning, "nvcc emits no code for a helper nothing calls": nvcc compiles it all the same, and ptxas
    refuses its tcgen05 for sm_90a."""
    submission = _load_kernel_beside(tmp_path, '#include "ptx_helpers.cuh"\n__global__ void k(float* p) { p[0] = 1.0f; }\n',
                                     header)
    submission.write_text(submission.read_text().replace("code=sm_100a'", f"code=sm_100a'{flags}"))
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_90a"])
    assert result.exit_code == 2, result.output
    assert "its tcgen05 / SM100 instructions would not run there; pass --arch sm_100a; nothing was built" in _flat(result.output)
    assert "never calls" not in _flat(result.output)


def test_host_code_alone_is_announced_without_an_arch(tmp_path: Path, no_compiler: None) -> None:
    """Its step read `compiling host (sm_100a)`, an arch for code nothing compiles, before the warning."""
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load_inline\n"
                          "m = load_inline(name='host', cpp_sources='int f();', functions=['f'])\n")
    for arch in ([], ["--arch", "sm_100a"]):
        result = runner.invoke(app, ["build", str(submission), *arch])
        assert result.exit_code == 0, result.output
        steps = [line for line in result.output.splitlines() if line.startswith(("compiling", "host ("))]
        assert [step.split(":")[0] for step in steps] == ["host (host code only)"], result.output
