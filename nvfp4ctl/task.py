"""task.yml -> a frozen `Task`: tests, benchmarks, tolerances, speed of light, timeout, lint options.

Our file has GPU MODE's shape (problems/nvidia/nvfp4_gemm/task.yml: `tests` and `benchmarks` lists of
{m, n, k, l, seed}, `ranking_by`) plus optional extras: `problem`, `tolerance: {rtol, atol}`,
`timeout` (seconds), `sol_us` per case, `submission`, `lint`; GPU MODE's `test_timeout`, `benchmark_timeout` and
`ranked_timeout` (kernelbot's limits for its test, benchmark and ranked runs) are read too. GPU MODE's own file loads unchanged:
unknown top-level keys are ignored, with a warning for one that looks like a typo of a known key (GPU
MODE's files, lang, description, config, templates, ... are known); any unknown key inside GPU MODE's
config, templates, validation or a files entry, whose keys are a fixed set, is warned. Every mistake
is one UsageError line naming the line and the field:
"task.yml:9: benchmarks[2].k: expected a positive integer, got -5 (benchmark #3)"; text that is not
YAML names the line and column ("task.yml:7:10: invalid YAML: ..."), its near-miss top-level keys warned.
"""

from __future__ import annotations

import dataclasses
import difflib
import errno
import math
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

import yaml

from nvfp4ctl.atomic_file import SOCKET_REASON
from nvfp4ctl.console import get_console
from nvfp4ctl.errors import UsageError, os_reason
from nvfp4ctl.fifo_read import FIFO_WRITER_WAIT_S, open_fifo_text
from nvfp4ctl.problems import DEFAULT_PROBLEM, get_problem, problem_names, registered_name
from nvfp4ctl.problems.fields import DEFAULT_TIMEOUT_S, describe_value, yaml_spelling
from nvfp4ctl.words import seconds_text
from nvfp4ctl.workspace import FROM_ENV, SHIPPED, forget_on_reset, locate_task, task_file_name, task_folder

# Ours, then GPU MODE's (which may add more: unknown keys are ignored, near misses of these warned).
# The keys nvfp4ctl reads, and GPU MODE's own that it leaves alone (kernelbot's LeaderboardTask and
# LeaderboardDefinition, src/libkernelbot/task.py).
# GPU MODE's limit for each kind of run (kernelbot's test, benchmark and ranked runs; 180 s where a file sets none):
# check runs under the test limit, bench under the benchmark limit, `bench --mode leaderboard` under the ranked one.
TEST_TIMEOUT, BENCHMARK_TIMEOUT, RANKED_TIMEOUT = "test_timeout", "benchmark_timeout", "ranked_timeout"
RUN_TIMEOUT_KEYS = (TEST_TIMEOUT, BENCHMARK_TIMEOUT, RANKED_TIMEOUT)
READ_KEYS = ("tests", "benchmarks", "problem", "tolerance", "timeout", *RUN_TIMEOUT_KEYS, "submission", "lint",
             "ranking_by")
KNOWN_KEYS = (*READ_KEYS, "files", "lang", "description", "config", "templates", "libraries", "seed", "multi_gpu",
              "gpus", "validation")
# GPU MODE's sections whose keys are a fixed set (kernelbot builds a dataclass of `config`, asserts the
# template languages, reads `name` and `source` of each file): nvfp4ctl does not read them, so an
# unknown key is warned like an unknown top-level key, whether or not it looks like a known one.
GPU_MODE_SECTION_KEYS = {
    "config": ("main", "sources", "include_dirs", "defines", "compile_flags"),  # PythonTaskData, CudaTaskData
    "templates": ("CUDA", "Python", "Triton", "HIP", "CuteDSL"),
    "validation": ("version", "script"),
}
GPU_MODE_ENTRY_KEYS = {"files": ("name", "source")}  # the keys of each entry of these lists
DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-3
DEFAULT_RANKING = "geom"
RANKINGS = ("geom", "mean", "last")


