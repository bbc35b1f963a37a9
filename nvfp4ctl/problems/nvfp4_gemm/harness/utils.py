"""nvfp4ctl's stand-in for GPU MODE's utils.py beside nvfp4_gemm submissions (our implementations)."""

from nvfp4ctl.problems.common.harness_utils import *  # noqa: F403 - GPU MODE's names, one implementation
from nvfp4ctl.problems.common.harness_utils import HARNESS_NAMES

__all__ = HARNESS_NAMES
