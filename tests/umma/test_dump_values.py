"""`nvfp4ctl dump --umma` on the user's own values: decode, check against a stated config, simulate."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.umma.user_values import FieldStatus, check_idesc, make_config, parse_mma

GOOD_IDESC = "0x08200480"  # 128x128 kind::mxf4nvf4 block16, K-major
GOOD_A = "0x4000404000010040"  # SWIZZLE_128B, SBO 1024, start 0x400
GOOD_B = "0x4000404000010440"  # start 0x4400


def dump(*args: str):
    return CliRunner().invoke(app, ["dump", "--umma", *args])


def test_config_alone_prints_what_it_implies() -> None:
    result = dump("--mma", "128,256,64", "--swizzle", "64B")
    assert result.exit_code == 0, result.output
    assert "idesc 0x08400480 (implied)" in result.output
    assert "desc_b[0] 0x8000402000010000 (implied)" in result.output


def test_values_without_a_config_are_decoded_only() -> None:
    result = dump("--idesc", GOOD_IDESC)
    assert result.exit_code == 0, result.output
    assert "N=128" in result.output and "decoded (no --mma" in result.output


def test_a_wrong_field_names_the_value_it_should_have() -> None:
    result = dump("--mma", "128,128,64", "--idesc", "0x08100480", "--desc-a", "0x4000401000010040")
    assert result.exit_code == 1, result.output
    assert "1 mismatch" not in result.output  # two: n_dim and sbo
    assert "idesc.n_dim = 8, expected 16" in result.output
    assert "2 mismatches" in result.output


def test_every_mismatch_is_named_in_the_summary_and_the_run_log() -> None:
    """-q drops the table: a summary naming the first mismatch alone hid desc_b's from the screen and
    the run log."""
    from nvfp4ctl import runlog
    from nvfp4ctl.workspace import memory_path

    result = CliRunner().invoke(app, ["-q", "dump", "--umma", "--mma", "128,128,64", "--idesc", "0x08100480",
                                      "--desc-a", "0x4000404000010040", "--desc-b", "0x4000400100400440"])
    assert result.exit_code == 1, result.output
    named = "2 mismatches (idesc.n_dim = 8, expected 16; desc_b[0].sbo = 16 B, expected 1024 B)"
    assert result.output.strip().endswith(named), result.output
    assert runlog.read(memory_path())[-1].result.endswith(named)


def test_past_three_mismatches_the_summary_counts_the_rest() -> None:
    wrong_a = "0x0000000100400041"  # start, sbo, version and layout all wrong
    result = dump("--mma", "128,128,64", "--idesc", "0x08100480", "--desc-a", wrong_a)
    assert result.exit_code == 1, result.output
    summary = result.output.strip().splitlines()[-1]
    assert summary.count(", expected ") == 3 and summary.endswith(" more)"), summary


def test_field_verdicts_are_enum_members_shown_as_their_words() -> None:
    config = make_config("128,128,64", "mxf4nvf4", None, "K", "128B", 256)
    rows = {row.field: row for row in check_idesc(0x08100480, config).rows}
    assert rows["n_dim"].status is FieldStatus.MISMATCH and rows["n_dim"].bad
    assert rows["m_dim"].status is FieldStatus.OK and not rows["m_dim"].bad
    assert {row.status for row in check_idesc(0x08100480, None).rows} == {FieldStatus.DECODED}
    result = dump("--mma", "128,128,64", "--idesc", "0x08100480", "--json")
    fields = json.loads(result.output)["umma_values"]["descriptors"][0]["fields"]
    assert {f["field"]: f["status"] for f in fields}["n_dim"] == "MISMATCH"


def test_simulate_names_swapped_lbo_and_sbo_where_lbo_is_read() -> None:
    """With no swizzle the hardware reads LBO (the K stride of core matrices): a swap is both fields."""
    good_b = "0x0000400800800440"  # none: start 0x4400, lbo 2048 B (128 rows x 16 B), sbo 128 B
    swapped = "0x0000408000080040"  # start 0x400, lbo 128 B, sbo 2048 B
    result = dump("--idesc", GOOD_IDESC, "--desc-a", swapped, "--desc-b", good_b, "--swizzle", "none",
                  "--simulate", "--shape", "128,128,256")
    assert result.exit_code == 1, result.output
    assert "desc_a[0].lbo = 128 B, expected 2048 B" in result.output.splitlines()[-1], result.output
    assert "LBO and SBO swapped" in result.output
    assert "error map" in result.output


def test_lbo_of_a_swizzled_k_major_operand_is_no_difference_in_the_simulation() -> None:
    """The PTX ISA's swizzled K-major layouts have no LBO term (one MMA's 32 K bytes lie in one swizzle
    atom; CUTLASS writes 1): the static check marked it unused, while the simulation listed it as a
    difference and named an LBO/SBO swap its summary's count of one mismatch did not hold."""
    swapped = "0x4000400100400040"  # lbo 1024 B, sbo 16 B
    result = dump("--idesc", GOOD_IDESC, "--desc-a", swapped, "--desc-b", GOOD_B, "--simulate", "--shape", "128,128,256")
    assert result.exit_code == 1, result.output
    assert "desc_a.lbo" not in result.output and "LBO and SBO swapped" not in result.output, result.output
    assert "  differs: desc_a.sbo = 16 B, expected 1024 B (MMA 0,1,2,3)" in result.output.splitlines()
    assert "  explained by: desc_a.sbo = 16 B, expected 1024 B (MMAs 0,1,2,3)" + SWAP_HINT in result.output.splitlines()
    assert result.output.splitlines()[-1] == (
        "umma values: 3 descriptors checked against the config, 1 mismatch (desc_a[0].sbo = 16 B, expected 1024 B);"
        f" simulate: 15360 of 16384 wrong (desc_a.sbo = 16 B, expected 1024 B (MMAs 0,1,2,3){SWAP_HINT})"), result.output
    lbo_only = "0x4000404000400040"  # lbo 1024 B, everything else right: the hardware never reads it
    result = dump("--idesc", GOOD_IDESC, "--desc-a", lbo_only, "--desc-b", GOOD_B, "--simulate", "--shape", "128,128,256")
    assert result.exit_code == 0, result.output
    assert "model D equals the exact reference (16384 values)" in result.output


