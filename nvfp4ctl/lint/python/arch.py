"""NV005: a load_inline / load call whose device code needs an arch-specific target (sm_100a, sm_90a)
that nothing in the file names. torch then compiles for the GPU it runs on plus PTX (10.0+PTX on a
B200: sm_100, without the a), where tcgen05 and wgmma do not assemble: the submission fails to build
on the leaderboard although it builds wherever the user named the arch some other way."""

from __future__ import annotations

from nvfp4ctl.build.arch_names import LEADERBOARD_GPU, LEADERBOARD_GPU_ARCH, code_needs, naming_the_arch
from nvfp4ctl.build.submission_sources import Extension, SubmissionSources, device_code
from nvfp4ctl.lint.diagnostic import Finding
from nvfp4ctl.lint.python.findings import line_finding
from nvfp4ctl.lint.source import SourceFile


def check(source: SourceFile, sources: SubmissionSources, extensions: list[Extension]) -> list[Finding]:
    """NV005 for each of `extensions`, calls of `sources`."""
    findings = []
    for extension in extensions:
        if not extension.has_device_code or not sources.torch_picks_gpu_arch(extension):
            continue
        needs = code_needs(device_code(extension))
        if needs is None:
            continue
        arch, what = needs
        findings.append(line_finding(source, extension.line, "NV005",
                                     f"{extension.call}({extension.name!r}) names no arch ({sources.no_arch_named(extension)}):"
                                     f" torch compiles for the GPU it runs on, {LEADERBOARD_GPU_ARCH[0]}"
                                     f" ({LEADERBOARD_GPU_ARCH[1]}, without the a) on the {LEADERBOARD_GPU}, where its {what}"
                                     f" do not assemble; name {arch}: {naming_the_arch(arch)}{sources.arch_list_remarks(extension)}"))
    return findings
