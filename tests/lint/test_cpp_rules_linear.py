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


class WalkingScopes:
    """Scopes.enclosing and in_device_code as they were: a walk up from the last block opened before
    the offset, every enclosing block asked per question."""

    def __init__(self, code: str) -> None:
        from nvfp4ctl.lint.cpp.scopes import Scopes

        self.scopes = Scopes(code)
        self.block_starts = [block.start for block in self.scopes.blocks]

    def __getattr__(self, name: str):
        return getattr(self.scopes, name)

    def enclosing(self, offset: int):
        import bisect

        scopes = self.scopes
        index = bisect.bisect_left(self.block_starts, offset) - 1
        while index >= 0 and scopes.blocks[index].end < offset:
            index = scopes._parents[index]
        chain = []
        while index >= 0:
            chain.append(scopes.blocks[index])
            index = scopes._parents[index]
        return chain[::-1]

    def in_device_code(self, offset: int) -> bool:
        return any(block.device for block in self.enclosing(offset))


def walking_printf(text: str, code: str) -> list[tuple[int, str, str, int]]:
    """rules._printf as it was: each call asked every enclosing block's header and searched its whole
    statement prefix."""
    from nvfp4ctl.lint.cpp.lookups import CodeLookups
    from nvfp4ctl.lint.cpp.scopes import DEBUG_WORD

    scopes, lookups = WalkingScopes(code), CodeLookups(code)
    calls = list(rules._PRINTF.finditer(code))
    if not calls:
        return []
    expansions = rules._MacroExpansions(calls, text, code, scopes, lookups)
    traps_after = rules._TrapsAfter(text, code)
    found = []
    for match in calls:
        at = match.start()
        directive = scopes.in_directive(at)
        if directive is not None:
            body = text[directive[0] : directive[1]]
            if DEBUG_WORD.search(body.split("(")[0]) or rules._TRAP.search(body) or expansions.host_only(directive, body):
                continue
        elif not scopes.in_device_code(at):
            continue
        if scopes.debug_guarded(at):
            continue
        enclosing = scopes.enclosing(at)
        if any(DEBUG_WORD.search(block.header) for block in enclosing):
            continue
        if DEBUG_WORD.search(scopes.statement_prefix(at)):
            continue
        in_branch = bool(enclosing) and bool(re.match(r"(?:\}\s*)?(?:if|else)\b", enclosing[-1].header))
        if traps_after.follow(at, count=None if in_branch else 2):
            continue
        name = match.group().rstrip("( ")
        found.append((at, "NV802", name, len(name)))
    return found


def remembered_printf(text: str, code: str) -> list[tuple[int, str, str, int]]:
    from nvfp4ctl.lint.cpp.lookups import CodeLookups
    from nvfp4ctl.lint.cpp.scopes import Scopes

    return [(f.offset, f.code, f.message.split(" in device code")[0], f.width)
            for f in rules._printf(text, code, Scopes(code), CodeLookups(code))]


PRINTF_PIECES = ["__global__ void k(int x) ", "__device__ ", "MY_DEVICE ", "void h() ", "if (x) ", "if (debug) ",
                 "if (verbose > 1) ", "else ", "} else ", "for (;;) ", "while (dump) ", 'printf("x");', "printf(a), ",
                 "std::printf(b);", "cute::print(t);", "cute::print_tensor(t)", "__trap();", "assert(x);", "P;", "Q(1);",
                 "#ifdef NVFP4_DEBUG\n", "#if 0\n", "#else\n", "#endif\n", '#define P printf("p")\n',
                 '#define Q(v) { printf("%d", v); }\n', '#define DBG_PRINT(v) printf("%d", v)\n', "DBG_PRINT(1);",
                 "{", "{", "}", "}", ";", ",", "x", "x + ", "trace_", " ", "\n", "// printf(\n", '"{"', "int a = 1;"]


@pytest.mark.parametrize("source", ["repository", "generated"])
def test_printf_findings_are_those_of_every_enclosing_block_asked(source: str) -> None:
    texts = repository_sources() if source == "repository" else generated(PRINTF_PIECES, seed=25, cases=6_000)
    if source == "generated":  # longer fragments too: deeper nesting, more calls per statement
        rng = random.Random(26)
        texts += ["".join(rng.choice(PRINTF_PIECES) for _ in range(rng.randint(20, 120))) for _ in range(1_000)]
    reported = skipped = 0
    for text in texts:
        code = blank(text).code
        found = remembered_printf(text, code)
        assert found == walking_printf(text, code), text[:300]
        skipped += len(rules._PRINTF.findall(code)) - len(found)
        reported += len(found)
    assert reported > (0 if source == "repository" else 500)
    assert skipped > (0 if source == "repository" else 1_000)
    print(f"\n{source}: {reported} printf findings, {skipped} calls passed")