@dataclass(frozen=True)
class Case:
    """One test or benchmark entry. Which fields mean something is the problem's business: the GEMMs
    use m, n, k, l; the GEMV has no n (None); the grouped GEMM has g and per-group tuples m, n, k."""

    m: Any
    n: Any
    k: Any
    l: int
    seed: int
    sol_us: float | None = None  # speed of light (µs) on B200 at 1.5 GHz, benchmarks only
    g: int | None = None  # groups (nvfp4_group_gemm)

    def label(self) -> str:
        words = [f"{name}={_text(value)}" for name, value in (("g", self.g), ("m", self.m), ("n", self.n),
                                                               ("k", self.k), ("l", self.l)) if value is not None]
        return " ".join([*words, f"seed={self.seed}"])


def _text(value: Any) -> str:
    return "[" + ",".join(str(v) for v in value) + "]" if isinstance(value, tuple) else str(value)


@dataclass(frozen=True)
class Task:
    path: Path | None
    problem: str = DEFAULT_PROBLEM
    tests: tuple[Case, ...] = ()
    benchmarks: tuple[Case, ...] = ()
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    ranking: str = DEFAULT_RANKING
    timeout_s: float = DEFAULT_TIMEOUT_S
    timeout_given: bool = False  # the file sets `timeout:` (180 too): the header then names the file
    # GPU MODE's per-run limits the file sets (test_timeout -> 180.0, ...), each ahead of `timeout:` for its run
    run_timeouts: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    submission: Path | None = None
    submission_at: str = field(default="task.yml", compare=False)  # where `submission:` is written ("task.yml:7"), for errors about the file it names
    lint: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    # Where the `lint:` section and its fields are written ("lint.select" -> "task.yml:40", "lint.paths[1]" ->
    # "task.yml:43"), for the errors lint/config.py raises about values it validates away from the file.
    lint_at: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), compare=False, hash=False)
    source: str = ""  # where the file was found: "--task", "$NVFP4CTL_TASK", ... (workspace.py)
    # Why nvfp4ctl picked this shipped task where the user has none: the problem the submission names
    # itself ("its nvfp4ctl export header"), or the GEMM said as a stand-in; the header lines say it.
    shipped_because: str = field(default="", compare=False)
    warnings: tuple[str, ...] = field(default=(), compare=False)  # e.g. a key that looks like a typo

    def timeout_for(self, run: str) -> tuple[float, str] | None:
        """(seconds, the key they were read from) for a run (TEST_TIMEOUT, BENCHMARK_TIMEOUT, RANKED_TIMEOUT):
        the file's key for that run, else its `timeout:`, else None (the default applies). A file that
        sets 180 is named: the header says where the value was read, not whether it differs."""
        if run in self.run_timeouts:
            return self.run_timeouts[run], run
        return (self.timeout_s, "timeout") if self.timeout_given else None

    def resolve_timeout(self, flag: float | None, run: str) -> tuple[float, str]:
        """The seconds a run (TEST_TIMEOUT, ...) waits and where they came from: --timeout (`flag`) >
        NVFP4CTL_TIMEOUT > this file's key for the run (timeout_for, under the file's name in use) > 180."""
        from nvfp4ctl.options import resolve_timeout  # it imports typer: only a run that waits pays for it

        return resolve_timeout(flag, self.timeout_for(run), task_file_name(self.path))

    def gpu_mode_limit_note(self, run: str, source: str) -> str | None:
        """Where a run's limit came from the file's generic `timeout:` (no --timeout or NVFP4CTL_TIMEOUT
        decided: `source`, resolve_timeout's, and timeout_for read that key) and GPU MODE gives that run of
        this problem another (its key in the task.yml nvfp4ctl ships for the problem), where the file's value is
        one GPU MODE gives another run: one line naming GPU MODE's value and the key to add. An older `nvfp4ctl
        init` wrote the grouped GEMM's ranked 300 s as `timeout:`, which every run then reads; a `timeout:` of
        the user's own choosing (600) is theirs, and gets no note. The limit stays the file's."""
        from nvfp4ctl.options import OVERRIDING_SOURCES  # it imports typer, as resolve_timeout's does

        setting = self.timeout_for(run)
        if setting is None or setting[1] != "timeout" or source in OVERRIDING_SOURCES:
            return None
        where = task_file_name(self.path)
        try:
            shipped = load_shipped_task(get_problem(self.problem).task_file)
        except (OSError, UnicodeDecodeError, UsageError):  # a problem with no task.yml of its own: nothing known
            return None
        gpu_mode = shipped.run_timeouts.get(run)
        # only a value GPU MODE gives another run (an older init's copy): a limit of the user's own choosing stands
        if gpu_mode is None or gpu_mode == self.timeout_s or self.timeout_s not in shipped.run_timeouts.values():
            return None
        runs = f"{run.removesuffix('_timeout')} runs"
        return (f"GPU MODE gives this problem's {runs} {seconds_text(gpu_mode)}, not {where}'s timeout:"
                f" {self.timeout_s:g}: add {run}: {gpu_mode:g} to {where}")

    @property
    def is_users(self) -> bool:
        """False for the task.yml shipped with nvfp4ctl, used where the user has none."""
        return self.source != SHIPPED


