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
    toolchain.cutlass_lookup_warnings()  # what a test's lookups kept is no later test's to say


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


def test_a_variable_naming_no_cutlass_is_passed_over_and_said(machine: dict[str, Path],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUTLASS_PATH", str(machine["missing"]))
    monkeypatch.setenv("CUTLASS_HOME", str(machine["empty"]))
    with pytest.raises(UsageError) as refused:
        toolchain.cutlass_headers()
    assert str(refused.value) == (
        "the kernel includes CUTLASS/CuTe headers but none were found ($CUTLASS_PATH, $CUTLASS_HOME, /usr/local/cutlass)"
        " and the nvidia-cutlass wheel is not installed (pip install nvidia-cutlass);"
        f" $CUTLASS_PATH={machine['missing']} does not exist: no CUTLASS headers there, passed over as an exported"
        " submission's lookup does at import;"
        f" $CUTLASS_HOME={machine['empty']} has no include/cute: no CUTLASS headers there, passed over as an exported"
        " submission's lookup does at import")
    _cutlass(machine["wheel"])
    assert toolchain.cutlass_headers().wheel and toolchain.cutlass_headers().root == machine["wheel"]
    assert len(toolchain.cutlass_lookup_warnings()) == 2 and toolchain.cutlass_lookup_warnings() == []


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
    assert (f"warning: $CUTLASS_PATH={machine['missing']} does not exist: no CUTLASS headers there, passed over as"
            " an exported submission's lookup does at import") in said
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
