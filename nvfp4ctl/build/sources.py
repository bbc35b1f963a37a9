"""Which files make up a kernel build: the kernel, the local headers it includes, the torch binding;
and which arch a kernel is for (its folder, or a `// nvfp4ctl: arch=sm_90a` line in the file)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from nvfp4ctl.build.compiler_errors import display_path
from nvfp4ctl.build.read_once import header_file, source_bytes, worked_out_once
from nvfp4ctl.preprocessor import Include, includes, includes_cutlass, live_code
from nvfp4ctl.errors import UsageError
from nvfp4ctl.not_text import not_text_message, not_text_place
from nvfp4ctl.preamble import past_byte_order_mark
from nvfp4ctl.project import kernels_dir, shipped

ARCHES = ("sm_90a", "sm_100a")
FOLDER_ARCH = {"sm90": "sm_90a", "sm100": "sm_100a"}
BINDING_NAME = "torch_binding.cpp"

# a `// nvfp4ctl: arch=sm_90a` comment line of its own: a string or a message quoting the mark declares nothing.
# Any value is read, so that a mistyped one (sm90a, SM_90A) is refused rather than passed over for the folder's.
# export rewrites the same lines (mark, arch, rest) for the arch it exports for
ARCH_LINE = re.compile(r"^(?P<mark>[ \t]*//[ \t]*nvfp4ctl:[ \t]*arch[ \t]*=[ \t]*)(?P<arch>[^\s,;()]*)(?P<rest>.*)$",
                       re.M)


def common_dir(kernel: Path | None = None) -> Path:
    """The API headers and torch bindings a kernel builds with: nvfp4ctl's own for a kernel nvfp4ctl ships,
    whatever folder you are in; for a kernel of yours, your kernels/common/ where it is an override of
    nvfp4ctl's (common_override), else nvfp4ctl's (a kernels/ of yours holding only sm90/ or sm100/
    kernels builds with the shipped bindings)."""
    own = shipped("kernels") / "common"
    if kernel is not None and is_shipped_kernel(kernel):
        return own
    override = common_override()
    return override if override is not None else own


def is_shipped_kernel(path: Path) -> bool:
    """Whether `path` lies under nvfp4ctl's own kernels/ (the checkout's or the wheel's copy)."""
    return shipped("kernels").resolve() in path.resolve().parents


def common_override() -> Path | None:
    """Your kernels/common/ where it stands in for nvfp4ctl's: it holds a torch binding (torch_binding.cpp,
    or a problem's, such as nvfp4_gemv_binding.cpp), which an override must provide. A kernels/common/ of
    other headers only (a model's rope.cuh) is no override: nvfp4ctl's is used."""
    local = kernels_dir() / "common"
    if local.resolve() == (shipped("kernels") / "common").resolve():
        return None
    return local if override_bindings(local) else None


def headers_beside_ours(kernel: Path) -> Path | None:
    """Your kernels/common/ where it is no override (a model's rope.cuh): a kernel of yours still includes its
    headers, looked up after nvfp4ctl's own, so a header of ours by the same name wins (shadowed_headers).
    None for nvfp4ctl's shipped kernels, and where there is no such folder or it is the override itself."""
    if is_shipped_kernel(kernel):
        return None
    local = kernels_dir() / "common"
    if not local.is_dir() or local.resolve() == (shipped("kernels") / "common").resolve() or override_bindings(local):
        return None
    return local


def header_search(kernel: Path) -> tuple[Path, ...]:
    """The folders a kernel's `#include "..."` is looked up in after its own folder, and its `#include <...>`
    in alone (include_target), in the order the build's include flags give them: its common_dir, then headers_beside_ours where there is one."""
    return _search_folders(common_dir(kernel), headers_beside_ours(kernel))


def _search_folders(common: Path, beside_ours: Path | None) -> tuple[Path, ...]:
    return (common,) if beside_ours is None else (common, beside_ours)


def shadowed_headers(kernel: Path) -> list[Path]:
    """The headers of your non-override kernels/common/ (headers_beside_ours) that the kernel or its headers
    include by a name nvfp4ctl's own kernels/common/ also holds: the build takes ours, never yours."""
    beside_ours = headers_beside_ours(kernel)
    if beside_ours is None:
        return []
    ours = common_dir(kernel)
    search = (ours, beside_ours)  # header_search(kernel), made from the parts at hand
    shadowed: dict[Path, None] = {}
    for current, code in _texts(kernel).items():
        for include in includes(code):
            yours = beside_ours / include.name
            if yours.is_file() and include_target(include, current, search) == (ours / include.name).resolve():
                shadowed[yours] = None
    return list(shadowed)


