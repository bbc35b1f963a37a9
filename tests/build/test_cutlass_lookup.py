"""Where `build` finds CUTLASS's headers: where an exported submission's _include_dirs() finds them at import,
$CUTLASS_PATH, $CUTLASS_HOME, /usr/local/cutlass, then the nvidia-cutlass wheel, the first holding include/cute.
build took $CUTLASS_PATH, else the wheel, so with $CUTLASS_HOME set (or /usr/local/cutlass there) an export
compiled at import against other headers than build had. CUTLASS folders here are fakes: include/cute alone."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import flags, submission_build, toolchain
from nvfp4ctl.build.sources import build_inputs
from nvfp4ctl.cli import app
from nvfp4ctl.errors import UsageError
from nvfp4ctl.export import CUTLASS_LOOKUP, export_submission
from nvfp4ctl.project import kernels_dir
from tests.cli_streams import separate_streams_runner

CUTLASS_KERNEL = kernels_dir() / "sm100" / "nvfp4_gemm_sm100.cu"
SASS = "        /*0a70*/                   UTCOMMA.4X gdesc[UR4], gdesc[UR6], tmem[UR8], tmem[UR10], idesc[UR12], UPT ;\n"
WRITTEN_SYSTEM_ROOT = '"/usr/local/cutlass"'


def _cutlass(root: Path) -> Path:
    (root / "include" / "cute").mkdir(parents=True)
    return root


@pytest.fixture()
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    """Fake roots: two checkouts, an empty folder, a missing one, a stand-in for /usr/local/cutlass (absent until
    made) and a cutlass_library package (a wheel without headers until made), found before any installed."""
    monkeypatch.delenv("CUTLASS_PATH", raising=False)
    monkeypatch.delenv("CUTLASS_HOME", raising=False)
    system = tmp_path / "usr-local-cutlass"
    monkeypatch.setattr(toolchain, "CUTLASS_SYSTEM_ROOT", str(system))
    (tmp_path / "site" / "cutlass_library").mkdir(parents=True)
    (tmp_path / "site" / "cutlass_library" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    toolchain.cutlass_root.cache_clear()
    (tmp_path / "empty").mkdir()
    yield {"path": _cutlass(tmp_path / "checkout"), "home": _cutlass(tmp_path / "home"), "empty": tmp_path / "empty",
           "missing": tmp_path / "missing", "system": system, "wheel": tmp_path / "site" / "cutlass_library" / "source"}
    toolchain.cutlass_root.cache_clear()
    toolchain.forget_said_lookups()  # what a test's lookups said is no later test's to keep quiet


def _written_lookup(system: Path) -> list[str] | None:
    """What the export's _include_dirs() returns on this machine, with /usr/local/cutlass standing at `system`;
    None for its RuntimeError (no CUTLASS)."""
    assert CUTLASS_LOOKUP.count(WRITTEN_SYSTEM_ROOT) == 1
    namespace: dict[str, object] = {}
    exec("import importlib.util\nimport os\n" + CUTLASS_LOOKUP.replace(WRITTEN_SYSTEM_ROOT, repr(str(system))), namespace)
    try:
        return namespace["_include_dirs"]()  # type: ignore[operator,no-any-return]
    except RuntimeError:
        return None


VARIABLE_VALUES = [None, "", "path", "home", "empty", "missing"]


@pytest.mark.parametrize("system, wheel", list(itertools.product([False, True], repeat=2)))
def test_build_and_the_written_lookup_find_the_same_headers(machine: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                            system: bool, wheel: bool) -> None:
    if system:
        _cutlass(machine["system"])
    if wheel:
        _cutlass(machine["wheel"])
    for path, home in itertools.product(VARIABLE_VALUES, repeat=2):
        for name, value in (("CUTLASS_PATH", path), ("CUTLASS_HOME", home)):
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, str(machine[value]) if value else "")
        found, _ = toolchain.look_up_cutlass()
        tools = None if found is None else [str(folder) for folder in found.include_dirs]
        assert tools == _written_lookup(machine["system"]), f"{path=} {home=} {system=} {wheel=}"


def test_cutlass_home_is_taken_before_usr_local_cutlass_and_the_wheel(machine: dict[str, Path],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A .cu kernel's build, the host proof and dump took the wheel's headers beside $CUTLASS_HOME."""
    _cutlass(machine["system"])
    _cutlass(machine["wheel"])
    monkeypatch.setenv("CUTLASS_HOME", str(machine["home"]))
    assert toolchain.cutlass_include_dirs()[0] == machine["home"] / "include"
    assert machine["home"] / "include" in flags.include_dirs(build_inputs(CUTLASS_KERNEL))
    monkeypatch.delenv("CUTLASS_HOME")
    assert toolchain.cutlass_headers().described() == f"{machine['system']}'s ({machine['system'] / 'include'})"


