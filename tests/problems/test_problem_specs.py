"""What each Problem says about itself without torch: --shape syntax, names, counts, SOL, loop, layout."""

from __future__ import annotations

import subprocess
import sys

import pytest

from nvfp4ctl.bench.modes import BENCHMARK, LEADERBOARD
from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems import get_problem, problem_names


def test_shape_syntax_per_problem() -> None:
    dual = get_problem("nvfp4_dual_gemm").parse_shape("256,512,7168", 7)
    assert (dual.m, dual.n, dual.k, dual.l, dual.seed) == (256, 512, 7168, 1, 7)
    gemv = get_problem("nvfp4_gemv").parse_shape("4096,7168,8", 1111)
    assert (gemv.m, gemv.n, gemv.k, gemv.l) == (4096, None, 7168, 8)
    group = get_problem("nvfp4_group_gemm").parse_shape("192,3072,4096; 320,3072,4096", 1111)
    assert (group.g, group.m, group.n, group.k, group.l) == (2, (192, 320), (3072, 3072), (4096, 4096), 1)


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("nvfp4_gemv", "128,256,512,1", "--shape 128,256,512,1: expected M,K or M,K,L as positive integers"),
        ("nvfp4_gemv", "128,96", "--shape 128,96: K: expected a multiple of 64"),
        # a GEMM-style M,N,K typed for the GEMV: K is its second number, which the message says
        ("nvfp4_gemv", "1,1,64", "--shape 1,1,64: K: expected a multiple of 64 (the task's rule for the GEMV), got 1"
                                 " (this problem's --shape is M,K or M,K,L)"),
        ("nvfp4_dual_gemm", "128,256", "--shape 128,256: expected M,N,K or M,N,K,L"),
        ("nvfp4_group_gemm", "128,256;64,64,64", "--shape 128,256;64,64,64: expected M1,N1,K1;M2,N2,K2;..."),
        ("nvfp4_group_gemm", "128,256,256;64,64,40", "--shape 128,256,256;64,64,40: group 2: K: expected a multiple of 16"),
        ("nvfp4_gemm", "99999999999,256,256", "--shape 99999999999,256,256: 99999999999 is more than 2147483647 (the kernels take int sizes)"),
        ("nvfp4_group_gemm", "128,256,256;64,99999999999,64", "--shape 128,256,256;64,99999999999,64: 99999999999 is more than"),
    ],
)
def test_bad_shapes_are_one_line(name: str, text: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        get_problem(name).parse_shape(text, 1111)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("nvfp4_gemm", "128,,256,256", "M,N,K or M,N,K,L as positive integers"),
        ("nvfp4_gemm", "128,256,256,", "M,N,K or M,N,K,L as positive integers"),
        ("nvfp4_dual_gemm", "128,,256,256", "M,N,K or M,N,K,L as positive integers"),
        ("nvfp4_dual_gemm", "128,256,256,", "M,N,K or M,N,K,L as positive integers"),
        ("nvfp4_dual_gemm", "128, ,256", "M,N,K or M,N,K,L as positive integers"),
        ("nvfp4_gemv", "128,,256", "M,K or M,K,L as positive integers"),
        ("nvfp4_group_gemm", "128,256,256;;128,256,256", "M1,N1,K1;M2,N2,K2;... (M,N,K per group)"),
        ("nvfp4_group_gemm", ";128,256,256", "M1,N1,K1;M2,N2,K2;... (M,N,K per group)"),
        ("nvfp4_group_gemm", "128,256,256;", "M1,N1,K1;M2,N2,K2;... (M,N,K per group)"),
        ("nvfp4_group_gemm", "128,,256,256", "M1,N1,K1;M2,N2,K2;... (M,N,K per group)"),
    ],
)
def test_an_empty_field_or_group_is_refused_not_dropped(name: str, text: str, expected: str) -> None:
    with pytest.raises(UsageError) as caught:
        get_problem(name).parse_shape(text, 1111)
    assert str(caught.value).startswith(f"--shape {text}: expected {expected}")


def test_spaces_around_separators_are_no_empty_fields() -> None:
    for text in ("128, 256, 512", " 128 x 256 x 512 ", "128 256 512"):
        case = get_problem("nvfp4_dual_gemm").parse_shape(text, 1)
        assert (case.m, case.n, case.k, case.l) == (128, 256, 512, 1), text