class RunLimit(NamedTuple):
    seconds: float  # how long the run waits
    source: str  # where they came from, as the run's header names it ("--timeout", "task.yml test_timeout")
    note: str | None  # Task.gpu_mode_limit_note's line, warned before the run


def run_limit(task: Task, flag: float | None, run: str) -> RunLimit:
    """A run's limit (`run`: TEST_TIMEOUT, ...; `flag`: --timeout) as check, bench and tune take it: the
    task's resolve_timeout and, where GPU MODE gives the run another, its gpu_mode_limit_note."""
    seconds, source = task.resolve_timeout(flag, run)
    return RunLimit(seconds, source, task.gpu_mode_limit_note(run, source))


def task_path(path: Path | None = None) -> Path:
    """The task file to use: `path`, else $NVFP4CTL_TASK, else the nearest task.yml, else ours."""
    return locate_task(path).path


def load_task(path: Path | None = None) -> Task:
    located = locate_task(path)
    # from the environment: say so, the user may not remember setting it
    named = f"{FROM_ENV.lstrip('$')}={located.path}" if located.source == FROM_ENV else str(located.path)
    return replace(_read_task(located.path, named), source=located.source)


def load_folder_task(path: Path) -> Task:
    """A folder's own task.yml that governs the files a command was given there from outside it (`lint gemm`
    from the folder above), read as load_task reads the one in use: a mistake in it is the line and the exit 2
    that a run in its folder gives, not its settings quietly dropped."""
    return _read_task(path, task_file_name(path))


def _read_task(source: Path, named: str) -> Task:
    """The task.yml at `source`, its warnings said; `named`: the file as a read error names it."""
    text = task_text(source, named)
    try:
        task = parse_task(text, source)
    except TaskFileError as error:  # a typo'd key may be why the field in error is missing or wrong: say it first
        _warn(error.warnings)
        raise
    _warn(task.warnings)
    return task


# GPU MODE's task.yml files are under 2 KiB: a file past this is no task file, and reading it whole (a --task
# /dev/zero, a log named by mistake) would fill memory before the parser said so
LARGEST_TASK_FILE = 2**20


def task_text(source: Path, named: str) -> str:
    """The text of the task file at `source`, or a UsageError (one line, exit 2; `named`: the file as the line
    names it) where it cannot be read, is not UTF-8 or is larger than LARGEST_TASK_FILE. A FIFO or a device is
    read as a file is (`--task <(cat task.yml)` is a FIFO), at most that far, so /dev/zero is refused at the cap;
    a named FIFO that no process opens for writing within fifo_read.FIFO_WRITER_WAIT_S is refused, not waited
    on for ever (fifo_read). A Unix socket is refused as what it is: its open fails with ENXIO, whose words
    ("No such device or address") tell the user nothing of the file."""
    try:
        mode: int | None = source.stat().st_mode
    except OSError:
        mode = None  # a missing file: its open says so, as for any read
    if mode is not None and stat.S_ISSOCK(mode):
        raise UsageError(f"{named}: cannot read the task file ({SOCKET_REASON})")
    fifo = mode is not None and stat.S_ISFIFO(mode)
    try:
        # a folder: its open says so, as for any read
        with open_fifo_text(source) if fifo else source.open(encoding="utf-8") as file:
            text = file.read(LARGEST_TASK_FILE + 1)
    except OSError as error:
        if fifo and error.errno == errno.ENXIO:
            waited = seconds_text(FIFO_WRITER_WAIT_S)
            raise UsageError(f"no process opened {named} for writing within {waited}") from None
        raise UsageError(f"{named}: cannot read the task file ({os_reason(error, source)})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{source}: not a UTF-8 text file") from None
    if len(text) > LARGEST_TASK_FILE:
        raise UsageError(f"{named}: over {LARGEST_TASK_FILE // 2**20} MiB, which no task file is (GPU MODE's are a few"
                         " KiB), so not read as one (name a task.yml)")
    return text