def shadow_note_of(kernel: Path) -> str | None:
    """The line naming the headers of yours that a header of nvfp4ctl's by the same name hides
    (shadowed_headers); None where none is, or the kernel's inputs cannot be listed (its build says why)."""
    try:
        shadowed = shadowed_headers(checked_source(kernel))
    except (UsageError, OSError):
        return None
    if not shadowed:
        return None
    names = " and ".join(display_path(header) for header in shadowed)
    theirs = "a header" if len(shadowed) == 1 else "headers"
    return (f"{names} not used: nvfp4ctl's own kernels/common/ has {theirs} of the same name, found first; rename"
            " yours to include it")


def override_bindings(folder: Path) -> list[str]:
    """The torch bindings `folder` holds, by name: what makes a kernels/common/ an override."""
    from nvfp4ctl.problems import all_problems

    names = dict.fromkeys([BINDING_NAME, *(problem.kernel_api.binding_name for problem in all_problems()
                                          if problem.kernel_api is not None)])
    return [name for name in names if (folder / name).is_file()]


def override_note_of(kernel: Path) -> str | None:
    """The line saying a kernel's build takes your kernels/common/ for nvfp4ctl's, naming the binding that
    makes it one; None where the build uses nvfp4ctl's own, or the kernel's inputs cannot be listed (its
    build says why)."""
    try:
        inputs = build_inputs(checked_source(kernel))
    except (UsageError, OSError):
        return None
    held = _override_held(inputs.common)
    if held is None:
        return None
    return (f"headers and binding from {display_path(inputs.common)}, your override of nvfp4ctl's kernels/common/"
            f" (it holds {held})")


def _override_held(common: Path) -> str | None:
    """The bindings that make `common` (a common_dir) your override, as a line names them; None where it is
    nvfp4ctl's own: common_dir gives either that or the override, which never is the same folder."""
    if common == shipped("kernels") / "common":
        return None
    return " and ".join(override_bindings(common))


def binding_path(kernel: Path | None = None) -> Path:
    """The torch binding for a kernel: the one of the problem whose API header it includes
    (nvfp4_dual_gemm_api.h -> nvfp4_dual_gemm_binding.cpp); the GEMM's torch_binding.cpp otherwise."""
    return _binding_of(kernel_problem(kernel) if kernel is not None else None, common_dir(kernel))


def _binding_of(problem: Any | None, common: Path) -> Path:
    api = problem.kernel_api if problem is not None else None
    return common / (api.binding_name if api is not None else BINDING_NAME)


def kernel_problem(kernel: Path) -> Any | None:
    """The problem (problems.base.ProblemBase) whose C ABI header the kernel includes, if any."""
    return _problem_including(_texts(kernel))


def _problem_including(texts: dict[Path, str]) -> Any | None:
    """By the name of each header the kernel and its headers include, found or not: a kernel including
    nvfp4_gemv_api.h is the GEMV's even where the folder in use lacks that header (its build then says so)."""
    from nvfp4ctl.problems import all_problems

    included = {PurePosixPath(include.name).name for code in texts.values() for include in includes(code)}
    for problem in all_problems():
        api = problem.kernel_api
        if api is not None and api.header in included:
            return problem
    return None


def kernel_api(kernel: Path) -> object | None:
    """The problem C ABI (problems.base.KernelApi) whose header the kernel includes, if any."""
    problem = kernel_problem(kernel)
    return problem.kernel_api if problem is not None else None


def abi_functions(kernel: Path) -> tuple[str, str]:
    """The C ABI functions a kernel defines and its binding calls, `<name>_unsupported` and
    `<name>_launch`; the GEMM's for a kernel that includes no problem's API header, as its binding
    is then the GEMM's."""
    from nvfp4ctl.problems import get_problem

    api = kernel_api(kernel) or get_problem("nvfp4_gemm").kernel_api
    return f"{api.function}_unsupported", api.launch_function  # type: ignore[union-attr]


