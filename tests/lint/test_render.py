"""Snapshot tests of the rendered output: the text format and the JSON format are interfaces."""

from __future__ import annotations

import json
from pathlib import Path

from nvfp4ctl.lint import LintConfig, lint_paths
from nvfp4ctl.lint.render import concise
from nvfp4ctl.lint.render import json as json_render

SUBMISSION = '''\
import torch

def custom_kernel(data):
    a, b, sfa, sfb, _, _, c = data
    bt = b.t().contiguous()
    return torch._scaled_mm(a, bt, sfa, sfb)  # upstream
'''


def report_for(tmp_path: Path, text: str = SUBMISSION, name: str = "submission.py"):
    path = tmp_path / name
    path.write_text(text)
    return lint_paths([path], LintConfig())


def test_concise_text_snapshot(tmp_path: Path) -> None:
    text = concise.render(report_for(tmp_path), cwd=tmp_path)
    assert text == '''\
submission.py:5:10: NV501 copy-transposes B every call: B is already (N, K) K-major; pass b or a transposed view (b.t()) without .contiguous()
  |
5 |     bt = b.t().contiguous()
  |          ^^^^^^^^^^^^^^^^^^ warning

submission.py:6:12: NV701 torch._scaled_mm with the reference scales is the reference, not a kernel
  |
6 |     return torch._scaled_mm(a, bt, sfa, sfb)  # upstream
  |            ^^^^^^^^^^^^^^^^ warning

submission.py:6:36: NV401 sfa is the reference scale sfa_ref (input index 2): use index 4 (sfa_permuted)
  |
6 |     return torch._scaled_mm(a, bt, sfa, sfb)  # upstream
  |                                    ^^^ error

submission.py:6:41: NV401 sfb is the reference scale sfb_ref (input index 3): use index 5 (sfb_permuted)
  |
6 |     return torch._scaled_mm(a, bt, sfa, sfb)  # upstream
  |                                         ^^^ error

submission.py:6:51: NV101 the word "stream" (in "upstream"): the server rejects any file where "stream" in code.lower()
  |
6 |     return torch._scaled_mm(a, bt, sfa, sfb)  # upstream
  |                                                   ^^^^^^ error

Found 3 errors, 2 warnings in 1 file (1 checked)
'''


def test_tabs_keep_the_caret_under_the_column(tmp_path: Path) -> None:
    report = report_for(tmp_path, "x = 1\n\tsrc = 'STREAM'\n", name="notes.txt")
    lines = concise.render(report, cwd=tmp_path).splitlines()
    source, caret = lines[2], lines[3]
    assert source.index("STREAM") == caret.index("^")


def test_clean_summary_and_counts(tmp_path: Path) -> None:
    report = report_for(tmp_path, "def custom_kernel(data):\n    return data[6]\n")
    assert concise.render(report, cwd=tmp_path) == "All checks passed (1 file checked)\n"
    assert concise.counts(report) == "0 errors, 0 warnings (1 file checked)"


def test_json_snapshot(tmp_path: Path) -> None:
    payload = json_render.payload(report_for(tmp_path), cwd=tmp_path)
    assert json.loads(json.dumps(payload)) == payload
    assert payload["summary"] == {"errors": 3, "warnings": 2, "files_checked": 1, "files_with_findings": 1,
                                  "not_submissions": [], "compiler_outputs": [], "nothing_to_lint": [],
                                  "unknown_waivers": []}
    assert payload["diagnostics"][0] == {
        "path": "submission.py", "line": 5, "col": 10, "end_col": 28, "code": "NV501", "severity": "warning",
        "message": "copy-transposes B every call: B is already (N, K) K-major; pass b or a transposed view (b.t()) "
                   "without .contiguous()",
        "source_line": "    bt = b.t().contiguous()",
    }
    assert [d["code"] for d in payload["diagnostics"]] == ["NV501", "NV701", "NV401", "NV401", "NV101"]