SWAP_HINT = ("; LBO and SBO look swapped: lbo = 1024 B is the SBO expected (LBO is ignored for SWIZZLE_128B,"
             " SBO must be 1024 B)")


@pytest.mark.parametrize("desc_a, hinted", [("0x4000400100400040", True),  # lbo 1024 B: the SBO expected
                                            ("0x4000400100800040", False),  # lbo 2048 B
                                            ("0x4000400100010040", False)])  # lbo 16 B, as CUTLASS writes it
def test_a_wrong_sbo_beside_an_lbo_holding_the_sbo_expected_is_hinted_as_a_swap(desc_a: str, hinted: bool) -> None:
    """A swizzled operand's LBO is no difference, so a swap of the two fields was explained by the SBO
    alone ("desc_a.sbo = 16 B, expected 1024 B") with the 1024 B sitting in the LBO unremarked; the hint
    names the swap and still counts LBO as no mismatch."""
    result = dump("--idesc", GOOD_IDESC, "--desc-a", desc_a, "--desc-b", GOOD_B, "--simulate", "--shape", "128,128,256")
    assert result.exit_code == 1, result.output
    explained = "  explained by: desc_a.sbo = 16 B, expected 1024 B (MMAs 0,1,2,3)"
    assert (explained + SWAP_HINT if hinted else explained) in result.output.splitlines(), result.output
    assert "look swapped" not in result.output or hinted, result.output
    assert "1 mismatch (desc_a[0].sbo = 16 B, expected 1024 B)" in result.output.splitlines()[-1]
    assert "desc_a.lbo" not in result.output and "differs: desc_a.lbo" not in result.output


@pytest.mark.parametrize("shape, line", [
    ("1,2", "error: --shape 1,2: expected M,N,K or M,N,K,L as positive integers, e.g. --shape 128,7168,16384"),
    ("64,128,256", "error: --shape 64,128,256: the tile needs M >= 128, N >= 128, K a multiple of the K tile 256"),
])
def test_a_shape_simulate_cannot_take_is_said_before_the_tables(shape: str, line: str) -> None:
    """It came under the descriptor tables, after every value was decoded and checked, as if they were the result."""
    result = dump("--mma", "128,128,64", "--idesc", GOOD_IDESC, "--simulate", "--shape", shape)
    assert result.exit_code == 2, result.output
    assert result.output == line + "\n", result.output