def _warn(warnings: tuple[str, ...]) -> None:
    for warning in warnings:
        if warning not in _WARNED:  # once per command, however many times it loads the task
            _WARNED.add(warning)
            get_console().warn(warning)


def _forget_warnings() -> None:
    _WARNED.clear()


_WARNED: set[str] = set()
# a second command in one process (tests, lint_paths called again) reads the same task.yml and says its typos too
forget_on_reset(_forget_warnings)


class TaskFileError(UsageError):
    """A task.yml mistake found once the document was read, with the warnings its keys gave (a misspelt
    `timout:` beside a bad `tolerance:`), which load_task shows before the error rather than dropping."""

    def __init__(self, message: str, warnings: tuple[str, ...]) -> None:
        super().__init__(message)
        self.warnings = warnings


def load_shipped_task(path: Path) -> Task:
    """The task.yml nvfp4ctl ships for a problem, read where nvfp4ctl (not the user) picked it: for a
    --kernel of another problem, or that problem's benchmark shapes. Unlike load_task it is not made the
    task in use: its folder is nvfp4ctl's package, where the run log must never go."""
    return replace(parse_task(path.read_text(encoding="utf-8"), path), source=SHIPPED)


def problem_of(path: Path) -> str | None:
    """The problem a task.yml other than the one in use names; None where it cannot be read or parsed
    (a broken task.yml elsewhere is not this run's business: the task in use decides then)."""
    try:
        return parse_task(task_text(path, str(path)), path).problem
    except UsageError:
        return None


def parse_task(text: str, path: Path | None = None) -> Task:
    """Parse task.yml text; `path` names the file in messages and anchors a relative `submission`."""
    where = task_file_name(path)
    try:
        loader = _TaskLoader(text)  # a SafeLoader that refuses duplicate keys; it checks every character first
        try:
            node = loader.get_single_node()
            if node is not None:
                _refuse_keys_that_are_no_names(loader, node, where)
            document = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as error:  # a misspelt key above the mistake is met next: say it now
        raise TaskFileError(_yaml_error(where, error, text), _near_misses_in_unparsed(text, where)) from None
    except RecursionError:
        raise UsageError(f"{where}: invalid YAML: nested too deeply") from None
    return _TaskReader(where, path, text, node).read(document)


class _TaskLoader(yaml.SafeLoader):
    """safe_load's loader, except that a key given twice is an error: YAML keeps the last silently,
    so a second `tests:` pasted below the first would drop every test above it."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue  # `<<: *base`: its keys may be given again below, which is what it is for
            key = self.construct_object(key_node, deep=deep)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: the base class says so
                break
            if first is not None:
                raise yaml.constructor.ConstructorError(None, None, _duplicate(key, first, key_node), key_node.start_mark)
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
# What YAML makes of a bare key such as `true`, `1`, `null` or `2024-01-01`: none of them is a name.
_READ_AS = {"tag:yaml.org,2002:bool": "the boolean", "tag:yaml.org,2002:int": "the integer",
            "tag:yaml.org,2002:float": "the number", "tag:yaml.org,2002:null": "null:",
            "tag:yaml.org,2002:timestamp": "the date", "tag:yaml.org,2002:binary": "binary data:",
            "tag:yaml.org,2002:seq": "a list", "tag:yaml.org,2002:map": "a mapping", "tag:yaml.org,2002:set": "a set"}


def _duplicate(key: Any, first: yaml.Node, again: yaml.Node) -> str:
    """"duplicate key 'm'"; two spellings YAML reads as equal keys (`1` and `true`: True == 1) say so."""
    spelled, first_spelled = getattr(again, "value", None), getattr(first, "value", None)
    if isinstance(spelled, str) and isinstance(first_spelled, str) and spelled != first_spelled:
        return (f"duplicate key {spelled!r}: YAML reads it as {yaml_spelling(key)}, the same key as {first_spelled!r} on line"
                f" {first.start_mark.line + 1}")
    return f"duplicate key {key!r}, first on line {first.start_mark.line + 1}"


def _refuse_keys_that_are_no_names(loader: yaml.SafeLoader, root: yaml.Node, where: str) -> None:
    """A key YAML reads as a boolean, a number, null or a date (`true:`, `1:`, `on:`) where task.yml
    has field names: one UsageError naming it, rather than an unknown field ignored, a key lint trips
    on later, or a duplicate that only Python's True == 1 makes."""
    pending: list[tuple[yaml.Node, str, bool]] = [(root, "", True)]
    visited: set[int] = set()
    while pending:
        node, at, top = pending.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            pending.extend((item, f"{at}[{index}]", False) for index, item in enumerate(node.value))
            continue
        if not isinstance(node, yaml.MappingNode):
            continue
        for key_node, value in node.value:
            if key_node.tag == _MERGE_TAG:  # its mapping's keys are this mapping's
                merged = value.value if isinstance(value, yaml.SequenceNode) else [value]
                pending.extend((item, at, top) for item in merged)
                continue
            if key_node.tag != _STR_TAG and key_node.tag in _READ_AS:
                raise _key_error(loader, key_node, at, where)
            name = key_node.value if key_node.tag == _STR_TAG else None
            if name is not None and (not top or name in READ_KEYS):
                pending.append((value, f"{at}.{name}" if at else name, False))


