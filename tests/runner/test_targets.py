"""Choosing the target (parent side) and importing a submission (child side)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.errors import UsageError
from nvfp4ctl.runner import targets
from nvfp4ctl.runner.gpu import GpuInfo
from nvfp4ctl.runner.targets import KERNEL, SUBMISSION, TORCH, import_submission, resolve_target


@pytest.fixture
def kernels(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "kernels"
    (root / "torch_dequant").mkdir(parents=True)
    (root / "torch_dequant" / "submission.py").write_text("def custom_kernel(data):\n    return data\n")
    monkeypatch.setattr(targets, "kernels_dir", lambda: root)
    monkeypatch.delenv("NVFP4CTL_DEVICE", raising=False)
    return root


def _gpu(monkeypatch, cap: str | None) -> None:
    monkeypatch.setattr(targets, "first_gpu", lambda: GpuInfo("Some GPU", cap) if cap else None)


@pytest.mark.parametrize("cap, folder, name", [("9.0", "sm90", "nvfp4_gemm_sm90.cu"), ("10.0", "sm100", "nvfp4_gemm_sm100_tc.cu")])
def test_default_is_the_kernel_for_the_arch(kernels, monkeypatch, cap, folder, name):
    (kernels / folder).mkdir()
    (kernels / folder / name).write_text("// kernel\n")
    _gpu(monkeypatch, cap)
    spec = resolve_target(None, None)
    assert (spec.kind, spec.path) == (KERNEL, kernels / folder / name)
    assert spec.label.endswith(f"(default for sm_{cap.replace('.', '')})")


@pytest.mark.parametrize("cap", [None, "9.0", "8.0"])
def test_default_falls_back_to_the_torch_submission(kernels, monkeypatch, cap):
    _gpu(monkeypatch, cap)  # no .cu files exist, or no GPU, or an arch without a kernel
    spec = resolve_target(None, None)
    assert (spec.kind, spec.path) == (TORCH, kernels / "torch_dequant" / "submission.py")


def test_cpu_device_never_asks_nvidia_smi(kernels, monkeypatch):
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    monkeypatch.setattr(targets, "first_gpu", lambda: pytest.fail("nvidia-smi was asked"))
    assert resolve_target(None, None).kind == TORCH


def test_explicit_targets_and_their_errors(tmp_path):
    py, cu = tmp_path / "submission.py", tmp_path / "k.cu"
    py.write_text("def custom_kernel(data):\n    return data\n")
    cu.write_text("")
    assert resolve_target(py, None) == targets.TargetSpec(SUBMISSION, py.resolve(), f"{py} (--submission)", "--submission")
    assert resolve_target(None, cu).kind == KERNEL
    with pytest.raises(UsageError, match="^--submission and --kernel are exclusive: pass one of them$"):
        resolve_target(py, cu)
    with pytest.raises(UsageError, match=r"^--kernel .*/missing\.cu: no such file$"):
        resolve_target(None, tmp_path / "missing.cu")
    with pytest.raises(UsageError, match=r"expected a CUDA source \(\.cu\); use --submission for \.py"):
        resolve_target(None, py)
    with pytest.raises(UsageError, match=r"expected a Python file"):
        resolve_target(cu, None)
    with pytest.raises(UsageError, match="not a file"):
        resolve_target(tmp_path, None)


def test_submission_gets_a_task_shim_and_its_folder_on_the_path(tmp_path, monkeypatch):
    monkeypatch.delitem(__import__("sys").modules, "task", raising=False)
    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    (tmp_path / "helpers.py").write_text("SCALE = 3\n")
    path = tmp_path / "submission.py"
    path.write_text(
        "from task import input_t, output_t\nfrom helpers import SCALE\n\n"
        "def custom_kernel(data: input_t) -> output_t:\n    return data * SCALE\n"
    )
    assert import_submission(path)(2) == 6


@pytest.mark.parametrize("module", ["utils", "reference"])
def test_a_missing_harness_module_is_named_with_the_way_out(tmp_path, monkeypatch, module):
    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    monkeypatch.delitem(__import__("sys").modules, module, raising=False)
    path = tmp_path / "submission.py"
    path.write_text(f"from {module} import something\n\ndef custom_kernel(data):\n    return data\n")
    with pytest.raises(ModuleNotFoundError, match=rf"{module}\.py, which nvfp4ctl does not provide; put the harness's copy next to submission\.py"):
        import_submission(path)
    (tmp_path / f"{module}.py").write_text("something = 1\n")
    assert import_submission(path)(5) == 5


def test_kernel_target_wraps_the_module(monkeypatch, tmp_path):
    import sys
    import types

    calls = []
    fake_build = types.ModuleType("nvfp4ctl.build")
    module = types.SimpleNamespace(nvfp4_gemm=lambda *args: calls.append(args) or "c")
    fake_build.load_kernel_module = lambda source, arch=None, defines=(): module  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "nvfp4ctl.build", fake_build)
    kernel = targets.load_target(targets.TargetSpec(KERNEL, tmp_path / "k.cu", "k.cu"))
    assert kernel(("a", "b", "sfa", "sfb", "sfa_p", "sfb_p", "c")) == "c"
    assert calls == [("a", "b", "sfa_p", "sfb_p", "c")]


@pytest.mark.parametrize("device", ["cuda", "cpu"])
@pytest.mark.parametrize("command", ["check", "bench"])
def test_a_kernel_on_a_cpu_only_torch_is_refused_before_its_build(monkeypatch, tmp_path, command, device):
    """A GPU but a CPU build of torch: one line, exit 2, before minutes of nvcc (the child would
    only fail to import the module afterwards). NVFP4CTL_DEVICE=cpu compiled it first, then said the same."""
    from typer.testing import CliRunner

    from nvfp4ctl.build import toolchain
    from nvfp4ctl.cli import app
    from nvfp4ctl.commands import check
    from nvfp4ctl.runner import gpu

    def no_child(*args, **kwargs):
        raise AssertionError("started a child to build a kernel that could never load")

    monkeypatch.setenv("NVFP4CTL_DEVICE", device)
    monkeypatch.setattr(toolchain, "torch_build", lambda: toolchain.TorchBuild("2.13.0+cpu", None))
    monkeypatch.setattr(gpu, "gpu_present", lambda: True)
    monkeypatch.setattr(check, "gpu_present", lambda: True)
    # check.run first: imported for the first time while worker.Worker is patched, it would bind the
    # stand-in for good, and monkeypatch would "restore" that
    monkeypatch.setattr("nvfp4ctl.check.run.Worker", no_child)
    monkeypatch.setattr("nvfp4ctl.runner.worker.Worker", no_child)
    kernel = Path(__file__).resolve().parents[2] / "kernels" / "naive" / "nvfp4_gemv_naive.cu"
    monkeypatch.chdir(tmp_path)
    gemv_task = Path(__file__).resolve().parents[2] / "nvfp4ctl" / "problems" / "nvfp4_gemv" / "task.yml"
    result = CliRunner().invoke(app, [command, "--kernel", str(kernel), "--task", str(gemv_task)])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert errors == ["error: this torch has no CUDA: kernel modules load only with a CUDA build of torch"
                      " (this one is 2.13.0+cpu)"], result.output
    assert "Traceback" not in result.output


def test_refuse_unloadable_lets_submissions_and_kernels_with_a_cuda_torch_through(monkeypatch):
    """A kernel with a CPU torch under NVFP4CTL_DEVICE=cpu was let through: it compiled (seconds, a cache
    entry), then failed to load with 'this torch has no CUDA'."""
    from nvfp4ctl.build import toolchain

    monkeypatch.setattr(toolchain, "torch_build", lambda: toolchain.TorchBuild("2.13.0+cpu", None))
    kernel = targets.TargetSpec(KERNEL, Path("k.cu"), "k.cu")
    targets.refuse_unloadable(targets.TargetSpec(SUBMISSION, Path("s.py"), "s.py"))
    with pytest.raises(UsageError, match="this torch has no CUDA"):
        targets.refuse_unloadable(kernel)
    monkeypatch.setattr(toolchain, "torch_build", lambda: toolchain.TorchBuild("2.13.0+cu130", "13.0"))
    targets.refuse_unloadable(kernel)


@pytest.mark.parametrize("command", ["check", "bench", "tune"])
def test_a_kernel_of_another_problem_is_refused_before_the_gpu_check(monkeypatch, tmp_path, command):
    """The GEMV's naive kernel under a GEMM task.yml: its binding takes the GEMV's tuple, so every test
    would fail (or crash) after its build; one line instead, before 'no CUDA GPU found'."""
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    (tmp_path / "task.yml").write_text("problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\n"
                                       "benchmarks:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\n")
    kernel = Path(__file__).resolve().parents[2] / "kernels" / "naive" / "nvfp4_gemv_naive.cu"
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, [command, "--kernel", str(kernel)], env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (f"error: --kernel {kernel} is an nvfp4_gemv kernel (it includes nvfp4_gemv_api.h),"
                                     " but task.yml is for nvfp4_gemm: pass --task with an nvfp4_gemv task.yml")


@pytest.mark.parametrize("command", ["check", "bench", "tune"])
@pytest.mark.parametrize("unreadable", ["k.cu", "mine.cuh"])
def test_an_unreadable_kernel_or_header_is_one_line_not_a_traceback(monkeypatch, tmp_path, command, unreadable):
    """The problem check reads the kernel and its headers in the parent: a file it cannot read (no
    permission) was a PermissionError traceback, exit 1; it is one line, exit 2, naming the file."""
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    (tmp_path / "task.yml").write_text("problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\n"
                                       "benchmarks:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\n")
    (tmp_path / "k.cu").write_text('#include "mine.cuh"\n')
    (tmp_path / "mine.cuh").write_text("// a header\n")
    read_text = Path.read_text

    def denied(self: Path, *args, **kwargs):  # chmod 000 does not stop root, who may run the tests
        if self.name == unreadable:
            raise PermissionError(13, "Permission denied", str(self))
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", denied)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, [command, "--kernel", "k.cu"], env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    hit = "" if unreadable == "k.cu" else f" ({tmp_path / unreadable})"
    assert result.output.strip() == f"error: --kernel k.cu: cannot read it (Permission denied{hit})"


def test_with_no_task_of_yours_a_kernel_gets_its_own_problems_task(monkeypatch, tmp_path):
    """`check --kernel my_gemv.cu` in a folder without task.yml runs the GEMV's shipped tests; a task.yml
    of the user's is never replaced (the refusal above), nor is the task of a kernel without an API header.
    The shipped task keeps why it was picked, for the header lines."""
    from nvfp4ctl.task import load_task
    from nvfp4ctl.workspace import SHIPPED

    naive = Path(__file__).resolve().parents[2] / "kernels" / "naive"
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    shipped = load_task()
    assert (shipped.problem, shipped.source) == ("nvfp4_gemm", SHIPPED)
    gemv = targets.task_for_kernel(shipped, naive / "nvfp4_gemv_naive.cu")
    assert (gemv.problem, gemv.source, gemv.is_users) == ("nvfp4_gemv", SHIPPED, False)
    assert gemv.shipped_because == "it includes nvfp4_gemv_api.h"  # the header lines' reason
    gemm = targets.task_for_kernel(shipped, naive.parent / "sm90" / "nvfp4_gemm_sm90.cu")
    assert (gemm.path, gemm.shipped_because) == (shipped.path, "it includes nvfp4_gemm_api.h")
    default = targets.task_for_kernel(shipped, Path("default"))  # the shipped task's own default kernel
    assert (default.path, default.shipped_because) == (shipped.path, targets.STAND_IN)
    assert targets.task_for_kernel(shipped, None) is shipped
    (tmp_path / "task.yml").write_text("problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\n")
    users = load_task()
    assert targets.task_for_kernel(users, naive / "nvfp4_gemv_naive.cu") is users


def _task_folder(folder: Path, problem: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    case = "{m: 128, k: 256, l: 1, seed: 1}" if problem == "nvfp4_gemv" else "{m: 128, n: 256, k: 256, l: 1, seed: 1}"
    (folder / "task.yml").write_text(f"problem: {problem}\ntests:\n  - {case}\n")
    (folder / "submission.py").write_text("def custom_kernel(data):\n    return data[-1]\n")
    return folder / "submission.py"


def test_a_submission_under_a_task_of_its_own_runs_on_it_or_says_which_to_pass(monkeypatch, tmp_path, capsys):
    """`check --submission ../gemv/submission.py`: nvfp4ctl's shipped task gives way to the task.yml beside
    the submission; a task.yml found from the current folder stays when it is for the same problem (a
    warning names the other) and is a usage error when it is for another; --task always stays."""
    from nvfp4ctl.task import load_task
    from nvfp4ctl.workspace import FROM_TARGET, reset

    gemv = _task_folder(tmp_path / "gemv", "nvfp4_gemv")
    other_gemm = _task_folder(tmp_path / "other_gemm", "nvfp4_gemm")
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    monkeypatch.chdir(tmp_path)
    reset()
    shipped = load_task()
    own = targets.task_for_submission(shipped, Path("gemv/submission.py"))
    assert (own.problem, own.path, own.source) == ("nvfp4_gemv", gemv.parent / "task.yml", FROM_TARGET)
    assert targets.task_for_submission(shipped, None) is shipped

    here = tmp_path / "work"
    _task_folder(here, "nvfp4_gemm")
    monkeypatch.chdir(here)
    reset()
    users = load_task()
    with pytest.raises(UsageError, match=r"the task in use, task.yml \(found from the current folder\), is"
                                         r" nvfp4_gemm, but the task.yml beside the submission .* is nvfp4_gemv;"
                                         r" pass --task "):
        targets.task_for_submission(users, gemv)
    capsys.readouterr()
    assert targets.task_for_submission(users, other_gemm) is users
    assert "not on the task.yml beside it" in capsys.readouterr().err
    assert targets.task_for_submission(users, here / "submission.py") is users  # its own folder's task

    reset()
    chosen = load_task(here / "task.yml")  # --task: chosen on purpose
    capsys.readouterr()
    assert targets.task_for_submission(chosen, gemv) is chosen
    # ... but not in silence where the submission's own task.yml is another problem's: every test then failed
    # to unpack inputs it was not written for, with nothing said
    warned = " ".join(capsys.readouterr().err.split())
    assert "the task.yml beside it" in warned and "is nvfp4_gemv, the task in use" in warned \
        and "nvfp4_gemm: each test hands it nvfp4_gemm's inputs" in warned, warned
    assert targets.task_for_submission(chosen, other_gemm) is chosen  # the same problem: nothing to say
    assert "beside it" not in capsys.readouterr().err


def test_a_kernel_under_a_task_of_its_own_runs_on_it_or_says_which_to_pass(monkeypatch, tmp_path, capsys):
    """`check --kernel dual/kernels/k.cu` from the folder above ran on nvfp4ctl's shipped dual GEMM task, where
    from dual/ it ran on dual/task.yml: a kernel's task is the task.yml of its folder, upwards, as a submission's
    is ("beside the kernel" on the first line); a task.yml found from the current folder stays for the same
    problem (a warning) and is a usage error for another; --task stays."""
    from nvfp4ctl.task import load_task
    from nvfp4ctl.workspace import FROM_KERNEL, reset

    _task_folder(tmp_path / "dual", "nvfp4_dual_gemm")
    (tmp_path / "dual" / "kernels").mkdir()
    kernel = tmp_path / "dual" / "kernels" / "k.cu"
    kernel.write_text('#include "nvfp4_dual_gemm_api.h"\n')
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    monkeypatch.chdir(tmp_path)
    reset()
    own = targets.task_for_kernel(load_task(), Path("dual/kernels/k.cu"))
    assert (own.problem, own.path, own.source, len(own.tests)) == ("nvfp4_dual_gemm", kernel.parents[1] / "task.yml",
                                                                  FROM_KERNEL, 1)
    assert targets.task_label_and_reason(own) == "dual/task.yml (beside the kernel)"
    assert resolve_target(None, Path("dual/kernels/k.cu"), own).problem == "nvfp4_dual_gemm"

    gemm = tmp_path / "gemm"
    _task_folder(gemm, "nvfp4_gemm")
    monkeypatch.chdir(gemm)
    reset()
    with pytest.raises(UsageError, match=r"the task in use, task.yml \(found from the current folder\), is"
                                         r" nvfp4_gemm, but the task.yml beside the kernel .* is nvfp4_dual_gemm;"
                                         r" pass --task "):
        targets.task_for_kernel(load_task(), Path("../dual/kernels/k.cu"))
    other_dual = tmp_path / "other_dual"
    _task_folder(other_dual, "nvfp4_dual_gemm")
    monkeypatch.chdir(other_dual)
    reset()
    users = load_task()
    capsys.readouterr()
    assert targets.task_for_kernel(users, kernel) is users
    assert "not on the task.yml beside it" in capsys.readouterr().err
    reset()
    chosen = load_task(other_dual / "task.yml")  # --task: chosen on purpose
    assert targets.task_for_kernel(chosen, kernel) is chosen


def test_a_build_of_kernels_logs_beside_the_task_check_runs_them_on(monkeypatch, tmp_path):
    """kernels_task_file decides by task_for_kernel's rule: a kernel's own task.yml where none of the user's is in
    use; the one found from the current folder for the same problem (gemm/v2/k.cu from gemm/), where build logged
    beside v2/task.yml and check ran on gemm's; its own for another problem, which check refuses and build judges by
    the kernel's API header; --task; and none for kernels under two task.ymls."""
    from nvfp4ctl.workspace import reset

    gemm, dual = tmp_path / "gemm", tmp_path / "dual"
    for folder, problem in ((gemm, "nvfp4_gemm"), (gemm / "v2", "nvfp4_gemm"), (dual, "nvfp4_dual_gemm")):
        _task_folder(folder, problem)
        (folder / "kernels").mkdir()
        (folder / "kernels" / "k.cu").write_text(f'#include "{problem}_api.h"\n')
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)

    def decided(*kernels: str, task_flag: str | None = None) -> Path | None:
        reset()
        return targets.kernels_task_file([Path(kernel) for kernel in kernels],
                                         None if task_flag is None else Path(task_flag))

    monkeypatch.chdir(tmp_path)
    assert decided("dual/kernels/k.cu") == Path("dual/task.yml").absolute()
    assert decided("dual/kernels/k.cu", "gemm/kernels/k.cu") is None
    monkeypatch.chdir(gemm)
    assert decided("v2/kernels/k.cu").resolve() == gemm / "task.yml"
    assert decided("../dual/kernels/k.cu").resolve() == dual / "task.yml"
    assert decided("v2/kernels/k.cu", task_flag="v2/task.yml").resolve() == gemm / "v2" / "task.yml"
    assert decided("kernels/k.cu", "v2/kernels/k.cu").resolve() == gemm / "task.yml"


