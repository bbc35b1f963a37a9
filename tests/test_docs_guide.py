"""The README is a user guide: what to type and what you get, each thing said once, where a user looks for
it; measurements, studies and design notes live in docs/, one file per topic. What can be checked of that
without a GPU."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    """The text under a heading line, up to the next heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    start = text.index(f"\n{heading}\n") + len(heading) + 2
    following = re.compile(rf"^#{{1,{len(level)}}} ", re.MULTILINE).search(text, start)
    return text[start:following.start() if following else len(text)]


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_quickstart_starts_with_init_and_says_where_gpu_modes_folder_comes_from() -> None:
    """The quickstart began with `cd nvfp4_gemm/`, a folder it never said where to get."""
    quickstart = _section(README, "## Quickstart")
    commands = re.findall(r"^\$ (\S+ \S+)", quickstart, re.MULTILINE)
    assert commands[0] == "nvfp4ctl init", commands
    shipped_task = (ROOT / "nvfp4ctl/problems/nvfp4_gemm/task.yml").read_text(encoding="utf-8").splitlines()[0]
    assert "gpu-mode/reference-kernels, problems/nvidia/nvfp4_gemm/" in shipped_task, shipped_task
    flat = _flat(quickstart)
    assert "gpu-mode/reference-kernels" in flat and "`problems/nvidia/nvfp4_gemm/`" in flat, flat
    assert "cd nvfp4_gemm/" not in flat


def test_the_install_notes_name_nvidia_cutlass_dsl_for_gpu_modes_own_submission() -> None:
    """GPU MODE's nvfp4_gemm submission.py is CuTe DSL: build and check of it stop on a missing
    nvidia-cutlass-dsl, which neither the README's Install section nor docs/install.md named."""
    install_md = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    for text in (_section(README, "## Install"), _section(install_md, "## What it needs")):
        assert "pip install nvidia-cutlass-dsl" in _flat(text), text


def test_the_readmes_exit_4_leaves_the_setup_errors_at_import_to_exit_2() -> None:
    """The README said exit 4 covers "an exception the submission raises, at import … too", where a module it
    imports that is not installed and a load_inline that cannot build CUDA are exit 2 (docs/commands.md)."""
    commands_md = _flat((ROOT / "docs" / "commands.md").read_text(encoding="utf-8"))
    assert "that cannot build CUDA on this machine" in commands_md and "is this machine's setup: one line and exit 2" \
        in commands_md
    exit_codes = _flat(_section(README, "## Exit codes"))
    crashed = exit_codes[exit_codes.index("**4**"):exit_codes.index("**130**")]
    assert "a module it imports that is not installed in this Python" in crashed, crashed
    assert "a `load_inline` that cannot build CUDA on this machine, is exit 2" in crashed, crashed


def test_the_version_commit_is_promised_only_where_there_is_one() -> None:
    """--version and the run log name the commit only from a git checkout or a wheel built from one
    (tool_version: a checkout's .git, else the wheel's BUILD_COMMIT stamp); the README promised it always."""
    flat = _flat(README)
    assert "(and the commit it was built from," not in flat
    assert flat.count("where installed from a git checkout or a wheel built from one") == 2, flat


def test_the_bench_loop_the_readme_gives_is_said_to_be_the_gemms() -> None:
    """bench's "50 input sets … 50 back-to-back calls" read as every problem's, where the grouped GEMM's
    loop has 15 input sets and the GEMV's one set and one call (the family table)."""
    bench = _flat(_section(README, "### `nvfp4ctl bench`"))
    assert "for the GEMM: 50 input sets" in bench and "(#the-nvfp4-family)" in bench, bench
    family = _section(README, "## The NVFP4 family")
    assert "15 input sets" in family and "one set, one call" in family