def test_names_and_counts() -> None:
    gemm, dual, group, gemv = (get_problem(n) for n in ("nvfp4_gemm", "nvfp4_dual_gemm", "nvfp4_group_gemm", "nvfp4_gemv"))
    case = dual.parse_shape("256,4096,7168", 1111)
    assert dual.key(case) == "256x4096x7168" and dual.flops(case) == 2 * gemm.flops(case)
    assert dual.bytes_moved(case) == (256 + 2 * 4096) * 7168 * (1 / 2 + 1 / 16) + 2 * 256 * 4096
    assert dual.sol_us(case) == 4.708  # from the task description's table: GPU MODE's file has no sol_us
    v = gemv.parse_shape("7168,16384", 1111)
    assert (gemv.key(v), gemv.shape_text(v), gemv.flops(v), gemv.sol_us(v)) == ("7168x16384", "m=7168 k=16384", 2.0 * 7168 * 16384, 8.622)
    g = group.parse_shape("128,4096,1536;384,4096,1536", 1111)
    assert group.key(g) == "g2:m128+384:n4096:k1536"
    assert group.shape_text(g) == "g=2 m=128,384 n=4096 k=1536"
    assert group.flops(g) == 2.0 * (128 + 384) * 4096 * 1536 and group.sol_us(g) == 1.525


def test_each_problem_has_its_leaderboard_loop() -> None:
    gemm, group, gemv = (get_problem(n) for n in ("nvfp4_gemm", "nvfp4_group_gemm", "nvfp4_gemv"))
    assert gemm.timing.seeds(1111)[:2] == [1153, 1195] and len(gemm.timing.seeds(1111)) == 50
    assert len(group.timing.seeds(1111)) == 15  # 15 calls per event pair
    assert gemv.timing.seeds(1111) == [1111]  # eval.py: one input set, the task's seed as is
    assert (group.bench_mode(BENCHMARK).max_repeats, group.bench_mode(LEADERBOARD).max_repeats) == (100, 100)
    assert group.bench_mode(LEADERBOARD).warm_max_repeats == 50
    assert (gemm.bench_mode(BENCHMARK).max_repeats, gemm.bench_mode(LEADERBOARD).max_repeats) == (200, 1000)
    assert gemv.bench_mode(LEADERBOARD).warm_first_only and not gemm.bench_mode(LEADERBOARD).warm_first_only
    # eval.py's leaderboard mode: 200 repeats, a warm-up of 200, a new input (seed += 13) before each repeat
    assert (gemv.bench_mode(LEADERBOARD).max_repeats, gemv.bench_mode(LEADERBOARD).warm_max_repeats) == (200, 200)
    assert gemv.timing.leaderboard_fresh_seed_step == 13 and gemm.timing.leaderboard_fresh_seed_step == 0


def test_tuple_layouts() -> None:
    dual = get_problem("nvfp4_dual_gemm").layout
    assert (dual.reference_scales, dual.permuted_scales, dual.b_operands, dual.output) == ((3, 4, 5), (6, 7, 8), (1, 2), 9)
    assert dual.name(dual.permuted_for(4)) == "sfb1_permuted"
    group = get_problem("nvfp4_group_gemm").layout
    assert group.name(group.reference_scales[0]) == "sfasfb_tensors" and group.nested
    for name in problem_names():
        layout = get_problem(name).layout
        assert len(layout.reference_scales) == len(layout.permuted_scales)