def test_a_linked_submission_runs_on_the_task_yml_where_the_link_lies(monkeypatch, tmp_path):
    """check and bench found the task.yml from the file a link leads to: --submission gemm/submission.py ->
    ../dual/submission.py ran on dual/task.yml, where lint judged it by gemm/task.yml and Python runs it as
    gemm/submission.py (its __file__); from gemm/, where gemm/task.yml is in use, it was refused as the dual GEMM."""
    from nvfp4ctl.task import load_task
    from nvfp4ctl.workspace import FROM_TARGET, reset

    gemm = _task_folder(tmp_path / "gemm", "nvfp4_gemm")
    _task_folder(tmp_path / "dual", "nvfp4_dual_gemm")
    gemm.unlink()
    gemm.symlink_to("../dual/submission.py")
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    monkeypatch.chdir(tmp_path)
    reset()
    own = targets.task_for_target(load_task(), Path("gemm/submission.py"), None)
    assert (own.problem, own.path, own.source) == ("nvfp4_gemm", gemm.parent / "task.yml", FROM_TARGET)
    monkeypatch.chdir(tmp_path / "gemm")
    reset()
    users = load_task()
    assert targets.task_for_target(users, Path("submission.py"), None) is users


def test_with_no_task_of_yours_a_submission_gets_the_task_of_the_problem_it_names(monkeypatch, tmp_path):
    """Where nvfp4ctl's shipped task stands in, a submission that uses the GEMV's C ABI gets the GEMV's shipped
    task and the reason; a plain one keeps the GEMM's, said as a stand-in; a task of the user's is kept, and
    a --kernel decides over a submission.py here, which it leaves unrun."""
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.task import load_task
    from nvfp4ctl.workspace import SHIPPED, reset

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    gemv = tmp_path / "uses_gemv.py"
    gemv.write_text('CUDA = """#include "nvfp4_gemv_api.h"\n"""\n\ndef custom_kernel(data):\n    return data[-1]\n')
    (tmp_path / "submission.py").write_text(gemv.read_text())
    plain = tmp_path / "plain.py"
    plain.write_text("def custom_kernel(data):\n    return data[-1]\n")
    shipped = load_task()
    own = targets.task_for_submission(shipped, gemv)
    assert (own.problem, own.source, own.shipped_because) == ("nvfp4_gemv", SHIPPED, "it includes nvfp4_gemv_api.h")
    assert own.path == get_problem("nvfp4_gemv").task_file
    stand_in = targets.task_for_submission(shipped, plain)
    assert (stand_in.problem, stand_in.shipped_because) == ("nvfp4_gemm", targets.STAND_IN)
    assert targets.task_for_target(shipped, None, None).problem == "nvfp4_gemv"  # the submission.py here
    dual = Path(__file__).resolve().parents[2] / "kernels" / "naive" / "nvfp4_dual_gemm_naive.cu"
    assert targets.task_for_target(shipped, None, dual).problem == "nvfp4_dual_gemm"

    _task_folder(tmp_path / "work", "nvfp4_gemm")
    monkeypatch.chdir(tmp_path / "work")
    reset()
    users = load_task()
    assert targets.task_for_submission(users, gemv) is users
    assert targets.task_for_target(users, None, None) is users


