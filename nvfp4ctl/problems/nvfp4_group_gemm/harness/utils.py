"""nvfp4ctl's stand-in for GPU MODE's nvfp4_group_gemm utils.py (our implementations).

Its match_reference compares a list of outputs, one per group, as the grouped GEMM's own does.
"""

from nvfp4ctl.problems.common.harness_utils import *  # noqa: F403 - GPU MODE's names, one implementation
from nvfp4ctl.problems.common.harness_utils import HARNESS_NAMES, make_match_reference_list, match_reference_list

__all__ = HARNESS_NAMES
match_reference = match_reference_list
make_match_reference = make_match_reference_list
