"""ptxas -v parsing and the SASS tensor-core op check (text captured from nvcc 13.0 / cuobjdump 13)."""

from __future__ import annotations

from pathlib import Path

from nvfp4ctl.build.kernel_names import readable_name, readable_names
from nvfp4ctl.build.report import BuildReport, TensorOpCheck
from nvfp4ctl.build.resources import check_tensor_op, parse_ptxas, tensor_ops

PTXAS_LOG = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z4gemmPKhS0_P6__half' for 'sm_90a'
ptxas info    : Function properties for _Z4gemmPKhS0_P6__half
    24 bytes stack frame, 16 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 168 registers, used 1 barriers, 1024 bytes smem, 392 bytes cmem[0]
ptxas info    : Function properties for _Z6helperv
    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z9zero_fillP6__halfx' for 'sm_90a'
ptxas info    : Function properties for _Z9zero_fillP6__halfx
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
"""

SASS_SM90 = """\
        /*0060*/                   HGMMA.64x128x16.F32 R24, gdesc[UR4], RZ, !UPT, gsb0 ;  /* 0x00000000041879f0 */
        /*0070*/              @P0  HGMMA.64x128x16.F32 R24, gdesc[UR8], R24, gsb0 ;  /* 0x00000000041879f0 */
        /*0080*/                   STL.64 [R1], R2 ;  /* 0x0000000201007387 */
