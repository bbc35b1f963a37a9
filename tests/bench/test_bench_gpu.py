"""On a GPU: a real `nvfp4ctl bench` of the default target, twice, and the fidelity check against a
faithful copy of the leaderboard's loop. Run with `-s` to see the numbers docs/commands.md records:

    python3 -m pytest -m gpu tests/bench -q -s
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import datetime, timezone
from typing import Any

import pytest

import leaderboard_loop
from nvfp4ctl.bench import jobs
from nvfp4ctl.bench.session import DEFAULT_SETTLE_S
from nvfp4ctl.bench.correctness import first_mismatch
from nvfp4ctl.bench.history import GEOMEAN_RUN_TO_RUN
from nvfp4ctl.task import load_task

pytestmark = pytest.mark.gpu

FIDELITY_TOLERANCE = 0.03  # our mean vs the leaderboard loop's, per shape
REPEAT_TOLERANCE = GEOMEAN_RUN_TO_RUN  # geomean of two consecutive benches: what bench calls "same"
WALL_LIMIT_S = 60.0  # a full bench of the three shapes with a µs-scale kernel


def _say(capsys: pytest.CaptureFixture[str], *lines: str) -> None:
    with capsys.disabled():
        print()
        for line in lines:
            print(line)


def _bench_json(*args: str) -> tuple[dict[str, Any], float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "nvfp4ctl", "bench", "--json", *args],
                          capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - started
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout), wall


def test_two_consecutive_benches_of_the_default_target(capsys: pytest.CaptureFixture[str]) -> None:
    first, first_wall = _bench_json()  # may include the kernel build and the calibration
    second, second_wall = _bench_json()
    drift = second["geomean_us"] / first["geomean_us"] - 1
    lines = [f"== nvfp4ctl bench, default target: {first['target']} on {first['gpu']} "
             f"({datetime.now(timezone.utc):%Y-%m-%d})",
             f"{'shape':<16} {'run 1 µs':>12} {'run 2 µs':>12} {'device µs':>10} {'CPU issue µs':>13} {'runs':>5}"]
    for a, b in zip(first["shapes"], second["shapes"]):
        lines.append(f"{a['shape']:<16} {a['us']['mean']:>12.3f} {b['us']['mean']:>12.3f} "
                     f"{b['device_us_per_call'] or 0:>10.3f} {b['issue_us_per_call']:>13.3f} {b['us']['runs']:>5}")
    lines += [f"geomean run 1 {first['geomean_us']:.3f} µs, run 2 {second['geomean_us']:.3f} µs: {100 * drift:+.2f}% "
              f"(limit ±{100 * REPEAT_TOLERANCE:g}%)",
              f"wall: run 1 {first_wall:.1f} s (build + calibration if not cached), run 2 {second_wall:.1f} s "
              f"(limit {WALL_LIMIT_S:g} s for a µs-scale kernel)",
              f"phases of run 2 (s): {[s['phases_s'] for s in second['shapes']]}",
              f"flush of run 2: {second['shapes'][0]['flush']}",
              f"kernels of run 2: {[s['kernels'] for s in second['shapes']]}"]
    _say(capsys, *lines)
    assert all(s["device_us_per_call"] for s in second["shapes"]), [s["profiler_error"] for s in second["shapes"]]
    assert abs(drift) <= REPEAT_TOLERANCE
    if max(s["us"]["mean"] for s in second["shapes"]) < 1000:  # µs-scale; the torch fallback is ms-scale
        assert second_wall <= WALL_LIMIT_S


def test_fidelity_against_the_leaderboard_loop(capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.runner.targets import load_target, resolve_target

    task = load_task()
    problem = get_problem(task.problem)
    spec = resolve_target(None, None)
    target = load_target(spec)
    free, total = torch.cuda.mem_get_info()
    rows = leaderboard_loop.scaled_clear_rows(total, free)
    clear = leaderboard_loop.make_clear_l2_cache(rows)
    clear_s = _time_once(clear)

    def check(data: tuple, output: Any) -> tuple[bool, str]:
        miss = first_mismatch(output, problem.reference(data), task.rtol, task.atol)
        return miss is None, str(miss)

    cases = task.benchmarks
    leaderboard_loop.run_single_benchmark(target, problem, cases[0], check, clear, False, 200, 10e7)  # its warm-up
    lines = [f"== fidelity on {torch.cuda.get_device_name()} ({datetime.now(timezone.utc):%Y-%m-%d}), "
             f"target {spec.label}",
             f"leaderboard clear scaled to this card: randn of {rows * leaderboard_loop.ROW_BYTES / 1e9:.1f} GB, "
             f"{1e3 * clear_s:.1f} ms on the GPU",
             f"{'shape':<16} {'ours µs':>16} {'leaderboard µs':>16} {'diff':>8} {'our wall s':>10} {'their wall s':>12} "
             f"{'our worst µs':>12} {'retimed':>7}"]
    worst = 0.0
    for case in cases:
        started = time.perf_counter()
        ours = jobs.bench_case(target, case=case, problem=task.problem, rtol=task.rtol, atol=task.atol,
                               criterion={"max_repeats": 200, "budget_s": 10.0}, settle_s=DEFAULT_SETTLE_S)
        ours_wall = time.perf_counter() - started
        started = time.perf_counter()
        theirs = leaderboard_loop.run_single_benchmark(target, problem, case, check, clear, False, 200, 10e9)
        their_wall = time.perf_counter() - started
        assert "failure" not in ours and isinstance(theirs, dict), (ours.get("failure"), theirs)
        mean = sum(ours["samples_ns"]) / len(ours["samples_ns"])
        diff = mean / theirs["mean"] - 1
        worst = max(worst, abs(diff))
        key = f"{case.m}x{case.n}x{case.k}"
        lines.append(f"{key:<16} {mean / 1e3:>9.3f} ({len(ours['samples_ns']):>4}) "
                     f"{theirs['mean'] / 1e3:>9.3f} ({theirs['runs']:>4}) {100 * diff:>+7.2f}% "
                     f"{ours_wall:>10.1f} {their_wall:>12.1f} "
                     f"{max(ours['samples_ns']) / 1e3:>12.3f} {ours['host_stalls']:>7}")
    lines.append(f"worst difference {100 * worst:.2f}% (limit {100 * FIDELITY_TOLERANCE:g}%)")
    _say(capsys, *lines)
    assert worst <= FIDELITY_TOLERANCE


def _time_once(work: Any) -> float:
    import torch

    work()  # allocate once: the caching allocator keeps the block, as on the server
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    work()
    end.record()
    end.synchronize()
    return begin.elapsed_time(end) * 1e-3



def test_profiler_finds_the_target_kernels_and_not_the_flush(capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    from nvfp4ctl.bench.flush import CudaFlush
    from nvfp4ctl.bench.kineto import profile_device_time

    inputs = [(torch.randn(1024, 1024, device="cuda", dtype=torch.float16),) for _ in range(50)]
    flush = CudaFlush()
    found = profile_device_time(lambda data: data[0] @ data[0], inputs, flush, head_start_s=2e-3)
    _say(capsys, f"== profiler: 1024³ fp16 matmul {found}", f"flush: {flush.describe()}")
    assert found is not None and not found.approximate
    assert found.kernels_per_call == pytest.approx(1.0, abs=0.05)  # the profiler may drop an event
    assert 1.0 < found.us_per_call < 500.0  # a 2 GFLOP matmul, not the 2 ms spin nor the flush


def test_flush_evicts_l2(capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    from nvfp4ctl.bench.flush import CudaFlush

    flush = CudaFlush()
    data = torch.ones(flush.l2_bytes // 4 // 4, dtype=torch.float32, device="cuda")  # a quarter of L2

    def read_time(evict: bool) -> float:
        data.sum()  # now in L2
        if evict:
            flush.evict()
        # Keep the GPU busy while the timed read is queued: without it the warm case timed the
        # CPU's launch gap (a 12 MiB read "from L2" took 24 µs on an H100, 15 µs after a flush).
        flush.hold(200e-6)
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        data.sum()
        end.record()
        end.synchronize()
        return begin.elapsed_time(end)

    # Interleaved, so clock ramps and other drift hit both the same way.
    for _ in range(10):
        read_time(True)
    samples = [(read_time(False), read_time(True)) for _ in range(40)]
    warm = sorted(w for w, _ in samples)[len(samples) // 2]
    cold = sorted(c for _, c in samples)[len(samples) // 2]
    _say(capsys, f"== L2 flush: a read of {data.numel() * 4 >> 20} MiB takes {1e3 * warm:.1f} µs from L2, "
                 f"{1e3 * cold:.1f} µs after the flush")
    assert cold > 1.1 * warm
