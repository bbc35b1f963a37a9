"""How an arch is named: nvcc's arch options, TORCH_CUDA_ARCH_LIST entries, the instructions of device code that
need an arch-specific target (sm_100a, sm_90a), and how a submission names one for torch's compile."""

from __future__ import annotations

import re

from nvfp4ctl.condition_value import Macros
from nvfp4ctl.errors import UsageError
from nvfp4ctl.preprocessor import live_code

# an arch option as nvcc reads it, at the start of a word (-DX=-arch=sm_90a is a define): searched in the
# flags' words joined with spaces, so `-gencode arch=...` and `-arch sm_90a` count too; nvcc takes a -gencode's
# values quoted too (-gencode=arch=compute_100a,code="compute_100a", a quote the shell left in the word)
ARCH_FLAG = re.compile(r"(?<!\S)(?:(?:-gencode|--generate-code)[= ]?[\"']?arch=[\"']?compute_(\w+)[\"']?,"
                       r"code=[\"']?\[?(?:sm|compute)_(\w+)[\"']?)"
                       r"|(?<!\S)(?:(?:-arch|--gpu-architecture)[= ]?(?:sm|compute)_(\w+))")
# nvcc 13.0's arch where no option names one: `nvcc --dryrun` runs ptxas -arch=sm_75, the first entry of
# `nvcc --list-gpu-code` (13.0 dropped the older ones)
NVCC_DEFAULT_ARCH = "sm_75"
_ARCH_LIST_ENTRY = re.compile(r"(\d+)\.(\d+a?)(?:\+PTX)?")
# nvcc's arch options whose arch build cannot know: the GPU of the machine nvcc runs on, every arch it
# knows; and -code without -arch, which nvcc refuses ("-arch option not specified")
MACHINE_ARCH_VALUES = ("native", "all", "all-major")
_ARCH_VALUE = re.compile(r"(?<!\S)(?:-arch|--gpu-architecture)[= ](\S+)")
_NATIVE_WORD = re.compile(r"(-arch|--gpu-architecture)=?native")
_BARE_ARCH_WORD = re.compile(r"-arch|--gpu-architecture")
# the SASS targets of nvcc 13.0's -arch=all and -arch=all-major (`nvcc -arch=all --dryrun`)
ALL_ARCHES = ("sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_100", "sm_103", "sm_110", "sm_120",
              "sm_121")
ALL_MAJOR_ARCHES = ("sm_75", "sm_80", "sm_90", "sm_100", "sm_110", "sm_120")
_ARCH_OPTION = re.compile(r"(?<!\S)(?:-arch|--gpu-architecture)(?:[= ]|$)")
_CODE_OPTION = re.compile(r"(?<!\S)(?:-code|--gpu-code)[= ]?\S+")
# -code's list, as one word (-code=sm_100a,compute_100a) or the next (-code compute_100a); every -code adds to it
_CODE_VALUES = re.compile(r"(?<!\S)(?:-code|--gpu-code)(?:=|\s+)(\S+)")
# a -gencode with its whole code= list (code=sm_100a, code=[sm_100a,compute_100a]): only an sm_ entry is SASS,
# a compute_ one is PTX, which ptxas assembles only where the program runs
_GENCODE_CODES = re.compile(r"(?<!\S)(?:-gencode|--generate-code)[= ]?[\"']?arch=[\"']?compute_\w+[\"']?,code=(\S+)")
# the options that name what nvcc compiles for, and -gencode's own arch=/code= (a flag of its own after a
# bare -gencode); a folder or define that merely holds the letters (-I.../cute/arch) names none
_ARCH_OPTION_NAMES = r"-arch|--gpu-architecture|-gencode|--generate-code|-code|--gpu-code"
_NAMES_AN_ARCH = re.compile(rf"(?<!\S)(?:(?:{_ARCH_OPTION_NAMES})(?=[= ]|$)|(?:arch|code)=)")
_BARE_ARCH_OPTION = re.compile(rf"\s*(?:{_ARCH_OPTION_NAMES})\s*")
# the GPU GPU MODE's NVFP4 problems run on, and the TORCH_CUDA_ARCH_LIST torch makes of it where nothing
# names an arch (_get_cuda_arch_flags: the visible GPU's capability, plus PTX)
LEADERBOARD_GPU = "B200"
LEADERBOARD_GPU_ARCH = ("10.0+PTX", "sm_100")
TCGEN05 = re.compile(r"\btcgen05\.|\bUTCCP|SM100_MMA_|Sm100\b|cutlass::arch::Sm100")
WGMMA = re.compile(r"\bwgmma\.|SM90_64x|cutlass::arch::Sm90\b")


