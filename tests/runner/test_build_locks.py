"""A load killed mid-build leaves torch's build lock (`<extensions folder>/<name>/lock`): nvfp4ctl removes the
ones its child created in nvfp4ctl's own folder, and a load that runs past its limit names a lock left there."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nvfp4ctl.build import toolchain
from nvfp4ctl.runner.build_locks import held_locks_note, remove_locks_since
from nvfp4ctl.runner.targets import SUBMISSION, TargetSpec
from nvfp4ctl.runner.worker import ChildTimeout, Worker

# what torch's FileBaton does for a load_inline: create the lock, or wait while another one's is there; then
# build (here: forever) and remove it
BUILDS_FOREVER = ("import os, time\n"
                  "folder = os.path.join(os.environ['TORCH_EXTENSIONS_DIR'], 'cpponly_ext')\n"
                  "os.makedirs(folder, exist_ok=True)\n"
                  "try:\n"
                  "    os.close(os.open(os.path.join(folder, 'lock'), os.O_CREAT | os.O_EXCL))\n"
                  "except FileExistsError:\n"
                  "    while os.path.exists(os.path.join(folder, 'lock')):\n"
                  "        time.sleep(0.1)\n"
                  "open(os.path.join(folder, 'building'), 'w').close()\n"
                  "time.sleep(600)\n\n"
                  "def custom_kernel(data):\n    return data\n")


@pytest.fixture(autouse=True)
def _cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(toolchain, "torch_build", lambda: toolchain.TorchBuild("2.13.0+cpu", None))
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TORCH_EXTENSIONS_DIR", raising=False)


def _submission(tmp_path: Path) -> TargetSpec:
    path = tmp_path / "s.py"
    path.write_text(BUILDS_FOREVER)
    return TargetSpec(SUBMISSION, path, "s.py")


def _own_folder(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "torch_extensions" / f"py{sys.version_info.major}{sys.version_info.minor}_cpu"


def _load_until_killed(target: TargetSpec) -> ChildTimeout:
    with Worker(target, 60.0, device="cpu", load_timeout_s=5.0) as worker, pytest.raises(ChildTimeout) as raised:
        worker.call("runner_jobs:call_target", label="call")
    return raised.value


def test_a_load_killed_mid_build_leaves_no_lock_for_the_next_run(tmp_path):
    """The next run of the same submission waited on the lock for the whole load limit (600 s by default)."""
    timeout = _load_until_killed(_submission(tmp_path))
    folder = _own_folder(tmp_path) / "cpponly_ext"
    assert (folder / "building").exists()  # it did build
    assert not (folder / "lock").exists()
    assert "build lock" not in str(timeout)


def test_a_lock_older_than_the_load_stays_and_is_named_where_the_load_ran_past_its_limit(tmp_path):
    folder = _own_folder(tmp_path) / "cpponly_ext"
    folder.mkdir(parents=True)
    (folder / "lock").touch()  # another run's, or one a killed nvfp4ctl left
    timeout = _load_until_killed(_submission(tmp_path))
    assert (folder / "lock").exists()
    assert str(timeout).splitlines()[0].endswith(
        f"; the child was killed; torch's build lock {folder / 'lock'} is there, which a build of the same extension"
        " waits on: another run may hold it; remove it if none does")
    assert "build lock" not in (timeout.what or "")


def test_a_folder_the_user_set_is_never_touched(tmp_path, monkeypatch):
    mine = tmp_path / "mine"
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(mine))
    timeout = _load_until_killed(_submission(tmp_path))
    assert (mine / "cpponly_ext" / "lock").exists()
    assert f"torch's build lock {mine / 'cpponly_ext' / 'lock'} is there" in str(timeout)


def test_a_killed_nvfp4ctl_leaves_no_lock(tmp_path):
    """The parent SIGKILLed mid-build: the child's group reaper removes the lock its build created."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import sys\nfrom pathlib import Path\n"
        "from nvfp4ctl.runner.targets import SUBMISSION, TargetSpec\n"
        "from nvfp4ctl.runner.worker import Worker\n"
        "if __name__ == '__main__':  # spawn imports this file again in the child\n"
        f"    target = TargetSpec(SUBMISSION, Path({str(tmp_path / 's.py')!r}), 's.py')\n"
        "    Worker(target, 60.0, device='cpu').call('runner_jobs:call_target', label='call')\n")
    _submission(tmp_path)
    environment = os.environ | {"PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    parent = subprocess.Popen([sys.executable, str(script)], env=environment)
    try:
        deadline = time.monotonic() + 60
        while not (built := list((tmp_path / "cache" / "torch_extensions").glob("*/cpponly_ext/building"))):
            assert time.monotonic() < deadline and parent.poll() is None, "the child never built"
            time.sleep(0.1)
        folder = built[0].parent  # named after the torch the parent finds, unpatched there
        assert (folder / "lock").exists()
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while (folder / "lock").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not (folder / "lock").exists()
    finally:
        if parent.poll() is None:
            parent.kill()


def test_only_locks_created_since_the_start_are_removed(tmp_path):
    old, new = tmp_path / "a" / "lock", tmp_path / "b" / "lock"
    for lock in (old, new):
        lock.parent.mkdir()
        lock.touch()
    os.utime(old, (1000.0, 1000.0))
    assert remove_locks_since(tmp_path, 2000.0) == [new]
    assert old.exists() and not new.exists()
    assert held_locks_note(tmp_path).startswith(f"; torch's build lock {old} is there")
    assert held_locks_note(None) == held_locks_note(tmp_path / "b") == ""


def test_a_load_interrupted_by_ctrl_c_leaves_no_lock(tmp_path):
    """Ctrl-C while the child builds: close() kills the busy child, and its lock goes with it."""
    worker = Worker(_submission(tmp_path), 60.0, device="cpu")
    child = worker._start_child()
    child.loading = True
    worker._send(child, ("load", ()), "loading s.py")
    folder = _own_folder(tmp_path) / "cpponly_ext"
    deadline = time.monotonic() + 60
    while not (folder / "building").exists():
        assert time.monotonic() < deadline, "the child never built"
        time.sleep(0.1)
    worker.close()
    assert not (folder / "lock").exists()
