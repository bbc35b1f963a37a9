"""The C++ rules' linear-time scans give what the searches they replace gave: a static declaration as
the backtracking pattern found it, and a trap call after a printf as a search of the statements after
it found it. Each is compared on the repository's own C++ files and on generated fragments."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest

from nvfp4ctl.cpp_lexer import blank
from nvfp4ctl.lint.cpp import rules

ROOT = Path(__file__).resolve().parents[2]

# The pattern _static_declarations stands in for: quadratic on a long run of type characters.
BACKTRACKING_STATIC = re.compile(
    r"\bstatic\s+(?P<quals>(?:(?:const|volatile|thread_local|inline)\s+)*)"
    r"(?P<type>[A-Za-z_][\w:<>,\s]*?[\s\*&]+)(?P<name>[A-Za-z_]\w*)\s*(?P<after>[=;\[{])"
)


def statements_after(text: str, code: str, offset: int, count: int | None) -> str:
    """The text _TrapsAfter stands in for a search of: from offset over `count` statements at the same
    brace depth (None: to the block end), a nested block left out but its `}`."""
    depth, statements, kept = 0, 0, []
    for index in range(offset, len(code)):
        ch = code[index]
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                break
            depth -= 1
        elif ch == ";" and depth == 0:
            statements += 1
            if statements == count:
                break
        if depth == 0:
            kept.append(text[index])
    return "".join(kept)


def repository_sources() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "*.cu", "*.cuh", "*.h", "*.hpp", "*.cpp", "*.cc"], cwd=ROOT,
                            capture_output=True, text=True, check=False).stdout.split()
    return [(ROOT / name).read_text(encoding="utf-8", errors="replace") for name in listed if (ROOT / name).is_file()]


STATIC_PIECES = ["static", "static ", "const ", "volatile ", "inline ", "thread_local ", "int", "a", "b_1", "5", "x",
                 "std::vector<int, float>", "constexpr", "static_x", "mystatic ", "Tensor", "const", "_", "é",
                 " ", "  ", "\n", "\t", "\u00a0", "*", "&", "*&", "=", ";", "[", "{", "}", "(", ")", ",", ":", "<", ">"]

TRAP_PIECES = ['printf("x");', 'printf("trap");', "std::printf(a)", "cute::print(t);", "__trap();", "__trap", " (",
               "trap", "assert(x)", "abort ()", "CUTE_RUNTIME_ASSERT", "__tr", "ap(", "CUTE_", "RUNTIME_ASSERT",
               "// abort(\n", "/* { */", '"}"', "'{'", "if (a) ", "else ", "x", "_", "a", " ", "\n", "{", "}", ";",
               '#define P printf("%d", 1); __trap()\n']


def generated(pieces: list[str], seed: int, cases: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 25))) for _ in range(cases)]


def static_declarations(code: str) -> list[tuple[str, str, str, int]]:
    return [(d.quals, d.type_text, d.name, d.name_start) for d in rules._static_declarations(code)]


def backtracked_statics(code: str) -> list[tuple[str, str, str, int]]:
    return [(m.group("quals"), m.group("type"), m.group("name"), m.start("name"))
            for m in BACKTRACKING_STATIC.finditer(code)]


def test_the_repository_has_sources_to_compare_on() -> None:
    sources = repository_sources()
    assert len(sources) >= 20
    assert sum(len(static_declarations(blank(text).code)) for text in sources) > 0
    assert sum(len(rules._PRINTF.findall(blank(text).code)) for text in sources) > 0


@pytest.mark.parametrize("source", ["repository", "generated"])
def test_static_declarations_are_the_backtracking_patterns_matches(source: str) -> None:
    codes = ([blank(text).code for text in repository_sources()] if source == "repository"
             else generated(STATIC_PIECES, seed=25, cases=20_000))
    for code in codes:
        assert static_declarations(code) == backtracked_statics(code), code[:200]


@pytest.mark.parametrize("source", ["repository", "generated"])
def test_a_trap_follows_where_the_statements_after_the_printf_hold_one(source: str) -> None:
    texts = repository_sources() if source == "repository" else generated(TRAP_PIECES, seed=25, cases=10_000)
    compared = 0
    for text in texts:
        code = blank(text).code
        calls = [match.start() for match in rules._PRINTF.finditer(code)]
        traps_after = rules._TrapsAfter(text, code)
        for offset in calls:
            for count in (None, 1, 2, 3):
                searched = rules._TRAP.search(statements_after(text, code, offset, count)) is not None
                assert traps_after.follow(offset, count) == searched, (text[:200], offset, count)
                compared += 1
    assert compared > 100


GUARD_LINES = ["#ifdef NVFP4_DEBUG", "#if VERBOSE > 1", "#ifdef X", "#ifndef NDEBUG", "#if 0", "#elif DUMP_TILES",
               "#elif 1", "#else", "#endif", "# endif", "#define PRINT 1", "int x;", "{", "}", "#if A \\\n  || TRACE"]


def any_group_debug(code: str) -> tuple[list[int], list[bool]]:
    """Scopes._preprocessor_guards as it was, asking every open group per directive."""
    from nvfp4ctl.lint.cpp import scopes

    directives = [(m.start(), m.end()) for m in scopes._DIRECTIVE_LINE.finditer(code)]
    starts, guarded = [0], [False]
    stack: list[bool] = []
    for start, end in directives:
        match = scopes._CONDITIONAL.match(code[start:end].lstrip())
        if match is None:
            continue
        kind, condition = match.group(1), match.group(2)
        if kind in ("if", "ifdef", "ifndef"):
            stack.append(bool(scopes.DEBUG_WORD.search(condition)))
        elif kind in ("elif", "else") and stack:
            stack[-1] = kind == "elif" and bool(scopes.DEBUG_WORD.search(condition))
        elif kind == "endif" and stack:
            stack.pop()
        starts.append(end)
        guarded.append(any(stack))
    return starts, guarded


@pytest.mark.parametrize("source", ["repository", "generated"])
def test_debug_guards_are_those_of_every_open_group(source: str) -> None:
    from nvfp4ctl.lint.cpp.scopes import Scopes

    rng = random.Random(25)
    codes = ([blank(text).code for text in repository_sources()] if source == "repository" else
             ["".join(rng.choice(GUARD_LINES) + "\n" for _ in range(rng.randint(0, 20))) for _ in range(5_000)])
    for code in codes:
        scopes = Scopes(code)
        assert (scopes._guard_starts, scopes._guarded) == any_group_debug(code), code[:200]