def test_simulate_passes_correct_values() -> None:
    result = dump("--idesc", GOOD_IDESC, "--desc-a", GOOD_A, "--desc-b", GOOD_B, "--tmem-sfa", "0x80",
                  "--tmem-sfb", "0x90", "--simulate", "--shape", "256,128,512", "--seed", "5")
    assert result.exit_code == 0, result.output
    assert "model D equals the exact reference (16384 values)" in result.output


def test_bad_hex_is_a_usage_error() -> None:
    result = dump("--idesc", "0xZZ")
    assert result.exit_code == 2
    assert "expected a hexadecimal value" in result.output


def test_a_zero_mma_shape_is_a_usage_error_not_a_crash() -> None:
    result = dump("--mma", "0,0,0", "--idesc", "0x1")
    assert result.exit_code == 2 and "K=0 (kind::mxf4nvf4 dense MMAs have K=64)" in " ".join(result.output.split())


@pytest.mark.parametrize("value", ["", "-5", " "])
def test_an_empty_or_negative_descriptor_is_a_usage_error(value: str) -> None:
    result = dump("--idesc", value)
    assert result.exit_code == 2 and "expected a hexadecimal value" in result.output


@pytest.mark.parametrize("major", ["K,K,K", "K,Q", "row"])
def test_a_major_that_is_not_one_or_two_of_k_and_mn_is_refused(major: str) -> None:
    result = dump("--mma", "128,128,64", "--major", major, "--idesc", GOOD_IDESC)
    assert result.exit_code == 2 and "(K or MN, or A,B)" in " ".join(result.output.split())


@pytest.mark.parametrize("args, why", [
    (["--kind", "bogus"], "read only with your own values"),  # nothing else to apply it to: never silently ignored
    (["--idesc", GOOD_IDESC, "--swizzle", "3B", "--block-k", "0"], "--swizzle, --block-k: the MMA config is read with --mma"),
])
def test_config_options_that_would_be_ignored_are_refused(args: list[str], why: str) -> None:
    result = dump(*args)
    assert result.exit_code == 2 and why in " ".join(result.output.split())


def test_from_log_names_its_own_option_when_the_log_has_no_lines(tmp_path) -> None:
    log = tmp_path / "run.log"
    log.write_text("nothing here\n")
    result = dump("--from-log", str(log))
    assert result.exit_code == 2 and f"--from-log {log}: no `nvfp4ctl:umma k=0 ...` line" in " ".join(result.output.split())


def test_more_values_than_k_steps_are_refused_not_dropped() -> None:
    steps = [f"0x40004040000100{0x40 + 2 * s:02x}" for s in range(5)]  # 5 for a 256-deep tile's 4 K steps
    result = dump("--mma", "128,128,64", "--idesc", GOOD_IDESC, *[arg for v in steps for arg in ("--desc-a", v)])
    assert result.exit_code == 2
    assert "--desc-a given 5 times; a K tile of 256 with MMA K=64 has 4 K steps" in " ".join(result.output.split())
    four = dump("--mma", "128,128,64", "--idesc", GOOD_IDESC, *[arg for v in steps[:4] for arg in ("--desc-a", v)])
    assert four.exit_code == 0 and "desc_a[3] 0x4000404000010046" in four.output


