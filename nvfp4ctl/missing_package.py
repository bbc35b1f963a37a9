"""What to install for a module a submission imports that the Python running it does not have: one
wording for build's CuTe DSL check and for check's and bench's load of a submission."""

from __future__ import annotations

import importlib.util

# the pip package of a module a submission imports, where it is known (cutlass is the CuTe DSL's, whose
# package name is not the module's)
PIP_PACKAGES = {"cutlass": "nvidia-cutlass-dsl", "triton": "triton", "torch": "torch"}


def not_installed(module: str, python: str, other_way: str = "") -> str:
    """`module` (a dotted name: its top package chooses the pip package) is missing from `python`:
    "the Python running it (...) has no nvidia-cutlass-dsl (pip install nvidia-cutlass-dsl)";
    `other_way` ("or pass --python ...") follows the install hint."""
    package = PIP_PACKAGES.get(module.partition(".")[0])
    if package is None:
        return f"the Python running it ({python}) has no module named {module!r}"
    also = f", {other_way}" if other_way else ""
    return f"the Python running it ({python}) has no {package} (pip install {package}{also})"


def is_absent(module: str) -> bool:
    """Whether the top package of `module` (a dotted name) cannot be found by this Python: only then is a
    ModuleNotFoundError its setup's. `import torch.cuda.not_a_module` under an installed torch is the
    importing code's own mistake, not a missing install."""
    try:
        return importlib.util.find_spec(module.partition(".")[0]) is None
    except (ImportError, ValueError):  # a module in sys.modules without a spec: it is there
        return False