def _key_error(loader: yaml.SafeLoader, key_node: yaml.Node, at: str, where: str) -> UsageError:
    read_as = _READ_AS[key_node.tag]
    if isinstance(key_node, yaml.ScalarNode):
        spelled = key_node.value
        value = "" if read_as.endswith(":") else f" {yaml_spelling(loader.construct_object(key_node))}"
        problem = f"a key YAML reads as {read_as.rstrip(':')}{value}, not a field name (quote it to mean the text {spelled!r})"
    else:
        spelled, problem = "?", f"{read_as} as a key, not a field name"
    field_path = f"{at}.{spelled}" if at else spelled
    numbered = re.match(r"(tests|benchmarks)\[(\d+)\]", at)
    number = f" ({numbered.group(1)[:-1]} #{int(numbered.group(2)) + 1})" if numbered else ""
    return UsageError(f"{where}:{key_node.start_mark.line + 1}: {field_path}: {problem}{number}")


def field_line(root: yaml.Node | None, field_path: str, at_key: bool = False) -> int | None:
    """The 1-based line of a field path ("tests[2].k") in the composed task.yml (parse_task's node: the
    text is not parsed again), None when not found; `at_key`: the line of its key rather than of its
    value (which a block value starts below)."""
    node = root
    found = None  # the deepest node of the path that exists: a missing field is named at its entry
    parts = re.findall(r"[^.\[\]]+|\[\d+\]", field_path)
    for number, part in enumerate(parts, start=1):
        if isinstance(node, yaml.SequenceNode) and part.startswith("["):
            index = int(part[1:-1])
            node = node.value[index] if index < len(node.value) else None
        elif isinstance(node, yaml.MappingNode):
            pair = next(((key, value) for key, value in node.value if getattr(key, "value", None) == part), None)
            if pair is not None and at_key and number == len(parts):
                return pair[0].start_mark.line + 1
            node = pair[1] if pair is not None else None
        else:
            node = None
        if node is None:
            break
        found = node
    return found.start_mark.line + 1 if found is not None else None


def _yaml_error(where: str, error: yaml.YAMLError, text: str) -> str:
    """"task.yml:3:7: invalid YAML: …": the place up front as compilers write it (editors open it there),
    the line first as in every other task.yml error, and PyYAML's problem on one line."""
    if isinstance(error, yaml.reader.ReaderError):  # a control character: its offset in the text, no mark
        before = _YAML_LINE_BREAK.split(text[:error.position])
        return (f"{where}:{len(before)}:{len(before[-1]) + 1}: invalid YAML: unacceptable character"
                f" #x{error.character:04x}: {error.reason}")
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    context = getattr(error, "context", None)
    if context and problem.startswith("but "):  # "but found another document" says little alone
        problem = f"{context}, {problem}"
    problem = " ".join(problem.split())
    if mark is None:
        return f"{where}: invalid YAML: {problem}"
    return f"{where}:{mark.line + 1}:{mark.column + 1}: invalid YAML: {problem}"


# A line that can only be a top-level key: `name:` at column 0 (a block value, a continuation line
# or a list item is indented or starts otherwise).
_TOP_LEVEL_KEY_LINE = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]|$)")
_YAML_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # YAML's, which its marks count (not str.splitlines')


