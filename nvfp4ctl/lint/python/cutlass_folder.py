"""NV013: a load_inline / load call whose CUDA includes CUTLASS/CuTe headers and that names no include
folder. torch adds no CUTLASS include folder on the leaderboard, so those headers compile there only where
that machine's nvcc finds them by itself; `nvfp4ctl build` compiles them with this machine's CUTLASS and
says so in a note, which a clean build is easily read past."""

from __future__ import annotations

from nvfp4ctl.build import toolchain, torch_nvcc
from nvfp4ctl.build.submission_headers import flag_include_folders, supplies_cutlass
from nvfp4ctl.build.submission_sources import Extension, device_code
from nvfp4ctl.lint.diagnostic import Finding
from nvfp4ctl.lint.python.findings import line_finding
from nvfp4ctl.lint.source import SourceFile
from nvfp4ctl.preprocessor import includes_cutlass, live_code


def check(source: SourceFile, extensions: list[Extension]) -> list[Finding]:
    """NV013 for each of `extensions` (the calls whose flags torch can use: NV008 speaks of the others)."""
    return [line_finding(source, extension.line, "NV013",
                         f"{extension.call}({extension.name!r}) includes CUTLASS/CuTe headers and names no include folder"
                         " (extra_include_paths, -I or -isystem): torch adds no CUTLASS on the leaderboard, so they compile"
                         " there only where that machine's nvcc finds them by itself, which nothing here can tell"
                         " (`nvfp4ctl build` compiles them with this machine's); name the folder in extra_include_paths"
                         f" (an nvfp4ctl export looks it up at import: {toolchain.CUTLASS_LOOKUP_ORDER})")
            for extension in extensions if _relies_on_the_machines_cutlass(extension)]


def _relies_on_the_machines_cutlass(extension: Extension) -> bool:
    """Whether the code includes CUTLASS and the call gives nvcc no folder to find it in: none in
    extra_include_paths (read or not: a lookup lint cannot run names one all the same), none in its flags
    (flags lint cannot read may name one), and no cute/ or cutlass/ beside a load() file, where nvcc looks
    for a quoted include first."""
    if not extension.has_device_code or not includes_cutlass(live_code(device_code(extension))):
        return False
    if extension.include_paths or extension.cutlass_lookup_line is not None or extension.unread_includes_line is not None:
        return False
    if not extension.cuda_flags_static or flag_include_folders(torch_nvcc.shell_words(extension.cuda_flags)):
        return False
    return not supplies_cutlass([path.parent for path in extension.device_files])