# What the README said that is a measurement or a design note, and the doc that holds it now.
MOVED = [
    ("| speed | modelled only: 8.05 µs geomean", "docs/sm100_kernel.md", "12.5 / 7.2 / 5.8 (8.05)"),
    ("116–134 s (2 CPUs)", "docs/sm100_kernel.md", "116–134 s on an idle 2-core EPYC"),
    ("18 against 8 µs", "docs/own_code.md", "18 against 8 µs"),
    ("checked on an H100 for 19 cases", "docs/problems.md", "19 cases of the four problems"),
    ("need every CTA resident at once", "docs/sm90_kernel.md", "need every CTA of the launch resident at once"),
    ("under 64 MiB or no inode free", "docs/commands.md", "under 64 MiB or no inode free"),
    ("A key given twice is an error", "docs/commands.md", "A key given twice is an error"),
    ("unknown key 'mian' in config ignored", "docs/commands.md", "unknown key 'mian' in config ignored"),
    ("`x.cudafe1.cpp` is skipped", "docs/commands.md", "`x.cudafe1.cpp`"),
    ("never a stray file in a folder with nothing of yours", "docs/commands.md",
     "never a stray file in a folder with nothing of yours"),
    ("three calls with the anti-cache probe", "docs/commands.md", "three calls with the anti-cache probe"),
    ("no comparison with earlier runs, GPU or CPU", "docs/commands.md", "no comparison with earlier runs, GPU or CPU"),
    ("once per run, by every command that looks CUTLASS up", "docs/commands.md",
     "once per run, by every command that looks CUTLASS up"),
    ("never what a command was asked to show", "docs/commands.md", "never what a command was asked to show"),
    ("`### Ideas` or `Ideas` underlined with `===`", "docs/commands.md", "`Ideas` underlined with `===`"),
]


def test_measurements_and_design_notes_live_in_the_docs_not_the_readme() -> None:
    """The README held the sm_100a proof table with compile times and modelled µs, the -O0 binding's CPU cost,
    the H100 digest check, the sm_90a kernel's residency design, the full-disk heuristics, the task.yml
    parser's rules and nvcc -keep's leftovers: a guide's reader needs what to type and what comes back."""
    readme = _flat(README)
    for said, doc, held in MOVED:
        assert said not in readme, said
        assert held in _flat((ROOT / doc).read_text(encoding="utf-8")), (doc, held)


def test_the_readme_says_each_rule_once() -> None:
    """Bare build with kernels/, the CUTLASS and nvcc search orders, the timeout order, the "stream" rule,
    --kernel default's torch fallback, an unsupported shape's exit codes and what runs without torch were
    each said two or three times in other words (and the no-GPU lists disagreed)."""
    readme = _flat(README)
    for once in ("bare `build` builds its `sm90/` and `sm100/` kernels",
                 "`$CUTLASS_PATH`, `$CUTLASS_HOME`, `/usr/local/cutlass`, then the `nvidia-cutlass` wheel",
                 "then on `PATH`, then in `/usr/local/cuda`",
                 "`lint`, `export`, `log`, `init` and `dump --umma` reading a kernel need no torch",
                 "`--kernel default` is its exact plain-torch submission",
                 "in `bench`, a shape the target refuses"):
        assert readme.count(once) == 1, (readme.count(once), once)
    for gone in ("Bare `build` differs in one way", "else `NVFP4CTL_TIMEOUT`, else task.yml's",
                 "Never the word \"stream\" anywhere in the file", "work without it. |",
                 "Without one, `lint`, `build --arch all`", "(in `bench`, an input it cannot run: exit 2)"):
        assert gone not in readme, gone
    install = _flat(_section(README, "## Install"))
    for works_without_a_gpu in ("`lint`", "`export`", "`log`", "`init`", "`build` (`--arch`)", "`dump --umma`",
                                "`dump --layout`", "`tune --compile-only --kernel PATH`"):
        assert works_without_a_gpu in install, works_without_a_gpu


# What a reader sees of a guide's table cell: about two lines of a rendered table, links as their words.
TABLE_CELL_CHARS = 160