def test_specs_do_not_import_torch() -> None:
    code = ("import sys; from nvfp4ctl.task import load_task; from nvfp4ctl.problems import all_problems\n"
            "for p in all_problems(): t = load_task(p.task_file); [p.key(c) for c in t.benchmarks]\n"
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_kernel_calls_pass_each_problems_operands() -> None:
    from types import SimpleNamespace

    calls: list[tuple] = []
    module = SimpleNamespace(**{name: (lambda *args, name=name: calls.append((name, args)) or "c")
                                for name in ("nvfp4_gemm", "nvfp4_dual_gemm", "nvfp4_gemv", "nvfp4_group_gemm")})
    get_problem("nvfp4_dual_gemm").kernel_call(module, tuple(range(10)))
    get_problem("nvfp4_gemv").kernel_call(module, tuple(range(7)))
    group = ([("a0", "b0", "c0"), ("a1", "b1", "c1")], [("r", "r")] * 2, [("pa0", "pb0"), ("pa1", "pb1")], [])
    get_problem("nvfp4_group_gemm").kernel_call(module, group)
    assert calls == [
        ("nvfp4_dual_gemm", (0, 1, 2, 6, 7, 8, 9)),
        ("nvfp4_gemv", (0, 1, 4, 5, 6)),
        ("nvfp4_group_gemm", (["a0", "a1"], ["b0", "b1"], ["pa0", "pa1"], ["pb0", "pb1"], ["c0", "c1"])),
    ]


@pytest.mark.parametrize("error", ["oom", "cpu"])
def test_inputs_bigger_than_the_device_are_an_input_error(error: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from nvfp4ctl.problems import base

    problem = get_problem("nvfp4_gemm")
    raised = torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 12.00 TiB") if error == "oom" else \
        RuntimeError("[enforce fail at alloc_cpu.cpp:121] data. DefaultCPUAllocator: can't allocate memory: you tried to allocate 13194139533312 bytes.")

    def failing(message: BaseException):
        def generate_input(case: object, device: str = "cuda", scales: str = "generator") -> None:
            raise message
        return generate_input

    monkeypatch.setattr(base, "_device_bytes", lambda device: 80.0 * 2**30)
    # what bytes_moved counts fits: a tensor torch was asked for is what the generator made beyond it
    monkeypatch.setattr(problem, "bytes_moved", lambda case: 0.0)
    monkeypatch.setattr(problem, "generate_input", failing(raised))
    case = problem.parse_shape("2000000000,128,256", 1111)
    with pytest.raises(UsageError) as caught:
        problem.make_input(case)
    assert str(caught.value) == "m=2000000000 n=128 k=256: the inputs do not fit in cuda memory (one tensor needs 12288.0 GiB of 80.0)"
    # memory the kernel under test holds may be what ran out: not the shape's fault, left as it came
    monkeypatch.setattr(problem, "generate_input", failing(torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 56.00 MiB")))
    with pytest.raises(torch.OutOfMemoryError):
        problem.make_input(case)
    monkeypatch.setattr(problem, "generate_input", failing(RuntimeError("CUDA error: misaligned address")))
    with pytest.raises(RuntimeError, match="misaligned"):
        problem.make_input(case)


@pytest.mark.parametrize("name, shape", [("nvfp4_gemm", "2000000000,128,256"), ("nvfp4_gemv", "2000000000,256"),
                                         ("nvfp4_dual_gemm", "2000000000,128,256"),
                                         ("nvfp4_group_gemm", "128,128,256;2000000000,128,256")])
def test_inputs_and_output_bigger_than_the_device_are_refused_before_any_is_made(
        name: str, shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Their first operands took a check's whole timeout to generate on the CPU before torch ran out."""
    from nvfp4ctl.problems import base

    problem = get_problem(name)

    def generate_input(*args: object, **kwargs: object) -> None:
        raise AssertionError("inputs were made for a case that cannot fit")

    monkeypatch.setattr(base, "_device_bytes", lambda device: 80.0 * 2**30)
    monkeypatch.setattr(problem, "generate_input", generate_input)
    case = problem.parse_shape(shape, 1111)
    with pytest.raises(UsageError) as caught:
        problem.make_input(case, device="cuda")
    needed = problem.bytes_moved(case) / 2**30
    assert str(caught.value) == (f"{problem.shape_text(case)}: too large: its inputs and output need at least"
                                 f" {needed:.1f} GiB, more than the 80.0 GiB of cuda memory")


def test_bench_labels_a_gemv_shape_as_m_k_and_l_and_a_gemm_shape_by_its_key() -> None:
    gemv, gemm = get_problem("nvfp4_gemv"), get_problem("nvfp4_gemm")
    batched = gemv.parse_shape("4096,7168,8", 1111)
    assert gemv.label(batched) == "4096x7168 l=8" and gemv.key(batched) == "4096x7168x8"  # the run log's key as before
    assert gemv.label(gemv.parse_shape("7168,16384", 1111)) == "7168x16384"
    assert gemm.label(gemm.parse_shape("128,7168,16384,4", 1111)) == "128x7168x16384x4"