@pytest.mark.parametrize("source", ["repository", "generated"])
def test_enclosing_blocks_are_those_the_walk_finds(source: str) -> None:
    from nvfp4ctl.lint.cpp.scopes import DEBUG_WORD, Scopes

    texts = repository_sources() if source == "repository" else generated(PRINTF_PIECES, seed=27, cases=2_000)
    for text in texts:
        code = blank(text).code
        scopes, walking = Scopes(code), WalkingScopes(code)
        for offset in range(len(code) + 1) if len(code) < 2_000 else range(0, len(code) + 1, 7):
            chain = walking.enclosing(offset)
            assert scopes.enclosing(offset) == chain, (text[:300], offset)
            assert scopes.innermost(offset) == (chain[-1] if chain else None)
            assert scopes.in_device_code(offset) == walking.in_device_code(offset)
            assert scopes.under_debug_header(offset) == any(DEBUG_WORD.search(block.header) for block in chain)


def searched_in_condition(lookups, name: str) -> bool:
    """CodeLookups.tested_in_condition as it was: a search of the conditions per dotted name."""
    if re.fullmatch(r"\w+", name):
        return name in set(re.findall(r"\w+", lookups._conditions))
    return re.search(rf"\b{re.escape(name)}\b", lookups._conditions) is not None


def searched_before_ternary(lookups, name: str) -> bool:
    """CodeLookups.chooses_by_ternary as it was: a search of the code before each `?` per name."""
    pattern = rf"\b{re.escape(name)}\b\s*(?:(?:==|!=|<=|>=|<|>)[^;{{}}?]*)?\)?\s*\?"
    return re.search(pattern, lookups._before_ternaries) is not None


NAME_LIKE = re.compile(r"[A-Za-z_][\w.]*(?:->\w+)*")  # what a config branch's assignment may set
BRANCH_PIECES = ["if (", "if constexpr (", "while (", "switch (", ")", "(", "?", ":", ";", "{", "}", "==", "!=", "<",
                 ">", "<=", ">=", "->", ".", "..", " ", "  ", "\n", "\t", "a", "b", "cfg", "tile", "_x", "5", "é", "=",
                 "&&", "cfg.tile", "p->n", "a.b", "x.5", "tile_0", " ? ", "// if (a)\n", '"?"']
NAMES = ["a", "b", "cfg", "cfg.tile", "cfg.", "a.b", "a..b", "p->n", "cfg.tile.m", "a.b->c", "tile", "_x", "é", "b5",
         "cfg.tile->x", "a.", "x.5", "p", "n", "tile_0", "a.b.", "cfg..tile"]


@pytest.mark.parametrize("source", ["repository", "generated"])
def test_names_branched_on_are_those_each_names_search_finds(source: str) -> None:
    from nvfp4ctl.lint.cpp import lookups as lookups_module
    from nvfp4ctl.lint.cpp.lookups import CodeLookups

    texts = repository_sources() if source == "repository" else generated(BRANCH_PIECES, seed=25, cases=6_000)
    tested = chosen = 0
    for text in texts:
        lookups = CodeLookups(blank(text).code)
        names = set(NAMES) | set(NAME_LIKE.findall(lookups.code))
        in_conditions = lookups_module._names_standing(names, lookups._conditions, lambda end: True)
        assert in_conditions == {n for n in names if searched_in_condition(lookups, n)}, text[:300]
        before_ternary = {n for n in names if searched_before_ternary(lookups, n)}
        assert lookups.branched_on(names) == in_conditions | before_ternary, text[:300]
        tested += len(in_conditions)
        chosen += len(before_ternary)
    assert tested > 100 and chosen > (0 if source == "repository" else 100)
    print(f"\n{source}: {tested} names in conditions, {chosen} before a ternary")


def scanned_match(code: str, open_index: int, opener: str = "(", closer: str = ")") -> int:
    """The scan BracketPairs stands in for, forward from the opener, per question: quadratic nested."""
    depth = 0
    for index in range(open_index, len(code)):
        ch = code[index]
        if ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return index
    return len(code)


BRACKET_PIECES = ["(", "(", ")", ")", "{", "}", "if (", "while (", "switch (", "if constexpr (", "x", " ", "\n", ";",
                  "m == 128", "n == 7168", "k == 16384", "128 == m", "256 == n", "7168", "== 4096", "0128 == m",
                  " && ", "%", "* ", "- ", "+", "[", "]", "?", ":", "tile = 64;", "cfg.stages = 4;", " else ",
                  "return;", "a.b", "é", "١٢٨ == m", "\u00a0"]


