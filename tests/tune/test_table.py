"""The dispatch table file: read, write the winners, read back the same; the rest of the file kept."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nvfp4ctl.errors import UsageError
from nvfp4ctl.tune.knobs import discover
from nvfp4ctl.tune.table import DispatchTable, read_table, writable_problem, write_table


def test_reads_the_fixture_table(tiny_copy: Path) -> None:
    knobs = discover(tiny_copy)
    table = read_table(knobs.dispatch, knobs)
    assert table.plan == {(128, 256, 256, 1): {"TINY_SPLIT": 2}}
    assert table.kernel == {} and table.has_kernel_block


def test_round_trip_keeps_everything_outside_the_blocks(tiny_copy: Path) -> None:
    knobs = discover(tiny_copy)
    path = knobs.dispatch
    before = path.read_text().splitlines()
    table = DispatchTable(plan={(128, 7168, 16384, 1): {"TINY_SPLIT": 2}, (128, 256, 256, 1): {"TINY_SPLIT": 1}},
                          kernel={"TINY_LIVE": 256}, has_kernel_block=True)
    write_table(path, table, knobs)
    again = read_table(path, knobs)
    assert again.plan == table.plan and again.kernel == table.kernel
    text = path.read_text()
    assert "    {128, 256, 256, 1, PlanKnob::SPLIT, 1},\n    {128, 7168, 16384, 1, PlanKnob::SPLIT, 2},\n" in text
    assert "#ifndef TINY_LIVE\n#define TINY_LIVE 256\n#endif\n// nvfp4ctl:kernel-knobs end" in text
    kept = [line for line in before if "PlanKnob::SPLIT, 2}," not in line]
    assert all(line in text.splitlines() for line in kept)
    write_table(path, again, knobs)  # writing what was read changes nothing
    assert path.read_text() == text


BOM = "\ufeff"


@pytest.mark.parametrize("table_file", [
    # the kernel-knobs block on the first line, the per-shape entries below it
    "// nvfp4ctl:kernel-knobs begin\n// nvfp4ctl:kernel-knobs end\n"
    "enum class PlanKnob { SPLIT };\n// nvfp4ctl:dispatch begin\n    {128, 256, 256, 1, PlanKnob::SPLIT, 2},\n"
    "// nvfp4ctl:dispatch end\n",
    # a table file of entries alone, included inside the kernel's array
    "// nvfp4ctl:dispatch begin\n    {128, 256, 256, 1, PlanKnob::SPLIT, 2},\n// nvfp4ctl:dispatch end\n",
])
def test_a_table_saved_with_a_byte_order_mark_finds_its_first_line_marker_and_keeps_the_mark(
        tiny_copy: Path, table_file: str) -> None:
    """Every reader of the `// nvfp4ctl:` marks skips a UTF-8 byte order mark, the table's writers did not: a
    marker on the first line was not found ("expected one `// nvfp4ctl:dispatch begin` line", or the kernel-knobs
    block taken for absent and the kernel set written into the config header's defaults instead)."""
    knobs = discover(tiny_copy)
    knobs.dispatch.write_text(BOM + table_file, encoding="utf-8")
    table = read_table(knobs.dispatch, knobs)
    assert table.plan == {(128, 256, 256, 1): {"TINY_SPLIT": 2}}
    assert table.has_kernel_block == ("kernel-knobs" in table_file)
    config = tiny_copy.with_name("tiny_config.cuh").read_text()
    table.plan[(128, 7168, 16384, 1)] = {"TINY_SPLIT": 1}
    table.kernel["TINY_LIVE"] = 256
    write_table(knobs.dispatch, table, knobs)
    text = knobs.dispatch.read_text(encoding="utf-8")
    assert text.startswith(BOM) and text.count(BOM) == 1, text[:80]
    assert "{128, 7168, 16384, 1, PlanKnob::SPLIT, 1},\n// nvfp4ctl:dispatch end\n" in text
    if table.has_kernel_block:  # the kernel set in the block, the config header as it was
        assert "#define TINY_LIVE 256\n#endif\n// nvfp4ctl:kernel-knobs end" in text
        assert tiny_copy.with_name("tiny_config.cuh").read_text() == config
    again = read_table(knobs.dispatch, knobs)
    assert again.plan == table.plan and again.has_kernel_block == table.has_kernel_block


def test_a_table_that_is_not_utf8_is_one_usage_error_naming_its_line(tiny_copy: Path) -> None:
    """A Latin-1 byte in the table was a UnicodeDecodeError traceback from the start of every tune."""
    knobs = discover(tiny_copy)
    knobs.dispatch.write_bytes(b"// caf\xe9\n" + knobs.dispatch.read_bytes())
    with pytest.raises(UsageError, match=r"tiny_dispatch.cuh:1: not UTF-8 \(byte 0xe9\); tune reads"):
        read_table(knobs.dispatch, knobs)


def test_a_config_header_that_is_not_utf8_is_refused_before_the_tune(tiny_copy: Path) -> None:
    """Without a kernel-knobs block the winners go into the header declaring the knob, read as text: a
    Latin-1 byte there was a traceback after the whole tune, the winners lost."""
    knobs = discover(tiny_copy)
    knobs.dispatch.write_text("\n".join(line for line in knobs.dispatch.read_text().splitlines()
                                        if "kernel-knobs" not in line) + "\n")
    config = tiny_copy.with_name("tiny_config.cuh")
    config.write_bytes(b"// caf\xe9\n" + config.read_bytes())
    knobs = discover(tiny_copy)
    table = read_table(knobs.dispatch, knobs)
    problem = writable_problem(knobs, table, None)
    assert problem is not None and "tiny_config.cuh:1: not UTF-8 (byte 0xe9)" in problem


def test_a_kernel_knob_at_its_default_is_not_written(tiny_copy: Path) -> None:
    knobs = discover(tiny_copy)
    write_table(knobs.dispatch, DispatchTable(kernel={"TINY_LIVE": 8}, has_kernel_block=True), knobs)
    assert "#define TINY_LIVE" not in knobs.dispatch.read_text()


def test_a_table_without_markers_is_a_usage_error(tiny_copy: Path) -> None:
    knobs = discover(tiny_copy)
    knobs.dispatch.write_text("#pragma once\n")
    with pytest.raises(UsageError, match="expected one `// nvfp4ctl:dispatch begin` line"):
        read_table(knobs.dispatch, knobs)


def test_a_malformed_entry_names_its_line(tiny_copy: Path) -> None:
    knobs = discover(tiny_copy)
    text = knobs.dispatch.read_text().replace("PlanKnob::SPLIT, 2},", "SPLIT=2},")
    knobs.dispatch.write_text(text)
    with pytest.raises(UsageError, match=r"tiny_dispatch.cuh:\d+: expected"):
        read_table(knobs.dispatch, knobs)


@pytest.mark.parametrize("old, new, message", [
    ("{128, 256, 256, 1, PlanKnob::SPLIT, 2},", "{128, 256, 256, 1, PlanKnob::SPLIT, 3},",
     r"tiny_dispatch.cuh:11: SPLIT=3 is not among its declared values 1,2"),
    ("{128, 256, 256, 1, PlanKnob::SPLIT, 2},", "{128, 256, 256, 1, PlanKnob::LIVE, 8},",
     r"tiny_dispatch.cuh:11: LIVE is a scope=kernel knob: per-shape dispatch entries take scope=plan knobs only"),
    ("{128, 256, 256, 1, PlanKnob::SPLIT, 2},", "{128, 256, 256, 1, PlanKnob::WIDTH, 2},",
     r"tiny_dispatch.cuh:11: WIDTH: tiny_knobs.cu declares no such knob"),
    ("// nvfp4ctl:kernel-knobs end", "#ifndef TINY_LIVE\n#define TINY_LIVE 16\n#endif\n// nvfp4ctl:kernel-knobs end",
     r"tiny_dispatch.cuh:6: LIVE=16 is not among its declared values 8,256"),
    ("// nvfp4ctl:kernel-knobs end", "#ifndef TINY_SPLIT\n#define TINY_SPLIT 2\n#endif\n// nvfp4ctl:kernel-knobs end",
     r"tiny_dispatch.cuh:6: SPLIT is a scope=plan knob: the kernel-knobs block take scope=kernel knobs only"),
])
def test_an_invalid_entry_is_caught_when_read_with_its_line(tiny_copy: Path, old: str, new: str, message: str) -> None:
    knobs = discover(tiny_copy)
    knobs.dispatch.write_text(knobs.dispatch.read_text().replace(old, new))
    with pytest.raises(UsageError, match=message):
        read_table(knobs.dispatch, knobs)


def test_a_table_that_cannot_be_written_whole_is_not_written_at_all(tiny_copy: Path) -> None:
    """The plan entries and the kernel set's defaults are made before any file is replaced: a default
    that cannot be set leaves the table as it was too (before, its entries were already rewritten)."""
    from dataclasses import replace

    knobs = discover(tiny_copy)
    knobs.dispatch.write_text("\n".join(line for line in knobs.dispatch.read_text().splitlines()
                                        if "kernel-knobs" not in line) + "\n")
    before = {p.name: p.read_text() for p in tiny_copy.parent.iterdir()}
    table = DispatchTable(plan={(128, 7168, 16384, 1): {"TINY_SPLIT": 2}}, kernel={"TINY_LIVE": 256})
    with pytest.raises(UsageError, match="TINY_LIVE: the file declaring it is unknown"):
        write_table(knobs.dispatch, table, replace(knobs, declared_in={}))
    assert {p.name: p.read_text() for p in tiny_copy.parent.iterdir()} == before
    assert write_table(knobs.dispatch, table, knobs) == [knobs.dispatch, tiny_copy.with_name("tiny_config.cuh")]
    assert "#define TINY_LIVE 256" in tiny_copy.with_name("tiny_config.cuh").read_text()


def test_a_file_made_read_only_during_the_tune_is_left_as_it_is(tiny_copy: Path) -> None:
    """A chmod a-w table or config header was replaced by the winners (the new copy needs only the
    folder's permission): one UsageError naming it, and no file of the tune written."""
    knobs = discover(tiny_copy)
    knobs.dispatch.write_text("\n".join(line for line in knobs.dispatch.read_text().splitlines()
                                        if "kernel-knobs" not in line) + "\n")
    config = tiny_copy.with_name("tiny_config.cuh")
    config.chmod(0o444)
    before = {p.name: p.read_text() for p in tiny_copy.parent.iterdir()}
    table = DispatchTable(plan={(128, 7168, 16384, 1): {"TINY_SPLIT": 2}}, kernel={"TINY_LIVE": 256})
    with pytest.raises(UsageError, match=f"^{config} is read-only: the winners were not written"):
        write_table(knobs.dispatch, table, knobs)
    assert {p.name: p.read_text() for p in tiny_copy.parent.iterdir()} == before
    assert writable_problem(knobs, table, None) == (f"{config} is read-only: tune writes its winners there"
                                                    " (chmod u+w it; --no-write only reports the winners)")


def test_the_read_modify_write_waits_for_another_tune_holding_the_table_lock(tiny_copy: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from filelock import FileLock

    from nvfp4ctl import runlog
    from nvfp4ctl.errors import ExitCode, ToolTimeout
    from nvfp4ctl.tune import table as table_module

    monkeypatch.setattr(table_module, "LOCK_TIMEOUT_S", 0.2)
    path = discover(tiny_copy).dispatch
    lock = runlog.lock_path(path, "dispatch")
    assert lock.parent.name == "locks" and lock != runlog.lock_path(path)  # the cache's lock folder, its own name
    with FileLock(str(lock)):  # a holder that wrote nothing beside the lock: an older nvfp4ctl's tune
        with pytest.raises(ToolTimeout) as caught:
            with table_module.locked(path):
                pass
    assert caught.value.exit_code == ExitCode.TIMEOUT
    assert str(caught.value) == (f"waited 0.2 s for the lock {lock} to write the winners into {path}; it is held by"
                                 " another process (not known which); the winners were not written: run the tune"
                                 " again once that one ends (it reuses this run's results)")
    with table_module.locked(path):
        pass


def test_a_table_lock_wait_that_runs_out_names_the_tune_holding_it(tiny_copy: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import socket

    from nvfp4ctl import runlog
    from nvfp4ctl.errors import ExitCode, ToolTimeout
    from nvfp4ctl.tune import table as table_module

    monkeypatch.setattr(table_module, "LOCK_TIMEOUT_S", 0.2)
    path = discover(tiny_copy).dispatch
    with table_module.locked(path):
        with pytest.raises(ToolTimeout) as caught:
            with table_module.locked(path):
                pass
    said = str(caught.value)
    assert caught.value.exit_code == ExitCode.TIMEOUT and "\n" not in said
    assert (f"; it is held by nvfp4ctl pid {os.getpid()} on {socket.gethostname()}, writing tune's winners into"
            f" {path.name} since ") in said, said
    assert not runlog.lock_path(path, "dispatch").with_suffix(".holder").exists()  # it went with the lock


def test_contradictory_entries_for_one_shape_and_knob_name_both_lines(tiny_copy: Path) -> None:
    """The same shape and plan knob twice with two values was read, the last winning, and a tune wrote that
    one back without a word: which of the two the table meant is the author's to say, not the reader's."""
    knobs = discover(tiny_copy)
    entry = "    {128, 256, 256, 1, PlanKnob::SPLIT, 2},\n"
    knobs.dispatch.write_text(knobs.dispatch.read_text().replace(entry, entry + entry.replace("2}", "1}")))
    with pytest.raises(UsageError, match=r"^\S*tiny_dispatch.cuh:12: SPLIT=1 for 128x256x256x1, where \S*tiny_dispatch"
                                         r".cuh:11 sets it to 2: keep one entry per shape and plan knob$"):
        read_table(knobs.dispatch, knobs)
    knobs.dispatch.write_text(knobs.dispatch.read_text().replace(entry.replace("2}", "1}"), entry))
    assert read_table(knobs.dispatch, knobs).plan == {(128, 256, 256, 1): {"TINY_SPLIT": 2}}  # a repeat says nothing new


def test_a_crlf_table_and_config_header_keep_their_line_ends(tiny_copy: Path) -> None:
    """The table was rewritten with LF line ends whatever the file had: a table saved on Windows came back
    with every line changed, against "everything else kept byte for byte"."""
    knobs = discover(tiny_copy)
    original = knobs.dispatch.read_bytes().replace(b"\n", b"\r\n")
    knobs.dispatch.write_bytes(original)
    write_table(knobs.dispatch, read_table(knobs.dispatch, knobs), knobs)  # writing what was read changes nothing
    assert knobs.dispatch.read_bytes() == original
    write_table(knobs.dispatch, DispatchTable(plan={(128, 7168, 16384, 1): {"TINY_SPLIT": 2}},
                                              kernel={"TINY_LIVE": 256}, has_kernel_block=True), knobs)
    written = knobs.dispatch.read_bytes()
    assert b"{128, 7168, 16384, 1, PlanKnob::SPLIT, 2},\r\n" in written and b"#define TINY_LIVE 256\r\n" in written
    assert written.count(b"\n") == written.count(b"\r\n"), written
    # without the kernel-knobs block the kernel set goes into the config header, CRLF as it was saved
    knobs.dispatch.write_bytes(b"".join(line for line in original.splitlines(keepends=True) if b"kernel-knobs" not in line))
    config = tiny_copy.with_name("tiny_config.cuh")
    config.write_bytes(config.read_bytes().replace(b"\n", b"\r\n"))
    knobs = discover(tiny_copy)
    write_table(knobs.dispatch, DispatchTable(plan={(128, 256, 256, 1): {"TINY_SPLIT": 1}}, kernel={"TINY_LIVE": 256}), knobs)
    header = config.read_bytes()
    assert b"#define TINY_LIVE 256\r\n" in header and header.count(b"\n") == header.count(b"\r\n"), header


def test_a_kernel_knob_with_a_trailing_comment_is_read_and_written_back_with_it(tiny_copy: Path) -> None:
    """`#define TINY_LIVE 256  // hand-tuned` was passed over: the tune started from the default and the
    block was written without it, reverting the kernel."""
    knobs = discover(tiny_copy)
    block = ("#ifndef TINY_LIVE  /* wide */\n#define TINY_LIVE 256  // hand-tuned\n#endif  // TINY_LIVE\n"
             "// nvfp4ctl:kernel-knobs end")
    knobs.dispatch.write_text(knobs.dispatch.read_text().replace("// nvfp4ctl:kernel-knobs end", block))
    before = knobs.dispatch.read_text()
    table = read_table(knobs.dispatch, knobs)
    assert table.kernel == {"TINY_LIVE": 256}
    write_table(knobs.dispatch, table, knobs)
    assert knobs.dispatch.read_text() == before


@pytest.mark.parametrize("line, message", [
    ("#define TINY_LIVE 256 + 0", r"tiny_dispatch.cuh:5: '#define TINY_LIVE 256 \+ 0': the kernel-knobs block holds"
                                  r" `#ifndef NAME` / `#define NAME VALUE` / `#endif` lines \(each may end with a // or"
                                  r" /\* \*/ comment\) only \(a comment line goes above `// nvfp4ctl:kernel-knobs begin`\)"),
    ("// hand-tuned on an H100", r"tiny_dispatch.cuh:5: '// hand-tuned on an H100': the kernel-knobs block holds"),
    ("#define TINY_LIVE 256 /* unclosed", r"tiny_dispatch.cuh:5: '#define TINY_LIVE 256 /\* unclosed': the kernel"),
    ("#ifndef TINY_LIVE\n#define TINY_LIVE 16  // too few\n#endif", r"tiny_dispatch.cuh:6: LIVE=16 is not among its declared values 8,256"),
])
def test_a_kernel_block_line_that_cannot_be_read_is_refused_with_its_line(tiny_copy: Path, line: str,
                                                                           message: str) -> None:
    knobs = discover(tiny_copy)
    knobs.dispatch.write_text(knobs.dispatch.read_text().replace("// nvfp4ctl:kernel-knobs end",
                                                                 f"{line}\n// nvfp4ctl:kernel-knobs end"))
    with pytest.raises(UsageError, match=message):
        read_table(knobs.dispatch, knobs)


def test_a_knob_with_another_prefix_leaves_the_entries_names_as_they_are(tiny_copy: Path) -> None:
    """The names were the knobs' common prefix stripped, worked out from every knob declared: declaring
    MY_SWIZZLE beside TINY_* made it "", every `PlanKnob::SPLIT` entry "declares no such knob" (exit 2), and an
    entry written with the full name was rewritten with the short one."""
    config = tiny_copy.with_name("tiny_config.cuh")
    config.write_text(config.read_text() + "// nvfp4ctl:knob MY_SWIZZLE values=0,1 scope=plan: swizzle the tiles\n"
                      "#ifndef MY_SWIZZLE\n#define MY_SWIZZLE 0\n#endif\n")
    knobs = discover(tiny_copy)
    assert knobs.prefix == "" and knobs.enumerators == ("SPLIT",)
    path = knobs.dispatch
    full = "    {512, 512, 512, 1, PlanKnob::TINY_SPLIT, 1},\n"
    path.write_text(path.read_text().replace("    // nvfp4ctl:dispatch end\n", full + "    // nvfp4ctl:dispatch end\n"))
    table = read_table(path, knobs)
    assert table.plan == {(128, 256, 256, 1): {"TINY_SPLIT": 2}, (512, 512, 512, 1): {"TINY_SPLIT": 1}}
    before = path.read_text()
    write_table(path, table, knobs)
    assert path.read_text() == before  # each entry keeps its name, the full one too
    table.plan[(1024, 1024, 1024, 1)] = {"TINY_SPLIT": 2, "MY_SWIZZLE": 1}
    write_table(path, table, knobs)
    text = path.read_text()
    # a new entry takes the kernel's enumerator, a knob the enum does not list its own name
    assert "{1024, 1024, 1024, 1, PlanKnob::SPLIT, 2}," in text and "{1024, 1024, 1024, 1, PlanKnob::MY_SWIZZLE, 1}," in text
    assert "{128, 256, 256, 1, PlanKnob::SPLIT, 2}," in text and full in text
    assert read_table(path, knobs).plan == table.plan


@pytest.mark.parametrize("old, new, message", [
    ("PlanKnob::SPLIT, 2},", "PlanKnob::SPLIT, 3},", r"tiny_dispatch.cuh:11: SPLIT=3 is not among its declared values 1,2$"),
    ("PlanKnob::SPLIT, 2},", "PlanKnob::SPLIT, 2},\n    {128, 256, 256, 1, PlanKnob::TINY_SPLIT, 1},",
     r"tiny_dispatch.cuh:12: SPLIT=1 for 128x256x256x1, where \S*tiny_dispatch.cuh:11 sets it to 2"),
    ("// nvfp4ctl:kernel-knobs end", "#ifndef TINY_SPLIT\n#define TINY_SPLIT 2\n#endif\n// nvfp4ctl:kernel-knobs end",
     r"tiny_dispatch.cuh:6: SPLIT is a scope=plan knob: the kernel-knobs block take scope=kernel knobs only"),
])
def test_a_bad_entry_names_its_knob_as_the_entries_do(tiny_copy: Path, old: str, new: str, message: str) -> None:
    """MY_SWIZZLE beside TINY_* leaves no prefix common to every knob: the errors named the knob TINY_SPLIT (its
    name less that prefix), where the table's entries and tune's labels call it SPLIT."""
    config = tiny_copy.with_name("tiny_config.cuh")
    config.write_text(config.read_text() + "// nvfp4ctl:knob MY_SWIZZLE values=0,1 scope=plan: swizzle the tiles\n"
                      "#ifndef MY_SWIZZLE\n#define MY_SWIZZLE 0\n#endif\n")
    knobs = discover(tiny_copy)
    assert knobs.prefix == ""
    knobs.dispatch.write_text(knobs.dispatch.read_text().replace(old, new, 1))
    with pytest.raises(UsageError, match=message):
        read_table(knobs.dispatch, knobs)


def test_a_knob_ending_as_an_entry_name_does_not_take_it(tiny_copy: Path) -> None:
    """MINE_SPLIT ends as TINY_SPLIT does: the table's `PlanKnob::SPLIT` entries still stand for TINY_SPLIT
    (the kernel's prefix, and declared first), and MINE_SPLIT's entries get its full name."""
    config = tiny_copy.with_name("tiny_config.cuh")
    config.write_text(config.read_text() + "// nvfp4ctl:knob MINE_SPLIT values=1,2 scope=plan: another split\n"
                      "#ifndef MINE_SPLIT\n#define MINE_SPLIT 1\n#endif\n")
    knobs = discover(tiny_copy)
    table = read_table(knobs.dispatch, knobs)
    assert table.plan == {(128, 256, 256, 1): {"TINY_SPLIT": 2}}
    table.plan[(128, 256, 256, 1)]["MINE_SPLIT"] = 2
    write_table(knobs.dispatch, table, knobs)
    text = knobs.dispatch.read_text()
    assert "{128, 256, 256, 1, PlanKnob::MINE_SPLIT, 2},\n    {128, 256, 256, 1, PlanKnob::SPLIT, 2}," in text
    assert read_table(knobs.dispatch, knobs).plan == table.plan


def _declare_my_split(tiny_copy: Path, entry: bool) -> Path:
    """MY_SPLIT declared beside TINY_SPLIT, in the enum beside SPLIT, and, with `entry`, set for the shape SPLIT sets."""
    config = tiny_copy.with_name("tiny_config.cuh")
    config.write_text(config.read_text() + "// nvfp4ctl:knob MY_SPLIT values=1,2 scope=plan: x\n"
                      "#ifndef MY_SPLIT\n#define MY_SPLIT 1\n#endif\n")
    path = tiny_copy.with_name("tiny_dispatch.cuh")
    text = path.read_text().replace("enum class PlanKnob { SPLIT };", "enum class PlanKnob { SPLIT, MY_SPLIT };")
    split = "    {128, 256, 256, 1, PlanKnob::SPLIT, 2},\n"
    path.write_text(text.replace(split, split + "    {128, 256, 256, 1, PlanKnob::MY_SPLIT, 1},\n") if entry else text)
    return path


@pytest.mark.parametrize("entry", [True, False])
def test_a_knob_named_in_full_keeps_a_shorter_name_from_taking_another_knobs_entries(tiny_copy: Path,
                                                                                      entry: bool) -> None:
    """MY_SPLIT, shorter than TINY_SPLIT, took `PlanKnob::SPLIT`: with a MY_SPLIT entry beside it the table was
    refused as two values for MY_SPLIT (exit 2), without one every SPLIT entry was read as MY_SPLIT."""
    path = _declare_my_split(tiny_copy, entry)
    knobs = discover(tiny_copy)
    table = read_table(path, knobs)
    assert table.plan == {(128, 256, 256, 1): {"TINY_SPLIT": 2, **({"MY_SPLIT": 1} if entry else {})}}
    assert knobs.entry_name("TINY_SPLIT") == "SPLIT" and knobs.entry_name("MY_SPLIT") == "MY_SPLIT"
    write_table(path, table, knobs)
    text = path.read_text()
    assert "{128, 256, 256, 1, PlanKnob::SPLIT, 2}," in text
    assert ("{128, 256, 256, 1, PlanKnob::MY_SPLIT, 1}," in text) == entry
    assert read_table(path, knobs).plan == table.plan


def test_a_knob_ending_as_a_shipped_one_leaves_the_shipped_tables_entries_their_knobs(tmp_path: Path) -> None:
    """MY_SPAN declared beside the sm_90a kernel's NVFP4_SM90_SPAN took every `PlanKnob::SPAN` entry, being
    the shorter name: the prefix all the kernel's other knobs share decides first."""
    kernel = tmp_path / "sm90"
    shutil.copytree(Path(__file__).resolve().parents[2] / "kernels" / "sm90", kernel)
    config = kernel / "sm90_config.cuh"
    config.write_text(config.read_text() + "\n// nvfp4ctl:knob MY_SPAN values=0,1 scope=plan: another span\n"
                      "#ifndef MY_SPAN\n#define MY_SPAN 0\n#endif\n")
    knobs = discover(kernel / "nvfp4_gemm_sm90.cu")
    assert any(knob.name == "MY_SPAN" for knob in knobs.knobs)
    table = read_table(knobs.dispatch, knobs)
    spans = [values for values in table.plan.values() if "NVFP4_SM90_SPAN" in values]
    assert spans and not any("MY_SPAN" in values for values in table.plan.values())
    assert knobs.entry_name("NVFP4_SM90_SPAN") == "SPAN" and knobs.entry_name("MY_SPAN") == "MY_SPAN"


@pytest.mark.parametrize("block, message", [
    ("#ifndef TINY_LIVE\n#define TINY_LIVE 256\n#endif\n#ifndef TINY_LIVE\n#define TINY_LIVE 8\n#endif\n",
     r"tiny_dispatch.cuh:9: TINY_LIVE is set again in the kernel-knobs block, where \S*tiny_dispatch.cuh:6 sets it"
     r" \(the compiler takes the first, behind its #ifndef\): keep one"),
    ("#ifndef TINY_SPLIT\n#define TINY_LIVE 256\n#endif\n",
     r"tiny_dispatch.cuh:6: `#define TINY_LIVE 256` where `#define TINY_SPLIT VALUE` comes next, for `#ifndef"
     r" TINY_SPLIT` at \S*tiny_dispatch.cuh:5: each knob in the block is an `#ifndef NAME`, `#define NAME VALUE`,"
     r" `#endif` triple, set once$"),
    ("#define TINY_LIVE 256\n", r"tiny_dispatch.cuh:5: `#define TINY_LIVE` with no `#ifndef TINY_LIVE` above it"),
    ("#ifndef TINY_LIVE\n#define TINY_LIVE 256\n#endif\n#endif\n",
     r"tiny_dispatch.cuh:8: `#endif` with no `#ifndef` / `#define` above it to end"),
    ("#ifndef TINY_LIVE\n#endif\n", r"tiny_dispatch.cuh:6: `#endif` where `#define TINY_LIVE VALUE` comes next, for `#ifndef TINY_LIVE` at"),
    ("#ifndef TINY_LIVE\n#ifndef TINY_LIVE\n", r"tiny_dispatch.cuh:6: `#ifndef TINY_LIVE` where `#define TINY_LIVE VALUE` comes next"),
    ("#ifndef TINY_LIVE\n#define TINY_LIVE 256\n", r"tiny_dispatch.cuh:7: the kernel-knobs block ends where `#endif` comes next, for `#ifndef TINY_LIVE` at"),
])
def test_a_kernel_block_not_made_of_whole_ifndef_define_endif_triples_is_refused(tiny_copy: Path, block: str,
                                                                                  message: str) -> None:
    """A knob set twice was read as the last while the compiler, behind the #ifndef guards, builds the first:
    a tune could write the block back with the last and silently change the kernel. An #ifndef over
    another knob's #define, a #define without an #ifndef and an #endif too many were read as well."""
    knobs = discover(tiny_copy)
    knobs.dispatch.write_text(knobs.dispatch.read_text().replace("// nvfp4ctl:kernel-knobs end",
                                                                 f"{block}// nvfp4ctl:kernel-knobs end"))
    with pytest.raises(UsageError, match=message):
        read_table(knobs.dispatch, knobs)
