"""The timing settings a bench ran with (--mode, --max-repeats, --settle, --max-noise), read from its run-log line.

They change the numbers: a quick `--max-repeats 3` stops long before a full run, `--settle 0` times a card not yet
at the kernel's load, leaderboard mode rechecks every repeat. Bench's comparison with the previous bench and
`log --trend` set only runs of the same settings side by side. They are read from the command cell every line
has always had (the options as typed), so older lines count as they are and no reader of the result cell changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from nvfp4ctl.bench.modes import BENCHMARK, DEFAULT_SETTLE_S, MODES

DEFAULT_MAX_NOISE_PCT = 0.1  # bench's --max-noise default


@dataclass(frozen=True)
class TimingSettings:
    mode: str = BENCHMARK
    max_repeats: int | None = None  # None: the mode's own for the problem
    settle_s: float = DEFAULT_SETTLE_S
    max_noise_pct: float = DEFAULT_MAX_NOISE_PCT

    def resolved(self, problem: str) -> TimingSettings:
        """The same settings with the mode's own --max-repeats for `problem` written out, so that a typed
        `--max-repeats 200` equals the GEMM's default; as they are for a problem this nvfp4ctl does not know."""
        if self.max_repeats is not None:
            return self
        repeats = _default_repeats(self.mode, problem)
        return self if repeats is None else TimingSettings(self.mode, repeats, self.settle_s, self.max_noise_pct)

    def options(self, problem: str) -> list[str]:
        """The options that differ from bench's defaults, as typed ("--max-repeats 3"); [] for the defaults."""
        default = TimingSettings(mode=self.mode).resolved(problem)
        mine = self.resolved(problem)
        words = [f"--mode {self.mode}"] if self.mode != BENCHMARK else []
        if mine.max_repeats != default.max_repeats:
            words.append(f"--max-repeats {mine.max_repeats}")
        if self.settle_s != DEFAULT_SETTLE_S:
            words.append(f"--settle {self.settle_s:g}")
        if self.max_noise_pct != DEFAULT_MAX_NOISE_PCT:
            words.append(f"--max-noise {self.max_noise_pct:g}")
        return words

    def described(self, problem: str) -> str:
        """"--max-repeats 3 --settle 0", or "the default settings"."""
        return " ".join(self.options(problem)) or "the default settings"


@lru_cache(maxsize=64)  # `log --trend` asks it of every bench of a log of years of runs
def _default_repeats(mode: str, problem: str) -> int | None:
    from nvfp4ctl.errors import UsageError
    from nvfp4ctl.problems import get_problem

    try:
        return int(get_problem(problem).bench_mode(mode).max_repeats)
    except UsageError:  # a problem of a later nvfp4ctl
        return None


_VALUED = ("--mode", "--max-repeats", "--settle", "--max-noise")


@lru_cache(maxsize=4096)
def settings_of(command: str) -> TimingSettings:
    """The settings of a logged bench command (`nvfp4ctl bench --max-repeats=3 --settle 0`); a value no bench
    took (a hand edit) as the default, as the CLI would have refused the line's run."""
    from nvfp4ctl.runlog import command_arguments

    given: dict[str, str] = {}
    arguments = command_arguments(command)
    for index, word in enumerate(arguments):
        name, equals, value = word.partition("=")
        if name not in _VALUED:
            continue
        if not equals:
            if index + 1 >= len(arguments):
                continue
            value = arguments[index + 1]
        given[name] = value  # the last one given wins, as in the CLI
    mode = given.get("--mode", BENCHMARK).strip().lower()
    return TimingSettings(mode=mode if mode in MODES else BENCHMARK,
                          max_repeats=_whole(given.get("--max-repeats")),
                          settle_s=_real(given.get("--settle"), DEFAULT_SETTLE_S),
                          max_noise_pct=_real(given.get("--max-noise"), DEFAULT_MAX_NOISE_PCT))


def _whole(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _real(text: str | None, default: float) -> float:
    try:
        return float(text) if text is not None else default
    except ValueError:
        return default


def same_settings(before: TimingSettings, now: TimingSettings, problem: str) -> bool:
    return before.resolved(problem) == now.resolved(problem)


def not_compared(before: TimingSettings, now: TimingSettings, problem: str) -> str:
    """"used --max-repeats 3, this one the default settings": how two benches' settings differ."""
    return f"used {before.described(problem)}, this one {now.described(problem)}"
