from __future__ import annotations

from pathlib import Path

import pytest

from models_common import kernel_beside_a_models_common
from nvfp4ctl import lock_holder
from nvfp4ctl.build import cache, flags, sources
from stand_in_units import saved_report


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    common = tmp_path / "common"
    common.mkdir()
    (common / "nvfp4_gemm_api.h").write_text("#pragma once\n")
    (common / "torch_binding.cpp").write_text('#include "nvfp4_gemm_api.h"\n')
    (tmp_path / "sm90").mkdir()
    (tmp_path / "sm90" / "k.cu").write_text('#include "nvfp4_gemm_api.h"\n')
    monkeypatch.setattr(sources, "kernels_dir", lambda: tmp_path)
    return tmp_path


def _key(project: Path, arch: str = "sm_90a") -> str:
    return cache.cache_key(sources.build_inputs(project / "sm90" / "k.cu"), arch, "device")


def test_key_is_stable_and_follows_every_input(project: Path) -> None:
    first = _key(project)
    assert _key(project) == first
    assert _key(project, "sm_100a") != first
    (project / "common" / "nvfp4_gemm_api.h").write_text("#pragma once\n// changed\n")
    second = _key(project)
    assert second != first
    (project / "common" / "torch_binding.cpp").write_text('#include "nvfp4_gemm_api.h"\n// changed\n')
    assert _key(project) != second


def test_key_follows_a_header_of_a_kernels_common_that_is_no_override(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A model's kernels/common/rope.cuh, which the kernel includes after nvfp4ctl's own headers: an edit
    to it is a new build, not the cached one."""
    kernel, common = kernel_beside_a_models_common(tmp_path, "nvfp4_gemm_api.h", "#pragma once\n")
    monkeypatch.chdir(tmp_path)
    first = cache.cache_key(sources.build_inputs(kernel), "sm_90a", "device")
    (common / "rope.cuh").write_text("#pragma once\n// changed\n")
    assert cache.cache_key(sources.build_inputs(kernel), "sm_90a", "device") != first


def test_key_follows_a_header_the_kernel_includes_with_angle_brackets(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`#include <rope.cuh>` is found through the build's -I folders (kernels/common) as a quoted one is: the
    header was left out of the build's inputs, so editing it kept the cached build, a stale module."""
    from nvfp4ctl.build import builder
    kernel, common = kernel_beside_a_models_common(tmp_path, "nvfp4_gemm_api.h", "#pragma once\n")
    kernel.write_text('#include <nvfp4_gemm_api.h>\n#include <rope.cuh>\n#include <cuda_fp16.h>\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(builder, "build_mode", lambda: builder.DEVICE)
    inputs = sources.build_inputs(kernel)
    assert (common / "rope.cuh").resolve() in inputs.headers
    assert all(header.parent in map(Path.resolve, flags.include_dirs(inputs)) for header in inputs.headers)
    entry = cache.entry_dir(kernel, "sm_90a", cache.cache_key(inputs, "sm_90a", builder.DEVICE))
    entry.mkdir(parents=True)
    saved_report(kernel, "sm_90a", entry.name, entry)
    assert builder.has_build(kernel, "sm_90a") is True
    (common / "rope.cuh").write_text("#pragma once\n// changed\n")
    assert builder.has_build(kernel, "sm_90a") is False  # a new key: the next build compiles the edit


def test_a_header_a_kernel_saved_with_a_byte_order_mark_includes_first_is_one_of_its_inputs(tmp_path: Path) -> None:
    """The mark before the first line's `#include` hid that directive: the header was no input, so editing it
    kept the cached build (nvcc skips the mark and reads the include)."""
    (tmp_path / "tiles.cuh").write_text("#pragma once\n")
    kernel = tmp_path / "k.cu"
    kernel.write_bytes(b"\xef\xbb\xbf" + b'#include "tiles.cuh"\n__global__ void k() {}\n')
    assert (tmp_path / "tiles.cuh").resolve() in [path.resolve() for path in sources.local_headers(kernel)]


def test_entries_live_under_the_cache_env(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "c"))
    entry = cache.entry_dir(project / "sm90" / "k.cu", "sm_90a", "ab" * 32)
    assert entry == tmp_path / "c" / f"k-sm_90a-{'ab' * 8}"
    monkeypatch.delenv("NVFP4CTL_CACHE")
    assert cache.cache_root() == Path.home() / ".cache" / "nvfp4ctl"


def test_staging_lands_atomically_or_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path))
    entry = tmp_path / "k-sm_90a-0123"
    with pytest.raises(RuntimeError), cache.staging(entry) as folder:
        (folder / "half-written").write_text("x")
        raise RuntimeError("compile failed")
    assert not entry.exists() and list((tmp_path / "tmp").iterdir()) == []
    with cache.staging(entry) as folder:
        (folder / "report.json").write_text("{}")
        cache.land(folder, entry)
    assert (entry / "report.json").is_file() and list((tmp_path / "tmp").iterdir()) == []


