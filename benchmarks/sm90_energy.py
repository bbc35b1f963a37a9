"""Energy per call of the sm_90a kernel's variants and of the cuBLAS anchor, from the card's own
energy counter (NVML): where a shape runs at the card's power limit, time per call is energy per
call divided by that limit, so energy is what a kernel must save to get faster there.

  python3 benchmarks/sm90_kernel.py libs --variants main no_b_decode no_mma      # here, no GPU needed
  python3 benchmarks/sm90_energy.py --variants main no_b_decode no_mma --only 2304x4608x7168   # GPU

Each measurement runs in its own process (variants of one kernel must not share a process, see
sm90_kernel.py's bench): a back-to-back loop of calls over rotating input sets (no L2 clearing, so
the card's steady state) for --seconds, timed with one event pair around the loop; NVML's total
energy counter read before and after it (mean power = its difference over the loop's time); the SM
clock and the clock-limit reasons sampled every 10 ms meanwhile. Rounds alternate the order of the
measurements, so drift in the card's temperature falls on every column alike. Needs nvidia-ml-py
(pynvml). Logs and a JSON of every number go to $OUT.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's nvfp4ctl, not an installed one

import sm90_kernel as harness  # noqa: E402  (the variants' libraries, input sets and the anchor's operands)

ANCHOR = "cublas_fp16"  # cuBLAS fp16 on operands dequantized beforehand, as in sm90_kernel.py's bench
SAMPLE_PERIOD_S = 0.01


@dataclass
class Measurement:
    """One loop of calls of one function on one shape."""

    name: str
    shape: str
    calls: int
    us_per_call: float
    mj_per_call: float
    mean_w: float
    median_sm_mhz: float
    power_capped: float  # fraction of samples with a power-limit clock reason
    thermal: float  # fraction of samples with a thermal clock reason
    power_limit_w: float
    max_sm_mhz: float


@dataclass
class Summary:
    """A function's measurements on one shape, averaged over the rounds."""

    name: str
    shape: str
    us_per_call: float
    mj_per_call: float
    mean_w: float
    median_sm_mhz: float
    power_capped: float
    thermal: float
    rounds: int


def summarize(measurements: list[Measurement]) -> Summary:
    first = measurements[0]
    return Summary(first.name, first.shape,
                   us_per_call=statistics.fmean(m.us_per_call for m in measurements),
                   mj_per_call=statistics.fmean(m.mj_per_call for m in measurements),
                   mean_w=statistics.fmean(m.mean_w for m in measurements),
                   median_sm_mhz=statistics.median(m.median_sm_mhz for m in measurements),
                   power_capped=statistics.fmean(m.power_capped for m in measurements),
                   thermal=statistics.fmean(m.thermal for m in measurements),
                   rounds=len(measurements))


def time_at_limit_us(mj_per_call: float, power_limit_w: float) -> float:
    """The least time per call of work that takes this much energy, at the card's power limit."""
    return mj_per_call / power_limit_w * 1e3


def round_order(names: list[str], rounds: int) -> list[list[str]]:
    """Forward, then backward, ...: each function is measured early and late alike."""
    return [names if r % 2 == 0 else names[::-1] for r in range(rounds)]


# ---------------------------------------------------------------- the card's counters (child process)
class Nvml:
    """The NVML handle of the GPU torch uses, and the readings this script needs."""

    def __init__(self) -> None:
        try:
            import pynvml
        except ImportError:
            sys.exit("sm90_energy.py needs nvidia-ml-py: pip install -e \".[bench]\" (or nvidia-ml-py)")
        import torch

        self.nvml = pynvml
        # the clock held down by the power limit (software cap, hardware brake) or by heat
        self.power_reasons = pynvml.nvmlClocksEventReasonSwPowerCap | pynvml.nvmlClocksEventReasonHwPowerBrakeSlowdown
        self.thermal_reasons = (pynvml.nvmlClocksEventReasonSwThermalSlowdown
                                | pynvml.nvmlClocksEventReasonHwThermalSlowdown)
        pynvml.nvmlInit()
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        try:  # NVML numbers GPUs in PCI order, CUDA fastest first: match the bus
            pci = f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
            self.handle = pynvml.nvmlDeviceGetHandleByPciBusId(pci)
        except (AttributeError, pynvml.NVMLError):
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())

    def energy_mj(self) -> int:
        return self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle)

    def max_sm_mhz(self) -> float:
        return self.nvml.nvmlDeviceGetMaxClockInfo(self.handle, self.nvml.NVML_CLOCK_SM)

    def power_limit_w(self) -> float:
        return self.nvml.nvmlDeviceGetEnforcedPowerLimit(self.handle) / 1e3

    def sample(self) -> tuple[float, int, int]:
        """(SM clock MHz, clock-limit reasons)."""
        nv = self.nvml
        return nv.nvmlDeviceGetClockInfo(self.handle, nv.NVML_CLOCK_SM), nv.nvmlDeviceGetCurrentClocksEventReasons(self.handle)