def test_a_kernels_problem_is_read_once_per_command_and_afresh_by_the_next(monkeypatch, tmp_path):
    """check and bench choose the task by a --kernel's problem (task_for_kernel), then resolve the target:
    the kernel and its headers are read once; the next command, after the user edited the kernel, reads
    it again."""
    from nvfp4ctl.build.read_once import reading_once
    from nvfp4ctl.task import load_task
    from nvfp4ctl.workspace import reset

    kernel = (tmp_path / "mine.cu").resolve()
    kernel.write_text('#include "nvfp4_gemv_api.h"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    reads: list[Path] = []
    real_read_text = Path.read_text

    def counted(self: Path, *args: object, **kwargs: object) -> str:
        if self.suffix in (".cu", ".h", ".cuh"):
            reads.append(self.resolve())
        return real_read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counted)

    def one_command() -> str:  # what check and bench do with --kernel
        reset()
        with reading_once():
            task = targets.task_for_kernel(load_task(), Path("mine.cu"))
            return resolve_target(None, Path("mine.cu"), task).problem

    assert one_command() == "nvfp4_gemv"
    assert reads.count(kernel) == 1 and len(reads) == len(set(reads)), reads

    reads.clear()
    kernel.write_text('#include "nvfp4_dual_gemm_api.h"\n// now a dual GEMM\n')
    assert one_command() == "nvfp4_dual_gemm"
    assert reads.count(kernel) == 1, reads


