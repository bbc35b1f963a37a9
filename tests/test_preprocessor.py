"""nvfp4ctl/preprocessor.py: which `#include "..."` lines the preprocessor certainly skips."""

from __future__ import annotations

import pytest

from nvfp4ctl.preprocessor import live_code, quoted_includes


def _names(text: str) -> list[str]:
    return [include.name for include in quoted_includes(live_code(text))]


@pytest.mark.parametrize("text", [
    '/* #include "x.h" */\n',
    '/* a comment\n#include "x.h"\n*/\n',
    '// #include "x.h"\n',
    "int a; // goes on \\\n#include \"x.h\"\n",
    '#if 0\n#include "x.h"\n#endif\n',
    '#if (0) // off for now\n#include "x.h"\n#endif\n',
    '#if 0\n#ifdef FOO\n#else\n#include "x.h"\n#endif\n#endif\n',
    '#if 1\n#else\n#include "x.h"\n#endif\n',
    '#ifdef FOO\n#elif 0\n#include "x.h"\n#endif\n',
    '#if 0\n#elif 1\n#else\n#include "x.h"\n#endif\n',
])
def test_an_include_the_preprocessor_skips_is_not_seen(text: str) -> None:
    assert _names(text) == []


@pytest.mark.parametrize("text", [
    '#if 0\n#else\n#include "x.h"\n#endif\n',
    '#if 0\n#elif defined(FOO)\n#include "x.h"\n#endif\n',
    '#ifdef FOO\n#include "x.h"\n#endif\n',
    '#if 0 || FOO\n#include "x.h"\n#endif\n',
    '#ifndef FOO\n#else\n#include "x.h"\n#endif\n',
    '/* a comment */ #include "x.h"\n',
    'const char* open = "/*";\n#include "x.h"\n',
    'auto raw = R"x(/* )x";\n#include "x.h"\n',
    "int n = 1'000; /* one */\n#include \"x.h\"\n",
    "#if 0\ndon't\n#endif\n#include \"x.h\"\n",
    'asm(R"(\n#if 0\n)");\n#include "x.h"\n',
    'auto raw = R"ptx(\n  #if 0\n)ptx";\n#include "x.h"\n',
    'const char* s = "\\\n#if 0";\n#include "x.h"\n',
])
def test_an_include_the_preprocessor_may_read_is_seen(text: str) -> None:
    assert _names(text) == ["x.h"]


def test_a_directive_inside_a_string_literal_is_none() -> None:
    """An `#if 0` line inside a raw string opened a group never closed: the code after it was skipped, so
    code_needs saw no tcgen05 and gave None."""
    from nvfp4ctl.build.arch_names import code_needs

    assert code_needs('asm(R"(\n#if 0\n)"); asm("tcgen05.mma");\n') == ("sm_100a", "tcgen05 / SM100 instructions")
    assert code_needs('#if 0\nasm("tcgen05.mma");\n#endif\n') is None


def test_offsets_and_lines_are_the_files() -> None:
    text = '/* two\nlines */\n  #include "a.h" // why\n'
    [include] = quoted_includes(live_code(text))
    assert include.line == 3 and text[include.start:include.end] == '#include "a.h"'
    assert len(live_code(text)) == len(text) and live_code(text).count("\n") == text.count("\n")


def test_a_file_of_many_includes_numbers_their_lines_in_one_pass() -> None:
    """Each include's line is counted on from the one before: counting from the top per include made
    a generated file of tens of thousands of includes quadratic."""
    import time

    text = "".join(f'#include "part_{i}.h"\nint x_{i};\n' for i in range(40_000))
    cpu = time.process_time()
    found = quoted_includes(text)
    cpu = time.process_time() - cpu
    assert [include.line for include in found] == list(range(1, 80_000, 2))
    assert found[-1].name == "part_39999.h"
    assert cpu < 3.0  # about 0.05 s here; it was 10 s