CHAIN_PIECES = ["if (m == 128 && n == 7168) ", "if (m == 256 && k == 16384) ", "if (x) ", " else ", "else ", "{ ", "} ",
                "tile = 64; ", "cfg.stages = 4; ", "p->n = 2;", "tile = 64 ", "go(); ", "; ", "return; ", "{ tile = 128; } ",
                "int y = tile ? 1 : 2; ", "while (cfg.stages) ", "\n"]


def bracket_codes(source: str) -> list[str]:
    if source == "repository":
        return [blank(text).code for text in repository_sources()]
    rng = random.Random(28)
    return (generated(BRACKET_PIECES, seed=28, cases=6_000)
            + ["".join(rng.choice(BRACKET_PIECES) for _ in range(rng.randint(20, 150))) for _ in range(1_000)])


@pytest.mark.parametrize("source", ["repository", "generated"])
def test_brackets_close_where_the_scan_from_each_opener_closes(source: str) -> None:
    from nvfp4ctl.lint.cpp.brackets import BracketPairs

    compared = 0
    for code in bracket_codes(source):
        for opener, closer in ("()", "{}"):
            pairs = BracketPairs(code, opener, closer)
            for at in (index for index, ch in enumerate(code) if ch == opener):
                assert pairs.closing(at) == scanned_match(code, at, opener, closer), (code[:300], at)
                compared += 1
    assert compared > 1_000


def every_condition(code: str) -> str:
    """CodeLookups._conditions as it was: every condition, those inside another too."""
    from nvfp4ctl.lint.cpp import lookups

    return "\n".join(code[m.end() : scanned_match(code, m.end() - 1)] for m in lookups._CONDITION.finditer(code))


def scanned_shape_branches(code: str, config) -> list[tuple[int, str, str]]:
    """rules._shape_branches as it was: each condition copied and searched, each bracket scanned for."""
    from nvfp4ctl.lint.cpp.lookups import CodeLookups
    from nvfp4ctl.lint.shapes import describe, pinned_shape

    def statement(start: int) -> tuple[str, int]:
        at = rules._BLANKS.match(code, start).end()
        if code.startswith("{", at):
            end = scanned_match(code, at, "{", "}") + 1
            return code[at + 1 : end - 1], end
        end = code.find(";", at)
        end = len(code) if end == -1 else end + 1
        return code[at:end], end

    def assignments(body: str) -> set[str] | None:
        picked: set[str] = set()
        for piece in body.split(";"):
            if piece.strip():
                match = re.match(r"^\s*([A-Za-z_][\w.]*(?:->\w+)*)\s*=\s*-?\d+(?:\.\d*)?[uUlLfF]*\s*$", piece)
                if match is None:
                    return None
                picked.add(match.group(1))
        return picked

    def config_branch(if_start: int) -> set[str] | None:
        body, after = statement(scanned_match(code, code.index("(", if_start)) + 1)
        picked = assignments(body)
        rest = rules._ELSE.match(code, after)
        if picked is None or rest is None:
            return picked
        if rules._IF.match(code, rest.end()):
            inner = config_branch(rest.end())
        else:
            inner = assignments(statement(rest.end())[0])
        return None if inner is None else picked | inner

    branches = []
    for match in rules._IF.finditer(code):
        condition = code[match.end() : scanned_match(code, match.end() - 1)]
        values = [int(a or b) for a, b in rules._EQ_LITERAL.findall(condition)]
        shape = pinned_shape(values, config.benchmark_shapes)
        if shape is not None:
            branches.append((match.start(), describe(shape, values), config_branch(match.start())))
    lookups = CodeLookups(code)
    lookups.__dict__["_conditions"] = every_condition(code)
    branched_on = lookups.branched_on(set().union(*(picked for _, _, picked in branches if picked)))
    return [(start, "NV702", shown) for start, shown, picked in branches if not picked or picked & branched_on]


@pytest.mark.parametrize("source", ["repository", "generated"])
def test_shape_branch_findings_are_those_of_the_scans(source: str) -> None:
    from nvfp4ctl.lint.config import LintConfig
    from nvfp4ctl.lint.cpp.lookups import CodeLookups

    config = LintConfig()
    reported = 0
    rng = random.Random(30)
    chains = ["".join(rng.choice(CHAIN_PIECES) for _ in range(rng.randint(1, 40))) for _ in range(3_000)]
    for code in bracket_codes(source) + (chains if source == "generated" else []):
        found = [(f.offset, f.code, f.message.split("shape ")[1].split(":")[0])
                 for f in rules._shape_branches(code, config, CodeLookups(code))]
        assert found == scanned_shape_branches(code, config), code[:300]
        reported += len(found)
    assert reported > (0 if source == "repository" else 300)
    print(f"\n{source}: {reported} shape branches reported")