def test_rules_payload_documents_every_rule() -> None:
    rules = json_render.rules_payload()
    assert len({r["code"] for r in rules}) == len(rules)
    for rule in rules:
        assert rule["why"] and rule["bad"] and rule["good"] and rule["severity"] in ("error", "warning")
    assert [r for r in rules if r["code"] == "NV101"][0]["waivable"] is False


def test_a_source_line_of_control_characters_is_shown_escaped_with_its_carets_aligned(tmp_path: Path) -> None:
    """A latin-1 or binary file's line holds C1 controls, ESC and the like: printed as they are they
    move the terminal's cursor or recolour its text. They are shown escaped, the carets under the
    finding's own characters, wherever the escapes before it lengthen the line."""
    path = tmp_path / "kernel.cu"
    path.write_bytes(b"\x1b[2J\x9b\xe9\tcudaStream_t s;\n")
    report = lint_paths([path], LintConfig())
    text = concise.render(report, cwd=tmp_path)
    assert "\x1b" not in text and "\x9b" not in text
    lines = text.splitlines()
    shown = r"\x1b[2J\x9b" + "\u00e9" + "    cudaStream_t s;"
    assert f"1 | {shown}" in lines
    carets = [line for line in lines if "^" in line]
    assert carets == ["  | " + " " * shown.index(r"\x9b") + "^" * 4 + " error",  # NV004: the byte 0x9b
                      "  | " + " " * shown.index("Stream") + "^" * len("Stream") + " error"]  # NV101
    document = json.loads(json.dumps(json_render.payload(report, cwd=tmp_path)))
    assert document["diagnostics"][0]["source_line"] == "\x1b[2J\x9b\u00e9\tcudaStream_t s;"


def test_a_control_character_in_the_underlined_span_widens_its_carets() -> None:
    from nvfp4ctl.lint.diagnostic import Diagnostic, Severity

    diagnostic = Diagnostic(Path("kernel.cu"), 1, 3, "NV101", Severity.WARNING, "m", "ab\x07\u202ecd", 3)
    assert concise.render_diagnostic(diagnostic, cwd=Path.cwd()).splitlines()[2:] == [
        r"1 | ab\x07\u202ecd", "  |   " + "^" * 11 + " warning"]


def test_a_long_source_line_is_shown_around_its_finding() -> None:
    """Every finding printed its whole source line: a megabyte line (minified code, a binary file's NV004)
    printed a megabyte per finding. A long line shows LINE_SHOWN characters from a little before the
    finding's column, "…" where it is cut, the carets still under the finding."""
    from nvfp4ctl.lint.diagnostic import Diagnostic, Severity

    line = "x" * 5_000 + "cudaStream_t" + "y" * 5_000
    diagnostic = Diagnostic(Path("kernel.cu"), 1, 5_005, "NV101", Severity.ERROR, "m", line, 6)
    _, _, shown, carets = concise.render_diagnostic(diagnostic, cwd=Path.cwd()).splitlines()
    assert len(shown) < 200 and shown.startswith("1 | …") and shown.endswith("…")
    assert shown[carets.index("^"):carets.index("^") + 6] == "Stream" and carets.endswith("^^^^^^ error")
    # a short line, or the start of a long one, is shown from its first character
    start = Diagnostic(Path("kernel.cu"), 1, 1, "NV101", Severity.ERROR, "m", line[5_000:], 6)
    assert concise.render_diagnostic(start, cwd=Path.cwd()).splitlines()[2].startswith("1 | cudaStream_t")


def test_a_file_name_of_control_characters_is_shown_escaped() -> None:
    from nvfp4ctl.lint.diagnostic import Diagnostic, Severity

    diagnostic = Diagnostic(Path("k\x1b[31m.cu"), 1, 1, "NV004", Severity.ERROR, "k\x1b[31m.cu is not text", "", 1)
    head = concise.render_diagnostic(diagnostic, cwd=Path.cwd())
    assert "\x1b" not in head and r"k\x1b[31m.cu:1:1: NV004 k\x1b[31m.cu is not text" in head