def test_a_variable_naming_no_cutlass_is_passed_over_and_said(machine: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CUTLASS_PATH", str(machine["missing"]))
    monkeypatch.setenv("CUTLASS_HOME", str(machine["empty"]))
    with pytest.raises(UsageError) as refused:
        toolchain.cutlass_headers()
    assert str(refused.value) == (
        "the kernel includes CUTLASS/CuTe headers but none were found ($CUTLASS_PATH, $CUTLASS_HOME, /usr/local/cutlass)"
        " and the nvidia-cutlass wheel is not installed (pip install nvidia-cutlass);"
        f" $CUTLASS_PATH={machine['missing']} does not exist: no CUTLASS headers there, passed over: the next"
        " place in the lookup order is used, as an exported submission's lookup also does;"
        f" $CUTLASS_HOME={machine['empty']} has no include/cute: no CUTLASS headers there, passed over: the next"
        " place in the lookup order is used, as an exported submission's lookup also does")
    _cutlass(machine["wheel"])
    capsys.readouterr()
    assert toolchain.cutlass_headers().wheel and toolchain.cutlass_headers().root == machine["wheel"]
    said = capsys.readouterr().err
    assert said.count("warning: $CUTLASS_PATH=") == 1 and said.count("warning: $CUTLASS_HOME=") == 1, said


def test_build_of_an_export_compiles_with_cutlass_home_and_warns_of_a_cutlass_path_passed_over(
        tmp_path: Path, compiles: list[str], machine: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The note named the wheel's headers while `python submission.py` compiled with $CUTLASS_HOME's, and a
    $CUTLASS_PATH that does not exist was added as include folders without a word."""
    _cutlass(machine["wheel"])
    monkeypatch.setattr(submission_build.resources, "dump_sass", lambda binary: SASS)
    monkeypatch.setenv("CUTLASS_PATH", str(machine["missing"]))
    monkeypatch.setenv("CUTLASS_HOME", str(machine["home"]))
    submission = tmp_path / "submission.py"
    export_submission(CUTLASS_KERNEL, submission)
    result = separate_streams_runner().invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert (f"warning: $CUTLASS_PATH={machine['missing']} does not exist: no CUTLASS headers there, passed over:"
            " the next place in the lookup order is used, as an exported submission's lookup also does") in said
    assert said.count("$CUTLASS_PATH=") == 1
    shown = " ".join(result.stdout.split())
    assert f"built with this machine's, as for any code that brings none: $CUTLASS_HOME's ({machine['home'] / 'include'})" in shown


def test_the_cache_key_follows_the_checkout_build_compiles_with(tmp_path: Path, machine: dict[str, Path],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A .cu kernel's key held the wheel's version whatever the checkout: a new $CUTLASS_HOME reused the entry."""
    from nvfp4ctl.build import cache

    _cutlass(machine["wheel"])
    monkeypatch.setattr(toolchain, "cutlass_version", lambda: "4.2.0.0")
    monkeypatch.setattr(toolchain, "nvcc_version", lambda: "nvcc 13.0")
    inputs = build_inputs(CUTLASS_KERNEL)
    wheel = cache.cache_key(inputs, "sm_100a", "device")
    monkeypatch.setenv("CUTLASS_HOME", str(machine["home"]))
    home = cache.cache_key(inputs, "sm_100a", "device")
    (machine["home"] / "include" / "cute" / "tensor.hpp").write_text("// updated in place\n")
    assert len({wheel, home, cache.cache_key(inputs, "sm_100a", "device")}) == 3


def test_the_written_lookup_is_the_one_exports_carry() -> None:
    """Written from build's order, the lookup is the text exports have carried: build knows an export's lookup
    by its exact definition (build.export_lookup), and one changed would make every earlier export's a warning."""
    carried = '''
def _include_dirs():
    """CUTLASS/CuTe headers on this machine: $CUTLASS_PATH, /usr/local/cutlass, or pip's nvidia-cutlass."""
    roots = [os.environ[name] for name in ("CUTLASS_PATH", "CUTLASS_HOME") if os.environ.get(name)]
    roots.append("/usr/local/cutlass")
'''
    assert carried in CUTLASS_LOOKUP


def test_the_lookup_order_in_words_is_builds_beside_its_constants() -> None:
    """It was made in export of toolchain's constants, and build's note imported it from export."""
    from nvfp4ctl import export

    assert toolchain.CUTLASS_LOOKUP_ORDER == "$CUTLASS_PATH, $CUTLASS_HOME, /usr/local/cutlass, then the nvidia-cutlass wheel"
    assert not hasattr(export, "CUTLASS_LOOKUP_ORDER")


# one text for a kernel's build and an export's: what nvfp4ctl does, then why (a kernel build involves no export)
PASSED_OVER = ("does not exist: no CUTLASS headers there, passed over: the next place in the lookup order is used,"
               " as an exported submission's lookup also does")


def _said_once(stderr: str, missing: Path) -> bool:
    return " ".join(stderr.split()).count(f"warning: $CUTLASS_PATH={missing} {PASSED_OVER}") == 1


def test_check_and_bench_of_a_cutlass_kernel_say_a_variable_passed_over(
        machine: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """check and bench --kernel build in the child, whose output goes to its log: the $CUTLASS_PATH its lookup
    passed over was never said. The parent says it, once, and nothing for a kernel that includes no CUTLASS. It
    said the variable was "passed over as an exported submission's lookup does at import", where no export is built."""
    from nvfp4ctl.runner.targets import resolve_target

    _cutlass(machine["wheel"])
    monkeypatch.setenv("CUTLASS_PATH", str(machine["missing"]))
    resolve_target(None, CUTLASS_KERNEL)
    resolve_target(None, CUTLASS_KERNEL)
    assert _said_once(capsys.readouterr().err, machine["missing"])
    toolchain.forget_said_lookups()
    resolve_target(None, kernels_dir() / "sm90" / "nvfp4_gemm_sm90.cu")
    assert "CUTLASS" not in capsys.readouterr().err


def test_dump_runtime_says_a_variable_passed_over(tmp_path: Path, machine: dict[str, Path],
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """dump --runtime builds its debug kernel in a child whose stderr is read only when it fails."""
    import subprocess

    from nvfp4ctl.dump import runtime

    _cutlass(machine["wheel"])
    monkeypatch.setenv("CUTLASS_PATH", str(machine["missing"]))
    (tmp_path / "expected.json").write_text("{}")
    monkeypatch.setattr(runtime.subprocess, "run", lambda command, **_: subprocess.CompletedProcess(command, 0, "", ""))
    runtime.run_debug_kernel(CUTLASS_KERNEL, CUTLASS_KERNEL, tmp_path, 128, 128, 256, 1, 0, 0)
    assert _said_once(capsys.readouterr().err, machine["missing"])


def test_the_host_proof_says_a_variable_passed_over(machine: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from nvfp4ctl.umma import host_proof

    _cutlass(machine["wheel"])
    monkeypatch.setenv("CUTLASS_PATH", str(machine["missing"]))
    monkeypatch.setattr(toolchain, "nvcc_path", lambda: Path("/usr/local/cuda/bin/nvcc"))
    assert host_proof.toolchain_missing() is None
    assert _said_once(capsys.readouterr().err, machine["missing"])


def test_each_run_says_it_and_tune_workers_leave_it_to_the_parent(
        tmp_path: Path, compiles: list[str], machine: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Once per run, not once per process (tests run many commands in one), and never from a compile worker."""
    from nvfp4ctl.console import NORMAL, QUIET, get_console, set_verbosity
    from nvfp4ctl.tune import compile_pool

    _cutlass(machine["wheel"])
    monkeypatch.setattr(submission_build.resources, "dump_sass", lambda binary: SASS)
    monkeypatch.setenv("CUTLASS_PATH", str(machine["missing"]))
    submission = tmp_path / "submission.py"
    export_submission(CUTLASS_KERNEL, submission)
    for _ in range(2):
        result = separate_streams_runner().invoke(app, ["build", str(submission)])
        assert result.exit_code == 0 and _said_once(result.stderr, machine["missing"]), result.stderr
    monkeypatch.setattr(compile_pool.os, "setpgid", lambda pid, group: None)
    try:
        compile_pool._own_process_group()
        assert get_console().verbosity == QUIET
    finally:
        set_verbosity(NORMAL)


def test_tune_of_a_cutlass_kernel_looks_cutlass_up_once(machine: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """tune --kernel looked CUTLASS up and read the kernel's build inputs in resolve_target, then again in
    resolve_kernel (and the lookup a second time each, to say what it had already found)."""
    from nvfp4ctl.build import sources
    from nvfp4ctl.task import parse_task
    from nvfp4ctl.tune.setup import resolve_kernel

    _cutlass(machine["wheel"])
    monkeypatch.setenv("CUTLASS_PATH", str(machine["missing"]))
    lookups: list[None] = []
    reads: list[Path] = []
    look_up, read_inputs = toolchain.look_up_cutlass, sources._build_inputs
    monkeypatch.setattr(toolchain, "look_up_cutlass", lambda *args: lookups.append(None) or look_up(*args))
    # the inputs worked out: the not-UTF-8 warnings ask for them too, within the same reads
    monkeypatch.setattr(sources, "_build_inputs", lambda path, *args: reads.append(path) or read_inputs(path, *args))
    task = parse_task('tests:\n  - {"m": 128, "n": 256, "k": 256, "l": 1, "seed": 1111}\n')
    assert resolve_kernel(CUTLASS_KERNEL, task, has_gpu=False).path == CUTLASS_KERNEL.resolve()
    assert _said_once(capsys.readouterr().err, machine["missing"])
    assert (len(lookups), len(reads)) == (1, 1)