def _near_misses_in_unparsed(text: str, where: str) -> tuple[str, ...]:
    """Near-miss top-level keys (`test:` for `tests:`) of a task.yml that is not valid YAML, in line
    order: those the parser read as the root mapping's keys before its error, then the `name:` lines
    at column 0 from the line it stopped on (not parsed, but no other YAML reads that way, short of
    a quoted scalar or flow collection left open across lines)."""
    # a control character stops PyYAML before it reads anything: read the rest with a space in its place
    keys, stopped_at = _top_level_keys_parsed(yaml.reader.Reader.NON_PRINTABLE.sub(" ", text))
    lines = _YAML_LINE_BREAK.split(text)
    # a key read through such a space is not the file's (`bench\x01marks:` read as 'bench marks'): not named
    keys = [(number, key) for number, key in keys if key in lines[number - 1]]
    if stopped_at is not None:
        keys += [(number, match.group(1)) for number, line in enumerate(lines[stopped_at - 1:], start=stopped_at)
                 if (match := _TOP_LEVEL_KEY_LINE.match(line)) and all(number != seen for seen, _ in keys)]
    return tuple(f"{where}:{line}: unknown key {key!r}; did you mean {close!r}?"
                 for line, key in keys if key not in KNOWN_KEYS and (close := _known_key_near(key)))


def _top_level_keys_parsed(text: str) -> tuple[list[tuple[int, str]], int | None]:
    """([(line, key)] of the first document's root mapping as far as PyYAML's parser reads the text, the
    1-based line where it stopped on an error, or None where it read all of it)."""
    keys: list[tuple[int, str]] = []
    # one entry per open collection: whether it is the root mapping, and whether a key comes next there
    open_collections: list[list[bool]] = []
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.DocumentEndEvent):
                return keys, None  # a second document is the composer's error, not the parser's
            in_root = len(open_collections) == 1 and open_collections[0][0]
            expecting_key = in_root and open_collections[0][1]
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                open_collections.append([not open_collections and isinstance(event, yaml.MappingStartEvent), True])
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                open_collections.pop()
            elif isinstance(event, yaml.ScalarEvent) and expecting_key:
                keys.append((event.start_mark.line + 1, event.value))
            if in_root and not isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                # a key, a scalar or alias value, or a collection value (its end is popped past)
                open_collections[0][1] = not expecting_key
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        return keys, (mark.line + 1 if mark is not None else None)
    except RecursionError:
        return keys, None
    return keys, None