def _seen(cell: str) -> str:
    """A cell as it reads rendered: a link's words, not its target."""
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell)


def test_the_configuration_table_says_what_to_set_and_links_the_rest() -> None:
    """The Configuration table's cells ran to 580 characters (NVFP4CTL_MEMORY's refusals, NVFP4CTL_DEVICE's
    bench figures, the CUTLASS lookup's warnings): a guide's table says what a variable sets, and the
    details live in docs/commands.md's Environment variables, linked from the row."""
    rows = re.findall(r"^\| `([A-Z0-9_]+)` \| (.*) \|$", _section(README, "## Configuration"), re.MULTILINE)
    assert len(rows) >= 9, rows
    long = {name: len(seen) for name, cell in rows
            if len(seen := _seen(cell)) > TABLE_CELL_CHARS}
    assert not long, long
    details = _section((ROOT / "docs" / "commands.md").read_text(encoding="utf-8"), "## Environment variables")
    for name, cell in rows:
        if f"\n### `{name}`\n" in f"\n{details}":
            assert f"(docs/commands.md#{name.lower()})" in cell, (name, cell)


def test_the_troubleshooting_table_says_what_to_do_and_links_why() -> None:
    """The Troubleshooting rows ran to 640 characters (which commands check for torch when, what the anti-cache
    probe's pace means, why a trap reads as a crash): a guide's row gives the symptom and what to type or do,
    and links the docs/ page and heading that explain the rest."""
    table = _section(README, "## Troubleshooting")
    rows = [line.strip("|").strip().split(" | ") for line in table.splitlines()
            if line.startswith("| ") and not line.startswith(("| you see", "| ---"))]
    assert len(rows) >= 12, rows
    assert all(len(row) == 2 for row in rows), [row for row in rows if len(row) != 2]
    long = [cell for row in rows for cell in row if len(_seen(cell)) > TABLE_CELL_CHARS]
    assert not long, long
    unlinked = [symptom for symptom, todo in rows if not re.search(r"\]\(docs/[\w.]+\.md#[\w-]+\)", todo)]
    assert not unlinked, unlinked


# A README line in an editor or a diff: the guide's prose wraps well before it; tables and output examples aside.
README_LINE_CHARS = 160


def test_the_readmes_prose_lines_stay_short() -> None:
    """Lines of the README ran to 400 characters where they held explanation (what -q drops, where the run
    log's line goes among a user's sections): that lives in docs/commands.md, linked; what stays wraps."""
    prose = [line for line in re.sub(r"^```.*?^```", "", README, flags=re.S | re.M).splitlines()
             if not line.startswith("|")]
    long = {len(_seen(line)): line for line in prose if len(_seen(line)) > README_LINE_CHARS}
    assert not long, long


def test_the_ci_guide_is_linked_and_its_commands_and_settings_are_nvfp4ctls() -> None:
    """docs/ci_use.md: linked from the README; each `$ nvfp4ctl` line parses, each NVFP4CTL_ setting it names is one
    nvfp4ctl reads, and it says how to keep no run log."""
    import shlex

    import typer

    from nvfp4ctl.cli import app
    from nvfp4ctl.env import Env

    guide = (ROOT / "docs" / "ci_use.md").read_text(encoding="utf-8")
    assert "(docs/ci_use.md)" in README
    commands = dict(typer.main.get_command(app).commands)
    lines = re.findall(r"^\$ (nvfp4ctl [^&\n]*)", guide, re.MULTILINE)
    assert len(lines) >= 5, lines
    for line in lines:
        name, *args = shlex.split(line)[1:]
        commands[name].make_context(name, args)
    assert set(re.findall(r"NVFP4CTL_[A-Z]+", guide)) <= {value for name, value in vars(Env).items() if name.isupper()}
    assert "`NVFP4CTL_MEMORY` | `/dev/null`" in guide and "merge=union" in guide
