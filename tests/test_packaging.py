"""A wheel carries what nvfp4ctl reads at run time (kernels/, task.yml, the sm100 host proof).

The whole install (wheelhouse, offline virtualenv, commands from an empty folder) runs in CI as
.ci/package_check.sh; these are the fast checks that keep its pieces consistent.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from nvfp4ctl import project

ROOT = Path(__file__).resolve().parents[1]


def _setup_shipped() -> tuple[str, ...]:
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "SHIPPED" for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    raise AssertionError("setup.py has no SHIPPED tuple")


def test_every_shipped_path_the_code_asks_for_is_in_setup_py_and_the_manifest() -> None:
    asked = set()
    for path in (ROOT / "nvfp4ctl").rglob("*.py"):
        asked |= set(re.findall(r"""shipped\(\s*["']([^"']+)["']""", path.read_text()))
    assert asked, "no shipped(...) call found"
    listed = _setup_shipped()
    for relative in asked:
        assert any(relative == item or relative.startswith(item + "/") for item in listed), relative
    manifest = (ROOT / "MANIFEST.in").read_text()
    for item in listed:
        assert item in manifest, f"{item} is copied by setup.py but not in MANIFEST.in (sdists would lack it)"
        assert (ROOT / item).exists(), item


def test_the_wheels_copy_wins_over_the_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert project.shipped("task.yml") == ROOT / "task.yml"  # a checkout has no _shipped/
    (tmp_path / "kernels").mkdir()
    monkeypatch.setattr(project, "SHIPPED_DIR", tmp_path)
    assert project.shipped("kernels") == tmp_path / "kernels"


def test_a_built_wheel_holds_the_shipped_files(tmp_path: Path) -> None:
    pytest.importorskip("setuptools")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next(tmp_path.glob("nvfp4ctl-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("nvfp4ctl/_shipped/task.yml", "nvfp4ctl/_shipped/kernels/common/nvfp4_gemm_api.h",
                     "nvfp4ctl/_shipped/kernels/common/torch_binding.cpp",
                     "nvfp4ctl/_shipped/kernels/sm90/nvfp4_gemm_sm90.cu",
                     "nvfp4ctl/_shipped/kernels/sm100/nvfp4_gemm_sm100.cu",
                     "nvfp4ctl/_shipped/kernels/torch_dequant/submission.py",
                     "nvfp4ctl/_shipped/tests/sm100/host/sm100_host_proof.cu",
                     "nvfp4ctl/_shipped/docs/byo_kernel.md", "nvfp4ctl/_shipped/README.md"):
        assert required in names, required
    assert not any("__pycache__" in name for name in names)


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=nvfp4ctl tests", "-c", "user.email=tests@nvfp4ctl.invalid",
                           "-c", "commit.gpgsign=false", *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The source tree as it is now (committed or not, ignored files left out) in a git repository of its own,
    with one commit: its HEAD is the commit a build from it must stamp."""
    pytest.importorskip("setuptools")
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a checkout of nvfp4ctl")
    listed = _git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    tree = tmp_path_factory.mktemp("clone") / "nvfp4ctl-src"
    for relative in filter(None, listed.split("\0")):
        if (source := ROOT / relative).is_file():
            (tree / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tree / relative)
    _git(tree, "init", "-q")
    _git(tree, "add", "-A")
    _git(tree, "commit", "-q", "-m", "the tree under test")
    return tree


def _pip_wheel(source: Path, into: Path) -> Path:
    """A wheel built offline, with this Python's setuptools (skips where pip cannot build without an index)."""
    into.mkdir(parents=True, exist_ok=True)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "--no-index", "-w", str(into), str(source)], capture_output=True, text=True, timeout=600)
    if built.returncode != 0 and "No module named pip" in built.stderr:
        pytest.skip("pip cannot build here: " + built.stderr.strip().splitlines()[-1])
    assert built.returncode == 0, built.stderr[-2000:]
    return next(into.glob("nvfp4ctl-*.whl"))