"""
SASS_SM100 = "        /*00d0*/                   UTCOMMA.4X gdesc[UR14], gdesc[UR16], tmem[UR12], tmem[UR4], idesc[UR5], tmem[UR10], UP0 ;\n"
SASS_SM100_BLOCK32 = "        /*00d0*/                   UTCOMMA gdesc[UR14], gdesc[UR16], tmem[UR12], tmem[UR4], idesc[UR5], tmem[UR10], UP0 ;\n"


def test_parse_ptxas_per_function() -> None:
    gemm, helper, zero = parse_ptxas(PTXAS_LOG)
    assert (gemm.name, gemm.entry, gemm.registers, gemm.shared_bytes) == ("_Z4gemmPKhS0_P6__half", True, 168, 1024)
    assert (gemm.stack_bytes, gemm.spill_stores, gemm.spill_loads) == (24, 16, 8)
    assert (helper.entry, helper.registers, helper.stack_bytes) == (False, 0, 8)
    assert (zero.entry, zero.registers, zero.shared_bytes) == (True, 8, 0)


def test_tensor_ops_are_read_from_sass_opcodes() -> None:
    assert tensor_ops(SASS_SM90) == ("HGMMA.64x128x16.F32",)
    assert check_tensor_op("sm_90a", SASS_SM90).present
    assert check_tensor_op("sm_100a", SASS_SM100).present
    assert not check_tensor_op("sm_100a", SASS_SM90).present


def test_block32_utcomma_is_not_nvfp4() -> None:
    check = check_tensor_op("sm_100a", SASS_SM100_BLOCK32)
    assert check.checked and not check.present and check.found == ("UTCOMMA",)


def test_unreadable_sass_is_reported_as_unchecked() -> None:
    check = check_tensor_op("sm_90a", None)
    assert not check.checked and not check.present and check.expected == "HGMMA"


def test_readable_names() -> None:
    assert readable_name("_Z9zero_fillP6__halfx") == "zero_fill"
    assert readable_name("_ZN4tiny5chainEPfPKfi") == "tiny::chain"
    assert readable_name("plain_c_name") == "plain_c_name"
    # template arguments: literals, bools, substitutions (S_ = nvfp4_sm90 / nvfp4_sm100_tc)
    assert (readable_name("_ZN10nvfp4_sm9022nvfp4_gemm_sm90_kernelILi1ELb1ELb0ELb0ELb0ELi192EEEv14CUtensorMap_stS1_S1_")
            == "nvfp4_sm90::nvfp4_gemm_sm90_kernel<1, true, false, false, false, 192>")
    assert (readable_name("_ZN14nvfp4_sm100_tc26nvfp4_gemm_sm100_tc_kernelINS_10TileConfigILi64ELi8EEEEEv14CUtensorMap_stS3_")
            == "nvfp4_sm100_tc::nvfp4_gemm_sm100_tc_kernel<TileConfig<64, 8>>")
    assert (readable_name("_ZN52_GLOBAL__N__07b2d190_19_nvfp4_gemv_naive_cu_78e18e4811gemv_kernelE13Nvfp4GemvArgs")
            == "(anonymous namespace)::gemv_kernel")
    # a pack (J...E), a substituted template given arguments (S1_I...E), an enum literal
    assert (readable_name("_ZN4cute6kernelINS_5tupleIJiiEEENS_4wrapIS1_ILNS_4ModeE3EEEEEEvv")
            == "cute::kernel<tuple<int, int>, wrap<tuple<(Mode)3>>>")
    assert readable_name("_ZN1n1kIXadL_Z1fvEEEEvv") == "n::k<&(f())>"  # an expression as argument


def test_long_template_arguments_fold_from_the_inside() -> None:
    mangled = "_ZN1n1kINS_1AINS_1BINS_1CILi1ELi2EEEEEEENS_1DILi3EEEEEvv"  # n::k<A<B<C<1, 2>>>, D<3>>
    assert readable_name(mangled) == "n::k<A<B<C<1, 2>>>, D<3>>"
    assert readable_name(mangled, width=16) == "n::k<A<B<C<…>>>, D<3>>"
    assert readable_name(mangled, width=15) == "n::k<A<B<…>>, D<3>>"
    assert readable_name(mangled, width=10) == "n::k<A<…>, D<…>>"
    assert readable_name(mangled, width=5) == "n::k<A<…>…>"


def test_a_symbol_cfilt_cannot_read_keeps_its_name_and_says_it_has_arguments(monkeypatch) -> None:
    assert readable_name("_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalE") == "cutlass::device_kernel<…>"
    monkeypatch.setattr("shutil.which", lambda name: None)  # no binutils: the names still read
    assert readable_name("_ZN1n1kIXadL_Z2fvEEEEvv") == "n::k<…>"


CUTLASS_FIVE_STAGES = (
    "_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalIN4cute5tupleIJiiiiEEENS1_10collective1"
    "3CollectiveMmaINS1_46MainloopSm100TmaUmmaWarpSpecializedBlockScaledILi5ELi2ELi2ENS5_IJNS4_1CILi1"
    "EEESB_SB_EEEEENS5_IJNSA_ILi128EEESE_NSA_ILi256EEEEEENS5_IJNS_12float_e2m1_tENS_13float_ue4m3_tEE"
    "EENS5_IJNS5_IJlSB_lEEENS4_6LayoutINS5_IJNS5_IJNS5_IJNSA_ILi32EEENSA_ILi4EEEEEEiEEENS5_IJNS5_IJNS"
    "A_ILi16EEESN_EEEiEEENS5_IJSB_iEEEEEENS5_IJSS_NS5_IJNS5_IJNSA_ILi0EEESB_EEENSA_ILi512EEEEEENS5_IJ"
    "SV_iEEEEEEEEEEESJ_S12_NS4_8TiledMMAINS4_8MMA_AtomIJNS4_17SM100_MMA_MXF4_SSISH_SH_fSI_Li128ELi128"
    "ELi16ELNS4_4UMMA5MajorE0ELS17_0ELNS16_7ScaleInE0ELS18_0EEEEEENSL_ISC_NS5_IJSV_SV_SV_EEEEENS5_IJN"
    "S4_10UnderscoreES1D_S1D_EEEEENS5_IJNS4_13SM90_TMA_LOADES1G_EEENS5_IJNS4_14ComposedLayoutINS4_7Sw"
    "izzleILi3ELi4ELi3EEENS4_18smem_ptr_flag_bitsILi4EEENSL_INS5_IJNSA_ILi8EEESF_EEENS5_IJSF_SB_EEEEE"
    "EENSL_INS5_IJNS5_IJNS5_IJSO_SB_EEESR_EEESB_NS5_IJSB_SN_EEEEEENS5_IJNS5_IJNS5_IJSR_SX_EEESW_EEESV"
    "_NS5_IJSN_SX_EEEEEEEEEEEvNS4_8identityES1H_S21_vS22_EENS_8epilogue10collective18CollectiveEpilog"
    "ueINS24_23Sm100TmaWarpSpecializedILi4ELi2ELi32ELb0ELb1EEEJSG_NS5_IJNSL_ISE_SB_EENSL_ISM_SB_EEEEE"
    "vSK_NS_6half_tESK_NS24_6fusion15FusionCallbacksIS28_NS2D_17LinearCombinationIS2C_fvfLNS_15FloatR"
    "oundStyleE2EEESG_S2B_JEEENS4_5SM1004TMEM4LOAD26SM100_TMEM_LOAD_32dp32b32xES1G_NS1I_INS1J_ILi2ELi"
    "4ELi3EEENS1L_ILi16EEENSL_INS5_IJS1N_SM_EEENS5_IJSM_SB_EEEEEEENS4_39AutoVectorizingCopyWithAssume"
    "dAlignmentILi128EEENS4_14SM90_TMA_STOREES2S_S2U_S2U_EEEvvEEEEvNT_6ParamsE"
)  # the 5-stage instantiation of kernels/sm100/nvfp4_gemm_sm100.cu, from ptxas


def test_names_past_cfilts_default_recursion_limit_are_read() -> None:
    """CUTLASS's kernel names (1500 characters) need c++filt -r; without it both instantiations
    read `cutlass::device_kernel<…>`."""
    mangled = CUTLASS_FIVE_STAGES
    assert readable_name(mangled).startswith("cutlass::device_kernel<GemmUniversal<")


def test_instantiations_that_would_read_alike_show_where_they_differ() -> None:
    """A build table lists every instantiation on its own row; folded at the usual width CUTLASS's
    two read `cutlass::device_kernel<GemmUniversal<…>>` alike. The groups on the way to their first
    difference stay open, the rest folds; names that differ only in their parameters are numbered."""
    a = "_ZN1n1kINS_1AINS_1BINS_1CILi1ELi2EEEEEEENS_1DILi3EEEEEvv"  # n::k<A<B<C<1, 2>>>, D<3>>
    b = "_ZN1n1kINS_1AINS_1BINS_1CILi1ELi5EEEEEEENS_1DILi3EEEEEvv"  # n::k<A<B<C<1, 5>>>, D<3>>
    d = "_ZN1n1kINS_1AINS_1BINS_1CILi1ELi2EEEEEEENS_1DILi4EEEEEvv"  # n::k<A<B<C<1, 2>>>, D<4>>
    assert readable_name(a, width=10) == readable_name(b, width=10) == "n::k<A<…>, D<…>>"
    assert readable_names([a, b, a], width=10) == ["n::k<A<B<C<1, 2>>>, …>", "n::k<A<B<C<1, 5>>>, …>", "n::k<A<B<C<1, 2>>>, …>"]
    assert readable_names([a, d], width=10) == ["n::k<A<…>, D<3>>", "n::k<A<…>, D<4>>"]
    assert readable_names([a, "_Z9zero_fillP6__halfx"], width=10) == ["n::k<A<…>, D<…>>", "zero_fill"]  # alone: as before
    by_int, by_float = "_ZN1n1kINS_1AILi1EEEEEvi", "_ZN1n1kINS_1AILi1EEEEEvf"  # n::k<A<1>>(int) and (float)
    assert readable_names([by_int, by_float]) == ["n::k<A<1>> #1", "n::k<A<1>> #2"]
    assert readable_names(["_Z4kerni", "_Z4kernf"]) == ["kern #1", "kern #2"]  # overloads of a plain function
    one, seven_int, seven_float = "_ZN1n1kINS_2InILi1EEEEEvi", "_ZN1n1kINS_2InILi7EEEEEvi", "_ZN1n1kINS_2InILi7EEEEEvf"
    assert readable_names([one, seven_int, seven_float], width=3) == ["n::k<In<1>>", "n::k<In<7>> #1", "n::k<In<7>> #2"]


def test_cutlass_instantiations_read_apart() -> None:
    five = CUTLASS_FIVE_STAGES
    four = five.replace("BlockScaledILi5ELi2ELi2E", "BlockScaledILi4ELi2ELi2E")
    assert readable_names([five, four]) == [
        "cutlass::device_kernel<GemmUniversal<tuple<…>, CollectiveMma<MainloopSm100TmaUmmaWarpSpecializedBlockScaled<5, …>, …>, …>>",
        "cutlass::device_kernel<GemmUniversal<tuple<…>, CollectiveMma<MainloopSm100TmaUmmaWarpSpecializedBlockScaled<4, …>, …>, …>>",
    ]


# `ptxas -v` of one nvcc run with -gencode for sm_90a and sm_100a: a run per arch, each its own figures
TWO_ARCH_LOG = """\
ptxas info    : 0 bytes gmem
ptxas info    : Function properties for _Z6helperv
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z1kv' for 'sm_90a'
ptxas info    : Function properties for _Z1kv
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 90 registers, used 1 barriers, 2048 bytes smem, 352 bytes cmem[0]
ptxas info    : 0 bytes gmem
ptxas info    : Function properties for _Z6helperv
    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z1kv' for 'sm_100a'