def test_the_readme_and_byo_kernel_simulate_examples_are_what_dump_prints() -> None:
    """Their example named an LBO/SBO swap the simulation no longer reports; each shown line is a line of the run."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    command = ("$ nvfp4ctl dump --umma --idesc 0x08200480 --desc-a 0x4000404000010040 --desc-b 0x4000400100400440"
               " --simulate --shape 128,128,512")
    printed = dump(*command.split()[4:]).output.splitlines()
    for doc in ("README.md", "docs/byo_kernel.md"):
        text = (root / doc).read_text(encoding="utf-8")
        shown = text.split(command + "\n", 1)[1].split("```", 1)[0].splitlines()
        lines = [line for line in shown if line.strip() != "..." and not line.startswith("$ ")]
        assert lines and all(line in printed for line in lines), (doc, [line for line in lines if line not in printed])


def test_the_simulate_summary_and_inits_run_log_hint_are_whole_lines(tmp_path, monkeypatch) -> None:
    """With NVFP4CTL_MEMORY set elsewhere, dump's summary ends its line and init's hint starts its own."""
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    simulated = dump("--idesc", GOOD_IDESC, "--desc-a", "0x4000404000010040", "--desc-b", "0x4000400100400440",
                     "--simulate", "--shape", "128,128,512")
    init = CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemm", str(tmp_path / "p")])
    assert simulated.exit_code == 1 and init.exit_code == 0, simulated.output + init.output
    both = simulated.output + init.output
    assert both.endswith("\n") and simulated.output.endswith("\n"), repr(simulated.output[-200:])
    lines = both.splitlines()
    summary = [line for line in lines if "umma values:" in line]
    hint = [line for line in lines if "runs are logged to" in line]
    assert len(summary) == 1 and summary[0].startswith("umma values: ") and summary[0].endswith("SBO must be 1024 B))")
    assert len(hint) == 1 and hint[0].startswith("runs are logged to "), lines[-6:]


SAME_START = "0x4000404000010000"  # SWIZZLE_128B, SBO 1024, start 0: given as both A's and B's
OVERLAP = ("A's and B's tiles overlap in shared memory: desc_a's 0x0..0x3fff (128 rows x 128 B) and desc_b's"
           " 0x0..0x3fff (128 rows x 128 B), so the load of one overwrites the other; give each its own buffer"
           " (B from 0x4000, past A's end)")


def test_a_and_b_tiles_at_one_address_are_named_by_the_field_check_and_the_simulation() -> None:
    """Every field of both descriptors is right for its own tile: the simulation said 16381 of 16384 wrong and
    "no single field explains it (see the differences above)", with no difference listed."""
    result = dump("--idesc", GOOD_IDESC, "--desc-a", SAME_START, "--desc-b", SAME_START, "--simulate",
                  "--shape", "128,128,512")
    said = " ".join(result.output.split())
    assert result.exit_code == 1, said
    assert "no single field explains it" not in said, said
    assert f"explained by: {OVERLAP}" in said, said
    assert f"1 mismatch ({OVERLAP}); simulate: 16381 of 16384 wrong ({OVERLAP})" in said, said


@pytest.mark.parametrize(("desc_b", "overlaps"), [
    ("0x4000404000010200", True),  # B from 0x2000: half of A's 0x0..0x3fff
    ("0x4000404000010400", False),  # B from 0x4000: right after A
])
def test_only_tiles_sharing_bytes_are_said_to_overlap(desc_b: str, overlaps: bool) -> None:
    result = dump("--mma", "128,128,64", "--idesc", GOOD_IDESC, "--desc-a", SAME_START, "--desc-b", desc_b)
    said = " ".join(result.output.split())
    assert ("tiles overlap in shared memory" in said) is overlaps, said
    assert result.exit_code == (1 if overlaps else 0), said
    if overlaps:
        assert "desc_a's 0x0..0x3fff (128 rows x 128 B) and desc_b's 0x2000..0x5fff (128 rows x 128 B)" in said, said


SIM = ("--simulate", "--shape", "128,128,512")


@pytest.mark.parametrize("sfb", ["0x80", "0x88"])
def test_overlapping_a_and_b_scales_are_named(sfb: str) -> None:
    """A's scales take 4 columns per K step, 128..143 over a 256-deep K tile: B's at 0x88 land inside."""
    result = dump("--idesc", GOOD_IDESC, "--desc-a", GOOD_A, "--desc-b", GOOD_B, "--tmem-d", "0",
                  "--tmem-sfa", "0x80", "--tmem-sfb", sfb, *SIM)
    assert result.exit_code == 1, result.output
    assert "0 mismatches" not in result.output
    assert "tmem_sfa's columns 128..143 (4 K steps x 4) and tmem_sfb's" in result.output
    assert "explained by: A's and B's scales overlap in TMEM" in result.output


def test_scales_past_tmem_count_every_k_step() -> None:
    result = dump("--idesc", GOOD_IDESC, "--desc-a", GOOD_A, "--desc-b", GOOD_B, "--tmem-d", "0",
                  "--tmem-sfa", "0x1fe", "--tmem-sfb", "0x90", *SIM)
    assert result.exit_code == 1, result.output
    assert "tmem_sfa: columns 510..525 run past TMEM's 512" in result.output


@pytest.mark.parametrize("tmem", [("--tmem-d", "0x200000"), ("--tmem-sfa", "0x1fe")])
def test_a_wrong_d_with_no_differing_field_points_at_something(tmem: tuple[str, str]) -> None:
    args = {"--tmem-d": "0", "--tmem-sfa": "0x80", "--tmem-sfb": "0x90"} | dict([tmem])
    result = dump("--idesc", GOOD_IDESC, "--desc-a", GOOD_A, "--desc-b", GOOD_B,
                  *[x for pair in args.items() for x in pair], *SIM)
    assert result.exit_code == 1, result.output
    assert "differs:" not in result.output
    assert "see the differences above" not in result.output
    assert "explained by: the model's refusal above" in result.output


def test_a_tile_off_the_pattern_boundary_needs_base_offset_0_in_both_checks() -> None:
    """TMA swizzles by the shared address itself, so the swizzle pattern repeats on absolute 1024-byte
    boundaries wherever the tile starts: base offset 0 (PTX ISA: non-zero only where the pattern itself
    starts off its boundary). The field check used to want (start >> 7) & 7 while the model, rightly,
    read the tile with 0."""
    at_0x480 = "0x4000404000010048"
    result = dump("--idesc", GOOD_IDESC, "--desc-a", at_0x480, "--desc-b", "0x4000404000010500", *SIM)
    assert result.exit_code == 0, result.output
    assert "0 mismatches" in result.output and "D equals the reference" in result.output
    with_offset = "0x4002404000010048"
    result = dump("--idesc", GOOD_IDESC, "--desc-a", with_offset, "--desc-b", "0x4000404000010500", *SIM)
    assert result.exit_code == 1, result.output
    assert "desc_a[0].base_offset = 1, expected 0" in result.output


@pytest.mark.parametrize("simulate", [("--mma", "128,128,64"), SIM])
def test_a_tile_start_off_128_bytes_is_the_kernels_mismatch(simulate: tuple[str, ...]) -> None:
    """No TMA box starts at 0x410: the field check passed it and --simulate called it a usage error (exit 2)."""
    result = dump("--idesc", GOOD_IDESC, "--desc-a", "0x4000404000010041", "--desc-b", GOOD_B, *simulate)
    assert result.exit_code == 1, result.output
    assert "desc_a[0].start 0x410 is not 128-byte aligned, so no TMA box can start there" in result.output
    assert "0 mismatches" not in result.output


def test_scale_addresses_of_later_k_steps_are_checked() -> None:
    """Every K step's scales sit 4 columns past the step before; --tmem-sfa given per K step was
    simulated but its K steps 1.. never field-checked (0 mismatches beside a wrong D)."""
    result = dump("--idesc", GOOD_IDESC, "--desc-a", GOOD_A, "--desc-b", GOOD_B, "--tmem-d", "0",
                  *[x for _ in range(4) for x in ("--tmem-sfa", "0x80")], "--tmem-sfb", "0x90", "--mma", "128,128,64")
    assert result.exit_code == 1, result.output
    assert "tmem_sfa[1].column = 128, expected 132 (4 columns a K step from K step 0's 128)" in result.output


def test_an_unaligned_start_gets_no_overlap_advice_reckoned_from_it() -> None:
    """0x410 beside B at 0x4400 was also "give each its own buffer (B from 0x4800, past A's end)"."""
    result = dump("--idesc", GOOD_IDESC, "--desc-a", "0x4000404000010041", "--desc-b", GOOD_B, "--mma", "128,128,64")
    assert result.exit_code == 1, result.output
    assert "1 mismatch (desc_a[0].start 0x410 is not 128-byte aligned" in result.output
    assert "overlap" not in result.output


@pytest.mark.parametrize("mma", ["128,,128,64", "128,128,64,", ",128,128,64", "128, ,128,64"])
def test_an_mma_with_an_empty_field_is_refused_not_dropped(mma: str) -> None:
    """The empty field was dropped, so the values were checked against another MMA than the one written."""
    result = dump("--mma", mma, "--idesc", GOOD_IDESC)
    assert result.exit_code == 2, result.output
    assert result.output == f"error: --mma {mma}: expected M,N,K, e.g. --mma 128,128,64\n", result.output


def test_an_mma_config_line_with_an_empty_field_is_refused(tmp_path) -> None:  # noqa: ANN001
    log = tmp_path / "b200.log"
    log.write_text(f"nvfp4ctl:umma config mma=128,,128,64\nnvfp4ctl:umma k=0 idesc={GOOD_IDESC} desc_a={GOOD_A}"
                   f" desc_b={GOOD_B}\n")
    result = dump("--from-log", str(log), "--shape", "128,128,512")
    assert result.exit_code == 2, result.output
    assert "128,,128,64: expected M,N,K" in result.output, result.output
    assert result.output.count("\n") == 1, result.output


def test_an_mma_with_spaces_around_its_separators_is_read() -> None:
    for mma in ("128, 128, 64", "128 x 128 x 64", "128 128 64"):
        assert parse_mma(mma) == (128, 128, 64), mma


def test_simulate_without_mma_runs_the_mma_the_idesc_encodes_not_the_shapes_n() -> None:
    """Config 0's idesc (128x64) under an N=7168 shape was checked as 128x128: `idesc.n_dim = 8, expected 16`
    and 8190 values wrong, though the values are right."""
    result = dump("--idesc", "0x08100480", "--desc-a", GOOD_A, "--desc-b", GOOD_B, "--simulate",
                  "--shape", "128,7168,256")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("config 128x64x64 kind::mxf4nvf4"), result.output
    assert "model D equals the exact reference (8192 values)" in result.output
    no_mma = dump("--idesc", "0x00000000", "--simulate", "--shape", "128,128,256")
    assert no_mma.exit_code == 2, no_mma.output
    assert "--simulate without --mma takes the MMA from --idesc 0x00000000 (0,0,64), which is not a valid" \
           " block-scaled MMA: M=0" in no_mma.output
    assert "Traceback" not in no_mma.output


def test_a_shape_too_large_to_simulate_is_said_before_the_tables(tmp_path) -> None:
    """The whole descriptor table came first, then the refusal (exit 2)."""
    result = dump("--mma", "128,128,64", "--idesc", GOOD_IDESC, "--simulate", "--shape", "128000000,128000,5120000")
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: m=128000000 n=128000 k=5120000: too large:"), result.output
    assert result.output.count("\n") <= 2, result.output  # the one line, however wrapped
    log = tmp_path / "b200.log"
    log.write_text(f"nvfp4ctl:umma k=0 idesc={GOOD_IDESC} desc_a={GOOD_A} desc_b={GOOD_B}\n")
    from_log = dump("--from-log", str(log), "--shape", "128000000,128000,5120000")
    assert from_log.exit_code == 2, from_log.output
    assert from_log.output.startswith("error: m=128000000 n=128000 k=5120000: too large:"), from_log.output


@pytest.mark.parametrize("mma, kind, atom", [("64,128,64", "mxf4nvf4", "SM100_MMA_MXF4_SS"),
                                             ("256,128,64", "mxf4nvf4", "SM100_MMA_MXF4_SS"),
                                             ("64,128,32", "mxf8f6f4", "SM100_MMA_MXF8F6F4_SS")])
def test_a_block_scaled_mma_of_another_m_than_128_is_refused_with_its_source(mma: str, kind: str, atom: str) -> None:
    """M=64 and M=256 passed (exit 0): CUTLASS's one-CTA block-scaled atoms static_assert M == 128."""
    result = dump("--mma", mma, "--kind", kind, "--idesc", GOOD_IDESC)
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert f"M={mma.split(',')[0]} (a block-scaled cta_group::1 MMA has M=128 alone: CUTLASS's {atom}" \
           " static_asserts M == 128" in flat