def test_key_follows_the_binding_flags(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _key(project)
    monkeypatch.setattr(flags, "BINDING_CFLAGS", ("-O2",))
    assert _key(project) != first  # an entry built with the binding at another level is not reused


@pytest.mark.parametrize("name", flags.CODE_CHANGING_ENV)
def test_key_follows_the_compilers_environment(project: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    for each in flags.CODE_CHANGING_ENV:
        monkeypatch.delenv(each, raising=False)
    plain = _key(project)
    monkeypatch.setenv(name, "-maxrregcount=24")
    limited = _key(project)
    assert limited != plain  # a build with 24 registers is not the plain build's entry
    monkeypatch.setenv(name, "")
    assert _key(project) == plain  # set but empty is not set: nvcc adds nothing


def test_submission_key_follows_the_compilers_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl.build import submission_build
    from nvfp4ctl.build.submission_sources import Extension

    for each in flags.CODE_CHANGING_ENV:
        monkeypatch.delenv(each, raising=False)
    extension = Extension(call="load_inline", name="k", line=1)
    plain = submission_build._key("__global__ void k() {}", extension, ("sm_90a",))
    monkeypatch.setenv("NVCC_APPEND_FLAGS", "-maxrregcount=24")
    assert submission_build._key("__global__ void k() {}", extension, ("sm_90a",)) != plain


def _ended_pid() -> int:
    """A pid no process holds: one above the kernel's pid_max, which is never handed out, so no process started
    while the test runs can take it, as one that merely ended could be."""
    try:
        return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1
    except (OSError, ValueError):
        return 2**22 + 1  # above Linux's PID_MAX_LIMIT


def _left_staging(scratch: Path, name: str, age_s: float, inner_age_s: float | None = None) -> Path:
    """A staging folder as a killed build leaves it: a half-written file in it, both `age_s` old (the
    file `inner_age_s` old where given)."""
    import os
    import time

    folder = scratch / name
    folder.mkdir(parents=True)
    inner = folder / "kernel.cuda.o"
    inner.write_text("half")
    now = time.time()
    os.utime(inner, (now, now - (age_s if inner_age_s is None else inner_age_s)))
    os.utime(folder, (now, now - age_s))
    return folder


def test_a_killed_builds_staging_folder_is_swept_by_the_next_build_here(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A build or tune killed with SIGKILL (kill -9, the OOM killer, a closed terminal's SIGHUP) never ran
    staging()'s finally, and its folder stayed in the cache's tmp/ forever."""
    import os
    import socket

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path))
    monkeypatch.setattr(cache, "_swept", set())
    scratch, host, ended, hours = tmp_path / "tmp", socket.gethostname(), _ended_pid(), 2 * cache.ABANDONED_AFTER_S
    left = _left_staging(scratch, f"k-sm_90a-0123456789abcdef.{host}.pid{ended}-ab12_x9z", hours)
    kept = {
        "live pid": _left_staging(scratch, f"k-sm_90a-0123456789abcdef.{host}.pid{os.getpid()}-cd34efgh", hours),
        "ended lately": _left_staging(scratch, f"k-sm_90a-fedcba9876543210.{host}.pid{ended}-ijkl5678", 60.0),
        "written in lately": _left_staging(scratch, f"sm100-host-proof.{host}.pid{ended}-mnop9012", hours, 60.0),
        "another machine's": _left_staging(scratch, f"k-sm_90a-0123456789abcdef.{host}x.pid{ended}-qrst3456", hours),
        "another machine's, named in full": _left_staging(scratch, f"k-sm_90a-0.{host}.lan.pid{ended}-uvwx7890", hours),
        "not a staging folder": _left_staging(scratch, f"notes.{host}.pid{ended}", hours),
    }
    with cache.staging(tmp_path / "k-sm_100a-0123456789abcdef") as building:
        assert not left.exists()
        assert {why: folder.is_dir() for why, folder in kept.items()} == dict.fromkeys(kept, True)
        assert building.is_dir()


def test_the_sweep_runs_once_a_process_and_says_what_it_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path))
    monkeypatch.setattr(cache, "_swept", set())
    scratch, name = tmp_path / "tmp", f"k-sm_90a-0123456789abcdef.{socket.gethostname()}.pid{_ended_pid()}-ab12cd34"
    with cache.staging(tmp_path / "k-sm_90a-0123456789abcdef"):
        pass
    late = _left_staging(scratch, name, 2 * cache.ABANDONED_AFTER_S)
    with cache.staging(tmp_path / "k-sm_90a-0123456789abcdef"):
        assert late.is_dir()  # this process swept already: a left folder waits for the next process
    assert cache.remove_abandoned_staging(scratch) == [late] and not late.exists()
    assert cache.remove_abandoned_staging(tmp_path / "none") == []


def test_a_folder_that_could_not_be_removed_is_not_said_to_be_removed(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """rmtree(ignore_errors=True) fails quietly on another user's files: the folder was listed as removed though it
    was still there."""
    import shutil
    import socket

    scratch, made, hours = tmp_path / "tmp", f"{socket.gethostname()}.pid{_ended_pid()}", 2 * cache.ABANDONED_AFTER_S
    stuck = _left_staging(scratch, f"k-sm_90a-0123456789abcdef.{made}-ab12cd34", hours)
    gone = _left_staging(scratch, f"k-sm_90a-fedcba9876543210.{made}-ef56gh78", hours)
    removing = shutil.rmtree

    def rmtree_failing_on_stuck(path: Path, ignore_errors: bool = False) -> None:
        if Path(path) != stuck:
            removing(path, ignore_errors=ignore_errors)

    monkeypatch.setattr(shutil, "rmtree", rmtree_failing_on_stuck)
    assert cache.remove_abandoned_staging(scratch) == [gone]
    assert stuck.is_dir() and not gone.exists()


def test_a_pid_above_pid_max_is_an_ended_one() -> None:
    assert not cache._alive(_ended_pid())


def test_a_kernel_named_through_a_link_has_the_build_of_the_file_it_names(project: Path, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """build_kernel builds the file checked_source resolves (its entry named by it); has_build looked under the
    link's name, so a hit said "compiling link.cu"."""
    from nvfp4ctl.build import builder
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "c"))
    monkeypatch.setattr(builder, "build_mode", lambda: builder.DEVICE)
    monkeypatch.setattr(cache, "cache_key", lambda inputs, arch, mode, defines=(): "ab" * 32)
    link = project / "sm90" / "link.cu"
    link.symlink_to(project / "sm90" / "k.cu")
    assert builder.has_build(link, "sm_90a") is False
    entry = cache.entry_dir(project / "sm90" / "k.cu", "sm_90a", "ab" * 32)
    entry.mkdir(parents=True)
    saved_report(project / "sm90" / "k.cu", "sm_90a", "ab" * 32, entry)
    assert builder.has_build(link, "sm_90a") is True
    assert builder.has_build(project / "sm90" / "k.h", "sm_90a") is None  # no kernel source: the build says why


@pytest.mark.parametrize(("umask", "expected"), [(0o002, 0o775), (0o022, 0o755), (0o077, 0o700)])
def test_an_entry_folder_follows_the_umask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask: int,
                                            expected: int) -> None:
    import os

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path))
    entry = tmp_path / "k-sm_90a-0123"
    before = os.umask(umask)
    try:
        with cache.staging(entry) as folder:
            cache.land(folder, entry)
    finally:
        os.umask(before)
    # a shared cache's group (umask 002) may clear or replace it, as it may the files in it
    assert entry.stat().st_mode & 0o777 == expected