# each arch-specific target, what its instructions are called, and how they are found in device code
TENSOR_INSTRUCTIONS = (("sm_100a", "tcgen05 / SM100 instructions", TCGEN05), ("sm_90a", "wgmma / SM90 instructions", WGMMA))
# the arch macros nvcc 13.0 defines in a device pass (checked with `#if defined(...)` compiled for sm_90a and
# sm_100a): __CUDA_ARCH__ always, the three others for an arch-specific target (sm_90a, sm_100a) alone
_ARCH_SPECIFIC_MACROS = re.compile(r"__CUDA_ARCH_SPECIFIC__|__CUDA_ARCH_FAMILY_SPECIFIC__|__CUDA_ARCH_FEAT_\w+")


def device_pass_macros(arch: str) -> Macros:
    """The arch macros of nvcc's device pass for `arch` (sm_90a: __CUDA_ARCH__ 900, __CUDA_ARCH_SPECIFIC__ 900,
    __CUDA_ARCH_FAMILY_SPECIFIC__ 900, __CUDA_ARCH_FEAT_SM90_ALL), the others of their kind known undefined."""
    number = arch.removeprefix("sm_").rstrip("af")
    value = int(number) * 10
    values = {"__CUDA_ARCH__": value}
    if arch.endswith("a"):
        values.update({"__CUDA_ARCH_SPECIFIC__": value, "__CUDA_ARCH_FAMILY_SPECIFIC__": value,
                       f"__CUDA_ARCH_FEAT_SM{number}_ALL": 1})
    elif arch.endswith("f"):
        values["__CUDA_ARCH_FAMILY_SPECIFIC__"] = value
    return Macros(values=values, undefined=_ARCH_SPECIFIC_MACROS)


def code_needs(code: str) -> tuple[str, str] | None:
    """(arch-specific target, what in the code needs it) of device code: tcgen05 / SM100 -> sm_100a,
    wgmma / SM90 -> sm_90a; None for code any arch of its family assembles. Only what nvcc compiles
    counts: an instruction named in a comment (`// TODO: use tcgen05.mma`) or an `#if 0` group is none,
    one in a string literal is (PTX is written in asm("...") strings). Read as one arch's device pass
    compiles it (`#if __CUDA_ARCH__ >= 1000` holding none for sm_90a): tensor_code_use."""
    return live_code_needs(live_code(code))


def live_code_needs(compiled: str) -> tuple[str, str] | None:
    """code_needs of code live_code has already read."""
    for target, what, instructions in TENSOR_INSTRUCTIONS:
        if instructions.search(compiled):
            return target, what
    return None


def naming_the_arch(arch: str) -> str:
    """How a submission names an arch-specific target (sm_100a) for torch's compile: the flag, or the
    TORCH_CUDA_ARCH_LIST entry, set before the call."""
    number = arch.removeprefix("sm_").removesuffix("a")
    return (f'extra_cuda_cflags=["{gencode_flag(arch)}"], or'
            f' os.environ["TORCH_CUDA_ARCH_LIST"] = "{number[:-1]}.{number[-1]}a" before the call')


def gencode_flag(arch: str) -> str:
    """The nvcc flag that compiles for `arch` (sm_100a) and nothing else."""
    number = arch.removeprefix("sm_")
    return f"-gencode=arch=compute_{number},code=sm_{number}"


def names_an_arch(flag: str, previous: str | None) -> bool:
    """Whether one of a list's flags names the arch: an arch option (-arch=sm_100a, -gencode=arch=...,
    --gpu-architecture sm_90a), or the value of a bare one before it (-arch, then sm_100a)."""
    return bool(_NAMES_AN_ARCH.search(flag)) or (previous is not None and bool(_BARE_ARCH_OPTION.fullmatch(previous)))


def named_arch(words: list[str]) -> tuple[str, str] | None:
    """(arch, the option as written) of the first arch option among nvcc's words that nvcc uses, else None
    (_used_arch_options)."""
    used = _used_arch_options(words)
    return used[0] if used else None