class _TaskReader:
    """Validates one parsed document; every error names the file and the field path."""

    def __init__(self, where: str, path: Path | None, text: str = "", root: yaml.Node | None = None) -> None:
        self.where = where
        self.path = path
        self.text = text
        self.root = root  # the composed document, for the line of a field
        self.spec: Any = None  # the problem, once known; it parses the case entries
        self.misspelt_in_error: str | None = None  # a key the error names as a typo: not warned again

    def line(self, field_path: str, at_key: bool = False) -> int | None:
        return field_line(self.root, field_path, at_key)

    def at(self, field_path: str, at_key: bool = False) -> str:
        """"task.yml:5": the file and the line of a field (of its key, with `at_key`), or the file alone
        where the line is not known."""
        line = self.line(field_path, at_key)
        return f"{self.where}:{line}" if line else self.where

    def fail(self, field_path: str, problem: str) -> UsageError:
        """"task.yml:5: tests[2].k: ... (test #3)": the line, and the number --only and the tables use."""
        where = self.at(field_path)
        numbered = re.match(r"(tests|benchmarks)\[(\d+)\]", field_path)
        number = f" ({numbered.group(1)[:-1]} #{int(numbered.group(2)) + 1})" if numbered else ""
        return UsageError(f"{where}: {field_path}: {problem}{number}")

    def read(self, document: Any) -> Task:
        if not isinstance(document, dict):
            kind = "an empty file" if document is None else type(document).__name__
            raise UsageError(f"{self.where}: expected a mapping with tests and benchmarks, got {kind}")
        try:
            return self.validate(document)
        except UsageError as error:
            warnings = (*self.near_misses(document, skip=self.misspelt_in_error), *self.unknown_gpu_mode_keys(document))
            raise TaskFileError(str(error), warnings) from None

    def validate(self, document: dict[str, Any]) -> Task:
        problem = self.problem(document)
        tests = self.cases(document, "tests", required=True)
        benchmarks = self.cases(document, "benchmarks", required=False)
        rtol, atol = self.tolerance(document.get("tolerance"))
        return Task(
            path=self.path,
            problem=problem,
            tests=tests,
            benchmarks=benchmarks,
            rtol=rtol,
            atol=atol,
            ranking=self.ranking(document.get("ranking_by", DEFAULT_RANKING)),
            timeout_s=self.timeout(document.get("timeout", DEFAULT_TIMEOUT_S)),
            timeout_given="timeout" in document,
            run_timeouts=MappingProxyType({key: self.timeout(document[key], key) for key in RUN_TIMEOUT_KEYS
                                           if key in document}),
            submission=self.submission(document.get("submission")),
            submission_at=self.at("submission") if document.get("submission") is not None else self.where,
            lint=self.lint(document.get("lint")),
            lint_at=self.lint_places(document.get("lint")),
            warnings=(*self.near_misses(document), *self.unknown_gpu_mode_keys(document)),
        )

    def near_misses(self, document: dict[str, Any], skip: str | None = None) -> tuple[str, ...]:
        """Unknown keys that look like a known one (`timout:`): ignored like any key GPU MODE adds,
        but said, since the user meant to set something; `skip`: one an error names already."""
        found = []
        for key in document:
            if isinstance(key, str) and key not in KNOWN_KEYS and key != skip:
                close = _known_key_near(key)
                if close:  # the key's own line: a block value (a list) starts on the next one
                    found.append(f"{self.at(key, at_key=True)}: unknown key {key!r} ignored;"
                                 f" did you mean {close!r}?")
        return tuple(found)

    @staticmethod
    def misspelling_of(document: dict[str, Any], wanted: str) -> str | None:
        """The unknown key of `document` closest to `wanted` (a missing known key), as near_misses matches."""
        unknown = [key for key in document if isinstance(key, str) and key not in KNOWN_KEYS]
        return next((key for key in unknown if _known_key_near(key) == wanted), None)

    def unknown_gpu_mode_keys(self, document: dict[str, Any]) -> tuple[str, ...]:
        """Keys of GPU MODE's fixed-set sections that are none of the set (`config: {mian: eval.py}`)."""
        sections = [(name, document.get(name), known) for name, known in GPU_MODE_SECTION_KEYS.items()]
        for name, known in GPU_MODE_ENTRY_KEYS.items():
            entries = document.get(name)
            if isinstance(entries, list):
                sections += [(f"{name}[{index}]", entry, known) for index, entry in enumerate(entries)]
        found: list[tuple[int, str]] = []
        for at, section, known in sections:
            if not isinstance(section, dict):
                continue  # absent, or not GPU MODE's shape: nvfp4ctl does not read it either way
            for key in section:
                if key in known:
                    continue
                line = self.line(f"{at}.{key}", at_key=True)
                close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                found.append((line or 0, f"{self.where}{f':{line}' if line else ''}: unknown key {key!r} in {at}"
                                         f" ignored (known: {', '.join(known)}){hint}"))
        return tuple(message for _, message in sorted(found, key=lambda pair: pair[0]))

    def cases(self, document: dict[str, Any], key: str, required: bool) -> tuple[Case, ...]:
        entries = document.get(key)
        if entries is None and not required:
            return ()
        if not isinstance(entries, list) or (required and not entries):
            example = f"[{self.spec.case_example}, ...]"
            if entries is None and (typo := self.misspelling_of(document, key)) is not None:
                # `test:` for `tests:`: the error is the near miss, which is not warned again above it
                self.misspelt_in_error = typo
                raise UsageError(f"{self.at(typo, at_key=True)}: unknown key {typo!r}; did you mean {key!r}?"
                                 f" ({key} is required: a non-empty list like {example})")
            raise self.fail(key, f"expected a non-empty list like {example}, got {describe_value(entries)}")
        return tuple(self.case(entry, f"{key}[{index}]") for index, entry in enumerate(entries))

    def case(self, entry: Any, at: str) -> Case:
        from nvfp4ctl.problems.fields import FieldError

        fields = ", ".join(self.spec.case_fields)
        if not isinstance(entry, dict):
            raise self.fail(at, f"expected a mapping with {fields}, seed, got {describe_value(entry)}")
        try:
            case = self.spec.parse_case(entry, at)
        except FieldError as error:
            raise self.fail(error.field_path, error.problem) from None
        sol_us = entry.get("sol_us")
        if sol_us is not None:
            sol_us = self.number(sol_us, f"{at}.sol_us", "a positive number of microseconds", positive=True)
            case = dataclasses.replace(case, sol_us=sol_us)
        return case

    def number(self, value: Any, at: str, kind: str, positive: bool) -> float:
        # PyYAML reads `1e-3` (no dot) as a string, so numeric strings are accepted too.
        number: float | None = None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                number = None
        if number is None or not math.isfinite(number) or number < 0 or (positive and number == 0):
            raise self.fail(at, f"expected {kind}, got {describe_value(value)}")
        return number

    def tolerance(self, section: Any) -> tuple[float, float]:
        if section is None:
            return DEFAULT_RTOL, DEFAULT_ATOL
        if not isinstance(section, dict):
            raise self.fail("tolerance", f"expected a mapping like {{rtol: 0.001, atol: 0.001}}, got {describe_value(section)}")
        unknown = sorted(str(key) for key in section if key not in ("rtol", "atol"))
        if unknown:
            raise self.fail(f"tolerance.{unknown[0]}", "unknown field (expected rtol, atol)")
        rtol = self.number(section.get("rtol", DEFAULT_RTOL), "tolerance.rtol", "a non-negative number", positive=False)
        atol = self.number(section.get("atol", DEFAULT_ATOL), "tolerance.atol", "a non-negative number", positive=False)
        return rtol, atol

    def problem(self, document: dict[str, Any]) -> str:
        """`problem:` when given, else recognised from GPU MODE's file (see problems/detect.py)."""
        from nvfp4ctl.problems import get_problem
        from nvfp4ctl.problems.detect import detect_problem
        from nvfp4ctl.problems.spelling import did_you_mean

        value = document.get("problem")
        if value is None:
            name = detect_problem(self.text, document, self.path, self.where)
        elif not isinstance(value, str) or (registered := registered_name(value)) is None:
            hint = did_you_mean(value, problem_names()) if isinstance(value, str) else ""
            raise self.fail("problem", f"expected one of {', '.join(problem_names())}, got {describe_value(value)}{hint}")
        else:
            name = registered  # GPU MODE's nvfp4-gemv as nvfp4_gemv
        self.spec = get_problem(name)
        return name

    def ranking(self, value: Any) -> str:
        if value not in RANKINGS:
            raise self.fail("ranking_by", f"expected one of {', '.join(RANKINGS)}, got {describe_value(value)}")
        return value

    def timeout(self, value: Any, key: str = "timeout") -> float:
        return self.number(value, key, "a positive number of seconds", positive=True)

    def submission(self, value: Any) -> Path | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail("submission", f"expected a path to a submission.py, got {describe_value(value)}")
        submission = Path(value).expanduser()
        if not submission.is_absolute() and self.path is not None:
            submission = task_folder(self.path) / submission
        return submission

    def lint_places(self, section: Any) -> Mapping[str, str]:
        """"task.yml:40" for `lint` and each of its keys (the key's line: an error may be about its whole
        value), and for each item of a list (the item's line: lint.paths names the one that is missing)."""
        if not isinstance(section, dict) or not section:
            return MappingProxyType({})  # nothing lint/config.py validates
        places = {"lint": self.at("lint", at_key=True)}
        for key, value in section.items():
            places[f"lint.{key}"] = self.at(f"lint.{key}", at_key=True)
            if isinstance(value, list):
                places.update((f"lint.{key}[{index}]", self.at(f"lint.{key}[{index}]")) for index in range(len(value)))
        return MappingProxyType(places)

    def lint(self, value: Any) -> Mapping[str, Any]:
        if value is None:
            return MappingProxyType({})
        if not isinstance(value, dict):
            raise self.fail("lint", f"expected a mapping of lint options, got {describe_value(value)}")
        return MappingProxyType(dict(value))


def _known_key_near(key: str) -> str | None:
    """The known task.yml key `key` looks like a misspelling of (`timout` -> `timeout`), else None."""
    close = difflib.get_close_matches(key, KNOWN_KEYS, n=1, cutoff=0.75)
    return close[0] if close else None
