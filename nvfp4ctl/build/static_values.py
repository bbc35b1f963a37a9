"""Static values of a submission's expressions, read without running the file: the sources, flags and names a
load_inline / load call is given.

What is read: string constants (raw or not), implicit and `+` concatenations, lists/tuples, names bound anywhere
in the file to such values (the last binding before the call wins), f-strings whose placeholders are names of
int/str constants, `textwrap.dedent(...)`, a list's append, extend, insert and += of static values in its own
block, and the paths the file makes from its own location (static_paths: `os.path.join(os.path.dirname(__file__),
"k.cu")`, `Path(__file__).parent / "k.cu"`), a pathlib.Path only where torch takes one (file_pieces). Each piece
keeps the .py line its text starts on, so the compiler's errors can be pointed back at the submission (`#line`
directives in the generated .cu).
"""

from __future__ import annotations

import ast
import heapq
import textwrap
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from nvfp4ctl.build.arch_names import names_an_arch
from nvfp4ctl.build.static_paths import PATH_NODES, PathReader
from nvfp4ctl.build.syntax import added_terms, call_name, shown
from nvfp4ctl.build.syntax_index import SyntaxIndex


@dataclass(frozen=True)
class Piece:
    text: str
    line: int  # the .py line the text's first character is on
    joined: bool = False  # continues the previous piece (a concatenation), not a new source of a list
    path_object: bool = False  # a pathlib.Path, not a str: torch takes it in load()'s sources only
    # the line of an f-string whose placeholder build could not read and left empty (None: all read): a
    # text it compiles may keep it, with a note; a path or an arch flag never does (it would be a guess)
    unread: int | None = None


def unread_lines(pieces: list[Piece]) -> list[int]:
    """The lines of the f-strings whose placeholders the pieces left empty, each once, in order."""
    return list(dict.fromkeys(piece.unread for piece in pieces if piece.unread is not None))


def unread_notes(pieces: list[Piece]) -> list[str]:
    """The notes of a text compiled with placeholders left empty (cuda_sources, a flag that names no arch)."""
    return [f"line {line}: an f-string placeholder is not a constant; left empty" for line in unread_lines(pieces)]


def join_pieces(pieces: list[Piece]) -> str:
    """The text load_inline compiles: list elements joined by newlines, concatenations directly."""
    text = ""
    for piece in pieces:
        text += ("" if piece.joined or not text else "\n") + piece.text
    return text


_IN_PLACE = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "__iadd__"})


