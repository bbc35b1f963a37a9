"""A submission that is not Python or defines no custom_kernel is the user's input (exit 2, FILE:LINE),
found from its text before a child, torch or a GPU is involved; one the text cannot judge is let through."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from nvfp4ctl.errors import ExitCode, UnloadableSubmission
from nvfp4ctl.runner.entry_point import refuse_broken_submission


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "submission.py"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text))
    return path


def _refusal(tmp_path: Path, text: str | bytes) -> str:
    with pytest.raises(UnloadableSubmission) as caught:
        refuse_broken_submission(_write(tmp_path, text), "submission.py")
    assert caught.value.exit_code == ExitCode.USAGE
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    return message


@pytest.mark.parametrize("text, message", [
    ("import torch\n\ndef custom_kernel(data)\n    return data\n", "submission.py:3: not valid Python (expected ':')"),
    ("def custom_kernel(data):\nreturn data\n",
     "submission.py:2: not valid Python (expected an indented block after function definition on line 1)"),
    (b"def custom_kernel(data):\n    return 1\x00\n", "submission.py"),
])
def test_text_that_is_not_python_is_its_file_and_line(tmp_path, text, message):
    refusal = _refusal(tmp_path, text)
    assert refusal.startswith(message), refusal
    assert "not valid Python" in refusal


@pytest.mark.parametrize("text, message", [
    (b"def custom_kernel(data):\n    return '\xff'\n", "submission.py:2: not UTF-8 text (invalid start byte at byte 37)"),
    (b"\xff\xfedef custom_kernel(data):\n", "submission.py:1: not UTF-8 text (invalid start byte at byte 0)"),
    # the leaderboard reads UTF-8 whatever a coding cookie says, as build and lint (NV004) do
    (b"# -*- coding: latin-1 -*-\ndef custom_kernel(data):\n    return '\xe9'\n",
     "submission.py:3: not UTF-8 text (invalid continuation byte at byte 63)"),
])
def test_text_that_is_not_utf8_is_said_as_build_says_it(tmp_path, text, message):
    """Python's words came through in double parentheses: not valid Python ((unicode error) 'utf-8'
    codec can't decode byte 0xff in position 0: invalid start byte)."""
    assert _refusal(tmp_path, text) == message


def test_a_utf8_byte_order_mark_is_text(tmp_path):
    refuse_broken_submission(_write(tmp_path, b"\xef\xbb\xbfdef custom_kernel(data):\n    return data\n"), "submission.py")


def test_no_custom_kernel_is_said_with_the_likely_typo(tmp_path):
    assert _refusal(tmp_path, "import torch\n\ndef custom_kernal(data):\n    return data\n") == (
        "submission.py:3: defines custom_kernal(), not custom_kernel(): GPU MODE calls custom_kernel(data)")
    assert _refusal(tmp_path, "def kernel(data):\n    return data\n") == (
        "submission.py: defines no custom_kernel(data) function, which GPU MODE calls")


def test_a_custom_kernel_inside_a_class_or_function_does_not_count(tmp_path):
    _refusal(tmp_path, """
        class Runner:
            def custom_kernel(self, data):
                return data

        def make():
            custom_kernel = lambda data: data
            return custom_kernel
        """)


@pytest.mark.parametrize("text", [
    "def custom_kernel(data):\n    return data\n",
    "async def custom_kernel(data):\n    return data\n",
    "class custom_kernel:\n    def __new__(cls, data):\n        return data\n",
    "custom_kernel = lambda data: data\n",
    "custom_kernel: object = print\n",
    "kernel, custom_kernel = print, print\n",
    "from helpers import run as custom_kernel\n",
    "import custom_kernel\n",
    "try:\n    from fast import custom_kernel\nexcept ImportError:\n    from slow import custom_kernel\n",
    "import sys\nif sys.version_info >= (3, 10):\n    def custom_kernel(data):\n        return data\n",
    "with open(__file__) as custom_kernel:\n    pass\n",
    "for custom_kernel in [print]:\n    pass\n",
    "if (custom_kernel := print):\n    pass\n",
    # the text cannot say the name is missing: the import decides
    "from helpers import *\n",
    "globals()['custom' + '_kernel'] = print\n",
    "import sys\nsetattr(sys.modules[__name__], 'custom_kernel', print)\n",
    "def install():\n    global custom_kernel\n    custom_kernel = print\n\ninstall()\n",
    "import sys\nsys.modules[__name__].custom_kernel = print\n",
    "def __getattr__(name):\n    return print\n",
    "match print:\n    case _ as custom_kernel:\n        pass\n",
    "match print:\n    case custom_kernel:\n        pass\n",
    "match [print]:\n    case [*custom_kernel]:\n        pass\n",
    "match {}:\n    case {**custom_kernel}:\n        pass\n",
])
def test_any_top_level_binding_or_a_dynamic_one_passes(tmp_path, text):
    refuse_broken_submission(_write(tmp_path, text), "submission.py")


def test_the_file_is_never_run(tmp_path):
    marker = tmp_path / "ran"
    path = _write(tmp_path, f"open({str(marker)!r}, 'w').close()\n\ndef custom_kernel(data):\n    return data\n")
    refuse_broken_submission(path, "submission.py")
    assert not marker.exists()