@pytest.mark.parametrize("source", ["repository", "generated"])
def test_names_in_outermost_conditions_are_those_in_every_condition(source: str) -> None:
    from nvfp4ctl.lint.cpp import lookups as lookups_module
    from nvfp4ctl.lint.cpp.lookups import CodeLookups

    texts = (repository_sources() if source == "repository"
             else generated(BRANCH_PIECES, seed=29, cases=6_000) + bracket_codes("generated"))
    tested = 0
    for text in texts:
        code = blank(text).code
        names = set(NAMES) | set(NAME_LIKE.findall(code))
        found = lookups_module._names_standing(names, CodeLookups(code)._conditions, lambda end: True)
        assert found == lookups_module._names_standing(names, every_condition(code), lambda end: True), text[:300]
        tested += len(found)
    assert tested > 100


def scanned_statics(code: str) -> list[tuple[int, str, str, int]]:
    """rules._statics as it was: each static's comparisons walked, every if of the statement before
    each comparison asked whether its scanned condition holds it."""
    from nvfp4ctl.lint.cpp.lookups import CodeLookups
    from nvfp4ctl.lint.cpp.scopes import Scopes

    scopes, lookups = Scopes(code), CodeLookups(code)

    def enclosing_if(offset: int) -> int | None:
        candidate = None
        for match in rules._IF.finditer(code, scopes.statement_start(offset), offset):
            if scanned_match(code, match.end() - 1) >= offset:
                candidate = match.start()
        return candidate

    def controls_return(if_start: int) -> bool:
        start = rules._BLANKS.match(code, scanned_match(code, code.index("(", if_start)) + 1).end()
        if code.startswith("{", start):
            body = code[start : scanned_match(code, start, "{", "}") + 1]
        else:
            end = code.find(";", start)
            body = code[start : end if end != -1 else len(code)]
        return bool(re.search(r"\breturn\b", body))

    found, reported_ifs = [], set()
    for static in rules._static_declarations(code):
        name, type_text = static.name, static.type_text
        if "constexpr" in type_text or "constexpr" in static.quals or type_text.strip() in ("", "struct", "class"):
            continue
        pointer_like = bool(rules._POINTER_TYPE.search(type_text)) or (
            bool(rules._INTEGER_TYPE.search(type_text)) and bool(rules._POINTER_NAME.search(name)))
        if rules._TENSOR_TYPE.search(type_text) and not rules._WORKSPACE_NAME.search(name):
            if lookups.is_returned(name):
                found.append((static.name_start, "NV302", name, len(name)))
            continue
        if not pointer_like:
            continue
        for compared_at, compared in lookups.comparisons(name):
            if_start = enclosing_if(compared_at)
            if if_start is None or if_start in reported_ifs:
                continue
            reported_ifs.add(if_start)
            found.append((compared_at, "NV301" if controls_return(if_start) else "NV302", name, len(compared)))
    return found


STATIC_USE_PIECES = ["static void* last_ptr = nullptr;\n", "static int64_t last_addr;\n", "static torch::Tensor out;\n",
                     "static const void* last_ptr;\n", "if (", "if (a == last_ptr) ", "if (last_addr == p", ") ", ")",
                     "(", "{ ", "} ", "return; ", "return out; ", "x; ", "; ", "a == last_ptr", " && ", "p == last_addr",
                     "if constexpr (", "else ", "last_ptr = a; ", "go()", ", ", "\n", "returned; "]


@pytest.mark.parametrize("source", ["repository", "generated"])
def test_static_findings_are_those_of_the_scans(source: str) -> None:
    from nvfp4ctl.lint.cpp.lookups import CodeLookups
    from nvfp4ctl.lint.cpp.scopes import Scopes

    codes = [blank(text).code for text in repository_sources()] if source == "repository" else \
        generated(STATIC_USE_PIECES, seed=31, cases=8_000)
    reported = 0
    for code in codes:
        found = [(f.offset, f.code, f.message.split()[1 if f.message.startswith("static ") and "tensor" not in
                                                      f.message.split()[1] else 2], f.width)
                 for f in rules._statics(code, Scopes(code), CodeLookups(code))]
        assert found == scanned_statics(code), code[:300]
        reported += len(found)
    assert reported > (0 if source == "repository" else 1_000)
    print(f"\n{source}: {reported} static findings")