ptxas info    : Function properties for _Z1kv
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 128 registers, used 1 barriers, 4096 bytes smem, 896 bytes cmem[0]
"""


def test_each_arch_of_one_nvcc_run_keeps_its_own_figures() -> None:
    """The sm_100a run's figures overwrote the sm_90a run's under one name: a unit of two archs showed one
    arch's registers and spills, without saying which."""
    functions = parse_ptxas(TWO_ARCH_LOG)
    figures = [(f.arch, f.name, f.entry, f.registers, f.shared_bytes, f.stack_bytes, f.spill_stores) for f in functions]
    assert figures == [("sm_90a", "_Z6helperv", False, 0, 0, 16, 0), ("sm_90a", "_Z1kv", True, 90, 2048, 0, 0),
                       ("sm_100a", "_Z6helperv", False, 0, 0, 8, 0), ("sm_100a", "_Z1kv", True, 128, 4096, 8, 4)]


def test_a_log_of_one_arch_names_it_on_every_function() -> None:
    assert {f.arch for f in parse_ptxas(PTXAS_LOG)} == {"sm_90a"}


def test_the_spill_problem_of_a_unit_of_two_archs_names_the_arch_that_spills() -> None:
    report = BuildReport(source=Path("g.cu"), arch="sm_90a", key="k", entry=Path("."), module_name=None,
                         functions=parse_ptxas(TWO_ARCH_LOG), compile_s=1.0,
                         tensor_op=TensorOpCheck(expected="-", found=(), match=None, checked=True))
    assert report.problems()[0] == "register spills in k on sm_100a (4 B stores, 4 B loads)"
