"""A single-file GPU MODE submission.py from a kernel: its source and the torch binding embedded as
strings (local headers inlined, since load_inline takes strings), compiled once at import with
torch.utils.cpp_extension.load_inline and the same code flags as `nvfp4ctl build`.

Server assumptions, written into the file's docstring too: nvcc and ninja are there (load_inline
needs them), and for CUTLASS kernels the CUTLASS/CuTe headers are found at $CUTLASS_PATH, $CUTLASS_HOME,
/usr/local/cutlass, or in the nvidia-cutlass wheel (cutlass_library/source), the first that holds include/cute:
the order `nvfp4ctl build` looks in (build.toolchain.look_up_cutlass).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from nvfp4ctl.atomic_file import ReadOnlyTarget, made_read_only, write_text_atomic
from nvfp4ctl.build import flags, toolchain
from nvfp4ctl.build.read_once import reading_once, source_bytes
from nvfp4ctl.preprocessor import Include, includes, live_code
from nvfp4ctl.build.sources import (ARCH_LINE, BuildInputs, build_inputs, checked_source, abi_functions,
                                    find_header, header_search, include_target, kernel_problem, resolve_arch,
                                    source_marks)
from nvfp4ctl.errors import UsageError, os_reason
from nvfp4ctl.export_header import EXPORT_MARK, export_lines, exported_problem
from nvfp4ctl.file_in_the_way import refuse_a_file_above
from nvfp4ctl.not_text import utf8_decoded
from nvfp4ctl.preamble import BYTE_ORDER_MARK, past_byte_order_mark
from nvfp4ctl.printable import escaped_bytes
from nvfp4ctl.runlog import file_digest
from nvfp4ctl.words import and_listed

FORBIDDEN_WORD = "stream"  # the leaderboard's `"stream" in code.lower()` (nvfp4ctl.lint.stream locates it)

_PRAGMA_ONCE = re.compile(r"^\s*#\s*pragma\s+once\s*$\n?", re.MULTILINE)


@dataclass(frozen=True)
class Submission:
    kernel: Path
    arch: str
    text: str
    embedded: tuple[Path, ...]  # every file whose text is in the submission
    never_run: bool = False  # the kernel says it has never run on `arch` (a `nvfp4ctl: never-run-on` mark)
    problem: str = "nvfp4_gemm"  # whose C ABI custom_kernel calls: the API header the kernel includes
    problem_from_header: bool = True  # False: the kernel includes no API header, the GEMM's binding was taken
    kept_above: str = ""  # the `#!` line (and byte order mark) of the file written over, kept above `text`

    @property
    def written(self) -> str:
        """The whole file export writes: `text` below the line kept from the earlier export."""
        return self.kept_above + self.text


def missing_abi(submission: Submission) -> list[str]:
    """The C ABI functions the exported text has no definition of (a static look: the name, its
    parameters and a body; the build's check reads the compiled object instead)."""
    return [name for name in abi_functions(submission.kernel)
            if not re.search(rf"\b{name}\s*\([^;{{}}]*\)\s*(?:noexcept\s*)?(?:->[^;{{}}]+)?\{{", submission.text)]


def never_run_on(source: Path) -> tuple[str, ...]:
    """The archs a kernel's `// nvfp4ctl: never-run-on sm_XXX` marks say it has never run on."""
    return tuple(arch for arch in source_marks(source, "never-run-on") if arch)


# What a leaderboard machine has without the submission bringing it: CUTLASS/CuTe (found at import,
# see CUTLASS_LOOKUP), the CUDA toolkit's headers (load_inline needs nvcc) and torch's.
_PLATFORM_FOLDERS = frozenset({"cute", "cutlass", "cuda", "cub", "thrust", "nv", "crt", "cooperative_groups",
                               "torch", "ATen", "c10", "pybind11"})
_CUDA_HEADER = re.compile(
    r"(?:cuda\w*|cuComplex|cufft\w*|curand\w*|cublas\w*|cusparse\w*|cusolver\w*|cupti\w*|nvrtc|nvml"
    r"|nvtx\w*|nvToolsExt\w*|npp\w*|nvJitLink|nvPTXCompiler|sm_\d+_\w+|mma|cooperative_groups"
    r"|(?:vector|device|driver|host|builtin|surface|texture|library|math|common|channel)_\w+)\.(?:h|hpp)")
_C_HEADERS = frozenset(f"{name}.h" for name in (
    "assert", "complex", "ctype", "errno", "fenv", "float", "inttypes", "iso646", "limits", "locale", "math",
    "setjmp", "signal", "stdalign", "stdarg", "stdbool", "stddef", "stdint", "stdio", "stdlib", "string",
    "tgmath", "time", "uchar", "wchar", "wctype", "unistd", "dlfcn", "pthread"))


def on_the_leaderboard(name: str) -> bool:
    """Whether a quoted include that is not among the kernel's own headers is one a leaderboard
    machine has anyway (`cute/tensor.hpp`, `cuda_fp16.h`, `<cstdint>` written as "cstdint")."""
    first, _, rest = name.partition("/")
    if rest:
        return first in _PLATFORM_FOLDERS
    return "." not in name or name in _C_HEADERS or _CUDA_HEADER.fullmatch(name) is not None


def inline_local_includes(path: Path, seen: set[Path] | None = None,
                          search: Sequence[Path] | None = None) -> tuple[str, list[Path]]:
    """`path`'s text with each `#include "..."` of a header beside it or in the `search` folders (the
    build's: kernels/common, a kernel's header_search by default), and each `#include <...>` of one in the
    `search` folders (the build's -I folders, which the compiler searches for it, not the file's own), replaced
    by that header's text (once per translation unit, like #pragma once); a CUTLASS, CUDA or standard header
    stays an include. Any other quoted include is a UsageError: kept, it would not compile on the leaderboard;
    so is an `#include <...>` of a header found beside the file alone, which the build does not find either.
    Each file's text is embedded_text's (read once within read_once.reading_once, as render reads it)."""
    seen = set() if seen is None else seen
    used: list[Path] = []
    search = list(header_search(path) if search is None else search)

    def expand(include: Include, current: Path, text: str) -> str:
        directive = text[include.start:include.end]
        header = include_target(include, current, search)
        if header is None and include.angled:
            if not on_the_leaderboard(include.name) and (beside := find_header(include.name, current.parent, ())):
                raise UsageError(f"{current}:{include.line}: #include <{include.name}> names {beside}, beside the file,"
                                 f' where the compiler looks only for #include "{include.name}" (the build fails on it'
                                 " too); write it quoted; nothing was written")
            return directive  # a header of the machine's (CUDA, torch, the C++ library), as the leaderboard's has
        if header is None:
            if on_the_leaderboard(include.name):
                return directive
            raise UsageError(_not_found(include, current, search))
        # what follows the directive on its line (a comment, maybe one that goes on) starts a line of its own
        line_end = text.find("\n", include.end)
        after = "\n" if text[include.end:None if line_end < 0 else line_end].strip() else ""
        if header in seen:
            return f"// (already inlined above) {directive}{after}"
        seen.add(header)
        used.append(header)
        inner = _PRAGMA_ONCE.sub("", expanded(header))
        return f"// ---- inlined {header.name} ----\n{inner.rstrip()}\n// ---- end of {header.name} ----{after}"

    def expanded(file: Path) -> str:
        # only the directives the preprocessor reads: not those in comments or in an #if 0
        text = embedded_text(file)
        pieces: list[str] = []
        kept = 0
        for include in includes(live_code(text)):
            pieces += [text[kept:include.start], expand(include, file, text)]
            kept = include.end
        return "".join([*pieces, text[kept:]])

    return expanded(path), used


def _not_found(include: Include, current: Path, search: Sequence[Path]) -> str:
    """A quoted include found nowhere the build looks, in one line: the path it names from the file's folder and the
    -I folders looked in, and that the path is to fix. A user's header that moved out of reach (`git mv gemm
    problems/gemm` under `#include "../../../common/x.cuh"`) is no header of the leaderboard machine's: the advice to
    include one as <...> is for a name that could be one, never for a path from the file's folder."""
    beside = Path(os.path.normpath(current.parent / include.name))
    folders = [str(folder) for folder in dict.fromkeys(search) if folder != current.parent]
    others = f", nor in the build's -I {'folder' if len(folders) == 1 else 'folders'} {and_listed(folders)}" if folders else ""
    machine = "" if include.name.startswith(".") else f"; a header of the leaderboard machine's is included as <{include.name}>"
    return (f'{current}:{include.line}: #include "{include.name}" not found where the build looks for it: not at'
            f" {beside} (from the file's folder){others}; it is no CUTLASS, CUDA or standard header the leaderboard"
            f" has, so the submission would not compile there; nothing was written (fix the path, or put the header"
            f" where the build looks{machine})")


def embedded_text(path: Path) -> str:
    """A file's text for the submission, which is Python source and so UTF-8: another encoding (a
    Latin-1 `µ` in a comment) is one UsageError naming the line, not a changed byte or a traceback. A UTF-8
    byte order mark at its start is left out: nvcc skips one at a file's start, but inlined into the middle of
    the submission's source (a header's, or the kernel's after load_inline's own includes) it is a stray
    `\U0000feff` that fails the leaderboard's compile. Read once within read_once.reading_once (one export:
    the forbidden-word scan and the inlining read the same files; an include's header is its resolved path
    however the include spells it, include_target's)."""
    return past_byte_order_mark(utf8_decoded(source_bytes(path), path,
                                             "the submission embeds the file as text: save it as UTF-8."
                                             " Nothing was written"))


_LINES_NAMED = 8  # past these, "and N more lines": the error stays one line


def _refuse_forbidden_word(path: Path, text: str) -> None:
    """`text`: the file's, as the submission embeds it."""
    from nvfp4ctl.lint.stream import find_offsets  # lint is heavy to import; only needed here

    offsets = find_offsets(text)
    if offsets:
        lines = list(dict.fromkeys(text.count("\n", 0, offset) + 1 for offset in offsets))
        raise UsageError(
            f'{path}:{lines[0]}: contains the word "{FORBIDDEN_WORD}"{_where_else(len(offsets), lines)}; the'
            " leaderboard rejects any submission containing it (any case), so nothing was written"
        )


def _where_else(count: int, lines: list[int]) -> str:
    """" 3 times (lines 3 and 6)": how often the word occurs and on which lines, so each can be changed
    before the next export; "" for once."""
    times = f" {count} times" if count > 1 else ""
    if len(lines) == 1:
        return times
    named = [str(line) for line in lines[:_LINES_NAMED]]
    if len(lines) > _LINES_NAMED:
        named.append(f"{len(lines) - _LINES_NAMED} more")
    return f"{times} (lines {and_listed(named)})"


def _arch_lines_for(cuda_source: str, arch: str) -> str:
    """The source with each `// nvfp4ctl: arch=` line naming the arch it is exported for: a kernel that says
    sm_90a exported with --arch sm_100a is compiled for sm_100a (CUDA_FLAGS), and its text says so too."""
    def exported_for(line: re.Match[str]) -> str:
        if line["arch"] == arch:
            return line[0]
        return f"{line['mark']}{arch}{line['rest']} (exported with --arch {arch}; the kernel's own line says {line['arch']})"

    return ARCH_LINE.sub(exported_for, cuda_source)


def _python_string(text: str) -> str:
    """A raw triple-quoted literal when the text allows one (readable), else repr()."""
    for quote in ("'''", '"""'):
        if quote not in text and not text.endswith(("\\", quote[0])):
            return f"r{quote}{text}{quote}"
    return repr(text)


def render(inputs: BuildInputs, arch: str) -> Submission:
    # each file read once per export, not kept past it: a header edited between two exports of one process is read again
    with reading_once():
        for path in inputs.files:
            _refuse_forbidden_word(path, embedded_text(path))
        cuda_source, cuda_headers = inline_local_includes(inputs.kernel, search=inputs.search)
        cpp_source, cpp_headers = inline_local_includes(inputs.binding, search=[inputs.common])
    kernel = inputs.kernel
    cuda_source = _arch_lines_for(cuda_source, arch)
    digest = file_digest(kernel)  # the same short hash the run log gives this kernel
    problem = kernel_problem(inputs.kernel)
    from_header = problem is not None
    if problem is None:
        from nvfp4ctl.problems import get_problem

        problem = get_problem("nvfp4_gemm")  # a kernel without an API header: the GEMM's binding
    api = problem.kernel_api
    launch = abi_functions(inputs.kernel)[1]
    cuda_flags, cpp_flags = flags.cuda_flags(arch), list(flags.BINDING_CFLAGS)
    text = _TEMPLATE.format(
        function=api.function,
        launch=launch,
        extension=f"{api.function}_{_extension_digest(cuda_source, cpp_source, cuda_flags, cpp_flags)}",
        call=api.call_text(),
        passes=api.describe(),
        kernel=_kernel_named(kernel, arch),
        digest=digest,
        flags=repr(cuda_flags),
        cpp_flags=repr(cpp_flags),
        cuda_source=_python_string(cuda_source),
        cpp_source=_python_string(cpp_source),
        imports="\n".join(f"import {name}" for name in sorted(_MODULES + (_CUTLASS_MODULES if inputs.needs_cutlass else ()))),
        cutlass=CUTLASS_LOOKUP if inputs.needs_cutlass else "",
        include_paths=_CUTLASS_INCLUDE_PATHS if inputs.needs_cutlass else "",
    )
    from nvfp4ctl.lint.stream import first_line  # lint is heavy to import; only needed here

    if found := first_line(text):  # the template itself must never bring the word in
        raise UsageError(f'the generated submission contains "{FORBIDDEN_WORD}" (its line {found[0]}); nothing was'
                         " written")
    embedded = tuple(dict.fromkeys([inputs.kernel, inputs.binding, *cuda_headers, *cpp_headers]))
    first, body = text.split("\n", 1)
    text = f"{first} Body sha256 {_body_hash(body)}.\n{body}"  # an edit of the file shows (_refusal)
    return Submission(kernel=kernel, arch=arch, text=text, embedded=embedded, never_run=arch in never_run_on(kernel),
                      problem=problem.name, problem_from_header=from_header)


def _kernel_named(kernel: Path, arch: str) -> str:
    """The kernel and its arch as the docstring names them: by its file name, or, where that holds the word the
    leaderboard refuses (nvfp4_gemm_streamk.cu, a Stream-K kernel), without it: the kernel hash beside it and
    the run log's line for the export still say which file it was."""
    if FORBIDDEN_WORD in kernel.name.lower():
        return f"a kernel for {arch} (its file name, which holds a word the leaderboard refuses, left out)"
    return f"{_docstring_text(kernel.name)} for {arch}"


def _docstring_text(name: str) -> str:
    """A file name as the exported docstring holds it: a byte that is not UTF-8, which the UTF-8 file cannot
    hold, written as messages show it (k\\xff.cu), and each backslash doubled, so that the docstring reads
    the name so and no backslash of it starts an escape."""
    return escaped_bytes(name).replace("\\", "\\\\")


def _extension_digest(cuda_source: str, cpp_source: str, cuda_flags: list[str], cpp_flags: list[str]) -> str:
    """The extension name's hash of what it compiles, written into the file as a literal: a name made at
    import (an f-string of a hash) is one `nvfp4ctl build` cannot read without running the file."""
    return hashlib.sha256((cuda_source + cpp_source + repr(cuda_flags) + repr(cpp_flags)).encode()).hexdigest()[:12]


_BODY_HASH = re.compile(r"Body sha256 ([0-9a-f]{16})\.")


def _body_hash(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()[:16]


# an export is a few hundred KiB (the shipped kernels' largest, 22 files embedded, is about 200 KiB): a file past
# this is no export of nvfp4ctl's, and reading it whole only to say so would fill memory
_LARGEST_EXPORT_READ = 64 * 2**20


def _current_text(output: Path, force: bool) -> str:
    """The text at `output` now, as _refusal and _kept_preamble read it (a UTF-8 byte order mark kept, which
    _kept_preamble keeps with a `#!` line); "" where there is none, where it is no regular file (a device or a
    FIFO, written to as `> file` writes it: reading one first blocks on a FIFO, /dev/stdout's pipe, and never
    ends on /dev/zero or /dev/full), or where `force` replaces a file that cannot be read (the write says what
    is wrong with it) or is larger than any export."""
    try:
        if not stat.S_ISREG(output.stat().st_mode):
            return ""
        with output.open(encoding="utf-8", errors="replace") as existing:  # newlines read as read_text reads them
            text = existing.read(_LARGEST_EXPORT_READ + 1)
    except OSError as error:
        if force or not output.exists():
            return ""
        raise UsageError(f"cannot read {output}: {os_reason(error, output)}") from None
    if len(text) > _LARGEST_EXPORT_READ:
        if force:
            return ""
        raise UsageError(f"{output} is not an earlier export (it holds over {_LARGEST_EXPORT_READ // 2**20} MiB of"
                         " text, which no export does): nothing was written (--force replaces it, or -o another path)")
    return text


def _refusal(text: str) -> str | None:
    """Why the file holding `text` must not be replaced without --force: it is the user's own file, or an
    export they edited since (files from before the body hash count as unedited); None: replace it."""
    if not text.removeprefix(BYTE_ORDER_MARK):
        return None  # nothing to lose
    # past a `#!` line an editor or the user put above the docstring, as lint reads the file: the mark is
    # the docstring's, and the hash is of what export wrote after it
    lines = export_lines(text)
    if lines is None:
        return "is not an earlier export"
    first, body = lines
    recorded = _BODY_HASH.search(first)
    if recorded and recorded.group(1) != _body_hash(body):
        return "is an earlier export edited since (its text no longer matches the Body sha256 on its first line)"
    return None


def _kept_preamble(output: Path, text: str) -> str:
    """The `#!` line (with its newline) the user put above an earlier export at `output`, its `text`, for the new
    export to keep, with the UTF-8 byte order mark before it where the file has one: the bytes stay as the user
    had them (a mark before `#!` makes the line no shebang, and moving the mark below it would put a character
    Python refuses mid-file). "" where there is no `#!` line, or the file is no export (a file of the user's
    replaced with --force is replaced whole). The export's own text starts below that line, as _refusal reads it.
    A line holding the leaderboard's forbidden word is refused (UsageError), as any source holding it is:
    kept, it would make the new file one the leaderboard rejects; dropped, it would be lost."""
    mark = BYTE_ORDER_MARK if text.startswith(BYTE_ORDER_MARK) else ""
    below_mark = text.removeprefix(mark)
    if not below_mark.startswith("#!") or export_lines(text) is None:
        return ""
    line = below_mark.partition("\n")[0]
    if FORBIDDEN_WORD in line.lower():
        raise UsageError(f'{output}:1: its #! line ({line.rstrip()}), which export keeps above the new export, contains'
                         f' the word "{FORBIDDEN_WORD}"; the leaderboard rejects any submission containing it (any'
                         " case), so nothing was written (change or remove the line, or -o another path)")
    return mark + line + "\n"


def _same_file(a: Path, b: Path) -> bool:
    """`a` and `b` name one file: through links and hard links, or as one path where it is not there yet."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        pass
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # a link loop: the write says so
        return False


def _never_written(output: Path, inputs: BuildInputs, protected: Mapping[Path, str]) -> str | None:
    """What `output` is when it is a file export must never replace, --force or not: the kernel being
    exported, a header or binding it embeds (the export would destroy its own source), or one of
    `protected` (the task file in use, the run log: a submission written there breaks every command)."""
    roles = {inputs.kernel: "the kernel being exported", inputs.binding: "the torch binding this export embeds",
             **{header: "a header this export embeds" for header in inputs.headers}, **protected}
    return next((role for path, role in roles.items() if _same_file(output, path)), None)


def export_submission(kernel: Path, output: Path, arch: str | None = None, force: bool = False,
                      protected: Mapping[Path, str] | None = None) -> Submission:
    """Render and write; refuses (UsageError) to replace a file that is not an unedited earlier export
    unless `force`, and, even with `force`, a read-only file, the export's own inputs and the files of
    `protected` (path: what it is); says so when the file cannot be written; a failed write leaves the
    old file whole, and a symlink stays a link to the new text."""
    _refuse_folder(output)
    inputs = build_inputs(checked_source(kernel))
    existing = _refuse_output(output, _never_written(output, inputs, protected or {}), force)
    submission = replace(render(inputs, resolve_arch(inputs.kernel, arch)),
                         kept_above=_kept_preamble(output, existing))
    _refuse_another_problems_export(output, existing, submission.problem, force)
    _write(output, submission.written)
    return submission


def export_plain_torch(source: Path, output: Path, problem: str, force: bool = False,
                       protected: Mapping[Path, str] | None = None) -> str:
    """Write nvfp4ctl's exact plain-torch submission for `problem` (kernels/torch_dequant/, the target check
    runs for `--kernel default` where nvfp4ctl ships no kernel) as an export: the export mark and the body
    hash on line 1, so a later export replaces it as freely as its own, and under the same refusals."""
    _refuse_folder(output)
    roles = {source: "the plain-torch submission being exported", **(protected or {})}
    existing = _refuse_output(output, next((role for path, role in roles.items() if _same_file(output, path)), None),
                              force)
    try:
        body = source.read_text(encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot read {source}: {os_reason(error, source)}") from None
    first = (f"# GPU MODE {problem} submission: {source.name}, nvfp4ctl's exact plain-torch one, {EXPORT_MARK}"
             " (no kernel of nvfp4ctl's for this problem).")
    text = f"{first} Body sha256 {_body_hash(body)}.\n{body}"
    if FORBIDDEN_WORD in text.lower():
        raise UsageError(f'{source} contains "{FORBIDDEN_WORD}", which the leaderboard refuses; nothing was written')
    text = _kept_preamble(output, existing) + text
    _refuse_another_problems_export(output, existing, problem, force)
    _write(output, text)
    return text


def _refuse_folder(output: Path) -> None:
    """UsageError where `output` is a folder, or lies below a file (`-o notes.txt/x.py`: refuse_a_file_above, as
    init says it)."""
    if output.is_dir():
        raise UsageError(f"-o {output}: a folder; name the file to write, e.g. -o {output / 'submission.py'}")
    refuse_a_file_above(output, f"-o {output}")


def _refuse_output(output: Path, role: str | None, force: bool) -> str:
    """UsageError where `output` is a file export never writes (`role`: what it is), is read-only, or is
    not an unedited earlier export and `force` is off; else its text now (_current_text), read once for the
    refusal and the `#!` line kept."""
    if role is not None:
        raise UsageError(f"-o {output} is {role}: export never writes over it, not even with --force;"
                         " nothing was written (-o another path)")
    if made_read_only(output):  # before _refusal, whose message offers --force: that is no way past this
        raise UsageError(_read_only(output))
    existing = _current_text(output, force)
    if not force and (why := _refusal(existing)):
        raise UsageError(f"{output} {why}: nothing was written (--force replaces it, or -o another path)")
    return existing


def _refuse_another_problems_export(output: Path, existing: str, problem: str, force: bool) -> None:
    """UsageError where `output` holds an export for another problem than `problem`, unless `force`: it is
    another folder's submission (a link `gemv/submission.py -> ../gemm/submission.py` writes through to the
    GEMM's), which an export replaces freely only for its own problem."""
    earlier = exported_problem(existing)
    if force or earlier is None or earlier == problem:
        return
    leads = _where_it_leads(output)
    force_does = "--force writes over that file through the link" if leads else "--force replaces it"
    raise UsageError(f"{output}{leads} is an export for {earlier}, not for {problem}, the problem of"
                     f" the kernel exported: nothing was written ({force_does}, or -o another path)")


def _where_it_leads(output: Path) -> str:
    """" (a link to /repo/gemm/submission.py)" where `output` is a link, or lies in a linked folder, so the file
    that would be replaced is named; "" where it is the file itself."""
    try:
        resolved = output.resolve()
        if output.is_symlink():
            return f" (a link to {resolved})"
    except (OSError, RuntimeError):  # a link loop: the write says so
        return ""
    return f" (that is {resolved})" if resolved != Path(os.path.normpath(output.absolute())) else ""


def _write(output: Path, text: str) -> None:
    try:
        write_text_atomic(output, text, keep_read_only=True)
    except ReadOnlyTarget:  # made so since the check above
        raise UsageError(_read_only(output)) from None
    except (OSError, RuntimeError) as error:  # RuntimeError: a symlink loop
        reason = os_reason(error, output) if isinstance(error, OSError) else str(error)
        raise UsageError(f"cannot write {output}: {reason}") from None


def _read_only(output: Path) -> str:
    """A file its owner made read-only is never replaced, --force or not: the chmod is the owner's word."""
    return f"{output} is read-only: nothing was written (chmod u+w it, or -o another path)"


_MODULES = ("inspect",)
_CUTLASS_MODULES = ("importlib.util", "os")
# only a CUTLASS kernel has include folders to find; without them the call names none, so that
# `nvfp4ctl build` reads the call whole, with nothing left unknown to warn of. Build cannot run the
# lookup, and knows it by its name and its exact definition (build.export_lookup)
CUTLASS_LOOKUP_FUNCTION = "_include_dirs"
_CUTLASS_INCLUDE_PATHS = f"\n        extra_include_paths={CUTLASS_LOOKUP_FUNCTION}(),"


def _python_literal(value: str | tuple[str, ...]) -> str:
    """A str or a tuple of them as Python source, in double quotes as the rest of the file writes them."""
    if isinstance(value, str):
        return '"' + value + '"'  # names and a path: no quote or backslash in them
    return "(" + ", ".join(map(_python_literal, value)) + ("," if len(value) == 1 else "") + ")"


# The written lookup takes its order from build's (toolchain.CUTLASS_ROOT_VARIABLES, CUTLASS_SYSTEM_ROOT), so
# that an export compiles at import against the headers `nvfp4ctl build` compiled with. Its docstring stays
# as exports have always carried it: build knows the lookup by its exact definition (build.export_lookup)
CUTLASS_LOOKUP = '''

def _include_dirs():
    """CUTLASS/CuTe headers on this machine: $CUTLASS_PATH, /usr/local/cutlass, or pip's nvidia-cutlass."""
    roots = [os.environ[name] for name in ''' + _python_literal(toolchain.CUTLASS_ROOT_VARIABLES) + ''' if os.environ.get(name)]
    roots.append(''' + _python_literal(toolchain.CUTLASS_SYSTEM_ROOT) + ''')
    spec = importlib.util.find_spec("cutlass_library")
    if spec is not None and spec.submodule_search_locations:
        roots.append(os.path.join(next(iter(spec.submodule_search_locations)), "source"))
    for root in roots:
        if os.path.isdir(os.path.join(root, "include", "cute")):
            return [os.path.join(root, "include"), os.path.join(root, "tools", "util", "include")]
    raise RuntimeError("CUTLASS headers not found: set CUTLASS_PATH (the folder holding include/cute)")
'''

_TEMPLATE = '''"""GPU MODE {function} submission: {kernel}, exported by `nvfp4ctl export` (kernel hash {digest}: source and local headers).

The CUDA kernel and its torch binding are embedded below (local headers inlined) and compiled once,
at import, with torch.utils.cpp_extension.load_inline. Every call is one {launch}() call on the
default launch queue, making as many kernel launches as that function does: {passes}.
Needs nvcc and ninja on the machine; CUTLASS kernels also need the CUTLASS headers.
Edit the kernel in the repository and export again rather than editing this file.
"""

{imports}

from torch.utils.cpp_extension import load_inline

CUDA_FLAGS = {flags}
CPP_FLAGS = {cpp_flags}

CUDA_SOURCE = {cuda_source}

CPP_SOURCE = {cpp_source}
{cutlass}

def _compile():
    options = {{}}
    if "no_implicit_headers" in inspect.signature(load_inline).parameters:
        options["no_implicit_headers"] = True  # both sources include what they need themselves
    return load_inline(
        name="{extension}",
        cpp_sources=[CPP_SOURCE],
        cuda_sources=[CUDA_SOURCE],
        extra_cflags=CPP_FLAGS,
        extra_cuda_cflags=CUDA_FLAGS,{include_paths}
        with_cuda=True,
        **options,
    )


_kernel_module = _compile()


def custom_kernel(data):
    return {call}
'''
