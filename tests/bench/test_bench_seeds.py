from nvfp4ctl.bench.seeds import INPUT_SETS, combine_secret, input_seeds


def test_seed_walk_matches_the_leaderboard() -> None:
    # eval_better_bench.py: `test.args["seed"] += 42` before each of the 50 generate_input calls
    seeds = input_seeds(1111)
    assert len(seeds) == INPUT_SETS == 50
    assert seeds[:3] == [1153, 1195, 1237] and seeds[-1] == 1111 + 42 * 50
    assert input_seeds(1111, 2) == [1153, 1195]


def test_secret_seed_combination_is_cantor_pairing() -> None:
    assert combine_secret(1111, 0) == 1111 + 1111 * 1112 // 2
    assert combine_secret(3, 4) == 3 + 7 * 8 // 2