NO_TENSOR_OP = "no-tensor-op"  # `// nvfp4ctl: no-tensor-op`: a kernel without tensor cores on purpose (kernels/naive)


def source_marks(source: Path, name: str) -> tuple[str, ...]:
    """The values of a kernel's `// nvfp4ctl: NAME [VALUE]` marks in file order, "" for a bare mark
    (`never-run-on sm_100a` gives "sm_100a", `no-tensor-op` gives "")."""
    return marks_in(source.read_text(errors="replace"), name)


def marks_in(code: str, name: str, comment: str = "//") -> tuple[str, ...]:
    """source_marks of CUDA source text (a submission's load_inline sources, say); `comment` "#" reads
    Python's (a CuTe DSL submission's `# nvfp4ctl: no-tensor-op`)."""
    # a comment line of its own: a message or string that quotes the mark does not count
    pattern = re.compile(rf"^[ \t]*{re.escape(comment)}[ \t]*nvfp4ctl:[ \t]*{re.escape(name)}(?![\w-])(?:[ \t]+(\w+))?", re.M)
    return tuple(pattern.findall(past_byte_order_mark(code)))


def declared_arch(source: Path) -> str | None:
    """The arch a kernel is written for: a declaration in the file wins over its folder."""
    declared = _declared_arch(source)
    return declared[0] if declared is not None else None


def written_for(source: Path, code: str | None = None) -> tuple[str, str] | None:
    """(the arch a kernel is written for, what says so) as declared_arch reads it: ("sm_90a", "its sm90/
    folder"), ("sm_100a", "its `// nvfp4ctl: arch=sm_100a` line"); None where nothing says, or a declaration
    names no arch nvfp4ctl builds. `code`: the source's text, where the caller has read it already."""
    try:
        declared = _declared_arch(source, code)
    except (UsageError, OSError):
        return None
    if declared is None:
        return None
    arch, by_line = declared
    if by_line:
        return arch, f"its `// nvfp4ctl: arch={arch}` line"
    real = _linked_to(source)
    # a folder named as the one typed says the same; another one is named with the link, or it would puzzle
    linked = f", as {source.name} links to {display_path(real)}" if real.parent.name != source.absolute().parent.name else ""
    return arch, f"its {real.parent.name}/ folder{linked}"


def _linked_to(source: Path) -> Path:
    """The file a kernel path names, past any link: the build compiles that file (checked_source resolves it),
    so its folder, not the link's, says the arch. A link loop is left as typed (reading it says why)."""
    try:
        return source.resolve()
    except (OSError, RuntimeError):
        return source.absolute()


def _declared_arch(source: Path, code: str | None = None) -> tuple[str, bool] | None:
    """(declared_arch, whether the file's own line declares it rather than its folder), from one read."""
    text = past_byte_order_mark(source.read_text(errors="replace") if code is None else code)
    match = ARCH_LINE.search(text)
    if match:
        line = text.count("\n", 0, match.start()) + 1
        return _checked_arch(match["arch"], f"{display_path(source)}:{line}: declared arch"), True
    folder = FOLDER_ARCH.get(_linked_to(source).parent.name)
    return (folder, False) if folder is not None else None


def _checked_arch(arch: str, what: str) -> str:
    if arch not in ARCHES:
        close = _close_arch(arch)
        hint = f"; did you mean {close}?" if close is not None else ""
        raise UsageError(f"{what} {arch!r} is not one of {', '.join(ARCHES)}{hint}")
    return arch


def _close_arch(arch: str) -> str | None:
    """The arch a mistyped one most likely means: the same letters but for case, `_`/`-` and the final
    a (sm90a, SM_90A, sm_100); sm_80 or sm_120a name other GPUs and get none."""
    typed = re.sub(r"[_\-\s]", "", arch.lower())
    for known in ARCHES:
        spelt = known.replace("_", "")
        if typed in (spelt, spelt.removesuffix("a")):
            return known
    return None


