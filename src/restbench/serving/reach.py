"""Which mutants a test never reached: the statements each edit changes, marked in the
original's servers.

A mutant whose edit only changes function bodies (the `patch` way of `originals`) differs from
the original in those statements alone. A test that ran on the original without executing any
of them sends the mutant the same requests, meets the same state and gets the same answers: its
run on the mutant is its run on the original, so the harness records the original's outcome for
it instead of running it again (the per-test coverage analysis of mutation-testing tools).

How the original's servers learn what ran: the launcher compiles, once per service, a copy of
every function some edit changes with a marker call before each of its statements (bodies of
nested functions and classes count as their `def`/`class` statement), and each server of the
original swaps those code objects in, as a mutant's server swaps in its edit's. What the marker
records is the statement's number; nothing else about the function changes (same names, same
lines, same closure), so the original behaves as the original.

It relies on what every execution relies on: a reset returns the service to the same state, so
a test's run depends on the test and the code alone. Process state that a reset keeps is
accounted for where it is known: what ran while the server started or reset counts as reached
by every test, and the statements of a function behind a cache decorator, once run on a server,
by every later test there (they use its kept result).

Conservative wherever it cannot be exact: lines inserted between statements, changed lines
outside any statement, and edits that change which names are local to a function (a local that
is never assigned at run time still shadows a global) count as reached as soon as the function
runs; anything but a `patch` edit (re-imports, a whole new import, services in other languages)
is always run.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import functools
import types
from collections.abc import Iterator
from dataclasses import dataclass, field

from restbench import python_ast
from restbench.serving import originals

MARKER = "__restbench_reached__"
_LRU_WRAPPER = getattr(functools, "_lru_cache_wrapper", ())  # what cache and lru_cache return
Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class _Statement:
    number: int
    first: int  # its first line, decorators included
    last: int
    blocks: list[list[_Statement]] = field(default_factory=list)


@dataclass
class _Tracked:
    """A function some edit changes, with its statements numbered."""

    statements: list[_Statement]  # the top-level ones, each with its nested blocks
    node: Function  # in the launcher's fresh parse of the file, which `_marked_code` marks
    classes: list[ast.ClassDef]  # the classes it is defined in

    @property
    def first(self) -> int:
        return originals._first_line(self.node)

    @property
    def last(self) -> int:
        return self.node.end_lineno or self.node.lineno


@dataclass
class ReachPlan:
    """What the original's servers swap in, and which statements reach each implementation."""

    # The launcher's function objects with the marked copy of their code.
    codes: list[tuple[list[types.FunctionType], types.CodeType]] = field(default_factory=list)
    # Implementation id -> the statement numbers whose running means the test reached its edit.
    needs: dict[str, frozenset[int]] = field(default_factory=dict)
    # Statements of functions whose results a cache keeps across resets (functools.cache,
    # lru_cache, cached_property): once run on a server, every later test there uses them.
    kept: frozenset[int] = frozenset()


def plan(original: originals.Original, edits: list[tuple[str, str, str]]) -> ReachPlan:
    """The plan for `edits`, each (implementation id, file relative to the service root, the
    file's edited text). Edits that are not `patch` edits are left out: always run."""
    numbers = iter(range(1, 1 << 30))
    files: dict[str, ast.Module] = {}
    tracked: dict[tuple[str, str], _Tracked] = {}
    result = ReachPlan()
    for implementation_id, relative, text in edits:
        patches = originals._code_patches(original, relative, text,
                                          str(original.root / relative))
        if not patches:
            continue
        if relative not in files:
            files[relative] = python_ast.parse(_original_text(original, relative))
        needs: set[int] = set()
        for functions, new_code in patches:
            qualname = functions[0].__code__.co_qualname
            key = (relative, qualname)
            if key not in tracked:
                found = _find_function(files[relative], qualname)
                statements = _numbered(found[0], numbers) if found is not None else []
                if found is None or not statements:
                    needs.clear()
                    break
                tracked[key] = _Tracked(statements, *found)
            same_scope = _scope(functions[0].__code__) == _scope(new_code)
            needs |= _statements_touched(tracked[key], original.parsed[relative].lines,
                                         text.splitlines(), same_scope)
        else:
            if needs:
                result.needs[implementation_id] = frozenset(needs)
    cached = _cached_functions(original)
    kept: set[int] = set()
    for (relative, qualname), function in tracked.items():
        numbers_of = {s.number for s in _walk(function.statements)}
        live = original.functions.get((relative, qualname), [])
        marked = _marked_code(files[relative], function, live)
        if marked is None:  # cannot be marked: whoever needs it is always run
            result.needs = {i: n for i, n in result.needs.items() if not n & numbers_of}
            continue
        if any(id(f) in cached for f in live):
            kept |= numbers_of
        result.codes.append((live, marked))
    result.kept = frozenset(kept)
    return result