def named_arches(words: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(every arch, every option as written) of the arch options among nvcc's words that nvcc uses, else None:
    one nvcc run compiles them all (-gencode for sm_90a and -gencode for sm_100a: both)."""
    used = _used_arch_options(words)
    if not used:
        return None
    return tuple(dict.fromkeys(arch for arch, _ in used)), tuple(option for _, option in used)


def ptx_alone_arches(words: list[str]) -> frozenset[str]:
    """The archs of named_arches that nvcc compiles to PTX alone, with no SASS for build to check: none of the
    codes its options compile is an sm_ one (-gencode=arch=compute_100a,code=compute_100a; -arch=compute_100a
    without -code, which nvcc reads as code=compute_100a; -arch=sm_100a -code=compute_100a). With -code, its
    list is what -arch compiles; without, -arch=sm_100a compiles sm_100a's SASS. PTX and SASS of one arch are
    different builds."""
    line = " ".join(words)
    code_option = [code for match in _CODE_VALUES.finditer(line) for code in _code_list(match.group(1))]
    named: dict[str, bool] = {}  # arch -> whether an option compiles its SASS
    last_arch = max((match.start() for match in ARCH_FLAG.finditer(line) if match.group(3) is not None), default=None)
    for match in ARCH_FLAG.finditer(line):
        if match.group(3) is not None and match.start() != last_arch:
            continue  # an -arch a later one replaces (_used_arch_options)
        if match.group(3) is None:
            codes = _GENCODE_CODES.match(line, match.start())
            listed = _code_list(codes.group(1)) if codes is not None else [f"sm_{match.group(2)}"]
        else:
            listed = code_option or [match.group(0).rsplit("=", 1)[-1].split()[-1]]
        sass = any(code.startswith("sm_") for code in listed)
        arch = f"sm_{next(group for group in match.groups() if group)}"
        named[arch] = named.get(arch, False) or sass
    used = named_arches(words)
    return frozenset(arch for arch in (used[0] if used else ()) if not named.get(arch, True))


def _code_list(value: str) -> list[str]:
    """The codes of a -code value or a -gencode's code= (sm_100a,compute_100a; [sm_100a,compute_100a];
    "compute_100a"), as nvcc reads them."""
    return [code.strip("\"'[] ") for code in value.strip("\"'[]").split(",") if code.strip("\"'[] ")]


def _used_arch_options(words: list[str]) -> list[tuple[str, str]]:
    """(arch, the option as written) of each arch option among nvcc's words that nvcc uses, in order.
    nvcc uses the last -arch/--gpu-architecture (it warns "incompatible redefinition" and drops the others):
    `-arch=sm_90a -arch=sm_100a` compiles sm_100a, and `-arch=sm_100a -arch=native` names none; every
    -gencode counts."""
    line = " ".join(words)
    named = list(ARCH_FLAG.finditer(line))
    last_arch = max([match.start() for match in _ARCH_VALUE.finditer(line)]
                    + [match.start() for match in named if match.group(3) is not None], default=None)
    used: list[tuple[str, str]] = []
    for match in named:
        if match.group(3) is not None and match.start() != last_arch:
            continue  # an -arch a later one replaces
        number = next(group for group in match.groups() if group)
        used.append((f"sm_{number}", match.group(0)))
    return used


def arch_list_arches(arch_list: str, where: str) -> tuple[str, ...]:
    """Every arch of a TORCH_CUDA_ARCH_LIST as torch reads it (_get_cuda_arch_flags: each space made a ;,
    then split at ;, each entry compiled): "10.0" is sm_100 and "10.0a" sm_100a (tcgen05 and wgmma need
    the a), "+PTX" adds PTX to it. `where` is the file:line of the setting, for the refusals."""
    entries = arch_list.replace(" ", ";").split(";")
    if "" in entries:
        # "10.0a; 9.0a", "10.0a;" and "10.0a  9.0a" hold an empty entry, which torch refuses: split at
        # blanks, they built every arch as if torch would
        place = _empty_entry_place(entries)
        raise UsageError(f'{where}: TORCH_CUDA_ARCH_LIST="{arch_list}" holds an empty entry {place}:'
                         " torch makes each space a ; and splits at ;, and stops on it (_get_cuda_arch_flags:"
                         " ValueError: Unknown CUDA arch ()); separate the archs with one ; or one space")
    arches: list[str] = []
    for item in entries:
        entry = _ARCH_LIST_ENTRY.fullmatch(item)
        if entry is None:
            raise UsageError(f"{where}: TORCH_CUDA_ARCH_LIST={arch_list}: build reads entries such as 10.0a or 9.0a+PTX,"
                             f" not {item}; write the arch's number")
        arches.append(f"sm_{entry.group(1)}{entry.group(2)}")
    return tuple(dict.fromkeys(arches))


def _empty_entry_place(entries: list[str]) -> str:
    """Where the first empty entry of a split TORCH_CUDA_ARCH_LIST is, as a message says it."""
    named = [entry for entry in entries if entry]
    if not named:
        return "and no arch"
    at = entries.index("")
    if at == 0:
        return f"before {named[0]}"
    if not any(entries[at + 1:]):
        return f"after {entries[at - 1]}"
    following = next(entry for entry in entries[at + 1:] if entry)
    return f"between {entries[at - 1]} and {following}"


def machine_arch_option(words: list[str]) -> tuple[str, str] | None:
    """(value, the option as written) of the -arch/--gpu-architecture option nvcc uses, the last one
    (nvcc warns "incompatible redefinition" and takes the last), where its value is native, all or
    all-major; None where it names an arch or there is none."""
    options = list(_ARCH_VALUE.finditer(" ".join(words)))
    if not options or options[-1].group(1) not in MACHINE_ARCH_VALUES:
        return None
    return options[-1].group(1), options[-1].group(0)


def native_as_on_the_leaderboard(words: list[str]) -> list[str]:
    """nvcc's words with -arch=native naming the leaderboard's GPU (-arch=sm_100): on this machine nvcc
    would compile for its own GPU, or, with none, warn "Cannot find valid GPU for '-arch=native'" and
    compile its default sm_75 (nvcc 13.0)."""
    gpu = LEADERBOARD_GPU_ARCH[1]
    given: list[str] = []
    for word in words:
        option = _NATIVE_WORD.fullmatch(word)
        if option is not None:
            given.append(f"{option.group(1)}={gpu}")
        elif word == "native" and given and _BARE_ARCH_WORD.fullmatch(given[-1]):
            given.append(gpu)
        else:
            given.append(word)
    return given


def unknown_arch(words: list[str], needs: tuple[str, str] | None) -> str | None:
    """Why nvcc's words `words` cannot build the device code, whose arch-specific needs are `needs`
    (code_needs), or why build cannot report what they compile, else None. nvcc 13.0: -arch=native
    compiles for the GPU of the machine nvcc runs on, without the a (sm_100 on the B200; on a machine
    without a GPU it warns and compiles its default sm_75); -arch=all / all-major compile every arch it
    knows, none with the a; either with -code stops nvcc; -code without -arch too. -arch=native for code
    any arch assembles is the B200's sm_100 where the leaderboard runs it, so build takes it."""
    line = " ".join(words)
    machine = machine_arch_option(words)
    code = _CODE_OPTION.search(line)
    if machine is not None and code is not None:
        return (f"{machine[1]} with {code.group(0)}: nvcc stops (\"Cannot use '-arch={machine[0]}' with"
                f" '--gpu-code (-code)'\"), in torch's build too")
    if machine is not None and machine[0] == "native" and needs is not None:
        return (f"{machine[1]} compiles for the GPU of the machine nvcc runs on, without the a: sm_100 on the"
                f" {LEADERBOARD_GPU} that runs GPU MODE's NVFP4 problems (on a machine without a GPU, nvcc warns"
                f" and compiles its default {NVCC_DEFAULT_ARCH}), where the code's {needs[1]} do not assemble")
    if machine is not None and machine[0] != "native":
        compiled = ALL_ARCHES if machine[0] == "all" else ALL_MAJOR_ARCHES
        listed = f"{len(compiled)} archs with nvcc 13.0, {compiled[0]} to {compiled[-1]}"
        if needs is not None:
            return (f"{machine[1]} compiles for every arch nvcc knows ({listed}), none of them an arch-specific (a)"
                    f" one, where the code's {needs[1]} do not assemble")
        return (f"{machine[1]} compiles for every arch nvcc knows ({listed}) in one nvcc run, where the"
                f" {LEADERBOARD_GPU} runs the {LEADERBOARD_GPU_ARCH[1]} one: the leaderboard's compile does them"
                " all, and build reports one arch a unit, so it cannot show that compile")
    if code is not None and not _ARCH_OPTION.search(line):
        return f"{code.group(0)} without -arch: nvcc stops (\"-arch option not specified\"), in torch's build too"
    return None


def arch_fix(words: list[str], needs: tuple[str, str] | None) -> str:
    """What to change in nvcc's words `words` that unknown_arch refuses, for code whose arch-specific needs
    are `needs` (code_needs): where a -gencode among them already compiles the target the code needs (else,
    for code any arch assembles, any target), drop the -arch=native / all / all-major beside it, which nvcc
    compiles as well; otherwise name that target, else the leaderboard's GPU's."""
    target = needs[0] if needs is not None else LEADERBOARD_GPU_ARCH[1]
    machine = machine_arch_option(words)
    if machine is not None and not _CODE_OPTION.search(" ".join(words)):
        for gencode in _GENCODE_CODES.finditer(" ".join(words)):
            compiled = [code for code in gencode.group(1).strip("[]").split(",") if code.startswith("sm_")]
            named = next((code for code in compiled if needs is None or code == target), None)
            if named is not None:
                return f"drop {machine[1]}: {gencode.group(0)} already compiles {named}"
    return f"name the arch ({gencode_flag(target)})"
