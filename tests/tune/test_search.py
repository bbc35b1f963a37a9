"""Candidate generation: coordinate descent from the start, kernel knobs global, plan knobs per shape,
noise hysteresis, wrong values out, the budget, and order independence."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from nvfp4ctl.tune.results import OK, WRONG, Measurement
from nvfp4ctl.tune.search import SearchSettings, coordinate_descent, one_round, round_size, start_configs
from nvfp4ctl.tune.table import DispatchTable

from tune_fakes import make_knobs

A, B = (128, 256, 256, 1), (512, 512, 7168, 1)
KNOBS = make_knobs(("X_K", (1, 2, 3), 1, "kernel"), ("X_P", (0, 1), 0, "plan"), ("X_FIXED", (7,), 7, "kernel"))


def model(config, shape) -> Measurement:
    k, p = config["X_K"], config["X_P"]
    if k == 3 and shape == B:
        return Measurement(WRONG, message="wrong on B")
    factor = {1: 1.0, 2: 0.8 if shape == A else 1.1, 3: 0.5}[k] * (0.9 if p and shape == A else 1.0)
    return Measurement(OK, us=10.0 * factor)


class Recorder:
    def __init__(self, shuffle: bool = False) -> None:
        self.asked: list[tuple[str, tuple]] = []
        self.labels: list[str] = []
        self.shuffle = shuffle

    def __call__(self, requests, label):
        self.labels.append(label)
        requests = list(requests)
        if self.shuffle:
            random.Random(len(self.asked)).shuffle(requests)
        self.asked += [(c.id, s) for c, s in requests]
        return {(c.id, s): model(c, s) for c, s in requests}


def test_kernel_knob_by_geomean_plan_knob_per_shape_wrong_value_out() -> None:
    start = start_configs(KNOBS, [A, B], None)
    outcome = coordinate_descent(KNOBS, start, Recorder())
    assert {s: c["X_K"] for s, c in outcome.best.items()} == {A: 2, B: 2}  # 3 is wrong on B
    assert outcome.best[A]["X_P"] == 1 and outcome.best[B]["X_P"] == 0
    assert outcome.best_result[A].us == pytest.approx(10.0 * 0.8 * 0.9)
    assert outcome.knobs_done == ["X_K", "X_P"] and outcome.stopped is None


def test_labels_and_request_counts_of_one_round() -> None:
    recorder = Recorder()
    coordinate_descent(KNOBS, start_configs(KNOBS, [A, B], None), recorder)
    assert recorder.labels == ["start", "K", "P"]
    assert len(recorder.asked) == round_size(KNOBS, 2) == 2 * (1 + 2 + 1)
    assert len(one_round(KNOBS, start_configs(KNOBS, [A, B], None))) == round_size(KNOBS, 2)


def test_a_gain_inside_the_noise_keeps_the_current_value() -> None:
    def flat(requests, label):
        return {(c.id, s): Measurement(OK, us=10.0 - 0.05 * c["X_K"]) for c, s in requests}  # 1 % at most

    outcome = coordinate_descent(KNOBS, start_configs(KNOBS, [A], None), flat, SearchSettings(min_gain=0.02))
    assert outcome.best[A]["X_K"] == 1


def test_the_table_is_the_start() -> None:
    table = DispatchTable(plan={A: {"X_P": 1}}, kernel={"X_K": 2})
    start = start_configs(KNOBS, [A, B], table)
    assert (start[A]["X_K"], start[A]["X_P"], start[B]["X_K"], start[B]["X_P"]) == (2, 1, 2, 0)


def test_the_budget_stops_between_knobs() -> None:
    ticks = iter([0.0, 5.0, 50.0, 100.0])
    outcome = coordinate_descent(KNOBS, start_configs(KNOBS, [A], None), Recorder(),
                                 SearchSettings(budget_s=10.0), clock=lambda: next(ticks))
    assert outcome.knobs_done == ["X_K"] and "budget of 10 s spent before P" in outcome.stopped


def test_a_steps_label_names_its_knob_as_the_tables_entries_do() -> None:
    """MY_SWIZZLE beside TINY_* leaves the knobs no common prefix: the steps were labelled TINY_SPLIT while the
    table's entries (and a new one tune writes) name that knob SPLIT, the kernel's enumerator (tune.entry_names)."""
    knobs = replace(make_knobs(("TINY_SPLIT", (1, 2), 1, "plan"), ("MY_SWIZZLE", (0, 1), 0, "plan")),
                    enumerators=("SPLIT",))
    labels: list[str] = []

    def flat(requests, label):
        labels.append(label)
        return {(c.id, s): Measurement(OK, us=10.0) for c, s in requests}

    coordinate_descent(knobs, start_configs(knobs, [A], None), flat)
    assert labels == ["start", "SPLIT", "MY_SWIZZLE"]
    ticks = iter([0.0, 50.0])
    outcome = coordinate_descent(knobs, start_configs(knobs, [A], None), flat, SearchSettings(budget_s=10.0),
                                 clock=lambda: next(ticks))
    assert outcome.stopped == "budget of 10 s spent before SPLIT"


def test_the_path_does_not_depend_on_answer_order() -> None:
    plain = coordinate_descent(KNOBS, start_configs(KNOBS, [A, B], None), Recorder())
    shuffled = coordinate_descent(KNOBS, start_configs(KNOBS, [A, B], None), Recorder(shuffle=True))
    assert plain.best == shuffled.best


def test_more_rounds_stop_when_nothing_changes() -> None:
    recorder = Recorder()
    coordinate_descent(KNOBS, start_configs(KNOBS, [A, B], None), recorder, SearchSettings(rounds=5))
    assert recorder.labels == ["start", "K (round 1)", "P (round 1)", "K (round 2)", "P (round 2)"]


def rematch_with(truth):
    """A rematch that times both sides by `truth`; its labels in `asked`."""
    asked: list[str] = []

    def rematch(duels, label):
        asked.append(label)
        return {(current.id, challenger.id, s): (truth(current, s), truth(challenger, s)) for current, challenger, s in duels}

    return rematch, asked


def test_a_lead_the_rematch_does_not_confirm_is_dropped() -> None:
    def truth(config, shape):  # X_P's first-pass lead on A was noise: back to back it is level
        return model(config.with_value("X_P", 0), shape)

    rematch, asked = rematch_with(truth)
    outcome = coordinate_descent(KNOBS, start_configs(KNOBS, [A, B], None), Recorder(), rematch=rematch)
    assert {s: c["X_K"] for s, c in outcome.best.items()} == {A: 2, B: 2}
    assert outcome.best[A]["X_P"] == 0 and outcome.best_result[A].us == pytest.approx(10.0 * 0.8)
    assert asked == ["K: rematch", "P: rematch"]
    assert [(r.step, r.shape, r.kept) for r in outcome.rematches] == [("K", A, True), ("K", B, True), ("P", A, False)]


def test_a_kernel_knob_moves_only_if_the_geomean_of_its_rematches_confirms() -> None:
    def truth(config, shape):  # X_K changes nothing back to back; X_P's lead on A is real
        return model(config.with_value("X_K", 1), shape)

    rematch, _ = rematch_with(truth)
    outcome = coordinate_descent(KNOBS, start_configs(KNOBS, [A, B], None), Recorder(), rematch=rematch)
    assert {c["X_K"] for c in outcome.best.values()} == {1}
    assert outcome.best[A]["X_P"] == 1 and outcome.best[B]["X_P"] == 0
    assert [(r.step, r.kept) for r in outcome.rematches] == [("K", False), ("K", False), ("P", True)]


def test_a_challenger_that_fails_its_rematch_is_dropped() -> None:
    def truth(config, shape):
        if config["X_P"] == 1:
            return Measurement(WRONG, message="wrong in the rematch")
        return model(config, shape)

    rematch, _ = rematch_with(truth)
    outcome = coordinate_descent(KNOBS, start_configs(KNOBS, [A, B], None), Recorder(), rematch=rematch)
    assert outcome.best[A]["X_P"] == 0
    assert [r.kept for r in outcome.rematches if r.step == "P"] == [False]


@pytest.mark.parametrize("knob, failing, winners", [("X_P", A, {A: 1, B: 0}), ("X_K", B, {A: 2, B: 2})])
def test_a_failing_current_best_is_not_rematched_any_working_lead_replaces_it(knob, failing, winners) -> None:
    """A wrong start has no time to be beaten back to back: the first-pass lead replaces it (a kernel
    knob's value on every shape, though the start failed on one)."""
    default = {"X_P": 0, "X_K": 1}[knob]

    def timed(config, shape):
        if config[knob] == default and shape == failing:
            return Measurement(WRONG, message="the start is wrong here")
        return model(config, shape)

    class WrongStart(Recorder):
        def __call__(self, requests, label):
            return {(c.id, s): timed(c, s) for c, s in requests}

    rematch, asked = rematch_with(timed)
    outcome = coordinate_descent(KNOBS, start_configs(KNOBS, [A, B], None), WrongStart(),
                                 SearchSettings(only=frozenset({knob})), rematch=rematch)
    assert {s: outcome.best[s][knob] for s in (A, B)} == winners and outcome.best_result[failing].ok
    assert asked == [] and outcome.rematches == []


RUNNERS = make_knobs(("R_K", (1, 2, 3), 1, "kernel"), ("R_P", (0, 1, 2, 3, 4), 0, "plan"))
SWEEP_K = {1: 10.0, 2: 8.0, 3: 9.0}  # the sweep's times by R_K (R_P at 0)
SWEEP_P = {0: 10.0, 1: 9.0, 2: 9.2, 3: 9.4, 4: 9.6}  # by R_P (R_K at 1): four values lead


def sweep(requests, label):
    return {(c.id, s): Measurement(OK, us=SWEEP_K[c["R_K"]] * SWEEP_P[c["R_P"]] / 10.0) for c, s in requests}


def back_to_back(real_k: int | None, real_p: int | None):
    """Rematch times: only `real_k` / `real_p` are really faster (9.0 µs); every other value is level."""
    def truth(config, shape):
        faster = (config["R_K"] == real_k) or (config["R_P"] == real_p)
        return Measurement(OK, us=9.0 if faster else 10.0)

    return rematch_with(truth)


def test_a_plan_knobs_runner_up_is_rematched_when_the_leader_loses() -> None:
    rematch, asked = back_to_back(None, 3)  # R_P = 3 was third in the sweep
    outcome = coordinate_descent(RUNNERS, start_configs(RUNNERS, [A, B], None), sweep,
                                 SearchSettings(only=frozenset({"R_P"})), rematch=rematch)
    assert {s: c["R_P"] for s, c in outcome.best.items()} == {A: 3, B: 3}
    assert asked == ["P: rematch"] * 3  # each attempt is one batch over both shapes
    assert [(r.shape, r.attempt, r.kept) for r in outcome.rematches] == [
        (A, 1, False), (B, 1, False), (A, 2, False), (B, 2, False), (A, 3, True), (B, 3, True)]
    assert outcome.best_result[A].us == pytest.approx(9.4)  # the sweep's time of the kept value


def test_at_most_three_values_are_rematched_per_shape() -> None:
    rematch, asked = back_to_back(None, 4)  # the fourth lead would hold, but it is never tried
    outcome = coordinate_descent(RUNNERS, start_configs(RUNNERS, [A], None), sweep,
                                 SearchSettings(only=frozenset({"R_P"})), rematch=rematch)
    assert outcome.best[A]["R_P"] == 0 and len(outcome.rematches) == 3 and len(asked) == 3


def test_a_kernel_knobs_runner_up_value_is_judged_by_geomean_after_the_leader_loses() -> None:
    rematch, asked = back_to_back(3, None)  # R_K = 2 led the sweep; 3 is the real gain
    outcome = coordinate_descent(RUNNERS, start_configs(RUNNERS, [A, B], None), sweep,
                                 SearchSettings(only=frozenset({"R_K"})), rematch=rematch)
    assert {c["R_K"] for c in outcome.best.values()} == {3}
    assert [(r.attempt, r.kept) for r in outcome.rematches] == [(1, False), (1, False), (2, True), (2, True)]
    assert asked == ["K: rematch", "K: rematch"]


def test_shapes_whose_lead_held_leave_the_next_attempts() -> None:
    def truth(config, shape):  # on A the leader (R_P = 1) is real; on B only the runner-up (2) is
        real = 1 if shape == A else 2
        return Measurement(OK, us=9.0 if config["R_P"] == real else 10.0)

    rematch, asked = rematch_with(truth)
    outcome = coordinate_descent(RUNNERS, start_configs(RUNNERS, [A, B], None), sweep,
                                 SearchSettings(only=frozenset({"R_P"})), rematch=rematch)
    assert {s: c["R_P"] for s, c in outcome.best.items()} == {A: 1, B: 2}
    assert [(r.shape, r.attempt, r.kept) for r in outcome.rematches] == [(A, 1, True), (B, 1, False), (B, 2, True)]


def test_at_most_three_kernel_values_are_rematched() -> None:
    knobs = make_knobs(("R_K", (1, 2, 3, 4, 5), 1, "kernel"), ("R_P", (0,), 0, "plan"))
    sweep_k = {1: 10.0, 2: 8.0, 3: 8.5, 4: 9.0, 5: 9.5}

    def sweep5(requests, label):
        return {(c.id, s): Measurement(OK, us=sweep_k[c["R_K"]]) for c, s in requests}

    rematch, asked = back_to_back(5, None)  # only the fourth lead is real: never reached
    outcome = coordinate_descent(knobs, start_configs(knobs, [A], None), sweep5, rematch=rematch)
    assert outcome.best[A]["R_K"] == 1 and [r.attempt for r in outcome.rematches] == [1, 2, 3] and len(asked) == 3