class StaticEvaluator:
    """Static values of the expressions a load_inline call is made of."""

    def __init__(self, index: SyntaxIndex, submission: Path | None = None) -> None:
        """`submission`: the file's path, the value of its `__file__` (None: not known, not static)."""
        self.bindings: dict[str, list[tuple[int, ast.AST]]] = {}
        augmented: dict[int, ast.AugAssign] = {}  # NAME += x is bound as NAME + x, made here: its statement
        made_nodes: dict[int, ast.BinOp] = {}  # those NAME + x, kept while their ids name them
        for node in index.writes:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.bindings.setdefault(target.id, []).append((node.lineno, node.value))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                self.bindings.setdefault(node.target.id, []).append((node.lineno, node.value))
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                added = ast.BinOp(ast.Name(node.target.id, ast.Load()), ast.Add(), node.value,
                                  lineno=node.lineno, col_offset=node.col_offset)
                augmented[id(added)] = node
                made_nodes[id(added)] = added
                self.bindings.setdefault(node.target.id, []).append((node.lineno, added))
        # each read looks its name up by bisection, not by a scan of every binding of the name: a file rebinding
        # its names before each of thousands of calls is read in n log n, not n squared
        self._bindings_by_owner: dict[str, dict[int | None, tuple[list[int], list[tuple[int, ast.AST]]]]] = {}
        self._bindings_by_line: dict[str, list[tuple[int, ast.AST]]] = {}
        for name, bound in self.bindings.items():
            self._bindings_by_line[name] = _latest_by_line(bound)
        # flags.append("-O3") after flags = [...]: the binding above no longer says what the call gets
        self.mutated = {node.func.value.id for node in index.calls if isinstance(node.func, ast.Attribute)
                        and isinstance(node.func.value, ast.Name) and node.func.attr in _IN_PLACE}
        self.mutated |= {target.value.id for node in index.writes
                         for target in (node.targets if isinstance(node, (ast.Assign, ast.Delete))
                                        else [node.target] if isinstance(node, ast.AugAssign) else [])
                         if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)}
        # ALIAS = FLAGS: either name's change in place changes the other's list, so each name of a group joined
        # by such bindings is changed where any is, and changed through another name where another is
        groups = {name: {name} for name in self.bindings}
        for name, bound in self.bindings.items():
            for _, value in bound:
                if isinstance(value, ast.Name) and value.id != name:
                    joined = groups[name] | groups.setdefault(value.id, {value.id})
                    for member in joined:
                        groups[member] = joined
        direct = set(self.mutated)
        self._through_alias = {name for name, group in groups.items() if (group - {name}) & direct}
        self.mutated |= self._through_alias
        self._changes = _in_place_changes(index, self.mutated)
        self._changes_by_owner: dict[str, dict[int | None, _OwnedChanges]] = {}  # made at a name's first read
        self._block = dict(index.blocks)
        self._block.update((made, self._block[id(statement)]) for made, statement in augmented.items()
                           if id(statement) in self._block)
        self._augmented = augmented
        self.function_of = dict(index.function_of)
        for made, statement in augmented.items():  # the made NAME + x and its NAME are read in the statement's scope
            if id(statement) in self.function_of:
                self.function_of[made] = self.function_of[id(statement)]
                self.function_of[id(made_nodes[made].left)] = self.function_of[id(statement)]
        self._locals = index.function_locals
        self._function_spans = sorted(((node.lineno, node.end_lineno or node.lineno, node) for node in index.functions),
                                      key=lambda span: span[0])
        self._function_by_line: dict[int, ast.AST] | None = None  # made at the first read that needs it
        self.notes: list[str] = []
        self.paths = PathReader(index, self, submission)

    def _owner(self, name: str, node: ast.AST) -> ast.AST | None:
        """The function whose own variable `name` is where node uses it (None: the module's): the innermost
        function around it that binds the name and does not declare it global."""
        function = self.function_of.get(id(node))
        while function is not None and name not in self._locals.get(id(function), ()):
            function = self.function_of.get(id(function))
        return function

    def _function_at(self, line: int) -> ast.AST | None:
        """The innermost function whose body holds the line, None at module level."""
        if self._function_by_line is None:
            # each function's lines are written over its outer function's, in the order of their first lines:
            # a read is then one look-up, not a scan of every function (a file of thousands of reads of lists
            # changed in place). The cost is each line once per function around it, the depth of nesting
            self._function_by_line = {}
            for start, end, function in self._function_spans:
                if isinstance(function, ast.Lambda):
                    self._function_by_line[start] = function
                self._function_by_line.update(dict.fromkeys(range(start + 1, end + 1), function))
        return self._function_by_line.get(line)

    def _branch_added(self, name: str, bound: tuple[int, ast.AST]) -> bool:
        """Whether the binding is `NAME += [...]` in another block than the list it adds to (an `if`, a loop,
        a function): whether it runs before the read is not static, as for an append there."""
        statement = self._augmented.get(id(bound[1]))
        if statement is None:
            return False
        previous = self.bound(name, bound[0], bound[1])
        if previous is None or not self.is_sequence(previous[1], previous[0]):
            return False
        return self._block.get(id(previous[1])) != self._block.get(id(statement))

    def changed_in_place(self, node: ast.AST, before: int, depth: int = 0) -> bool:
        """Whether node is, or is built from, a name that some statement changes in place."""
        for name in (n for n in ast.walk(node) if isinstance(n, ast.Name)):
            if name.id in self.mutated:
                return True
            bound = self.bound(name.id, before, name)
            if bound is not None and self._branch_added(name.id, bound):
                return True
            if bound is not None and depth < 20 and self.changed_in_place(bound[1], bound[0], depth + 1):
                return True
        return False

    def bound(self, name: str, before: int, at: ast.AST) -> tuple[int, ast.AST] | None:
        """The binding of the name a read at line `before` gets: the last on an earlier line (_latest_by_line).
        `at`: the node read, whose scope decides which bindings it sees: in a function binding the name (a
        parameter, an assignment), that function's own; elsewhere the module's. Another function's local is
        never what it reads (Python raises NameError, or reads the module's), nor an argument's value (None:
        a parameter has no static value)."""
        if name not in self._bindings_by_line:
            return None
        owner = self._owner(name, at)
        lines, last_bound = self._scoped_bindings(name).get(None if owner is None else id(owner), ([], []))
        above = bisect_left(lines, before)  # the bindings on lines before the read
        return last_bound[above - 1] if above else None

    def _scoped_bindings(self, name: str) -> dict[int | None, tuple[list[int], list[tuple[int, ast.AST]]]]:
        """The name's bindings by the function whose own variable they bind (None: the module's), each as
        _latest_by_line orders them; made at the name's first scoped read."""
        found = self._bindings_by_owner.get(name)
        if found is None:
            grouped: dict[int | None, list[tuple[int, ast.AST]]] = {}
            for line, value in self._bindings_by_line[name]:
                owner = self._owner(name, value)
                grouped.setdefault(None if owner is None else id(owner), []).append((line, value))
            found = self._bindings_by_owner[name] = {
                owner: ([line for line, _ in bound], bound) for owner, bound in grouped.items()}
        return found

    def pieces(self, node: ast.AST, before: int) -> list[Piece] | None:
        """The static value of a string or a list of strings, None where it is not static or holds a
        pathlib.Path (torch joins or strips each: a Path fails)."""
        pieces = self.pieces_or_paths(node, before)
        return None if pieces is None or any(piece.path_object for piece in pieces) else pieces

    def file_pieces(self, node: ast.AST, before: int) -> list[Piece] | None:
        """load()'s sources, one piece a file: a string or a list whose elements are strings or pathlib.Paths
        (torch makes each os.path.abspath), not a Path alone (torch iterates it: TypeError). An element of
        several pieces (HERE + "/k.cu") is one file. None where a placeholder is left empty: f"{PREFIX}k.cu" with
        PREFIX from the environment would be ./k.cu, a file the submission may never compile."""
        pieces = self.pieces_or_paths(node, before)
        if pieces is None or unread_lines(pieces) or (any(piece.path_object for piece in pieces)
                                                      and not self.is_sequence(node, before)):
            return None
        return [replace(element[0], text="".join(piece.text for piece in element)) for element in _elements(pieces)]

    def path_alone(self, node: ast.AST, before: int) -> bool:
        """Whether load()'s sources is one pathlib.Path, not a list of them: torch iterates sources, which a
        Path fails (TypeError: 'PosixPath' object is not iterable), where a list of it is built."""
        pieces = self.pieces_or_paths(node, before)
        return (pieces is not None and len(pieces) == 1 and pieces[0].path_object
                and not self.is_sequence(node, before))

    def pieces_or_paths(self, node: ast.AST, before: int, depth: int = 0) -> list[Piece] | None:
        if depth > 20:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [Piece(node.value, node.lineno)]
        if isinstance(node, ast.JoinedStr):
            text = []
            unread = None
            for value in node.values:
                if isinstance(value, ast.Constant):
                    text.append(str(value.value))
                elif isinstance(value, ast.FormattedValue):
                    shown_value = self._placeholder(value, before, depth)
                    if shown_value is None:
                        unread, shown_value = node.lineno, ""
                    text.append(shown_value)
            return [Piece("".join(text), node.lineno, unread=unread)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            # a + b + c nests on the left, one level a term: walked as one chain, so a source of
            # hundreds of concatenated strings is read at the depth of one
            terms = added_terms(node)
            out = self.pieces_or_paths(terms[0], before, depth + 1)
            sequence = self.is_sequence(terms[0], before)  # [a] + [b]: two elements, not one string
            for term in terms[1:]:
                right = self.pieces_or_paths(term, before, depth + 1)
                if out is None or right is None:
                    return None
                if not sequence and any(piece.path_object for piece in out + right):
                    return None  # a Path + a str: TypeError
                out += right if sequence else [replace(piece, joined=True) if index == 0 else piece
                                               for index, piece in enumerate(right)]
            return out
        if isinstance(node, (ast.List, ast.Tuple)):
            out: list[Piece] = []
            for element in node.elts:
                part = self.pieces_or_paths(element, before, depth + 1)
                if part is None:
                    return None
                out.extend(replace(piece, joined=False) if index == 0 else piece for index, piece in enumerate(part))
            return out
        if isinstance(node, ast.Name):
            bound = self.bound(node.id, before, node)
            if bound is None and node.id == "__file__":
                return self._path(node, before, depth)
            if bound is None or self._branch_added(node.id, bound):
                return None
            out = self.pieces_or_paths(bound[1], bound[0], depth + 1)
            return out if out is None or node.id not in self.mutated else self._changed(node.id, bound, out, before)
        if isinstance(node, ast.Call) and call_name(node) in ("dedent", "textwrap.dedent") and node.args:
            inner = self.pieces_or_paths(node.args[0], before, depth + 1)
            if inner is None or any(piece.path_object for piece in inner):
                return None
            unread = next(iter(unread_lines(inner)), None)
            return [Piece(textwrap.dedent(join_pieces(inner)), inner[0].line, unread=unread)] if inner else []
        if isinstance(node, PATH_NODES):
            return self._path(node, before, depth)
        return None

    def _placeholder(self, value: ast.FormattedValue, before: int, depth: int) -> str | None:
        """What an f-string's placeholder puts in the text, None where build cannot be sure: a constant with
        its conversion and a format spec of constants applied, as Python applies them; a path (f"{HERE}/k.cu")
        as is or with !s (str() changes neither a str nor a Path), not with !r (a Path's repr) nor a spec."""
        constant = self.constant(value.value, before)
        if constant is not None:
            converted: object = {-1: constant, ord("s"): str(constant), ord("r"): repr(constant),
                                 ord("a"): ascii(constant)}.get(value.conversion)
            spec = value.format_spec
            if converted is None or (spec is not None and not (isinstance(spec, ast.JoinedStr) and all(
                    isinstance(part, ast.Constant) for part in spec.values))):
                return None
            try:
                return format(converted, "" if spec is None else "".join(str(part.value) for part in spec.values))
            except (ValueError, TypeError):  # a spec the value does not take: Python raises too
                return None
        if value.conversion not in (-1, ord("s")) or value.format_spec is not None:
            return None
        path = self.paths.value(value.value, before, depth + 1)
        return None if path is None else str(path)

    def _path(self, node: ast.AST, before: int, depth: int) -> list[Piece] | None:
        value = self.paths.value(node, before, depth + 1)
        if value is None:
            return None
        return [Piece(str(value), node.lineno, path_object=isinstance(value, PurePosixPath))]

    def _changed(self, name: str, bound: tuple[int, ast.AST], out: list[Piece], before: int) -> list[Piece] | None:
        """A list bound to `name` as the changes that run between its binding and the read at `before` leave
        it: append, extend and insert of static values, each a statement of the binding's own block (they
        run, in order, before the line); None where any other change may reach it (a change in another
        block, a branch or another function, through another name, a remove, pop or item assignment), which
        build cannot follow without running the file. A change the read cannot see is left out: one after
        a read in the same run of code, one in a function defined after a module-level read, one of another
        function's own variable of the name. Module-level changes all run before a read inside a function
        (custom_kernel's), wherever they are written."""
        if name in self._through_alias:
            return None
        binding_line, value = bound
        block = self._block.get(id(value))
        elements = _elements(out)
        for line, change in self._reaching(name, bound, before):
            if change is None or block is None or self._block.get(id(change)) != block:
                return None
            call = change.value
            assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            if call.keywords or any(isinstance(argument, ast.Starred) for argument in call.args):
                return None
            if call.func.attr in ("append", "insert") and len(call.args) == (1 if call.func.attr == "append" else 2):
                value = call.args[-1]
                element = None if self.is_sequence(value, line) else self.pieces_or_paths(value, line)
                at = len(elements) if call.func.attr == "append" else self.constant(call.args[0], line)
                if element is None or not isinstance(at, int) or isinstance(at, bool):
                    return None
                elements.insert(at, [replace(piece, joined=index > 0) for index, piece in enumerate(element)])
            elif call.func.attr == "extend" and len(call.args) == 1 and self.is_sequence(call.args[0], line):
                added = self.pieces_or_paths(call.args[0], line)
                if added is None:
                    return None
                elements.extend(_elements(added))
            else:
                return None
        return [piece for element in elements for piece in element]

    def _reaching(self, name: str, bound: tuple[int, ast.AST], before: int) -> Iterator[tuple[int, ast.Expr | None]]:
        """(line, statement) of the changes of the list bound to `name` that the read at `before` sees (as
        _changed says), in the order of their lines, as far as _changed needs them: up to the first it cannot
        follow. Those of the list's own variable only (not another function's of the name): in the read's
        function between the binding and the read; where the read is in a function, the module's below the
        binding and every other function's; where it is at module level, the functions' written above it.

        A change _changed follows stands in the binding's own block, so in the binding's function: of the
        changes of any other function only the first is needed, where _changed stops. A read bisects the
        lines of a few functions' changes where it scanned every change of the name: a file rebinding and
        appending to its flags before each of thousands of calls is read in n log n, not n squared."""
        binding_line, value = bound
        owner = self._owner(name, value)
        changes = self._owned_changes(name).get(None if owner is None else id(owner))
        if changes is None:
            return iter(())
        read_in = self._function_at(before)
        reader = None if read_in is None else id(read_in)
        binder = self.function_of.get(id(value))
        binder_key = None if binder is None else id(binder)
        streams: list[Iterator[_Change]] = [changes.between(reader, binding_line, before)]
        if reader is not None:
            streams.append(changes.between(None, binding_line, None))  # the module runs before the function
            others_before = None  # any other function may run before a read inside one
        else:
            others_before = before  # a module-level read: the functions written above it
        if binder_key is not None and binder_key != reader:
            streams.append(changes.between(binder_key, None, others_before))
        first = changes.first_outside({reader, binder_key}, others_before)
        if first is not None:
            streams.append(iter([first]))
        return ((change.line, change.statement) for change in heapq.merge(*streams, key=lambda change: change.order))

    def _owned_changes(self, name: str) -> dict[int | None, _OwnedChanges]:
        """The changes in place of `name` by the function whose own variable they change (None: the
        module's), each group by the function they are written in; made once per name."""
        found = self._changes_by_owner.get(name)
        if found is None:
            grouped: dict[int | None, list[_Change]] = {}
            for order, (line, statement, node) in enumerate(self._changes.get(name, [])):
                owner = self._owner(name, node)
                written_in = self.function_of.get(id(node))
                grouped.setdefault(None if owner is None else id(owner), []).append(
                    _Change(order, line, statement, None if written_in is None else id(written_in)))
            found = self._changes_by_owner[name] = {owner: _OwnedChanges(changes) for owner, changes in grouped.items()}
        return found

    def is_sequence(self, node: ast.AST, before: int) -> bool:
        """Whether a value is a list or tuple (a literal, a sum starting with one, a name bound to one)."""
        return self._is_literal_of(node, before, (ast.List, ast.Tuple))

    def is_tuple(self, node: ast.AST, before: int) -> bool:
        """Whether a value is a tuple, as is_sequence reads it: torch appends its own link flags to
        extra_ldflags, which a tuple fails."""
        return self._is_literal_of(node, before, (ast.Tuple,))

    def _is_literal_of(self, node: ast.AST, before: int, kinds: tuple[type[ast.AST], ...], depth: int = 0) -> bool:
        """Whether a value is a literal of `kinds`, a sum whose first term is one, or a name bound to one
        (followed 20 deep at most: a name bound to itself ends there)."""
        if isinstance(node, kinds):
            return True
        if isinstance(node, ast.BinOp) and depth < 20:
            return self._is_literal_of(added_terms(node)[0], before, kinds, depth + 1)
        if isinstance(node, ast.Name) and depth < 20 and (bound := self.bound(node.id, before, node)):
            return self._is_literal_of(bound[1], bound[0], kinds, depth + 1)
        return False

    def holds_path(self, node: ast.AST, before: int) -> bool:
        """Whether a static value is or holds a pathlib.Path (Path("inc"), [HERE / "inc"])."""
        pieces = self.pieces_or_paths(node, before)
        return pieces is not None and any(piece.path_object for piece in pieces)

    def constant(self, node: ast.AST, before: int) -> int | float | str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)):
            return node.value
        if isinstance(node, ast.Name):
            bound = self.bound(node.id, before, node)
            return None if bound is None else self.constant(bound[1], bound[0])
        return None

    def names(self, node: ast.AST | None, before: int) -> list[str] | None:
        """load_inline's functions=: a name, a list of names or a {name: docstring} dict; None when
        absent or not static (nothing to check)."""
        if node is None or (isinstance(node, ast.Constant) and node.value is None):
            return None
        if isinstance(node, ast.Name):
            bound = self.bound(node.id, before, node)
            return None if bound is None or node.id in self.mutated else self.names(bound[1], bound[0])
        if isinstance(node, ast.Dict):
            keys = [self.constant(key, before) if key is not None else None for key in node.keys]
            return [str(key) for key in keys] if all(isinstance(key, str) for key in keys) else None
        if isinstance(node, (ast.List, ast.Tuple)):
            names = [self.constant(element, before) for element in node.elts]
            return [str(name) for name in names] if all(isinstance(name, str) for name in names) else None
        name = self.constant(node, before)
        return [name] if isinstance(name, str) else None

    def flag_list(self, node: ast.AST | None, before: int) -> tuple[list[str] | None, str | None]:
        """(extra_cuda_cflags as torch gets them, why torch fails on them, else None). torch strips each
        element: a str is iterated character by character ("-O3" is the flags -, O and 3, which nvcc
        refuses), an int has no .strip(). An element made of several pieces ("-O" + LEVEL) is one flag.
        A value that is not static is None, with a note: built without them."""
        if node is None or (isinstance(node, ast.Constant) and node.value is None):
            return [], None
        foreign = self._non_string_element(node, before)
        if foreign is not None:
            return [], _foreign_flag(*foreign)
        pieces = self.pieces(node, before)
        if pieces is None and self.changed_in_place(node, before):
            self.notes.append(f"line {node.lineno}: extra_cuda_cflags is a list changed in place where build cannot"
                              " follow it without running the file (only append, extend, insert and += of static"
                              " values, each a statement of the list's own block, are followed); built without them")
            return None, None
        if pieces is None:
            self.notes.append(f"line {node.lineno}: extra_cuda_cflags is not a static expression; built without them")
            return None, None
        if not self.is_sequence(node, before):
            text = join_pieces(pieces)
            if not text:  # torch reads `flags or []`: an empty string is no flags
                return [], None
            return [], (f"is a str ({text!r}), not a list: torch reads each of its characters as a flag and nvcc"
                        f" fails; give a list, {text.split()!r}")
        flags: list[str] = []
        unread: list[int] = []  # the lines of the flags' placeholders left empty, by flag
        for piece in pieces:
            if piece.joined and flags:
                flags[-1] += piece.text
                unread[-1] = unread[-1] if unread[-1] is not None else piece.unread
            else:
                flags.append(piece.text)
                unread.append(piece.unread)
        # a flag left incomplete is passed on (-DTAG= compiles as the file's -DTAG=<pid> does), but not one that
        # names the arch: -arch=sm_ would read as no arch named, and the build would be for another arch
        arch_flag = next((flag for index, (flag, line) in enumerate(zip(flags, unread))
                          if line is not None and names_an_arch(flag, flags[index - 1] if index else None)), None)
        if arch_flag is not None:
            self.notes.append(f"line {node.lineno}: extra_cuda_cflags' {arch_flag!r} is an f-string whose placeholder"
                              " build cannot read, and it names the arch; built without them")
            return None, None
        self.notes.extend(unread_notes(pieces))
        return flags, None

    def _non_string_element(self, node: ast.AST, before: int, depth: int = 0) -> tuple[str, str] | None:
        """(the element as written, its type) of the first element of a list of flags that is statically not a
        str (3, None, b"-O3", a list, a tuple, a dict, a name bound to one), else None. An element whose value
        is not static is left to pieces(), which says so."""
        if depth > 20:
            return None
        if isinstance(node, ast.Name):
            bound = self.bound(node.id, before, node)
            return None if bound is None else self._non_string_element(bound[1], bound[0], depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            for term in added_terms(node):
                if self.is_sequence(term, before):
                    found = self._non_string_element(term, before, depth + 1)
                    if found is not None:
                        return found
            return None
        if isinstance(node, (ast.List, ast.Tuple)):
            for element in node.elts:
                kind = self._type_other_than_str(element, before)
                if kind is not None:
                    return shown(element), kind
        return None

    def _type_other_than_str(self, node: ast.AST, before: int, depth: int = 0) -> str | None:
        """The type of a value statically known not to be a str, as a message names it (an int, None, a
        list), else None: a str, or a value build cannot tell without running the file."""
        if depth > 20:
            return None
        if isinstance(node, ast.Constant):
            return None if isinstance(node.value, str) else _kind_of(node.value)
        for types, kind in _DISPLAYS:
            if isinstance(node, types):
                return kind
        if isinstance(node, ast.Name):
            bound = self.bound(node.id, before, node)
            return None if bound is None else self._type_other_than_str(bound[1], bound[0], depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # [a] + [b] is a list, "-O" + "3" a str
            return self._type_other_than_str(added_terms(node)[0], before, depth + 1)
        return None

    def str_for_list(self, node: ast.AST | None, before: int) -> Piece | None:
        """The value of an argument torch iterates as a list of str (extra_include_paths, extra_cflags,
        extra_ldflags) where it is statically one str, which torch then reads character by character, as one
        piece (unread: a placeholder left empty). None where it is a list or a tuple, not static, None or
        empty (torch reads `value or []`: no element)."""
        if node is None or self.is_sequence(node, before):
            return None
        pieces = self.pieces(node, before)
        text = join_pieces(pieces or [])
        if not pieces or not text:
            return None
        return Piece(text, pieces[0].line, unread=next(iter(unread_lines(pieces)), None))

    def folders(self, node: ast.AST | None, before: int) -> list[str] | None:
        """extra_include_paths, one str a folder; None where not static, or where a placeholder is left empty
        (f"{os.environ['X']}/include" would be /include, a folder the submission never names)."""
        if node is None or (isinstance(node, ast.Constant) and node.value is None):
            return []
        pieces = self.pieces(node, before)
        if pieces is None or unread_lines(pieces):
            return None
        return elements(pieces)  # "inc/" + NAME: one folder


@dataclass(frozen=True)
class _Change:
    order: int  # its place among the name's changes: by line, one line's in the order they were found
    line: int
    statement: ast.Expr | None  # NAME.append/extend/insert(...) standing alone; None for a change build cannot follow
    written_in: int | None  # the id of the function it is written in, None at module level


class _OwnedChanges:
    """The changes of one variable (a name of one function, or of the module), by the function they are
    written in, each function's in the order of their lines."""

    def __init__(self, changes: list[_Change]) -> None:
        self._by_function: dict[int | None, list[_Change]] = {}
        for change in changes:
            self._by_function.setdefault(change.written_in, []).append(change)
        self._lines = {function: [change.line for change in found] for function, found in self._by_function.items()}
        # the functions by their first change: the first change outside a few functions is a short look
        self._firsts = sorted((found[0] for function, found in self._by_function.items() if function is not None),
                              key=lambda change: change.order)

    def between(self, function: int | None, after: int | None, before: int | None) -> Iterator[_Change]:
        """The changes written in `function` (None: at module level) on lines after `after` and before
        `before` (None: no bound). Taken one by one: a read stops at the first change it cannot follow."""
        found = self._by_function.get(function)
        if not found:
            return iter(())
        lines = self._lines[function]
        start = 0 if after is None else bisect_right(lines, after)
        end = len(lines) if before is None else bisect_left(lines, before)
        return (found[position] for position in range(start, end))

    def first_outside(self, functions: set[int | None], before: int | None) -> _Change | None:
        """The first change written in a function (not at module level) other than `functions`, where it is
        on a line before `before` (None: on any line)."""
        for change in self._firsts:
            if change.written_in not in functions:
                return change if before is None or change.line < before else None
        return None


def _latest_by_line(bound: list[tuple[int, ast.AST]]) -> list[tuple[int, ast.AST]]:
    """The bindings in ascending order of their lines: the binding a read after the first i + 1 lines gets
    is the i-th, the last by line (of one line's, the last in ast.walk's order). The
    last in walk order among all earlier lines was taken before: walk order is breadth-first, so a binding
    inside an `if` beat a later one at module level, and build compiled the source the file had replaced."""
    order = sorted(range(len(bound)), key=lambda position: bound[position][0])  # stable: one line's in walk order
    return [bound[position] for position in order]


def elements(pieces: list[Piece]) -> list[str]:
    """A list's static value, one str an element: an element of several pieces ("-O" + LEVEL) is one."""
    return ["".join(piece.text for piece in element) for element in _elements(pieces)]


def _elements(pieces: list[Piece]) -> list[list[Piece]]:
    """The pieces of a list, element by element (a joined piece continues its element)."""
    elements: list[list[Piece]] = []
    for piece in pieces:
        if piece.joined and elements:
            elements[-1].append(piece)
        else:
            elements.append([replace(piece, joined=False)])
    return elements


def _in_place_changes(index: SyntaxIndex, names: set[str]) -> dict[str, list[tuple[int, ast.Expr | None, ast.AST]]]:
    """(line, statement, node) of each change in place of the names: the statement where it is a call of
    append, extend or insert standing alone (NAME.append(...)), which build can follow; None for any
    other (an item assigned or deleted, remove, pop, a call inside an expression), which it cannot."""
    changes: dict[str, list[tuple[int, ast.Expr | None, ast.AST]]] = {}
    for statement in index.standalone_changes:
        call = statement.value
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        assert isinstance(call.func.value, ast.Name)
        if call.func.value.id in names:
            changes.setdefault(call.func.value.id, []).append((statement.lineno, statement, statement))
    # the calls of those statements are followed there; a call of another name's is not one of the names'
    followed = {id(statement.value) for statement in index.standalone_changes}
    for node in index.writes:
        if (isinstance(node, ast.Call) and id(node) not in followed and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id in names and node.func.attr in _IN_PLACE):
            changes.setdefault(node.func.value.id, []).append((node.lineno, None, node))
        targets = (node.targets if isinstance(node, (ast.Assign, ast.Delete))
                   else [node.target] if isinstance(node, ast.AugAssign) else [])
        for target in targets:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id in names:
                changes.setdefault(target.value.id, []).append((node.lineno, None, node))
    for found in changes.values():
        found.sort(key=lambda change: change[0])
    return changes


_DISPLAYS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    ((ast.List, ast.ListComp), "a list"), (ast.Tuple, "a tuple"), ((ast.Dict, ast.DictComp), "a dict"),
    ((ast.Set, ast.SetComp), "a set"))
_UNHASHABLE = ("a list", "a dict", "a set")


def _foreign_flag(written: str, kind: str) -> str:
    """Why torch fails on a flag that is no str: it hashes every flag (its extension versioner), which a list,
    a dict or a set fails, then calls .strip() on each, which a str and bytes have, then looks for "arch"
    in each (_get_cuda_arch_flags), which bytes fail."""
    what = "which is no str" if kind == "None" else f"{kind}, not a str"
    if kind in _UNHASHABLE:
        fails = f"torch hashes each flag and fails (TypeError: unhashable type: '{kind.split()[-1]}')"
    elif kind == "bytes":  # bytes have .strip(): torch fails when it looks for "arch" in them
        fails = "torch looks for \"arch\" in each flag and fails (TypeError)"
    else:
        fails = "torch calls .strip() on each flag and fails (AttributeError)"
    fix = (f"add its flags to the list instead ([...] + {written})" if kind in ("a list", "a tuple")
           else "write it as a string")
    return f"hold {written}, {what}: {fails}; {fix}"


def _kind_of(value: object) -> str:
    """A constant's type as a message names it: an int, a float, None, bytes."""
    if value is None or isinstance(value, bytes):
        return "None" if value is None else "bytes"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"
