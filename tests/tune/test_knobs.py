"""Knob discovery over a kernel and its local headers; configurations and their -D flags."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from nvfp4ctl.errors import UsageError
from nvfp4ctl.tune.knobs import TUNE_DEFINE, Config, discover, tunable

from tune_fakes import FIXTURES, TINY, make_knobs


def test_knobs_come_from_the_kernel_and_its_local_headers() -> None:
    knobs = discover(TINY)
    assert [(k.name, k.values, k.default, k.scope) for k in knobs.knobs] == [
        ("TINY_SPLIT", (1, 2), 1, "plan"), ("TINY_LIVE", (8, 256), 8, "kernel")]
    assert knobs.dispatch == (FIXTURES / "tiny_dispatch.cuh").resolve()
    assert knobs.prefix == "TINY_" and knobs.short("TINY_LIVE") == "LIVE"
    assert knobs.by_name("LIVE").name == knobs.by_name("TINY_LIVE").name == "TINY_LIVE"


def test_a_config_builds_with_every_knob_and_the_tune_define() -> None:
    knobs = discover(TINY)
    config = knobs.defaults().with_value("TINY_LIVE", 256)
    assert config.defines() == (TUNE_DEFINE, "TINY_SPLIT=1", "TINY_LIVE=256")
    assert config.diff(knobs.defaults(), knobs) == "LIVE=256"
    assert knobs.defaults().diff(knobs.defaults(), knobs) == "start"
    assert config.id != knobs.defaults().id and hash(config) == hash(Config(config.items))


def test_a_configs_changes_name_each_knob_as_the_tables_entries_do() -> None:
    """With MY_SWIZZLE beside TINY_* no prefix is common to every knob: a candidate read TINY_SPLIT=2 where the
    table's entry for it reads PlanKnob::SPLIT; a knob the kernel's enum does not list keeps its own name."""
    knobs = replace(make_knobs(("TINY_SPLIT", (1, 2), 1, "plan"), ("TINY_LIVE", (8, 256), 8, "kernel"),
                               ("MY_SWIZZLE", (0, 1), 0, "plan")), enumerators=("SPLIT",))
    config = knobs.defaults().merged({"TINY_SPLIT": 2, "TINY_LIVE": 256, "MY_SWIZZLE": 1})
    assert config.diff(knobs.defaults(), knobs) == "SPLIT=2 TINY_LIVE=256 MY_SWIZZLE=1"


def test_a_knob_with_one_value_is_not_searched() -> None:
    knobs = make_knobs(("A_FIXED", (128,), 128, "kernel"), ("A_FREE", (1, 2), 1, "plan"))
    assert [k.name for k in tunable(knobs.knobs)] == ["A_FREE"]


def test_a_kernel_without_knobs_is_a_usage_error(tmp_path: Path) -> None:
    plain = tmp_path / "plain.cu"
    plain.write_text("__global__ void k() {}\n")
    with pytest.raises(UsageError, match="declares no knobs"):
        discover(plain)


def test_a_malformed_declaration_names_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.cu"
    bad.write_text("// nvfp4ctl:knob X values=1,2 scope=device: wrong scope\n#ifndef X\n#define X 1\n#endif\n")
    with pytest.raises(UsageError, match=r"bad.cu:1: scope 'device'"):
        discover(bad)


_BLOCK = "// nvfp4ctl:knob {name} values={values} scope=kernel: doc\n#ifndef {name}\n#define {name} 1\n#endif\n"


def test_a_value_list_with_spaces_says_so(tmp_path: Path) -> None:
    """`values=1, 2` read as a malformed line with no word of why: the spaces are the mistake."""
    bad = tmp_path / "bad.cu"
    bad.write_text("\n" + _BLOCK.format(name="X", values="1, 2,4"))
    with pytest.raises(UsageError) as error:
        discover(bad)
    assert str(error.value).endswith("bad.cu:2: values=1, 2,4: no spaces in the value list (values=1,2,4)")


@pytest.mark.parametrize("values, message", [
    ('"64,128,256"', 'values="64,128,256": no quotes around the value list (values=64,128,256)'),
    ("'1, 2'", "values='1, 2': no quotes around the value list (values=1,2)"),
])
def test_a_quoted_value_list_says_so(tmp_path: Path, values: str, message: str) -> None:
    """`values="64,128"` read as a malformed line with no word of why: the quotes are the mistake."""
    bad = tmp_path / "bad.cu"
    bad.write_text("\n" + _BLOCK.format(name="X", values=values))
    with pytest.raises(UsageError) as error:
        discover(bad)
    assert str(error.value).endswith(f"bad.cu:2: {message}")


@pytest.mark.parametrize("line, message", [
    ("// nvfp4ctl:knob X values=2..4 scope=kernel: doc", "values=2..4: list every value (values=2,3,4); expected `"),
    ("// nvfp4ctl:knob X values=2..4,8 scope=kernel: doc", "values=2..4,8: list every value (values=2,3,4,8); expected `"),
    ("// nvfp4ctl:knob X values=1,2..4 scope=kernel: doc", "values=1,2..4: list every value (values=1,2,3,4); expected `"),
    ("// nvfp4ctl:knob X values=1..2,6..7 scope=kernel: doc", "values=1..2,6..7: list every value (values=1,2,6,7); "),
    ("// nvfp4ctl:knob X values=1,2 scope=kernel", "no `: doc` after the scope (say what the knob does); expected `"),
    ("// nvfp4ctl:knob X values=1,2: doc", "no scope= in the declaration; expected `"),
    ("// nvfp4ctl:knob X scope=kernel: doc", "no values= in the declaration; expected `"),
])
def test_a_declaration_missing_a_part_names_it(tmp_path: Path, line: str, message: str) -> None:
    """A range for a list, or no `: doc`, got only the form to write, with no word of which part was wrong."""
    bad = tmp_path / "bad.cu"
    bad.write_text(f"{line}\n#ifndef X\n#define X 2\n#endif\n")
    with pytest.raises(UsageError) as error:
        discover(bad)
    assert f"bad.cu:1: {message}" in str(error.value)


@pytest.mark.parametrize("values, repeated", [("1,2,2", 2), ("0,1,0", 0), ("1,0x10,16", 16)])
def test_a_value_listed_twice_is_an_error_naming_it(tmp_path: Path, values: str, repeated: int) -> None:
    """values=64,128,128 was merged silently: a slip in the list, rejected as the other declaration
    mistakes are (with its line), not a candidate tried once under two names."""
    bad = tmp_path / "bad.cu"
    bad.write_text("\n" + _BLOCK.format(name="X", values=values))
    with pytest.raises(UsageError) as error:
        discover(bad)
    assert str(error.value).endswith(f"bad.cu:2: values={values}: {repeated} is listed twice")


def test_a_knob_declared_twice_in_one_file_names_both_lines(tmp_path: Path) -> None:
    bad = tmp_path / "bad.cu"
    bad.write_text(_BLOCK.format(name="X", values="1,2") + "\n" + _BLOCK.format(name="X", values="1,4"))
    with pytest.raises(UsageError) as error:
        discover(bad)
    assert str(error.value).endswith("bad.cu:6: X is declared twice (first at line 1)")


def test_a_knob_declared_in_the_kernel_and_a_header_names_both_places(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "knobs.cuh").write_text("#pragma once\n" + _BLOCK.format(name="X", values="1,2"))
    kernel = tmp_path / "kernel.cu"
    kernel.write_text('#include "knobs.cuh"\n' + _BLOCK.format(name="X", values="1,2"))
    with pytest.raises(UsageError) as error:
        discover(kernel)
    assert str(error.value) == "knobs.cuh:2: X is already declared at kernel.cu:2"


def test_declaration_errors_name_the_file_relative_to_the_working_folder(tmp_path: Path, monkeypatch) -> None:
    """As the compiler's own errors do (compiler_errors.display_path): the kernel named on the command
    line as `bad.cu` was reported by its absolute path."""
    bad = tmp_path / "bad.cu"
    bad.write_text("// nvfp4ctl:knob X values=1,2 scope=plan: doc\n#ifndef X\n#endif\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as error:
        discover(bad.resolve())
    assert str(error.value) == "bad.cu:1: no `#define X <default>` after `#ifndef X`"


@pytest.mark.parametrize("edit, reason", [
    (None, None),
    (("#define TINY_SPLIT 1\n", "#if 1\n#define TINY_SPLIT 1\n#endif\n"),
     "tiny_config.cuh:5: TINY_SPLIT's default is not a plain `#ifndef`/`#define TINY_SPLIT 1`/`#endif`"),
    (("#define TINY_LIVE 8\n#endif\n", "#define TINY_LIVE 8\n#define TINY_WIDE 1\n#endif\n"),
     "tiny_config.cuh:9: TINY_LIVE's default is not a plain `#ifndef`/`#define TINY_LIVE 8`/`#endif`"),
    (("#pragma once\n", "#pragma once\n#ifdef NVFP4CTL_TUNE\n#endif\n"),
     "tiny_config.cuh:3 reads NVFP4CTL_TUNE, which the start's build defines"),
    (("#pragma once\n", "#pragma once\n#if defined(TINY_LIVE)\n#endif\n"),
     "tiny_config.cuh:3 names TINY_LIVE outside its `#ifndef` default, which -DTINY_LIVE changes"),
    (("#pragma once\n", "#pragma once\n// #ifdef NVFP4CTL_TUNE is not read here\n"), None),  # a comment
])
def test_a_kernel_without_a_table_is_built_once_where_its_defaults_are_the_start(
        tiny_without_table: Path, edit: tuple[str, str] | None, reason: str | None) -> None:
    """Its build without -D and the start's (every default as -D, NVFP4CTL_TUNE defined) were two builds
    and two rows of one configuration; they are one where nothing tells them apart."""
    config = tiny_without_table.with_name("tiny_config.cuh")
    if edit is not None:
        assert edit[0] in config.read_text()
        config.write_text(config.read_text().replace(edit[0], edit[1], 1))
    knobs = discover(tiny_without_table)
    assert knobs.dispatch is None
    assert knobs.shipped_differs == reason or knobs.shipped_differs.endswith(f"/{reason}")  # the path as shown
    assert knobs.shipped_is_start is (reason is None)


def test_a_kernel_with_a_table_builds_its_shipped_build_apart(tiny_copy: Path) -> None:
    knobs = discover(tiny_copy)
    assert knobs.shipped_differs == "it reads its dispatch table" and not knobs.shipped_is_start


@pytest.mark.parametrize("file, edit, reason", [
    # the kernel reads a knob above the include of its config: the build without -D sees no such name
    ("tiny_knobs.cu", ('#include "tiny_config.cuh"\n', 'static const int early = TINY_SPLIT;\n#include "tiny_config.cuh"\n'),
     "tiny_knobs.cu:4 names TINY_SPLIT before tiny_config.cuh:5 defines its default,"
     " so the build without -DTINY_SPLIT sees it undefined"),
    ("tiny_config.cuh", ("#pragma once\n", "#pragma once\nenum { kLive = TINY_LIVE };\n"),
     "tiny_config.cuh:3 names TINY_LIVE before tiny_config.cuh:10 defines its default,"
     " so the build without -DTINY_LIVE sees it undefined"),
    # a header included before the config, named by its include
    ("tiny_knobs.cu", ('#include "tiny_config.cuh"\n', '#include "early.cuh"\n#include "tiny_config.cuh"\n'),
     "early.cuh:2 names TINY_SPLIT before tiny_config.cuh:5 defines its default,"
     " so the build without -DTINY_SPLIT sees it undefined"),
    # after the config, in a comment or in a string: the same in both builds
    ("tiny_knobs.cu", ('#include "tiny_config.cuh"\n',
                       '// TINY_SPLIT\nconst char* k = "TINY_SPLIT /* */"; /* TINY_LIVE */\n#include "tiny_config.cuh"\n'),
     None),
    ("tiny_knobs.cu", ('#include "tiny_config.cuh"\n', '#include "tiny_config.cuh"\n#include "early.cuh"\n'), None),
    # in a macro's body, on one line or continued: read where the macro is used, after the config
    ("tiny_knobs.cu", ('#include "tiny_config.cuh"\n', '#define EARLY TINY_SPLIT\n#define LATER(x) \\\n  (x + TINY_LIVE)\n'
                                                        '#include "tiny_config.cuh"\n'), None),
    # ... but a use of such a macro above the config reads the knob there, through any number of macros
    ("tiny_knobs.cu", ('#include "tiny_config.cuh"\n', '#define SPLIT_ON (TINY_SPLIT > 1)\n#if SPLIT_ON\nint early_on;\n'
                                                        '#endif\n#include "tiny_config.cuh"\n'),
     "tiny_knobs.cu:5 names TINY_SPLIT (through SPLIT_ON) before tiny_config.cuh:5 defines its default,"
     " so the build without -DTINY_SPLIT sees it undefined"),
    ("tiny_knobs.cu", ('#include "tiny_config.cuh"\n', '#define EARLY TINY_SPLIT\n#define EARLIER (EARLY + 1)\n'
                                                        'static const int e = EARLIER;\n#include "tiny_config.cuh"\n'),
     "tiny_knobs.cu:6 names TINY_SPLIT (through EARLIER) before tiny_config.cuh:5 defines its default,"
     " so the build without -DTINY_SPLIT sees it undefined"),
    # a macro reading two knobs, used between their defaults, reads the second one undefined
    ("tiny_config.cuh", ("// nvfp4ctl:knob TINY_LIVE", "#define BOTH (TINY_SPLIT + TINY_LIVE)\nenum { kBoth = BOTH };\n"
                                                      "// nvfp4ctl:knob TINY_LIVE"),
     "tiny_config.cuh:9 names TINY_LIVE (through BOTH) before tiny_config.cuh:11 defines its default,"
     " so the build without -DTINY_LIVE sees it undefined"),
])
def test_a_knob_named_before_its_default_builds_apart(tiny_without_table: Path, monkeypatch, file: str,
                                                      edit: tuple[str, str], reason: str | None) -> None:
    """A name used in plain code above its `#ifndef` block is undefined without -D and the value with it:
    the two builds differ, though they were taken as one."""
    folder = tiny_without_table.parent
    (folder / "early.cuh").write_text("#pragma once\nstatic const int early_split = TINY_SPLIT;\n")
    edited = folder / file
    assert edit[0] in edited.read_text()
    edited.write_text(edited.read_text().replace(edit[0], edit[1], 1))
    monkeypatch.chdir(folder)
    knobs = discover(tiny_without_table)
    assert knobs.shipped_differs == reason
    assert knobs.shipped_is_start is (reason is None)


def test_a_knob_of_a_header_included_with_angle_brackets_is_found_and_read_in_order(
        tmp_path: Path, monkeypatch) -> None:
    """`#include <config.cuh>` of a header in kernels/common (the build's -I folders) brings its knobs as a
    quoted include does, and the walk in the compiler's order reads its default before the kernel's use."""
    common = tmp_path / "kernels" / "common"
    common.mkdir(parents=True)
    (common / "config.cuh").write_text("#pragma once\n// nvfp4ctl:knob K_A values=1,2 scope=plan: doc\n"
                                       "#ifndef K_A\n#define K_A 1\n#endif\n")
    kernel = tmp_path / "kernels" / "mine" / "k.cu"
    kernel.parent.mkdir()
    kernel.write_text("#include <config.cuh>\nint g() { return K_A; }\n")
    monkeypatch.chdir(tmp_path)
    knobs = discover(kernel)
    assert [knob.name for knob in knobs.knobs] == ["K_A"] and knobs.shipped_differs is None


def test_finding_a_knob_named_before_its_default_is_linear(tmp_path: Path) -> None:
    """Many uses after the default and many includes are walked once each."""
    import time

    headers = [f"h{i}.cuh" for i in range(300)]
    for name in headers:
        (tmp_path / name).write_text("#pragma once\n" + '#include "config.cuh"\n' + "int f() { return K_A; }\n" * 50)
    (tmp_path / "config.cuh").write_text("#pragma once\n// nvfp4ctl:knob K_A values=1,2 scope=plan: doc\n"
                                         "#ifndef K_A\n#define K_A 1\n#endif\n")
    kernel = tmp_path / "k.cu"
    kernel.write_text('#include "config.cuh"\n' + "".join(f'#include "{name}"\n' for name in headers)
                      + "int g() { return K_A; }\n" * 20000)
    began = time.perf_counter()
    knobs = discover(kernel)
    assert knobs.shipped_differs is None
    assert time.perf_counter() - began < 5


@pytest.mark.parametrize("mark, message", [
    ("nvfp4ctl:knbo", "`nvfp4ctl:knbo` is no knob declaration"),
    ("nvfp4ctl: knob", "`nvfp4ctl: knob` is no knob declaration: remove the space after the colon"),
    ("nvfp4ctl:\tknob", "`nvfp4ctl:\tknob` is no knob declaration: remove the space after the colon"),
    ("nvfp4ctl:knobs", "`nvfp4ctl:knobs` is no knob declaration"),
    ("nvfp4ctl:Knob", "`nvfp4ctl:Knob` is no knob declaration"),
    ("nvfp4ctl:kno", "`nvfp4ctl:kno` is no knob declaration"),
])
def test_a_mistyped_knob_mark_names_its_line_and_the_form(tmp_path: Path, mark: str, message: str) -> None:
    """`// nvfp4ctl:knbo NAME ...` dropped its knob without a word: tune counted one knob fewer and
    `--knobs NAME` said the kernel had no such knob."""
    bad = tmp_path / "bad.cu"
    bad.write_text(_BLOCK.format(name="X", values="1,2") + _BLOCK.format(name="Y", values="1,2").replace(
        "nvfp4ctl:knob", mark))
    with pytest.raises(UsageError) as error:
        discover(bad)
    assert str(error.value).endswith(
        f"bad.cu:5: {message}; write `// nvfp4ctl:knob NAME values=A,B scope=plan|kernel: doc`")


@pytest.mark.parametrize("mark", ["// nvfp4ctl: arch=sm_90a", "// nvfp4ctl: no-tensor-op", "// nvfp4ctl:dispatch begin",
                                  "// nvfp4ctl:dispatch end", "// nvfp4ctl:kernel-knobs begin",
                                  "// nvfp4ctl: never-run-on sm_100a", "// nvfp4ctl: ignore[NV101]",
                                  '// printf("nvfp4ctl:umma k=%d", k);', "// nvfp4ctl:umma k=0",
                                  "//   // nvfp4ctl:knbo quoted in a comment"])
def test_the_other_marks_nvfp4ctl_reads_are_no_mistyped_knob(tmp_path: Path, mark: str) -> None:
    kernel = tmp_path / "kernel.cu"
    kernel.write_text(f"{mark}\n" + _BLOCK.format(name="X", values="1,2"))
    assert [knob.name for knob in discover(kernel).knobs] == ["X"]


def test_every_shipped_kernel_source_reads_with_no_mistyped_mark() -> None:
    from nvfp4ctl.build.knobs import read_knobs

    sources = sorted((Path(__file__).resolve().parents[2] / "kernels").rglob("*.cu*"))
    assert sources and sum(len(read_knobs(source)) for source in sources) > 0


@pytest.mark.parametrize("typed", ["LIVF", "TINY_LIVF", "live", "tiny_livf"])
def test_a_mistyped_knobs_name_gets_a_did_you_mean(typed: str) -> None:
    """`--knobs A_BUFERS` listed the knobs but did not say which one was meant, as a mistyped problem does."""
    from nvfp4ctl.tune.setup import select_knobs

    from tune_fakes import TINY

    with pytest.raises(UsageError) as error:
        select_knobs(discover(TINY), typed)
    assert str(error.value).startswith(f"--knobs {typed}: tiny_knobs.cu has no such knob (with a choice: ")
    assert str(error.value).endswith("; did you mean 'LIVE'?")


def _with_another_prefix(tiny_copy: Path) -> Path:
    """The tiny kernel with MY_SWIZZLE declared beside TINY_*: no prefix common to every knob, so SPLIT, the
    name tune's labels and the table's entries give TINY_SPLIT, is no knob's name without the prefix."""
    config = tiny_copy.with_name("tiny_config.cuh")
    config.write_text(config.read_text() + "// nvfp4ctl:knob MY_SWIZZLE values=0,1 scope=plan: swizzle the tiles\n"
                      "#ifndef MY_SWIZZLE\n#define MY_SWIZZLE 0\n#endif\n")
    return tiny_copy


def test_knobs_takes_a_knob_by_the_name_the_labels_give_it(tiny_copy: Path) -> None:
    """`--knobs SPLIT`, as tune's progress and tables name TINY_SPLIT beside MY_SWIZZLE, was refused (exit 2: no
    such knob, with a choice: TINY_SPLIT, TINY_LIVE, MY_SWIZZLE)."""
    from nvfp4ctl.tune.setup import select_knobs

    knobs = discover(_with_another_prefix(tiny_copy))
    assert knobs.prefix == "" and knobs.entry_name("TINY_SPLIT") == "SPLIT"
    assert select_knobs(knobs, "SPLIT,MY_SWIZZLE") == select_knobs(knobs, "TINY_SPLIT,MY_SWIZZLE") == {
        "TINY_SPLIT", "MY_SWIZZLE"}
    with pytest.raises(UsageError) as error:
        select_knobs(knobs, "SPLTI")
    assert str(error.value) == ("--knobs SPLTI: tiny_knobs.cu has no such knob (with a choice: SPLIT, TINY_LIVE,"
                                " MY_SWIZZLE); did you mean 'SPLIT'?")


def _file_reads(monkeypatch: pytest.MonkeyPatch) -> Counter[Path]:
    """Every read of a file's bytes or text, by resolved path."""
    reads: Counter[Path] = Counter()
    for name in ("read_bytes", "read_text"):
        real = getattr(Path, name)

        def counted(path: Path, *args, _real=real, **kwargs):
            reads[path.resolve()] += 1
            return _real(path, *args, **kwargs)

        monkeypatch.setattr(Path, name, counted)
    return reads


@pytest.mark.parametrize("table", [True, False], ids=["with its table", "without a table"])
def test_discover_reads_each_knob_file_once(tiny_copy: Path, table: bool,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Its knobs, its dispatch lines, the shipped build's test (per knob, then per file, twice) and its PlanKnob
    enum each read the kernel and its headers again. The include walk (local_headers, the build's) is apart."""
    from nvfp4ctl.build.sources import local_headers
    from nvfp4ctl.tune import knobs as tune_knobs

    if not table:
        config = tiny_copy.with_name("tiny_config.cuh")
        config.write_text("".join(line for line in config.read_text().splitlines(keepends=True) if "dispatch" not in line))
        tiny_copy.with_name("tiny_dispatch.cuh").unlink()
    headers = local_headers(tiny_copy)
    monkeypatch.setattr(tune_knobs, "local_headers", lambda source: headers)
    reads = _file_reads(monkeypatch)
    found = discover(tiny_copy)
    assert (found.dispatch is not None) == table and (found.shipped_differs is None) != table
    files = {tiny_copy.resolve(), *headers}
    assert files <= set(reads)
    assert {path: count for path, count in reads.items() if count > 1} == {}


def test_tunes_discover_reads_no_kernel_byte_its_resolve_read(tiny_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tune's setup ran discover just after the reading_once block in which resolve_kernel read the kernel (its
    problem, its not-UTF-8 test), so discover read the kernel again."""
    pytest.importorskip("torch")  # tune's setup asks for it before anything else
    from nvfp4ctl.tune import setup

    reads = _file_reads(monkeypatch)
    read_by_discover: list[Counter[Path]] = []

    def counted_discover(source: Path):
        before = Counter(reads)
        found = discover(source)
        read_by_discover.append(reads - before)
        return found

    monkeypatch.setattr(setup, "discover", counted_discover)
    run = setup.prepare(tiny_copy, "benchmarks", None, None, True, None)
    assert run.knobs.prefix == "TINY_"
    [discovered] = read_by_discover
    assert tiny_copy.resolve() not in discovered, discovered