def test_a_syntax_error_of_an_installed_package_in_the_submissions_folder_is_not_the_users(tmp_path: Path) -> None:
    """A virtual environment inside the submission's folder holds packages the user did not write: a
    SyntaxError in one is no 'not valid Python' of theirs (exit 2), where one in a helper of theirs is."""
    from nvfp4ctl.errors import UnloadableSubmission
    from nvfp4ctl.runner.targets import _refuse_users_syntax_error

    package = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages" / "broken.py"
    helper = tmp_path / "my_helpers.py"
    for file in (package, helper):
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text("def f(:\n")
    _refuse_users_syntax_error(SyntaxError("invalid syntax", (str(package), 1, 7, "def f(:\n")), tmp_path)
    with pytest.raises(UnloadableSubmission, match=r"my_helpers.py:1: not valid Python"):
        _refuse_users_syntax_error(SyntaxError("invalid syntax", (str(helper), 1, 7, "def f(:\n")), tmp_path)


@pytest.mark.parametrize("problem", ["nvfp4_gemm", "nvfp4_dual_gemm", "nvfp4_group_gemm", "nvfp4_gemv"])
def test_an_init_starter_copied_away_from_its_task_keeps_its_problem(monkeypatch, tmp_path, problem):
    """init's GEMV submission.py ("NVFP4 GEMV for GPU MODE's nvfp4_gemv in plain torch: ...") in a folder with
    no task.yml was run on the GEMM's tests, the shipped task said to stand in, and failed "255 of 256 columns
    wrong": its docstring's first line names its problem."""
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app
    from nvfp4ctl.lint.submission import STARTER_REASON
    from nvfp4ctl.task import load_task
    from nvfp4ctl.workspace import reset

    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(app, ["init", "--problem", problem, "made"]).exit_code == 0
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "submission.py").write_text((tmp_path / "made" / "submission.py").read_text())
    monkeypatch.chdir(lone)
    reset()
    found = targets.task_for_target(load_task(), None, None)
    assert (found.problem, found.shipped_because) == (problem, STARTER_REASON)


