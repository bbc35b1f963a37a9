"""`nvfp4ctl tune`: knobs, candidates, the compile and GPU pools, ranking, the dispatch table, resume."""
