"""A record's cells flowed into lines: whole cells side by side, a long cell wrapped at its spaces only."""

from __future__ import annotations

from nvfp4ctl.flowed_records import INDENT, SEPARATOR, flow, labelled

RUN = ["2026-11-28 14:40:24", "nvfp4ctl bench", "kernels/sm90/nvfp4_gemm_sm90.cu@92559cbf", "8b80b04",
       "NVIDIA H200 (sm_90)", "exit 0",
       "geomean 25.058±0.005 us; 128x7168x16384 52.561±0.018 | 128x4096x7168 20.310±0.009 us", "nvfp4_gemm"]


def test_no_width_is_one_line_of_every_cell() -> None:
    assert flow(RUN, None) == [SEPARATOR.join(RUN)]


def test_a_width_that_holds_the_record_is_one_line() -> None:
    assert flow(RUN, 500) == [SEPARATOR.join(RUN)]


def test_cells_that_fit_stay_whole_side_by_side_and_later_lines_are_indented() -> None:
    lines = flow(RUN, 80)
    assert lines == [
        "2026-11-28 14:40:24 · nvfp4ctl bench · kernels/sm90/nvfp4_gemm_sm90.cu@92559cbf",
        "    8b80b04 · NVIDIA H200 (sm_90) · exit 0",
        "    geomean 25.058±0.005 us; 128x7168x16384 52.561±0.018 | 128x4096x7168",
        "    20.310±0.009 us · nvfp4_gemm",
    ]


def test_a_cell_longer_than_a_line_breaks_between_its_words_only() -> None:
    lines = flow(RUN, 40)
    assert all(len(line) <= 40 or line.strip().count(" ") == 0 for line in lines)
    words = " ".join(line.strip() for line in lines).split(" ")
    for cell in RUN:
        for word in cell.split(" "):
            assert word in words, word  # every shape, time and hash whole
    assert all(line.startswith(INDENT) for line in lines[1:])


def test_a_word_longer_than_the_line_is_left_whole() -> None:
    assert flow(["2026-11-28 14:40:24", "kernels/sm90/nvfp4_gemm_sm90.cu@92559cbf"], 30) == [
        "2026-11-28 14:40:24",
        "    kernels/sm90/nvfp4_gemm_sm90.cu@92559cbf",
    ]


def test_wide_characters_count_as_the_columns_they_take() -> None:
    assert flow(["核函数核函数", "exit 0"], 18) == ["核函数核函数", "    exit 0"]  # 12 columns, not 6


def test_a_rows_cells_are_named_by_their_columns_and_empty_ones_left_out() -> None:
    assert labelled(["#", "shape", "", "max abs err"], ["3", "m=128 n=128 k=256", "x", ""]) == [
        "#: 3", "shape: m=128 n=128 k=256", "x"]


def test_a_cell_of_lines_keeps_them_each_on_a_line_as_written() -> None:
    """lint's examples are code: flowed between their words they lost their indentation, and a line break
    written as its escape (\\x0a) ran the lines together."""
    cells = labelled(["id", "bad", "good"], ["NV001", "def custom_kernel(data)\n    return data[6]", "x = 1"])
    expected = ["id: NV001", "    bad:", "        def custom_kernel(data)", "            return data[6]", "    good: x = 1"]
    assert flow(cells, 40) == expected
    assert flow(cells, None) == expected  # a pipe's: no line to fill, the cell's own lines kept
