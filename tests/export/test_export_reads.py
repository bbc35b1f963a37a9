"""`nvfp4ctl export` reads each file it embeds once: the forbidden-word scan and the inlining share the bytes
(build.read_once, the cache every command's reads share)."""

from __future__ import annotations

import contextlib
from collections import Counter
from pathlib import Path

import pytest

from nvfp4ctl import export
from nvfp4ctl.build import read_once, sources

SHIPPED_KERNELS = sorted((Path(__file__).resolve().parents[2] / "kernels").glob("*/*.cu"))


def _rendered(kernel: Path, arch: str = "sm_100a") -> export.Submission:
    return export.render(sources.build_inputs(sources.checked_source(kernel)), arch)


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> Counter[Path]:
    """The reads of files export's text makes, by resolved path: a source_bytes call that read_once has no bytes
    for goes to the file (outside reading_once, every call does)."""
    reads: Counter[Path] = Counter()
    real = read_once.source_bytes

    def counted(path: Path) -> bytes:
        if read_once.bytes_read(path) is None:
            reads[path.resolve()] += 1
        return real(path)

    monkeypatch.setattr(export, "source_bytes", counted)
    return reads


@pytest.mark.parametrize("kernel", SHIPPED_KERNELS, ids=[path.name for path in SHIPPED_KERNELS])
def test_an_export_reads_each_file_it_embeds_once(kernel: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel, its headers and the binding were each read twice, for the word "stream" and to be inlined."""
    reads = _counting_reads(monkeypatch)
    submission = _rendered(kernel)
    assert {path.resolve() for path in submission.embedded} <= set(reads)
    assert [path for path, count in reads.items() if count > 1] == []


@pytest.mark.parametrize("kernel", SHIPPED_KERNELS, ids=[path.name for path in SHIPPED_KERNELS])
def test_the_submission_is_the_one_each_read_going_to_the_file_gives(kernel: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    kept = _rendered(kernel)
    monkeypatch.setattr(export, "reading_once", contextlib.nullcontext)  # every read to the file
    assert kept.text == _rendered(kernel).text


def test_a_header_named_two_ways_is_read_once_and_inlined_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "torch_binding.cpp").write_text("")  # what makes common/ an override of nvfp4ctl's
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.h").write_text("#pragma once\nint x;\n")
    (tmp_path / "sub" / "y.h").write_text('#pragma once\n#include "../sub/x.h"\nint y;\n')
    kernel = tmp_path / "k.cu"
    kernel.write_text('#include "sub/x.h"\n#include "sub/y.h"\n')
    reads = _counting_reads(monkeypatch)
    with read_once.reading_once():  # as render reads
        text, used = export.inline_local_includes(kernel, search=[tmp_path / "common"])
    assert text.count("int x;") == 1 and "(already inlined above)" in text
    assert [path.name for path in used] == ["x.h", "y.h"]
    assert reads == Counter({kernel.resolve(): 1, (tmp_path / "sub" / "x.h").resolve(): 1,
                             (tmp_path / "sub" / "y.h").resolve(): 1})


def test_a_header_edited_between_two_exports_is_read_again(tmp_path: Path) -> None:
    """The texts are kept for one export, not for the process (a test's, a tune's: many exports)."""
    header = tmp_path / "h.cuh"
    header.write_text("int before;\n")
    kernel = tmp_path / "k.cu"
    kernel.write_text('#include "h.cuh"\n')
    inputs = sources.build_inputs(kernel)
    first = export.render(inputs, "sm_100a").text
    header.write_text("int after;\n")
    second = export.render(inputs, "sm_100a").text
    assert "int before;" in first and "int after;" in second
