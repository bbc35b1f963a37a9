"""NV101 in the local headers a linted kernel includes from outside what lint reads
(`#include "../../../common/nv_util.cuh"`): export inlines each into the submission, whose text the
leaderboard's "stream" test reads, so the header's word fails the kernel's submission. Headers are
followed as build and export follow them (build.sources.local_headers, one resolver); each is reported
once per run, naming the first kernel that includes it. Only the stream rule applies: the other rules
belong to the files the user asked lint to judge."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nvfp4ctl.errors import UsageError
from nvfp4ctl.lint import stream
from nvfp4ctl.lint.diagnostic import Diagnostic
from nvfp4ctl.lint.render.paths import display_path
from nvfp4ctl.lint.rules import RULES_BY_CODE, STREAM_CODE
from nvfp4ctl.lint.source import read_source

KERNEL_SUFFIX = ".cu"  # what export embeds with its headers; a header alone is never a submission


def stream_in_included_headers(linted: Sequence[Path]) -> list[Diagnostic]:
    """NV101's findings in the headers the `linted` kernels include, leaving out the headers among `linted`,
    which every rule judged already."""
    reported = {path.resolve() for path in linted}
    diagnostics: list[Diagnostic] = []
    for kernel in linted:
        if kernel.suffix.lower() != KERNEL_SUFFIX:
            continue
        for header in _headers_of(kernel):
            if header in reported:
                continue
            reported.add(header)
            diagnostics.extend(_stream_findings(header, kernel))
    return diagnostics


def _headers_of(kernel: Path) -> list[Path]:
    from nvfp4ctl.build.sources import local_headers  # the build's resolver: headers as export inlines them

    try:
        return local_headers(kernel.resolve())
    except (OSError, UsageError):  # a kernel that cannot be read is its own finding (NV004) or build's error
        return []


def _stream_findings(header: Path, kernel: Path) -> list[Diagnostic]:
    try:
        source = read_source(header)
    except (OSError, UsageError):
        return []
    rule = RULES_BY_CODE[STREAM_CODE]
    diagnostics = []
    for finding in stream.check(source.text):
        line, col = source.position(finding.offset)
        message = (f"{finding.message}; {display_path(kernel)} includes this header, and export inlines it into"
                   " the submission")
        diagnostics.append(Diagnostic(header, line, col, STREAM_CODE, rule.severity, message,
                                      source.line_text(line), finding.width))
    return diagnostics
