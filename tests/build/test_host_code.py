"""The host-code digest tune compares builds by: equal for an unread -D, another module name and the symbol
numbering another name gives, other for a value the host code reads (built with the machine's C compiler;
nvcc adds only the sections it leaves out)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from nvfp4ctl.build.host_code import host_digest

SOURCE = """
const char* module_name = MODULE;  /* as a torch extension names itself */
int split_of(int k) { return k >= 1024 ? SPLIT : 1; }
"""


def _library(folder: Path, name: str, *defines: str) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("needs a C compiler")
    source = folder / "host.c"
    source.write_text(SOURCE)
    library = folder / f"{name}.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-O2", *(f"-D{d}" for d in defines), str(source), "-o", str(library)],
                   check=True)
    return library


def test_only_what_the_host_code_reads_changes_the_digest(tmp_path: Path) -> None:
    start = _library(tmp_path, "a", 'MODULE="tiny_knobs_sm_90a_1111"', "SPLIT=2")
    unread = _library(tmp_path, "b", 'MODULE="tiny_knobs_sm_90a_2222"', "SPLIT=2", "UNREAD=7")
    read = _library(tmp_path, "c", 'MODULE="tiny_knobs_sm_90a_1111"', "SPLIT=4")
    digest = host_digest(start, "tiny_knobs_sm_90a_1111")
    assert len(digest) == 64
    assert host_digest(unread, "tiny_knobs_sm_90a_2222") == digest
    assert host_digest(unread, "tiny_knobs_sm_90a_1111") != digest  # the module's name is all that is blanked
    assert host_digest(read, "tiny_knobs_sm_90a_1111") != digest


def test_no_library_or_no_elf_file_claims_nothing(tmp_path: Path) -> None:
    assert host_digest(None) == "" and host_digest(tmp_path / "gone.so") == ""
    (tmp_path / "text.so").write_text("not an ELF file")
    (tmp_path / "cut.so").write_bytes(b"\x7fELF\x02\x01" + b"\xff" * 80)  # section headers past its end
    assert host_digest(tmp_path / "text.so") == host_digest(tmp_path / "cut.so") == ""


NUMBERED = """
int helper_a(int k) { return k + 1; }
int helper_b(int k) { return helper_a(k) * 2; }
int helper_c(int k) { return helper_b(k) - 3; }
int helper_d(int k) { return helper_c(k) ^ 5; }
int INIT(int k) { return helper_d(k) + helper_a(k); }
int (*table[])(int) = {helper_a, helper_b, helper_c, helper_d};
"""


def test_two_builds_whose_symbols_the_linker_numbers_differently_have_one_digest(tmp_path: Path) -> None:
    """The linker orders the exported symbols by a hash of their names, the module's init function among
    them (PyInit_<module> in a torch extension): another module name renumbers the symbols every relocation
    refers to. These two names give two numberings (readelf -r shows helper_b as symbol 9 in one, 8 in the
    other); the programs are one."""
    digests = set()
    for name in ("mod_000000000000", "mod_41d014e5605b"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "host.c").write_text(NUMBERED)
        compiler = shutil.which("cc") or shutil.which("gcc")
        if compiler is None:
            pytest.skip("needs a C compiler")
        library = folder / f"{name}.so"
        subprocess.run([compiler, "-shared", "-fPIC", "-O2", f"-DINIT=PyInit_{name}", str(folder / "host.c"), "-o",
                        str(library)], check=True)
        digests.add(host_digest(library, name))
    assert len(digests) == 1 and "" not in digests