CONDITIONAL_LINES = ["#if 0", "#if 1", "#if (0) // off", "#ifdef X", "#ifndef Y", "#if N > 1", "#elif 0", "#elif 1",
                     "#elif N", "#elifdef Z", "#else", "#endif", "  #  endif", "int x;", '#include "a.h"', "#if 0 \\\n",
                     "// #endif", "/* #else */"]


def _all_frames_reading(text: str) -> str:
    """What live_code gave while each line asked every open conditional whether it was reading."""
    from nvfp4ctl import preprocessor
    from nvfp4ctl.cpp_lexer import blank, spaces

    pieces: list[str] = []
    stack: list[preprocessor._Conditional] = []
    for line in preprocessor._LOGICAL_LINE.finditer(preprocessor._without_comments(text, blank(text))):
        directive = preprocessor._CONDITIONAL.match(line.group())
        if directive is not None:
            preprocessor._step(stack, directive.group(1), directive.group(2), all(frame.reading for frame in stack))
        keep = directive is not None or all(frame.reading for frame in stack)
        pieces.append(line.group() if keep else spaces(line.group()))
    return "".join(pieces)


def test_the_innermost_conditional_tells_whether_a_line_is_read() -> None:
    import random

    rng = random.Random(25)
    for _ in range(5_000):
        text = "".join(rng.choice(CONDITIONAL_LINES) + "\n" for _ in range(rng.randint(0, 20)))
        assert live_code(text) == _all_frames_reading(text), text


def test_thousands_of_nested_conditionals_in_linear_time() -> None:
    """Whether a line is read comes from the innermost conditional: asking every open one per line took
    14 s for 16,000 nested #ifdef around 16,000 lines."""
    import time

    text = "#ifdef A\n" * 30_000 + "#if 0\n" + "int x;\n" * 30_000 + "#endif\n" * 30_001
    cpu = time.process_time()
    code = live_code(text)
    cpu = time.process_time() - cpu
    assert code.count("int x;") == 0 and len(code) == len(text)
    assert cpu < 5.0  # about 0.1 s here; it was a minute


@pytest.mark.parametrize("condition, value", [
    ("__CUDA_ARCH__ >= 1000", 0), ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && __CUDA_ARCH__ < 1000", 1),
    ("defined __CUDA_ARCH_FEAT_SM100_ALL", 0), ("!defined(__CUDA_ARCH_FEAT_SM90_ALL)", 0),
    ("__CUDA_ARCH_SPECIFIC__ == 900 || FOO", 1), ("__CUDA_ARCH__ >= 1000 && FOO", 0),
    ("__CUDA_ARCH__ >= 900 && FOO", None), ("FOO", None), ("(0x10 + 2) * 3 % 7 == 5", 1),
    ("__CUDA_ARCH_HAS_FEATURE__(SM100_ALL)", None), ("'a'", None), ("1 / 0", None),
])
def test_a_condition_is_valued_where_the_macros_it_reads_are_known(condition: str, value: int | None) -> None:
    from nvfp4ctl.build.arch_names import device_pass_macros
    from nvfp4ctl.condition_value import condition_value

    assert condition_value(condition, device_pass_macros("sm_90a")) == value


def test_a_device_pass_skips_the_groups_its_arch_rules_out() -> None:
    """Without macros only literals decide (a scan cannot know the build's defines); told the target's
    device pass, `#if __CUDA_ARCH__ >= 1000` and `#ifdef __CUDA_ARCH_FEAT_SM100_ALL` are skipped for sm_90a."""
    from nvfp4ctl.build.arch_names import device_pass_macros

    text = ('#if __CUDA_ARCH__ >= 1000\n#include "a.h"\n#elifdef __CUDA_ARCH_FEAT_SM90_ALL\n#include "b.h"\n#endif\n'
            '#ifndef __CUDA_ARCH__\n#include "c.h"\n#endif\n')
    assert [i.name for i in quoted_includes(live_code(text))] == ["a.h", "b.h", "c.h"]
    assert [i.name for i in quoted_includes(live_code(text, device_pass_macros("sm_90a")))] == ["b.h"]
    assert [i.name for i in quoted_includes(live_code(text, device_pass_macros("sm_100a")))] == ["a.h"]