def resolve_arch(source: Path, requested: str | None, arch_option: bool = True, arch_all: bool = False) -> str:
    """`requested` (--arch), else the kernel's own; `arch_option`: the command has an --arch to suggest;
    `arch_all`: it was `--arch all` (build's default), which takes each kernel's own, so the way out names
    the archs to pass."""
    if requested is not None:
        requested = _checked_arch(requested, "--arch")
        _refuse_a_mistyped_mark(source)
        return requested
    arch = declared_arch(source)
    if arch is None:
        option = f", or pass --arch {' or --arch '.join(ARCHES)}" + (
            " (--arch all builds each kernel for its own arch)" if arch_all else "")
        ways = "add a line `// nvfp4ctl: arch=sm_90a`" + (option if arch_option else " (or sm_100a)")
        raise UsageError(f"cannot tell which arch {display_path(source)} is for: put it under sm90/ or sm100/, {ways}")
    return arch


def _refuse_a_mistyped_mark(source: Path) -> None:
    """The kernel's arch line checked where --arch decides the arch: a mark naming no arch is a mistake in
    the file whichever arch it is built for. A file that cannot be read is left to the build to name."""
    try:
        _declared_arch(source)
    except OSError:
        pass


def default_kernels(root: Path | None = None) -> list[Path]:
    root = root or kernels_dir()
    return sorted(path for folder in FOLDER_ARCH for path in (root / folder).glob("*.cu"))


def loose_kernels(root: Path) -> list[Path]:
    """The kernels in a kernels/ folder itself, outside sm90/ and sm100/: a bare build leaves them to be named."""
    return sorted(path for path in root.glob("*.cu") if path.is_file())


KERNEL_SUFFIX = ".cu"
_HEADER_SUFFIXES = frozenset({".cuh", ".h", ".hh", ".hpp", ".hxx", ".inl", ".inc"})


def checked_source(path: Path) -> Path:
    """`path` resolved, or a UsageError saying why it is not a kernel source (before the compiler says
    something less clear about it)."""
    if path.is_dir():
        raise UsageError(f"{path} is a folder, not a kernel source: name a {KERNEL_SUFFIX} file in it")
    if not path.exists():
        raise UsageError(f"no such kernel source: {path}")
    if not path.is_file():
        raise UsageError(f"{path} is not a regular file: a kernel source is a {KERNEL_SUFFIX} file")
    if path.suffix != KERNEL_SUFFIX:
        headers = ("; headers are compiled as part of the kernel that includes them"
                   if path.suffix.lower() in _HEADER_SUFFIXES else "")
        raise UsageError(f"{path} is not a kernel source: a kernel is a {KERNEL_SUFFIX} file{headers}")
    return path.resolve()


def not_text_warning(source: Path) -> str | None:
    """lint's NV004 for a source build compiles (a latin-1 `é` in a comment): nvcc takes the bytes as they are
    and compiles it, so the build goes on, with the line where it stops being text. None for text, or a file
    that cannot be read (the build says why)."""
    try:
        place = not_text_place(source_bytes(source))
    except OSError:
        return None
    return _not_text_line(source, place)


def header_not_text_warning(header: Path) -> str | None:
    """not_text_warning of a local header a build compiles and keys (a kernel's own .cuh, one a submission's
    CUDA includes), read as its cache key reads it (read_once.header_file)."""
    try:
        place = header_file(header).not_text
    except OSError:
        return None
    return _not_text_line(header, place)


def kernel_not_text_warnings(kernel: Path) -> list[str]:
    """not_text_warning of a kernel and of each local header its build hashes (build_inputs), in that order;
    a kernel whose inputs cannot be listed has its own warning alone (its build says what is wrong)."""
    warnings = [warning for warning in [not_text_warning(kernel)] if warning is not None]
    try:
        headers = build_inputs(checked_source(kernel)).headers
    except (UsageError, OSError):
        return warnings
    return warnings + [warning for warning in map(header_not_text_warning, headers) if warning is not None]


def _not_text_line(path: Path, place: tuple[int, str] | None) -> str | None:
    if place is None:
        return None
    line, why = place
    return (f"{display_path(path)}:{line}: {not_text_message(path.name, why)}; built as nvcc reads it, byte for"
            " byte: save it as UTF-8 (lint: NV004)")


def local_headers(source: Path) -> list[Path]:
    """Headers reached through `#include "..."` that live beside the file or in kernels/common, and through
    `#include <...>` that live in kernels/common (include_target), transitively, in first-seen order. System
    and CUTLASS headers are not followed, nor an include in a comment or an `#if 0` (nvfp4ctl/preprocessor.py)."""
    return list(_texts(source))[1:]


