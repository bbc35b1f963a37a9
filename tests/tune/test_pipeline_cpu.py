"""The real pipeline on CPU (NVFP4CTL_DEVICE=cpu style): runner Workers as the 'GPUs', submissions as
the candidates' builds; each candidate is checked (a wrong one rejected) and then timed by bench's job."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from nvfp4ctl.task import Case
from nvfp4ctl.tune.compile_pool import CompilePool
from nvfp4ctl.tune.gpu_pool import GpuPool, make_workers
from nvfp4ctl.tune.results import OK, WRONG, BuildResult
from nvfp4ctl.tune.search import SearchSettings, start_configs
from nvfp4ctl.tune.session import CURRENT, Evaluator, TuneReport, tune
from nvfp4ctl.tune.state import TuneState

from tune_fakes import make_knobs

KNOBS = make_knobs(("C_SPEED", (0, 1, 2), 0, "kernel"), ("C_MODE", (0, 1), 0, "plan"))
SHAPES = [(128, 128, 256, 1), (128, 256, 256, 1)]
CASES = {s: Case(*s, seed=1111) for s in SHAPES}
PAYLOAD = {"problem": "nvfp4_gemm", "rtol": 1e-3, "atol": 1e-3, "device": "cpu", "probe": True, "settle_s": 0.0,
           "input_sets": 2, "criterion": {"max_repeats": 3, "min_time_s": 0.0, "max_noise": 0.0}}
SUBMISSION = '''import time
from nvfp4ctl.problems import get_problem
PROBLEM = get_problem("nvfp4_gemm")

def custom_kernel(data):
    time.sleep({delay})
    out = PROBLEM.reference(data) + {offset}
    data[6].copy_(out)
    return data[6]
'''


def test_cpu_workers_check_then_time_every_candidate(tmp_path: Path) -> None:
    def compile_fn(source: str, arch: str, defines: tuple[str, ...]) -> BuildResult:
        values = dict(d.split("=") for d in defines)
        speed, mode = int(values.get("C_SPEED", 0)), int(values.get("C_MODE", 0))
        path = tmp_path / f"cand_{speed}_{mode}_{len(defines)}.py"
        delay = 0.15 * (speed == 0) + 0.15 * mode  # SPEED=1 fast, MODE=1 slow, SPEED=2 wrong (CPU calls: ~60 ms)
        path.write_text(SUBMISSION.format(delay=delay, offset=1.0 if speed == 2 else 0.0))
        return BuildResult(OK, artifact={"kind": "submission", "path": str(path)})

    report = TuneReport(knobs=KNOBS, shapes=SHAPES, compile_only=False)
    state = TuneState(tmp_path / "state.json", "key")
    with CompilePool(Path("fake.cu"), "sm_90a", compile_fn=compile_fn, executor=ThreadPoolExecutor(2)) as builds, \
            GpuPool(make_workers(["0", "1"], "cpu", 120.0), PAYLOAD, 120.0) as gpus:
        evaluator = Evaluator(builds, gpus, state, CASES, report, lambda label, done: None)
        tune(KNOBS, start_configs(KNOBS, SHAPES, None), None, evaluator, SearchSettings())
    assert {report.search.best[s]["C_SPEED"] for s in SHAPES} == {1}
    assert {report.search.best[s]["C_MODE"] for s in SHAPES} == {0}
    statuses = {(report.configs[cid].diff(report.search.start[s], KNOBS) if report.configs[cid] else cid, s): r.status
                for (cid, s), r in report.measurements.items()}
    assert statuses[("SPEED=2", SHAPES[0])] == WRONG and statuses[(CURRENT, SHAPES[1])] == OK
    assert {r.gpu for r in report.measurements.values()} == {"CPU worker 0", "CPU worker 1"}
    assert all(r.runs == 3 for r in report.measurements.values() if r.ok)
    # SPEED=1's lead, timed again back to back in one worker (measure_pair: current, it, it, current)
    speed = [r for r in report.search.rematches if r.step == "SPEED"]
    assert len(speed) == 2 and all(r.kept and r.current.runs == r.challenger.runs == 6 for r in speed)
    assert all(r.current.gpu == r.challenger.gpu for r in speed)