def _cached_functions(original: originals.Original) -> set[int]:
    """The ids of the package's functions behind a cache decorator (module-level, or in a class
    of the package)."""
    found: set[int] = set()
    for module in original.modules.values():
        values = list(vars(module).values())
        values += [value for cls in values if isinstance(cls, type)
                   and cls.__module__ == module.__name__ for value in vars(cls).values()]
        for value in values:
            if isinstance(value, _LRU_WRAPPER):
                found.add(id(getattr(value, "__wrapped__", None)))
            elif isinstance(value, functools.cached_property):
                found.add(id(value.func))
    return found


def _original_text(original: originals.Original, relative: str) -> str:
    return "\n".join(original.parsed[relative].lines) + "\n"


def _find_function(tree: ast.Module, qualname: str) -> tuple[Function, list[ast.ClassDef]] | None:
    nodes: list[ast.stmt] = tree.body
    classes: list[ast.ClassDef] = []
    *outer, name = qualname.split(".")
    for class_name in outer:
        match = [n for n in nodes if isinstance(n, ast.ClassDef) and n.name == class_name]
        if len(match) != 1:
            return None
        classes.append(match[0])
        nodes = match[0].body
    match_functions = [n for n in nodes if isinstance(n, Function) and n.name == name]
    return (match_functions[0], classes) if len(match_functions) == 1 else None


def _blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists nested in `node` that run as part of its function (not the bodies of
    nested functions or classes, which run when those are called or defined)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return []
    blocks = [getattr(node, name) for name in ("body", "orelse", "finalbody")
              if isinstance(getattr(node, name, None), list)]
    blocks += [handler.body for handler in getattr(node, "handlers", [])]
    blocks += [case.body for case in getattr(node, "cases", [])]
    return [block for block in blocks if block]


def _numbered(function: Function, numbers: Iterator[int]) -> list[_Statement]:
    def number(block: list[ast.stmt]) -> list[_Statement]:
        return [_Statement(next(numbers), originals._first_line(node),
                           node.end_lineno or node.lineno,
                           [number(inner) for inner in _blocks(node)]) for node in block]

    return number(originals._without_docstring(function.body))


def _walk(statements: list[_Statement]) -> Iterator[_Statement]:
    for statement in statements:
        yield statement
        for block in statement.blocks:
            yield from _walk(block)


def _innermost(statements: list[_Statement], line: int) -> _Statement | None:
    for statement in statements:
        if statement.first <= line <= statement.last:
            for block in statement.blocks:
                inner = _innermost(block, line)
                if inner is not None:
                    return inner
            return statement  # its own lines: a header, `else:`, an `except` clause
    return None


def _statements_touched(function: _Tracked, old_lines: list[str], new_lines: list[str],
                        same_scope: bool) -> set[int]:
    """The statements of `function` that run whenever the test gets to what the edit changed
    in it: the innermost statement holding each changed line; the first statement (the
    function ran at all) where the edit inserts lines, changes lines outside a statement or
    changes the function's scope."""
    whole = {function.statements[0].number}
    if not same_scope:
        return whole
    touched: set[int] = set()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, old_start, old_end, _, _ in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "insert":  # between two old lines: where exactly it runs, only a trace knows
            if function.first <= old_start <= function.last:
                touched |= whole
            continue
        for line in range(old_start + 1, old_end + 1):
            if not function.first <= line <= function.last:
                continue  # another changed function's line
            statement = _innermost(function.statements, line)
            touched |= {statement.number} if statement is not None else whole
    return touched or whole


