from nvfp4ctl.problems import get_problem


def test_seed_walk_matches_the_leaderboard() -> None:
    # eval_better_bench.py: `test.args["seed"] += 42` before each of the 50 generate_input calls
    for name in ("nvfp4_gemm", "nvfp4_dual_gemm"):
        timing = get_problem(name).timing
        seeds = timing.seeds(1111)
        assert len(seeds) == timing.input_sets == 50, name
        assert seeds[:3] == [1153, 1195, 1237] and seeds[-1] == 1111 + 42 * 50
        assert timing.seeds(1111, 2) == [1153, 1195]