def _texts(source: Path, known: dict[Path, str] | None = None,
           search: Sequence[Path] | None = None) -> dict[Path, str]:
    """`source` and local_headers(source) (in that order) with their live_code, each file read once;
    `known`: texts already read (the kernel's, for the binding, which includes the same API header);
    `search`: the kernel's header_search where the caller has it already. A kernel's are worked out once
    within read_once.reading_once: a command reads them for the kernel's problem and again for its build inputs."""
    # a binding's headers are those of the folder it lies in, a kernel's those of its header_search
    if known is None:
        return worked_out_once(("live texts", source), lambda: _read_texts(
            source, header_search(source) if search is None else search))
    return _read_texts(source, [source.parent], known)


def _read_texts(source: Path, search: Sequence[Path], known: dict[Path, str] | None = None) -> dict[Path, str]:
    texts: dict[Path, str] = {}
    pending = [source]
    while pending:
        current = pending.pop(0)
        texts[current] = code = (known[current] if known and current in known
                                 else live_code(current.read_text(errors="replace")))
        for include in includes(code):
            header = include_target(include, current, search)
            if header is not None and header not in texts and header not in pending and header != source:
                pending.append(header)
    return texts


def include_target(include: Include, including: Path, search: Sequence[Path]) -> Path | None:
    """The local header the compiler reads for `include`, a directive of the file `including`, with the build's
    -I folders `search`: a quoted one is looked for beside that file first, an angled one in those folders
    alone; None for a header of the machine's (CUDA, torch, CUTLASS, the C++ library), or one not found.
    The build's inputs, its cache key and export's inlining all follow includes through this."""
    return find_header(include.name, None if include.angled else including.parent, search)


def find_header(name: str, beside: Path | None, search: Sequence[Path]) -> Path | None:
    """Where `#include "name"` resolves: beside the including file, then the search folders in order
    (`beside` None: an `#include <name>`, which the search folders alone serve)."""
    for folder in ((beside,) if beside is not None else ()) + tuple(search):
        candidate = folder / name
        if candidate.is_file():
            return candidate.resolve()
    return None


@dataclass(frozen=True)
class BuildInputs:
    """Every file whose bytes decide the build's output, and whether CUTLASS is needed."""

    kernel: Path
    binding: Path
    headers: tuple[Path, ...]
    needs_cutlass: bool
    common: Path  # the API headers' and binding's folder (common_dir), the build's first include folder
    beside_ours: Path | None = None  # your kernels/common/ that is no override (headers_beside_ours), the next one

    @property
    def search(self) -> tuple[Path, ...]:
        """The kernel's header_search: the folders its build includes from, ours first."""
        return _search_folders(self.common, self.beside_ours)

    @property
    def files(self) -> tuple[Path, ...]:
        return (self.kernel, *self.headers, self.binding)


def build_inputs(kernel: Path) -> BuildInputs:
    """The files of a kernel's build, listed once within read_once.reading_once (build's not-text warnings and
    its build plan each asked)."""
    return worked_out_once(("build inputs", kernel), lambda: _build_inputs(kernel))


def _build_inputs(kernel: Path) -> BuildInputs:
    # every command with a kernel target comes here: the kernel and its headers are read once for the
    # problem (which binding), the header list and the CUTLASS test
    search = header_search(kernel)
    common, beside_ours = search[0], search[1] if len(search) > 1 else None
    kernel_texts = _texts(kernel, search=search)
    problem = _problem_including(kernel_texts)
    binding = _binding_of(problem, common)
    if not binding.is_file():
        raise UsageError(f"the torch binding is missing: {binding}{_override_hint(common)}")
    binding_texts = _texts(binding, known=kernel_texts)
    headers = tuple(dict.fromkeys([*list(kernel_texts)[1:], *list(binding_texts)[1:]]))
    texts = {**binding_texts, **kernel_texts}
    needs_cutlass = any(includes_cutlass(texts[path]) for path in (kernel, *headers))
    return BuildInputs(kernel=kernel, binding=binding, headers=headers, needs_cutlass=needs_cutlass, common=common,
                       beside_ours=beside_ours)


def _override_hint(common: Path) -> str:
    held = _override_held(common)
    if held is None:
        return ""
    return (f" ({display_path(common)} is taken as your override of nvfp4ctl's kernels/common/, as it holds {held}:"
            " add the binding there, or move your own headers out of it to build with nvfp4ctl's)")
