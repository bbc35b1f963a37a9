"""Why a submission may be host-bound: a torch binding compiled without optimisation.

cpp_extension's load_inline/load hand C++ sources to the host compiler with no -O flag unless
extra_cflags names one, so pybind11's dispatch and torch's tensor accessors (all header code) run at
-O0. Our own GEMM binding cost 18 µs of CPU per call that way and 8 µs at -O3 (H100 machine,
2026-11-27; docs/sm90_performance.md, "Host cost per call").
"""

from __future__ import annotations

import re
from pathlib import Path

from nvfp4ctl.build.submission_sources import find_sources
from nvfp4ctl.errors import UsageError

_LEVEL = re.compile(r"^-O(\d+|s|z|fast|g)?$")  # a bare -O is -O1


def _optimised(flags: list[str]) -> bool:
    """The compiler's rule: the last -O wins."""
    levels = [match.group(1) for flag in flags for word in flag.split() if (match := _LEVEL.match(word))]
    return bool(levels) and levels[-1] != "0"


def unoptimised_bindings(submission: Path) -> list[str]:
    """One sentence per load_inline/load call of the file that compiles C++ at -O0; none when the
    file cannot be read statically (no guesses)."""
    if submission.suffix != ".py":
        return []
    try:
        sources = find_sources(submission)
    except UsageError:
        return []
    return [f"{submission.name}:{e.line}: {e.call}(name={e.name!r}) compiles its C++ (the pybind11 binding) at -O0:"
            " no -O level in extra_cflags. That costs about 10 µs more CPU per call (our own binding: 18"
            " against 8 µs at -O3); add extra_cflags=[\"-O1\"] or higher."
            for e in sources.extensions if e.compiles_cpp and e.cpp_flags is not None and not _optimised(e.cpp_flags)]
