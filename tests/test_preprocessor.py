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
])
def test_an_include_the_preprocessor_may_read_is_seen(text: str) -> None:
    assert _names(text) == ["x.h"]


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
