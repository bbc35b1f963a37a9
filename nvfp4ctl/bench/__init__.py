"""Leaderboard-faithful timing (GPU MODE's eval_better_bench loop) and what the numbers mean.

Child side: `jobs` (one shape end to end) over `timing` (the loop), `flush`, `clock`, `stopping`,
`seeds`, `correctness`, `kineto` (device time), `calibration` (this GPU's ceilings). Parent side:
`session` (one Worker call per shape), `results` (data + JSON), `history` (run-log line and the
comparison with the previous bench), `render` (table rows and sentences). Nothing here imports
typer or rich; torch is imported only inside functions that run in the child.
"""