def test_simulate_with_batches_says_it_simulates_batch_0_and_counts_that_batchs_tile() -> None:
    """--shape M,N,K,L: L was dropped (the inputs made for one batch) and the count read as the whole
    shape's; batch 0 of the L-batch inputs is simulated now, and the header and summary say so."""
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.problems.base import make_case
    from nvfp4ctl.umma import diagnose, plan
    from nvfp4ctl.umma.user_values import UserValues, simulation_plan

    wrong_b = "0x4000400100400440"  # B's SBO 16 B where 1024 B is expected
    result = dump("--idesc", GOOD_IDESC, "--desc-a", GOOD_A, "--desc-b", wrong_b, "--no-cute",
                  "--simulate", "--shape", "128,128,512,2")
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert any(line.startswith("simulate: m=128 n=128 k=512 l=2 seed 1111, output tile (0, 0) 128x128")
               for line in lines), result.output
    assert "  batch 0 only of 2: every batch runs the same MMAs, each on its own data" in lines

    config = make_config("128,128,64", "mxf4nvf4", None, "K", "128B", 256)
    tile, issues, _ = simulation_plan(config, UserValues(idesc=int(GOOD_IDESC, 16), desc_a=(int(GOOD_A, 16),),
                                                         desc_b=(int(wrong_b, 16),)), 2)
    data = get_problem("nvfp4_gemm").make_input(make_case(m=128, n=128, k=512, l=2, seed=1111), device="cpu")
    inputs = plan.tile_inputs(data, tile, 0, 0, batch=0)
    model_d, _ = diagnose.run_model(tile, inputs, issues)
    compared = diagnose.Simulation(tile, model_d, diagnose.tile_reference(inputs), None, None).bad
    assert f"; simulate: {int(compared.sum())} of {compared.numel()} wrong in batch 0 of 2 (" in lines[-1], lines[-1]