def test_a_build_waiting_on_another_processs_lock_says_so_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys
    import time

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path))
    monkeypatch.setattr(cache, "WAIT_SAID_AFTER_S", 0.3)
    notes: list[str] = []
    monkeypatch.setattr(cache, "get_console", lambda: type("Notes", (), {"note": lambda self, line: notes.append(line)})())
    entry = tmp_path / "k-sm_90a-0123"
    (tmp_path / "locks").mkdir()
    holder = subprocess.Popen([sys.executable, "-c", (  # another nvfp4ctl building the same key for a second
        "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); print(flush=True);"
        " time.sleep(1.5)"), str(tmp_path / "locks" / f"{entry.name}.lock")], stdout=subprocess.PIPE)
    try:
        holder.stdout.readline()  # it holds the lock now
        started = time.monotonic()
        with cache.locked(entry, "k.cu (sm_90a)"):
            waited = time.monotonic() - started
    finally:
        holder.wait()
    assert waited > 0.5
    assert notes == [f"waiting for another nvfp4ctl building k.cu (sm_90a) in {tmp_path}"]
    notes.clear()
    with cache.locked(entry, "k.cu (sm_90a)"):  # a lock free at once: nothing said
        pass
    assert notes == []


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads parent pids from /proc (Linux)")
def test_a_build_waiting_on_its_own_worker_says_so_not_another_nvfp4ctl(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """tune's parent waiting on one of its own compile workers said "waiting for another nvfp4ctl building ...";
    so did a build waiting on another thread of its own process."""
    import subprocess
    import sys
    import threading

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path))
    monkeypatch.setattr(cache, "WAIT_SAID_AFTER_S", 0.2)
    notes: list[str] = []
    monkeypatch.setattr(cache, "get_console", lambda: type("Notes", (), {"note": lambda self, line: notes.append(line)})())
    entry = tmp_path / "k-sm_90a-0123"
    worker = subprocess.Popen([sys.executable, "-c", (  # a worker this process started, building the same key
        "import sys, time; from pathlib import Path; from nvfp4ctl.build import cache\n"
        "with cache.locked(Path(sys.argv[1]), 'k.cu (sm_90a)'):\n"
        "    print(flush=True); time.sleep(1.0)"), str(entry)], stdout=subprocess.PIPE, text=True)
    try:
        worker.stdout.readline()  # it holds the lock now
        with cache.locked(entry, "k.cu (sm_90a)"):
            pass
    finally:
        worker.wait()
    assert notes == [f"waiting for this nvfp4ctl's own worker (pid {worker.pid}) building k.cu (sm_90a) in {tmp_path}"]
    notes.clear()
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with cache.locked(entry, "k.cu (sm_90a)"):
            held.set()
            done.wait(1.0)

    other = threading.Thread(target=hold)
    other.start()
    try:
        held.wait(5.0)
        with cache.locked(entry, "k.cu (sm_90a)"):
            pass
    finally:
        done.set()
        other.join()
    assert notes == [f"waiting for this nvfp4ctl's own build of k.cu (sm_90a) in another of its threads, in {tmp_path}"]


