"""Whether a kernel's object defines the C ABI functions its binding calls, parameters included.

A definition under the right name with other parameters (`nvfp4_gemm_launch(Nvfp4GemmArgs*)` where
the API header declares `const Nvfp4GemmArgs&`) is an overload in C++: it compiles, the shared
library links with the declared function left open, and the import fails. The signatures the
binding needs are read the way the compiler reads them: a two-line host file that includes the API
header and takes each function's address is compiled, and its undefined symbols are the answer
(typedefs resolved as in the kernel's own object, which a text match of the header could not do).
"""

from __future__ import annotations

import functools
import hashlib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from nvfp4ctl.build import flags, toolchain
from nvfp4ctl.build.compiler_errors import display_path
from nvfp4ctl.build.sources import BuildInputs, abi_functions, find_header, kernel_api

_PROBE = "abi_probe"  # abi_probe.cpp and .o, in a scratch folder removed at once
_TIMEOUT_S = 120.0
_SYMBOL = re.compile(r"^\S*\s+(?P<kind>[TWU])\s+(?P<name>[\w:]+)\((?P<params>.*)\)\s*$", re.MULTILINE)


def missing_abi(inputs: BuildInputs, kernel_object: Path) -> str | None:
    """None when the object defines every C ABI function the binding calls, else the one line
    that says which it lacks and, for one defined with other parameters, what it has instead."""
    defined = _symbols(kernel_object, defined=True)
    if defined is None:  # no nm: the import on the GPU machine is the check
        return None
    names = abi_functions(inputs.kernel)
    absent = [f"{name}()" for name in names if name not in defined]
    if absent:
        return (f"{display_path(inputs.kernel)}: defines no {' or '.join(absent)}, the C ABI"
                f" {inputs.binding.name} calls")
    wanted = _required(inputs, names)
    if wanted is None:  # the header alone does not compile here: the kernel's own build says why
        return None
    wrong = [(name, wanted[name]) for name in names if name in wanted and wanted[name] not in defined[name]]
    if not wrong:
        return None
    found = "; ".join(f"{name}({', '.join(defined[name])}), not {name}({params})" for name, params in wrong)
    return f"{display_path(inputs.kernel)}: defines {found} as {_header_name(inputs)} declares and {inputs.binding.name} calls"


def _symbols(obj: Path, defined: bool) -> dict[str, list[str]] | None:
    """Host functions an object file defines (T, W) or needs (U): demangled name -> parameter
    lists as the demangler spells them; None without `nm`."""
    nm = shutil.which("nm")
    if nm is None:
        return None
    option = "--defined-only" if defined else "--undefined-only"
    done = subprocess.run([nm, "-C", option, str(obj)], capture_output=True, text=True, timeout=_TIMEOUT_S)
    if done.returncode != 0:
        return None
    found: dict[str, list[str]] = {}
    for symbol in _SYMBOL.finditer(done.stdout):
        if (symbol["kind"] == "U") != defined:
            found.setdefault(symbol["name"], []).append(symbol["params"])
    return found


def _header_name(inputs: BuildInputs) -> str:
    api = kernel_api(inputs.kernel)
    return api.header if api is not None else "nvfp4_gemm_api.h"  # type: ignore[attr-defined]


def _required(inputs: BuildInputs, names: tuple[str, ...]) -> dict[str, str] | None:
    """The parameter list of each of `names` as the API header the binding includes declares it; None
    when the probe does not compile."""
    header = find_header(_header_name(inputs), inputs.binding.parent, [inputs.common])  # as the binding finds it
    if header is None:
        return None
    includes = tuple(str(path) for path in flags.include_dirs(inputs))
    return _declared(header, hashlib.sha256(header.read_bytes()).hexdigest(), includes, names)


@functools.lru_cache(maxsize=None)
def _declared(header: Path, digest: str, includes: tuple[str, ...], names: tuple[str, ...]) -> dict[str, str] | None:
    """_required's probe, compiled once per header version and include folders in a process: the
    answer depends on neither the kernel nor its defines, and tune builds many candidates of one."""
    with tempfile.TemporaryDirectory(prefix="nvfp4ctl-abi-") as scratch:
        probe = Path(scratch) / f"{_PROBE}.cpp"
        addresses = ", ".join(f"(void*)&{name}" for name in names)
        # the header's path as its bytes: a folder's name that is not UTF-8 is one the compiler opens all the same
        probe.write_text(f'#include "{header}"\nvoid* nvfp4ctl_abi_probe[] = {{{addresses}}};\n',
                         errors="surrogateescape")
        obj = probe.with_suffix(".o")
        command = [str(toolchain.nvcc_path()), *(f"-I{path}" for path in includes), "-c", str(probe), "-o", str(obj)]
        try:
            done = subprocess.run(command, cwd=scratch, capture_output=True, timeout=_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            return None
        needed = _symbols(obj, defined=False) if done.returncode == 0 else None
    if needed is None:
        return None
    return {name: needed[name][0] for name in names if name in needed}
