"""nvfp4ctl's stand-ins for GPU MODE's nvfp4_dual_gemm harness modules (task.py, utils.py, reference.py).

They are imported as top-level modules beside a submission (see nvfp4ctl.problems.common.harness),
not through this package; the package exists so that the files are installed with nvfp4ctl.
"""