def test_a_build_waiting_past_the_lock_limit_is_one_line_naming_the_lock_and_its_holder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It was filelock's Timeout, a traceback."""
    import subprocess
    import sys

    from nvfp4ctl.errors import ExitCode, ToolTimeout

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path))
    monkeypatch.setattr(cache, "WAIT_SAID_AFTER_S", 0.1)
    monkeypatch.setattr(cache, "LOCK_TIMEOUT_S", 0.5)
    monkeypatch.setattr(cache, "get_console", lambda: type("Notes", (), {"note": lambda self, line: None})())
    entry = tmp_path / "k-sm_90a-0123"
    holder = subprocess.Popen([sys.executable, "-c", (  # another nvfp4ctl building the same key
        "import sys, time; from pathlib import Path; from nvfp4ctl.build import cache\n"
        "with cache.locked(Path(sys.argv[1]), 'k.cu (sm_90a)'):\n"
        "    print(flush=True); sys.stdin.readline()"), str(entry)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        holder.stdout.readline()  # it holds the lock now
        with pytest.raises(ToolTimeout) as caught:
            with cache.locked(entry, "k.cu (sm_90a)"):
                pass
    finally:
        holder.communicate("\n")
    assert caught.value.exit_code == ExitCode.TIMEOUT
    said = str(caught.value)
    assert said.startswith(f"waited 0.5 s for the cache lock {tmp_path / 'locks' / (entry.name + '.lock')} to build"
                           f" k.cu (sm_90a); it is held by nvfp4ctl pid {holder.pid} on "), said
    assert "building k.cu (sm_90a) since " in said and said.endswith("; run it again once that build ends")
    assert not (tmp_path / "locks" / f"{entry.name}.holder").exists()  # its holder said who, and went with the lock


def test_a_lock_whose_holder_is_not_known_says_another_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    import socket

    holder = tmp_path / "k.holder"
    assert cache._holder_said(holder) == "another process (not known which)"
    holder.write_text(json.dumps({"pid": 999999999, "host": socket.gethostname(), "building": "k.cu", "since": "then"}))
    assert cache._holder_said(holder) == "another process (not known which)"  # a pid that has ended: stale


def test_the_holder_file_is_gone_once_the_work_under_the_lock_ends_however_it_ends(tmp_path: Path) -> None:
    holder = tmp_path / "k.holder"
    with pytest.raises(RuntimeError), lock_holder.holding(holder, "building k.cu (sm_90a)"):
        assert lock_holder.holder_of(holder) is not None
        raise RuntimeError("a failed build")
    assert not holder.exists()


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads process start times from /proc (Linux)")
def test_a_holder_whose_pid_now_names_another_process_is_a_dead_holder(tmp_path: Path) -> None:
    """A holder file outliving its process (kill -9) named whatever process had the pid since, as the holder."""
    import json
    import os
    import socket

    holder = tmp_path / "k.holder"
    with lock_holder.holding(holder, "building k.cu (sm_90a)", building="k.cu (sm_90a)"):  # as cache.locked names it
        said = json.loads(holder.read_text())
        assert said["host"] == socket.gethostname() and said["started"] == lock_holder.start_time(os.getpid())
        assert cache._holder_said(holder).startswith(f"nvfp4ctl pid {os.getpid()} on {socket.gethostname()}, building k.cu")
        holder.write_text(json.dumps({**said, "started": said["started"] + 1}))  # the pid is another process's now
        assert cache._holder_said(holder) == "another process (not known which)"
        del said["started"]  # an older nvfp4ctl's holder file, or one written where /proc is not: the pid alone
        holder.write_text(json.dumps(said))
        assert cache._holder_said(holder).startswith(f"nvfp4ctl pid {os.getpid()} on ")


def test_a_holder_on_another_host_is_named_by_host_and_pid_not_judged_here(tmp_path: Path) -> None:
    """A shared cache on NFS: a pid of another machine says nothing of this one's processes."""
    import json

    holder = tmp_path / "k.holder"
    for pid in (999999999, 1):  # no such pid here, and one that lives here: neither is the other host's
        holder.write_text(json.dumps({"pid": pid, "host": "other-node", "building": "k.cu (sm_90a)",
                                      "since": "2026-11-28 10:00:00", "started": 12345}))
        assert cache._holder_said(holder) == ("nvfp4ctl pid %d on other-node, building k.cu (sm_90a) since"
                                              " 2026-11-28 10:00:00" % pid)


def test_an_entry_keeps_its_sass_compressed(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl.build import builder, compile, resources

    listing = "\t.text.k:\n" + "        /*0000*/  HGMMA.64x8x16.F32 R24, gdesc[UR4], RZ ;\n" * 20000
    folder = tmp_path / "staging"
    folder.mkdir()

    def compiled(folder: Path, inputs, arch: str, defines=()) -> compile.Compiled:
        (folder / "k.cuda.o").write_bytes(b"\x7fELF")
        return compile.Compiled(log="", kernel_object=folder / "k.cuda.o")

    monkeypatch.setattr(compile, "build_device_code", compiled)
    monkeypatch.setattr(builder, "_require_abi", lambda inputs, compiled: None)
    monkeypatch.setattr(resources, "dump_sass", lambda binary: listing)
    inputs = sources.build_inputs(project / "sm90" / "k.cu")
    builder._compile_and_inspect(folder, inputs, "sm_90a", "ab" * 32, builder.DEVICE)
    kept = {path.name for path in folder.iterdir()}
    assert "kernel.sass" not in kept and resources.SASS_FILE in kept  # ~1 MB here would be ~16 for sm_90a
    assert (folder / resources.SASS_FILE).stat().st_size < len(listing) / 10
    assert resources.saved_sass(folder) == listing