def test_a_file_that_only_mentions_a_problem_in_its_docstring_keeps_the_stand_in(monkeypatch, tmp_path):
    """Read as strictly as the export header: a user's own docstring naming a problem is no starter's."""
    from nvfp4ctl.task import load_task

    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "mine.py"
    mine.write_text('"""My GEMV for GPU MODE\'s nvfp4_gemv, faster than the plain torch one."""\n\n'
                    "def custom_kernel(data):\n    return data[-1]\n")
    assert targets.task_for_submission(load_task(), mine).shipped_because == targets.STAND_IN


def test_a_default_kernel_says_why_the_shipped_task_is_its(monkeypatch, tmp_path):
    """`--kernel default`, and the default kernel of a kernels/ folder with no submission.py, ran on nvfp4ctl's
    shipped task and the first line named it with no reason, where every other target's says why its task was
    chosen: the shipped task stands in, and its problem's default kernel is the one run."""
    from nvfp4ctl.task import load_task

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    shipped = load_task()
    assert targets.task_for_target(shipped, None, Path(targets.DEFAULT_BY_NAME)).shipped_because == targets.STAND_IN
    assert targets.task_for_kernel(shipped, Path(targets.DEFAULT_BY_NAME)).shipped_because == targets.STAND_IN
    assert targets.task_for_target(shipped, None, None).shipped_because == targets.STAND_IN  # nothing here: the default
    assert targets.task_label_and_reason(targets.task_for_target(shipped, None, None)).endswith(f"({targets.STAND_IN})")
    _task_folder(tmp_path / "work", "nvfp4_gemm")
    monkeypatch.chdir(tmp_path / "work")
    own = load_task()
    assert targets.task_for_target(own, None, Path(targets.DEFAULT_BY_NAME)).shipped_because == ""  # a task of yours