def _marked_code(tree: ast.Module, function: _Tracked, live: list[types.FunctionType]
                 ) -> types.CodeType | None:
    """The function's code with a marker call before each numbered statement, compiled (in
    `tree`, the file's parse) as the patch way compiles an edited function; None if it would not
    fit the `live` function objects."""
    if not live:
        return None
    node, classes = function.node, function.classes
    numbered = iter(_walk(function.statements))

    def mark(block: list[ast.stmt]) -> list[ast.stmt]:
        """`block` with markers; its nested blocks are marked in place, in `_numbered`'s order."""
        marked: list[ast.stmt] = []
        for statement in block:
            number = next(numbered).number
            for inner in _blocks(statement):
                inner[:] = mark(inner)
            call = ast.Expr(ast.Call(ast.Name(MARKER, ast.Load()), [ast.Constant(number)], []))
            marked += [ast.fix_missing_locations(ast.copy_location(call, statement)), statement]
        return marked

    docstring = node.body[:len(node.body) - len(originals._without_docstring(node.body))]
    node.body = docstring + mark(originals._without_docstring(node.body))
    code = originals._compiled_alone(tree, classes, node, live[0].__code__.co_filename)
    if code is None or any(_scope(f.__code__) != _scope(code)
                           or f.__code__.co_freevars != code.co_freevars for f in live):
        return None
    return code


def _scope(code: types.CodeType) -> tuple[object, ...]:
    """What an edit may not change in a function's code object for it to be judged statement
    by statement: with these equal, every name the function uses resolves the same way (local,
    closure cell or global) in the original and the mutant, and the function is the same kind
    (generator, coroutine) with the same parameters."""
    parameters = code.co_argcount + code.co_kwonlyargcount
    return (code.co_varnames[:parameters], frozenset(code.co_varnames),
            frozenset(code.co_cellvars), frozenset(code.co_freevars), code.co_flags,
            code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount)


class ReachRecorder:
    """In a server of the original: the statements that ran since the last reset, and those
    that ran while it started or reset (they count for every test).

    A server's first test runs without a reset (the state `create_app` left is the seed state,
    by the service contract), so what a reset runs is not known until the first one: until
    then no edit counts as never reached (on another server the same test may come after a
    reset, which may run an edited statement)."""

    def __init__(self, reach_plan: ReachPlan) -> None:
        self.needs = reach_plan.needs
        self.kept = reach_plan.kept
        self.ran: set[int] = set()
        self.always: set[int] = set()
        self._reset_seen = False

    def started(self) -> None:
        """Once the server serves: what ran while it started."""
        self.always |= self.ran
        self.ran.clear()

    def before_reset(self) -> None:
        self.always |= self.ran & self.kept  # a cached result outlives the reset
        self.ran.clear()

    def after_reset(self) -> None:
        self.always |= self.ran
        self.ran.clear()
        self._reset_seen = True

    def unreached(self) -> list[str]:
        """The implementations whose edited statements did not run since the last reset (none
        before the first reset)."""
        if not self._reset_seen:
            return []
        ran = self.ran | self.always
        return sorted(i for i, needs in self.needs.items() if not needs & ran)


def install(original: originals.Original, reach_plan: ReachPlan) -> ReachRecorder:
    """In a forked server of the original (its modules active, as `activate` left them): swaps
    in the marked code and returns what records the marks."""
    recorder = ReachRecorder(reach_plan)
    setattr(builtins, MARKER, recorder.ran.add)
    for functions, code in reach_plan.codes:
        for function in functions:
            function.__code__ = code
    originals._forget_endpoint_contexts(original.app, {id(f) for functions, _ in reach_plan.codes
                                                       for f in functions})
    return recorder