@pytest.fixture(scope="module")
def clone_wheel(clone: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of the clone, built over a build/ that an earlier build left with a module since deleted."""
    stale = clone / "build" / "lib" / "nvfp4ctl" / "deleted_long_ago.py"
    stale.parent.mkdir(parents=True)
    stale.write_text("raise ImportError('a module the source no longer has')\n")
    return _pip_wheel(clone, tmp_path_factory.mktemp("clone-wheel"))


def _tool_version_of(wheel: Path, tmp_path: Path) -> str:
    """tool_version() as the unpacked wheel's nvfp4ctl reports it, run from a folder outside any checkout."""
    unpacked = tmp_path / "site-packages"
    zipfile.ZipFile(wheel).extractall(unpacked)
    environment = {**os.environ, "PYTHONPATH": str(unpacked)}
    shown = subprocess.run([sys.executable, "-c", "from nvfp4ctl.tool_version import tool_version; print(tool_version())"],
                           cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr[-2000:]
    return shown.stdout.strip()


def test_a_wheel_carries_the_commit_it_was_built_from(clone: Path, clone_wheel: Path, tmp_path: Path) -> None:
    head = _git(clone, "rev-parse", "HEAD")
    stamp = zipfile.ZipFile(clone_wheel).read("nvfp4ctl/_shipped/BUILD_COMMIT").decode()
    assert stamp == head + "\n"
    assert _tool_version_of(clone_wheel, tmp_path).endswith(f" ({head[:7]})")


def test_a_wheel_built_from_a_tree_with_changes_says_dirty(clone: Path, tmp_path: Path) -> None:
    """As the run log marks a checkout's commit: "+dirty" where tracked files changed; the run log itself
    (MEMORY.md, which every command run in the checkout appends to) is no change."""
    tree = tmp_path / "nvfp4ctl-src"
    shutil.copytree(clone, tree)
    head = _git(tree, "rev-parse", "HEAD")
    with (tree / "MEMORY.md").open("a") as memory:
        memory.write("\n- a run-log line\n")
    clean = _pip_wheel(tree, tmp_path / "clean")
    assert zipfile.ZipFile(clean).read("nvfp4ctl/_shipped/BUILD_COMMIT").decode() == head + "\n"
    with (tree / "task.yml").open("a") as task:
        task.write("\n# an edit not committed\n")
    dirty = _pip_wheel(tree, tmp_path / "dirty")
    assert zipfile.ZipFile(dirty).read("nvfp4ctl/_shipped/BUILD_COMMIT").decode() == head + "+dirty\n"
    assert _tool_version_of(dirty, tmp_path).endswith(f" ({head[:7]}+dirty)")


def test_a_wheel_leaves_out_modules_a_stale_build_folder_still_holds(clone_wheel: Path) -> None:
    names = set(zipfile.ZipFile(clone_wheel).namelist())
    assert "nvfp4ctl/tool_version.py" in names
    assert "nvfp4ctl/deleted_long_ago.py" not in names


def _unpacked_sdist(clone: Path, tmp_path: Path) -> Path:
    """The root of the clone's sdist, unpacked under `tmp_path`; the sdist carries the stamp BUILD_COMMIT."""
    made = subprocess.run([sys.executable, "-c", "import sys; from setuptools import build_meta; "
                           "print(build_meta.build_sdist(sys.argv[1]))", str(tmp_path / "sdist")],
                          cwd=clone, capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stderr[-2000:]
    sdist = tmp_path / "sdist" / made.stdout.strip().splitlines()[-1]
    with tarfile.open(sdist) as archive:
        unpacked = [name for name in archive.getnames() if name.endswith("/BUILD_COMMIT")]
        assert unpacked, "the sdist carries no BUILD_COMMIT"
        if hasattr(tarfile, "data_filter"):  # Python 3.12 warns without a filter; 3.10 before 3.10.12 has none
            archive.extractall(tmp_path / "unpacked", filter="data")
        else:
            archive.extractall(tmp_path / "unpacked")
    return (tmp_path / "unpacked" / unpacked[0]).parent


def test_a_wheel_built_from_the_sdist_carries_the_commit_too(clone: Path, tmp_path: Path) -> None:
    source = _unpacked_sdist(clone, tmp_path)  # outside git: only the stamp says the commit
    wheel = _pip_wheel(source, tmp_path / "wheel")
    head = _git(clone, "rev-parse", "HEAD")
    assert zipfile.ZipFile(wheel).read("nvfp4ctl/_shipped/BUILD_COMMIT").decode() == head + "\n"


def test_an_unpacked_sdist_made_a_repository_of_its_own_stamps_the_sdists_commit(clone: Path, tmp_path: Path) -> None:
    """`git init` in an unpacked sdist: that repository's HEAD is no commit of nvfp4ctl's; the sdist's stamp
    is, and without one no commit is stamped."""
    source = _unpacked_sdist(clone, tmp_path)
    _git(source, "init", "-q")
    _git(source, "add", "-A")
    _git(source, "commit", "-q", "-m", "someone's own history")
    wheel = _pip_wheel(source, tmp_path / "wheel")
    head = _git(clone, "rev-parse", "HEAD")
    assert zipfile.ZipFile(wheel).read("nvfp4ctl/_shipped/BUILD_COMMIT").decode() == head + "\n"
    _git(source, "rm", "-q", "BUILD_COMMIT")
    _git(source, "commit", "-q", "-m", "the stamp dropped")
    unstamped = _pip_wheel(source, tmp_path / "unstamped")
    assert "nvfp4ctl/_shipped/BUILD_COMMIT" not in zipfile.ZipFile(unstamped).namelist()


def test_the_shipped_guides_link_only_to_files_the_wheel_holds(clone_wheel: Path) -> None:
    names = set(zipfile.ZipFile(clone_wheel).namelist())
    guides = sorted(name for name in names if name.startswith("nvfp4ctl/_shipped/") and name.endswith(".md"))
    assert "nvfp4ctl/_shipped/README.md" in guides
    broken = []
    for guide in guides:
        text = re.sub(r"^```.*?^```", "", zipfile.ZipFile(clone_wheel).read(guide).decode(), flags=re.S | re.M)
        for link in re.findall(r"\]\(([^)\s]+)\)", text):
            path = link.partition("#")[0]
            if not path or re.match(r"[a-z][a-z0-9+.-]*:", link):
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(guide), path))
            if target not in names and not any(name.startswith(target + "/") for name in names):
                broken.append(f"{guide}: {link}")
    assert not broken, "\n".join(broken)


def test_the_shipped_guides_name_a_checkouts_notes_as_plain_text(clone_wheel: Path) -> None:
    """The development notes the design docs cite (benchmarks/) are a checkout's: an install's copy names them
    in the source tree, where the checkout's own copy links to them."""
    shipped = zipfile.ZipFile(clone_wheel).read("nvfp4ctl/_shipped/docs/sm90_kernel.md").decode()
    assert "](../benchmarks/NOTES_sm90.md)" in (ROOT / "docs" / "sm90_kernel.md").read_text()
    assert "`benchmarks/NOTES_sm90.md` in the source tree" in shipped
    assert "](../benchmarks/" not in shipped


def _user_facing_strings(path: Path) -> list[tuple[int, str]]:
    """String constants of a module that are not docstrings, shipped(...) paths or a guide's name in the
    repository (project.BYO_KERNEL_DOC, which --help names: tests/test_cli.py checks the file exists):
    messages, --help texts."""
    tree = ast.parse(path.read_text())
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "shipped":
            skipped.update(id(argument) for argument in node.args)
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["BYO_KERNEL_DOC"]:
            skipped.add(id(node.value))
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skipped.add(id(first.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped]


def test_no_message_names_a_docs_file_only_a_checkout_has() -> None:
    """A wheel user has no docs/ folder: messages name the shipped copy (project.byo_kernel_doc); --help
    names the guide by its name in the repository (project.BYO_KERNEL_DOC), not by a path."""
    found = [f"{path.relative_to(ROOT)}:{line}: {text[:80]!r}" for path in sorted((ROOT / "nvfp4ctl").rglob("*.py"))
             for line, text in _user_facing_strings(path) if re.search(r"docs/\w+\.md", text)]
    assert not found, "\n".join(found)


def test_the_byo_kernel_guide_in_messages_is_the_wheels_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl.errors import UsageError
    from nvfp4ctl.umma.configs import parse_configs

    assert project.byo_kernel_doc().is_file()  # the checkout's copy (setup.py ships it)
    guide = tmp_path / "docs" / "byo_kernel.md"
    guide.parent.mkdir()
    guide.write_text("# the wheel's copy\n")
    monkeypatch.setattr(project, "SHIPPED_DIR", tmp_path)
    kernel = tmp_path / "hand_written.cu"
    kernel.write_text("// a tcgen05 kernel without a CUTLASS dispatch table\n")
    with pytest.raises(UsageError, match=re.escape(str(guide))):
        parse_configs(kernel)