class Sampler(threading.Thread):
    """SM clock and clock-limit reasons every SAMPLE_PERIOD_S until stopped."""

    def __init__(self, nvml: Nvml) -> None:
        super().__init__(daemon=True)
        self.nvml, self.samples, self.done = nvml, [], threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.samples.append(self.nvml.sample())
            time.sleep(SAMPLE_PERIOD_S)


def function_and_inputs(name: str, sets: list, m: int, n: int):
    """(function of one input set, its arguments per set) for a variant's library or the anchor."""
    if name == ANCHOR:
        return harness.anchor_call(sets, m, n)
    library = harness.LIB_DIR / f"{name}.so"
    if not library.exists():
        sys.exit(f"{library} missing: python3 benchmarks/sm90_kernel.py libs --variants {name}")
    return harness.CapiKernel(library), sets


def measure(name: str, shape: tuple[int, int, int, int], seconds: float, sets_count: int) -> Measurement:
    import torch

    m, n, k, l = shape
    sets = harness.bench_inputs(m, n, k, l, sets_count)
    fn, args = function_and_inputs(name, sets, m, n)
    nvml = Nvml()

    def loop(calls: int) -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for i in range(calls):
            fn(args[i % len(args)])
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e3  # µs

    # warm up for a second (clocks and power settle), which also sizes the measured loop
    calls, spent = 16, 0.0
    while spent < 1e6:
        spent = loop(calls)
        calls *= 2
    calls = max(16, int(seconds * 1e6 / (spent / (calls // 2))))
    sampler = Sampler(nvml)
    torch.cuda.synchronize()
    energy_before = nvml.energy_mj()
    sampler.start()
    elapsed_us = loop(calls)
    energy_after = nvml.energy_mj()
    sampler.done.set()
    sampler.join()
    samples = sampler.samples or [nvml.sample()]
    return Measurement(name, "x".join(map(str, shape[:3])), calls, us_per_call=elapsed_us / calls,
                       mj_per_call=(energy_after - energy_before) / calls,
                       mean_w=(energy_after - energy_before) / elapsed_us * 1e3,  # exact: the counter over the loop
                       median_sm_mhz=statistics.median(s[0] for s in samples),
                       power_capped=sum(bool(s[1] & nvml.power_reasons) for s in samples) / len(samples),
                       thermal=sum(bool(s[1] & nvml.thermal_reasons) for s in samples) / len(samples),
                       power_limit_w=nvml.power_limit_w(), max_sm_mhz=nvml.max_sm_mhz())


# ---------------------------------------------------------------- the parent: rounds, table, arithmetic
def measure_in_child(name: str, shape: str, args: argparse.Namespace, log) -> Measurement | None:
    cmd = [sys.executable, __file__, "--child", name, "--only", shape, "--seconds", str(args.seconds),
           "--sets", str(args.sets)]
    got = harness.last_json_line(cmd, f"{name} on {shape}", log)
    return None if got is None else Measurement(**got)


def shape_key(shape: tuple[int, int, int, int]) -> str:
    return "x".join(map(str, shape[:3]))


def cycles_k(summary: Summary) -> float:
    """Thousands of SM cycles per call at the loop's median clock: the work a clock-bound call does."""
    return summary.us_per_call * summary.median_sm_mhz / 1e3


def report_shape(shape: str, summaries: list[Summary], power_limit_w: float, max_mhz: float, floor_us: float | None,
                 log) -> None:
    main = next((s for s in summaries if s.name == "main"), None)
    log(f"\n{shape}: per call in a steady loop: µs, mJ, mean W (mJ / µs), median SM MHz, thousands of SM cycles, "
        f"share of clock samples held down by the power limit / by heat; least µs = mJ / {power_limit_w:.0f} W (the limit)")
    log(f"{'':>16s} {'µs':>8s} {'mJ':>8s} {'W':>6s} {'MHz':>6s} {'kcycles':>8s} {'power':>6s} {'heat':>5s} {'least µs':>9s}"
        + ("   vs main: mJ  µs at limit  kcycles" if main else ""))
    for s in summaries:
        line = (f"{s.name:>16s} {s.us_per_call:8.1f} {s.mj_per_call:8.2f} {s.mean_w:6.0f} {s.median_sm_mhz:6.0f} "
                f"{cycles_k(s):8.0f} {s.power_capped:6.0%} {s.thermal:5.0%} "
                f"{time_at_limit_us(s.mj_per_call, power_limit_w):9.1f}")
        if main and s is not main:
            extra = s.mj_per_call - main.mj_per_call
            line += (f"   {extra:+11.2f} {time_at_limit_us(extra, power_limit_w):+11.1f} "
                     f"{cycles_k(s) - cycles_k(main):+8.0f}")
        log(line)
    if floor_us is not None:
        slack = harness.TASK_COMPUTE_FLOOR_SLACK
        allowed = floor_us * (1 + slack)
        clocks = f"{allowed * max_mhz / 1e3:.0f} thousand cycles at the highest clock ({max_mhz:.0f} MHz)"
        if main and main.power_capped > 0.5:  # the clock the limit leaves this kernel
            mhz = main.median_sm_mhz
            clocks += f", {allowed * mhz / 1e3:.0f} at main's clock under the limit ({mhz:.0f} MHz)"
        log(f"fp16 floor {floor_us:.1f} µs; within {slack:.0%} of it: <= {allowed:.1f} µs per call, so at most "
            f"{allowed * power_limit_w / 1e3:.1f} mJ per call at the limit, and at most {clocks}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", nargs="*", default=["main"], help="libraries in .sm90build/ (sm90_kernel.py libs)")
    parser.add_argument("--only", nargs="+", default=["2304x4608x7168"], metavar="MxNxK", help="task.yml shapes")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each measured loop")
    parser.add_argument("--rounds", type=int, default=2, help="measurements of each function per shape")
    parser.add_argument("--sets", type=int, default=8, help="rotating input sets")
    parser.add_argument("--no-anchor", action="store_true", help=f"leave out {ANCHOR}")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", harness.LIB_DIR)))
    args = parser.parse_args()
    shapes = {shape_key(s): s for s in harness.task_tests() + harness.BENCH_SHAPES}
    unknown = [s for s in args.only if s not in shapes]
    if unknown:
        parser.error(f"not task.yml shapes: {', '.join(unknown)} (known: {', '.join(shapes)})")
    if args.child:
        print(json.dumps(asdict(measure(args.child, shapes[args.only[0]], args.seconds, args.sets))))
        return 0

    import torch

    log = harness.open_log(args.out / "sm90_energy.log")
    names = ([] if args.no_anchor else [ANCHOR]) + args.variants
    log(f"{torch.cuda.get_device_name()} · {time.strftime('%Y-%m-%d %H:%M')} · {args.rounds} rounds of "
        f"{args.seconds:g} s loops over {args.sets} input sets, each in its own process")
    flops_rate, _ = harness.measure_ceilings(log)  # the fp16 floor of sm90_kernel.py's bench
    results: dict[str, list[dict]] = {}
    failed = False
    for key in args.only:
        measured: dict[str, list[Measurement]] = {name: [] for name in names}
        for order in round_order(names, args.rounds):
            for name in order:
                got = measure_in_child(name, key, args, log)
                if got is None:
                    failed = True
                    continue
                measured[name].append(got)
                log(f"  {key} {name}: {got.us_per_call:.1f} µs, {got.mj_per_call:.2f} mJ, {got.mean_w:.0f} W, "
                    f"{got.median_sm_mhz:.0f} MHz")
        done = [summarize(ms) for ms in measured.values() if ms]
        if not done:
            continue
        first = next(ms[0] for ms in measured.values() if ms)
        m, n, k, l = shapes[key]
        floor_us = 2 * m * n * k * l / flops_rate * 1e6
        report_shape(key, done, first.power_limit_w, first.max_sm_mhz, floor_us, log)
        results[key] = [asdict(s) | {"power_limit_w": first.power_limit_w, "max_sm_mhz": first.max_sm_mhz,
                                     "floor_us": floor_us} for s in done]
    record = args.out / "sm90_energy.json"  # runs into one folder add up: a shape's last run wins
    earlier = json.loads(record.read_text()) if record.exists() else {}
    record.write_text(json.dumps(earlier | results, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
