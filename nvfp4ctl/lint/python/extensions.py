"""The rules about what a file's load_inline / load calls compile (read once, as `build` reads them):
NV005 (arch.py), NV013 (cutlass_folder.py), NV008 / NV009, the extra_cuda_cflags `build` refuses, and NV010, the extra_cflags,
extra_ldflags and extra_include_paths it refuses, found by build's own checks (build.flag_problems): flags
torch's build fails on, an arch option whose arch nobody can tell, a str torch reads one character an element."""

from __future__ import annotations

import ast

from nvfp4ctl.build.flag_problems import strs_for_lists, unusable_flags, untold_arch
from nvfp4ctl.build.submission_sources import Extension, sources_in
from nvfp4ctl.errors import UsageError
from nvfp4ctl.lint.diagnostic import Finding
from nvfp4ctl.lint.python import arch, cutlass_folder
from nvfp4ctl.lint.python.findings import line_finding, node_finding
from nvfp4ctl.lint.source import SourceFile


def check(source: SourceFile, tree: ast.Module) -> list[Finding]:
    if "cpp_extension" not in source.text:  # load_inline and load come from it: no call to read, no pass to pay
        return []
    try:
        sources = sources_in(source.path, source.text, tree)
    except (UsageError, RecursionError):  # what build cannot read statically, build says; not a lint finding
        return []
    findings: list[Finding] = []
    flags_fine = [extension for extension in sources.extensions if not _flag_finding(source, extension, findings)]
    for extension in sources.extensions:
        called = f"{extension.call}({extension.name!r})"
        findings += [node_finding(source, given.node, "NV010", f"{called}'s {why}")
                     for given, why in strs_for_lists(extension)]
    return [*findings, *arch.check(source, sources, flags_fine), *cutlass_folder.check(source, flags_fine)]


def _flag_finding(source: SourceFile, extension: Extension, findings: list[Finding]) -> bool:
    """Adds NV008 or NV009 for the extension's flags to `findings`; whether it did. The arch is read from
    the flags: flags torch fails on (a str is read as none) or whose arch is untold get no NV005 as well."""
    called = f"{extension.call}({extension.name!r})"
    unusable = unusable_flags(extension)
    untold = untold_arch(extension) if unusable is None else None
    for code, problem in (("NV008", unusable), ("NV009", untold)):
        if problem is not None:
            line, why = problem
            findings.append(line_finding(source, line, code, f"{called}'s {why}"))
            return True
    return False