def test_simulate_with_one_batch_words_its_counts_as_before() -> None:
    result = dump("--idesc", GOOD_IDESC, "--desc-a", GOOD_A, "--desc-b", GOOD_B, "--no-cute",
                  "--simulate", "--shape", "128,128,256,1")
    assert result.exit_code == 0, result.output
    assert "batch 0" not in result.output and " l=" not in result.output, result.output
    assert result.output.splitlines()[-1].endswith("simulate: D equals the reference (16384 values)"), result.output


def test_from_log_with_batches_simulates_batch_0_of_that_many(tmp_path) -> None:  # noqa: ANN001
    """--from-log took M,N,K,L and made the inputs for one batch, as --simulate did."""
    log = tmp_path / "b200.log"
    log.write_text(f"nvfp4ctl:umma k=0 idesc={GOOD_IDESC} desc_a={GOOD_A} desc_b={GOOD_B}\n")
    result = dump("--from-log", str(log), "--shape", "128,128,256,2")
    assert "  batch 0 only of 2: every batch runs the same MMAs, each on its own data" in result.output.splitlines()
    assert " in batch 0 of 2" in result.output.splitlines()[-1], result.output


@pytest.mark.parametrize("field, message", [
    ("block_k=0", "block_k=0 (a positive multiple of the MMA K 64)"),
    ("swizzle=96B", "swizzle=96B (one of"),
    ("kind=mxf9", "error: kind=mxf9: expected one of"),
])
def test_a_config_line_mistake_names_the_lines_field_not_a_flag(tmp_path, field: str, message: str) -> None:  # noqa: ANN001
    """A logged `block_k=0` was reported as `--block-k 0`, a flag the user never typed."""
    log = tmp_path / "b200.log"
    log.write_text(f"nvfp4ctl:umma config mma=128,128,64 {field}\nnvfp4ctl:umma k=0 idesc={GOOD_IDESC}"
                   f" desc_a={GOOD_A} desc_b={GOOD_B}\n")
    result = dump("--from-log", str(log), "--shape", "128,128,512")
    flat = " ".join(result.output.split())
    assert result.exit_code == 2 and message in flat and "--" not in flat.partition("error:")[2], result.output
    assert field.startswith("kind") or "error: the kernel's config line is not a valid block-scaled MMA:" in flat
