"""Mutant switching: a service's original app, imported once in the launcher, turned into a
mutant inside each forked server child.

The launcher imports a service's original `app` package once (and runs `create_app` once on a
scratch SQLite file and builds the app's OpenAPI document, so that per-process caches such as
seeded password hashes and FastAPI's per-route state are warm), then
keeps its modules aside. A child forked for an implementation of that service puts them back and
applies the implementation's edit (one file, see `mutation.apply`) in the cheapest way that gives
exactly the edited behaviour:

- `patch`: the edit changes only the bodies of functions that never ran in the launcher (not at
  import, not in the warm-up). Those functions get the edited file's code objects; nothing else
  differs between the edited module and the original, so the result is the edited module.
- `reimport`: otherwise the edited module and every module that imports it (directly or not) are
  imported again from the implementation's materialized copy; the others stay as imported.
- `full`: where a module to import again defines SQLAlchemy mapped classes (they cannot be
  defined twice on one declarative base), or anything in the faster ways fails, the whole package
  is imported from the copy, as a fresh process would.

With `patch`, the child needs no `create_app` of its own either: the warm-up's app is what
`create_app` would build again (nothing that ran in it changed), so the server reuses it
(`reusable_app`). On SQLite the warm-up gives it WARM_UP_URL, a path that each process resolves
in its own working folder, so a child that copies the seeded warm-up database (`template`) into
its folder has the app on a database of its own. On PostgreSQL the app's URL names no database
(libpq takes PGDATABASE, which each child sets to its own), and the harness makes each server's
database as a copy of the seeded warm-up database.
"""

from __future__ import annotations

import ast
import gc
import importlib
import inspect
import os
import shutil
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from restbench import python_ast

PACKAGE = "app"
PATCH, REIMPORT, FULL = "patch", "reimport", "full"
WARM_APP = "warm app"  # patch, and the warm-up's app reused (see `reusable_app`)
# The file name of every server's SQLite database, in a folder of its own (`serving.databases`).
SQLITE_FILE = "service.sqlite3"
# The warm-up's database: the kernel resolves /proc/self/cwd for the process that opens the file,
# and SQLAlchemy fixes the path when the engine is made, so a relative URL would not do.
WARM_UP_URL = f"sqlite:////proc/self/cwd/{SQLITE_FILE}"
PG_DATABASE = "PGDATABASE"


@dataclass(frozen=True)
class ParsedFile:
    """An original file, parsed in the launcher: its text's lines, its tree, its function bodies
    (`_bodies`) and its skeleton (`_skeleton`, dumped)."""

    lines: list[str]
    tree: ast.Module
    bodies: dict[str, str] | None
    skeleton: str


@dataclass
class Original:
    """A service's original app package, imported in the launcher and kept out of sys.modules."""

    root: Path
    modules: dict[str, types.ModuleType]
    # (file relative to root, qualified name) -> the live function objects with that code
    functions: dict[tuple[str, str], list[types.FunctionType]] = field(default_factory=dict)
    # (file relative to root, qualified name) of every function that ran in the launcher
    ran: set[tuple[str, str]] = field(default_factory=set)
    warm_error: str = ""
    # The warm-up's app, and its database in the seeded state it was left in: a SQLite file,
    # or a PostgreSQL database that the harness copies for each server (`database_seeded`)
    app: object = None
    template: Path | None = None
    template_database: str | None = None
    # file relative to root -> what `_code_patches` compares a mutant's version with
    parsed: dict[str, ParsedFile] = field(default_factory=dict)
    # module name -> the package modules it imports (see `prepare`)
    imports: dict[str, set[str]] | None = None


def prepare(original: Original, changed: list[str]) -> None:
    """Parses the original of each changed file, and every module for its imports, once, in
    the launcher, so that the children forked for mutants only parse their own version."""
    if changed:
        _import_graph(original)
    for relative in changed:
        if relative not in original.parsed:
            try:
                text = (original.root / relative).read_text(encoding="utf-8")
                tree, blanked = python_ast.parse(text), python_ast.parse(text)
            except (OSError, SyntaxError, ValueError):
                continue
            original.parsed[relative] = ParsedFile(text.splitlines(), tree, _bodies(tree),
                                                   ast.dump(_skeleton(blanked)))


def _package_modules() -> dict[str, types.ModuleType]:
    return {name: module for name, module in sys.modules.items()
            if name == PACKAGE or name.startswith(PACKAGE + ".")}


def load(root: Path, warm_up_in: Path | None, warm_up_database: str | None = None) -> Original:
    """Imports `root`'s app package (and warms it up on a SQLite database in the folder
    `warm_up_in`, or on the PostgreSQL database `warm_up_database`), recording which of its
    functions ran; leaves sys.modules and sys.path as they were."""
    app_dir = str(root / PACKAGE)
    ran_files: set[tuple[str, str]] = set()

    def profile(frame: types.FrameType, event: str, arg: object) -> None:
        if event == "call":
            code = frame.f_code
            if code.co_filename.startswith(app_dir):
                ran_files.add((code.co_filename, code.co_qualname))

    for name in _package_modules():  # another service's package must not shadow this one
        del sys.modules[name]
    sys.path.insert(0, str(root))
    original = Original(root, {})
    try:
        sys.setprofile(profile)
        try:
            main = importlib.import_module(f"{PACKAGE}.main")
            if warm_up_database is not None:
                try:
                    name = _select_database(warm_up_database)
                    original.app = main.create_app(_without_database(warm_up_database))
                    original.app.openapi()
                    _configure_mappers()
                    original.template_database = name  # only once seeded
                except Exception as exc:  # noqa: BLE001 - the child reports it, with its log
                    original.warm_error = f"{type(exc).__name__}: {exc}"
            elif warm_up_in is not None:
                here = os.getcwd()
                os.chdir(warm_up_in)
                try:
                    original.app = main.create_app(WARM_UP_URL)
                    # Builds what FastAPI otherwise builds on a route's first request (its
                    # dependencies, pydantic adapters), once here for every server. What of the
                    # app runs in it counts as run, as the rest of the warm-up does.
                    original.app.openapi()
                    _configure_mappers()
                    if (warm_up_in / SQLITE_FILE).is_file():
                        original.template = warm_up_in / SQLITE_FILE
                except Exception as exc:  # noqa: BLE001 - the child reports it, with its log
                    original.warm_error = f"{type(exc).__name__}: {exc}"
                finally:
                    os.chdir(here)
        finally:
            sys.setprofile(None)
        _dispose_engines()
        if original.app is not None and still_connected(original):
            # A connection the app keeps outside SQLAlchemy's pool would be shared by every
            # server forked from here: such a service's servers build their own app.
            original.app, original.template, original.template_database = None, None, None
        _fill_endpoint_contexts(original.app)
    finally:
        sys.path.remove(str(root))
        original.modules = _package_modules()
        for name in original.modules:
            del sys.modules[name]
        importlib.invalidate_caches()
    original.ran = {(_relative(root, filename), qualname) for filename, qualname in ran_files}
    for obj in gc.get_objects():
        if isinstance(obj, types.FunctionType) and obj.__code__.co_filename.startswith(app_dir):
            key = (_relative(root, obj.__code__.co_filename), obj.__code__.co_qualname)
            original.functions.setdefault(key, []).append(obj)
    return original


def still_connected(original: Original) -> bool:
    """Whether this process still holds its warm-up database open once the engines are
    disposed: the SQLite file (or its journal), or on PostgreSQL any socket (the launcher
    holds none of its own)."""
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if original.template is not None and target.startswith(str(original.template)):
            return True
        if original.template_database is not None and target.startswith("socket:"):
            return True
    return False


def _relative(root: Path, filename: str) -> str:
    return Path(filename).relative_to(root).as_posix()


def _configure_mappers() -> None:
    """Has SQLAlchemy finish its ORM set-up (relationships resolved, attributes instrumented),
    which it otherwise does on the app's first query: once here, not in every server (~9 ms of
    CPU per conduit server, whose seeding uses no ORM query). A failure is left for that first
    query to meet, as it would have without this."""
    orm = sys.modules.get("sqlalchemy.orm")
    if orm is not None:
        try:
            orm.configure_mappers()
        except Exception:  # noqa: BLE001, S110 - see above
            pass


def _fill_endpoint_contexts(app: object) -> None:
    """FastAPI looks up an endpoint's source file and first line (for its error messages) on
    the route's first request and caches them by the function's id: ~1.5 ms of CPU per server,
    done here once for every route. A child that patches functions forgets the entries they
    change (`_forget_endpoint_contexts`); the endpoints are the launcher's, alive in every
    child, so no id is ever reused for another function."""
    extract = getattr(_fastapi_routing(), "_extract_endpoint_context", None)
    if extract is not None:
        for endpoint in _endpoints(app):
            extract(endpoint)


def _forget_endpoint_contexts(app: object, patched: set[int]) -> None:
    """Drops the cached context of every endpoint that is, or wraps, a patched function (the
    line comes from the unwrapped function)."""
    cache = getattr(_fastapi_routing(), "_endpoint_context_cache", None)
    if not isinstance(cache, dict):
        return
    for endpoint in _endpoints(app):
        try:
            innermost = inspect.unwrap(endpoint, stop=lambda f: id(f) in patched)
        except ValueError:  # a cycle of wrappers: looked up afresh, to be safe
            innermost = None
        if innermost is None or id(innermost) in patched:
            cache.pop(id(endpoint), None)


def _endpoints(app: object) -> list[object]:
    """The endpoint functions of `app`'s routes, those of included routers too."""
    found: list[object] = []
    pending = list(getattr(app, "routes", None) or [])
    while pending:
        route = pending.pop()
        included = getattr(getattr(route, "original_router", None), "routes", None)
        if included is not None:  # FastAPI keeps an included router's routes in the router
            pending.extend(included)
        elif (call := getattr(getattr(route, "dependant", None), "call", None)) is not None:
            found.append(call)
    return found


def _fastapi_routing() -> types.ModuleType | None:
    return sys.modules.get("fastapi.routing")  # a service that does not use FastAPI: None


def _dispose_engines() -> None:
    """Closes the warm-up's database connections: no forked server may share them."""
    try:
        from sqlalchemy.engine import Engine
    except ImportError:
        return
    gc.collect()
    for obj in gc.get_objects():
        if isinstance(obj, Engine):
            obj.dispose()


def activate(original: Original, source: Path, changed: list[str]) -> str:
    """In a forked child: makes `import app` give the implementation materialized in `source`
    whose files `changed` (relative to it) differ from the original. Returns how (see above)."""
    sys.path.insert(0, str(source))
    try:
        return _activate(original, source, changed)
    except Exception:  # noqa: BLE001 - whatever went wrong, a fresh import is always right
        for module_name in _package_modules():
            del sys.modules[module_name]
        return FULL


def _without_database(url: str) -> str:
    """`url` without its database name, which libpq then takes from PGDATABASE at each connect
    (see `_select_database`): the same engine serves any database of the server."""
    from sqlalchemy.engine import make_url

    return make_url(url).set(database="").render_as_string(hide_password=False)


def _select_database(url: str) -> str:
    """Makes this process's next PostgreSQL connections without a database name go to `url`'s
    database; returns its name."""
    from sqlalchemy.engine import make_url

    name = os.environ[PG_DATABASE] = str(make_url(url).database)
    return name


def reusable_app(original: Original, switch: str, database_url: str, seeded: bool) -> object:
    """In a forked child, after `activate` answered `switch`: the warm-up's app, moved onto
    the database at `database_url` (on SQLite a seeded copy goes there; on PostgreSQL it must
    be `seeded`, a copy of the warm-up's), when it behaves exactly as the app
    `create_app(database_url)` would build; else None."""
    if switch != PATCH or original.app is None:
        return None
    if original.template_database is not None:
        if not seeded or not database_url.startswith("postgresql"):
            return None
        _select_database(database_url)
        return original.app
    if original.template is None or not database_url.startswith("sqlite:///"):
        return None
    path = Path(database_url.removeprefix("sqlite:///"))
    if path.name != SQLITE_FILE or not path.is_absolute():
        return None
    shutil.copyfile(original.template, path)
    os.chdir(path.parent)
    return original.app


def _activate(original: Original, source: Path, changed: list[str]) -> str:
    if len(changed) > 1:
        return FULL
    modules = dict(original.modules)
    for module in modules.values():  # modules imported later come from the copy
        if hasattr(module, "__path__"):
            relative = Path(module.__path__[0]).relative_to(original.root)
            module.__path__ = [str(source / relative)]
    if not changed:
        sys.modules.update(modules)
        return PATCH
    relative = changed[0]
    name = _module_name(relative)
    if name not in modules:  # imported later, from the copy
        sys.modules.update(modules)
        return PATCH
    new_text = (source / relative).read_text(encoding="utf-8")
    patches = _code_patches(original, relative, new_text, str(source / relative))
    if patches is not None:
        sys.modules.update(modules)
        for functions, code in patches:
            for function in functions:
                function.__code__ = code
        _forget_endpoint_contexts(original.app, {id(f) for functions, _ in patches
                                                 for f in functions})
        return PATCH
    affected = _importers(original, name)
    if any(_defines_mapped_classes(modules[n]) for n in affected):
        return FULL
    sys.modules.update({n: m for n, m in modules.items() if n not in affected})
    for parent in {n.rpartition(".")[0] for n in affected} - affected:
        if parent in sys.modules:  # `from .routes import users` reads the package attribute
            for child in affected:
                if child.rpartition(".")[0] == parent:
                    sys.modules[parent].__dict__.pop(child.rpartition(".")[2], None)
    try:
        for module_name in sorted(affected, key=lambda n: n != name):
            importlib.import_module(module_name)
    except Exception:  # noqa: BLE001 - any failure: import everything afresh
        for module_name in _package_modules():
            del sys.modules[module_name]
        return FULL
    return REIMPORT


def _module_name(relative: str) -> str:
    parts = Path(relative).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


# --- patch: only function bodies changed ------------------------------------------------------


def _code_patches(original: Original, relative: str, new_text: str,
                  new_filename: str) -> list[tuple[list[types.FunctionType], types.CodeType]] | None:
    """The code objects to swap in when the edit changes nothing but the bodies of functions
    that never ran in the launcher; None when it changes anything else."""
    prepare(original, [relative])
    old = original.parsed.get(relative)
    if old is None or old.bodies is None:
        return None
    edited = _edited_function(old, new_text)
    if edited is not None:
        qualname, node, classes = edited
        changed = [qualname] if old.bodies.get(qualname) != _body_dump(node) else []
    else:
        # The skeleton first: an edit outside the function bodies (a decorator, a signature,
        # a model's field) changes it, and then the bodies need no dump.
        try:
            blanked = python_ast.parse(new_text)
        except SyntaxError:
            return None
        if old.skeleton != ast.dump(_skeleton(blanked)):
            return None
        # A second tree: _skeleton blanked the bodies of `blanked`
        new_bodies = _bodies(python_ast.parse(new_text))
        if new_bodies is None or old.bodies.keys() != new_bodies.keys():
            return None
        changed = [q for q in old.bodies if old.bodies[q] != new_bodies[q]]
    if not changed or any((relative, q) in original.ran for q in changed):
        return None
    if edited is not None:
        # The imports are outside the edited function: the original's are the edited file's.
        new_codes = {qualname: _compiled_alone(old.tree, classes, node, new_filename)}
    else:
        # dont_inherit: this module's own `from __future__` flags must not leak into the code.
        new_codes = dict(_code_objects(compile(new_text, new_filename, "exec",
                                               dont_inherit=True)))
    patches = []
    for qualname in changed:
        functions = original.functions.get((relative, qualname))
        code = new_codes.get(qualname)
        if not functions or code is None:
            return None
        for function in functions:
            current = function.__code__
            if current.co_freevars != code.co_freevars or current.co_flags != code.co_flags:
                return None
        patches.append((functions, code))
    return patches


Function = ast.FunctionDef | ast.AsyncFunctionDef


def _edited_function(old: ParsedFile, new_text: str
                     ) -> tuple[str, Function, list[ast.ClassDef]] | None:
    """The one module- or class-level function whose body (after its docstring) holds every
    line the edit changed, in both versions, at the same place: then everything else in the
    file is the same text and parses the same, so comparing that one body is the whole
    comparison (what `_bodies` and `_skeleton` would find, without dumping the whole file).
    Only that function's new text is parsed (`_parse_alone`). With its qualified name and the
    classes it is defined in (the original's nodes: the same text). None when the edit is not of
    that shape; the full comparison decides then."""
    if any(mark in new_text for mark in _OTHER_LINE_BREAKS):
        return None  # str.splitlines and the tokenizer would number lines differently
    new_lines = new_text.splitlines(keepends=True)
    common = 0
    for before, after in zip(old.lines, new_lines):
        if before != after.rstrip("\r\n"):
            break
        common += 1
    tail = 0
    limit = min(len(old.lines), len(new_lines)) - common
    while tail < limit and old.lines[-1 - tail] == new_lines[-1 - tail].rstrip("\r\n"):
        tail += 1
    shift = len(new_lines) - len(old.lines)
    before = _function_holding(old.tree, old.lines, common + 1, len(old.lines) - tail)
    if before is None:
        return None
    qualname, old_node, classes = before
    new_node = _parse_alone(new_lines, _first_line(old_node), (old_node.end_lineno or 0) + shift,
                            old_node.col_offset)
    # (_holds reads a line only up to a statement's column: its line end does not matter.)
    if new_node is None or new_node.name != old_node.name \
            or not _holds(new_node, new_lines, common + 1, len(new_lines) - tail):
        return None
    if (_body_start(old_node), old_node.end_lineno) != \
            (_body_start(new_node), (new_node.end_lineno or 0) - shift):
        return None
    return qualname, new_node, classes


# Line ends of str.splitlines that Python's tokenizer does not end a line at (\r\n and \n it
# does); the file's own line ends are kept in what `_parse_alone` parses.
_OTHER_LINE_BREAKS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _parse_alone(lines: list[str], first: int, last: int, column: int) -> Function | None:
    """The function statement on lines `first` to `last` (1-based, `lines` with their ends),
    parsed without the rest of the file but at its place in it: its nodes carry the lines and
    columns a parse of the whole file gives them. None unless those lines are exactly one
    function statement starting at `column`. The text before it is the original's and ends
    between two statements (the original function started there), so the parse alone is the
    parse in the file."""
    if first < 2 and column:
        return None
    opening = "\n" * (first - 2) + "if 1:\n" if column else "\n" * (first - 1)
    try:
        module = python_ast.parse(opening + "".join(lines[first - 1:last]))
    except (SyntaxError, ValueError):
        return None
    body = module.body
    if column:
        if len(body) != 1 or not isinstance(body[0], ast.If):
            return None
        body = body[0].body
    if len(body) != 1 or not isinstance(body[0], Function):
        return None
    node = body[0]
    if node.col_offset != column or _first_line(node) != first or node.end_lineno != last:
        return None
    return node


def _function_holding(tree: ast.Module, lines: list[str], first: int, last: int
                      ) -> tuple[str, Function, list[ast.ClassDef]] | None:
    """The module- or class-level function whose body, after its docstring and from the start
    of a line, holds lines `first` to `last` (1-based; `last` is `first - 1` for lines inserted
    before line `first`, which must then have body lines on both sides); with its qualified
    name and the classes it is defined in."""
    low, high = _line_span(first, last)
    nodes: list[ast.stmt] = tree.body
    prefix = ""
    classes: list[ast.ClassDef] = []
    while True:
        holders = [n for n in nodes if _first_line(n) <= low and high <= (n.end_lineno or 0)]
        touched = [n for n in nodes if _first_line(n) <= high and low <= (n.end_lineno or 0)]
        if len(holders) != 1 or len(touched) != 1:
            return None
        node = holders[0]
        if isinstance(node, ast.ClassDef):
            nodes, prefix = node.body, f"{prefix}{node.name}."
            classes.append(node)
            continue
        if not isinstance(node, Function) or not _holds(node, lines, first, last):
            return None
        return prefix + node.name, node, classes


def _line_span(first: int, last: int) -> tuple[int, int]:
    return (first - 1, first) if last < first else (first, last)


def _holds(node: Function, lines: list[str], first: int, last: int) -> bool:
    """Whether lines `first` to `last` (as in `_function_holding`) lie in `node`'s body, after
    its docstring, which starts on a line of its own."""
    low, high = _line_span(first, last)
    start = _body_start(node)
    if start is None or low < start or high > (node.end_lineno or 0):
        return False
    statement = _without_docstring(node.body)[0]
    return not lines[start - 1][:statement.col_offset].strip()


def _compiled_alone(tree: ast.Module, classes: list[ast.ClassDef], function: Function,
                    filename: str) -> types.CodeType | None:
    """The code object of a module- or class-level `function`, compiled in a module that holds
    only it (in its classes, with nothing else in them) and the module's import statements: the
    code a compile of the whole module gives it, for a fraction of the cost. Its names are
    globals, which the compiler treats alike but for imported names (no LOAD_METHOD on them),
    and `from __future__` flags come with the imports; a method's only tie to its class is the
    `__class__` cell, which the class keeps. tests/serving/test_patch_comparison.py checks it on
    every built-in edit."""
    statement: ast.stmt = function
    for cls in reversed(classes):
        statement = ast.ClassDef(name=cls.name, bases=[], keywords=[], body=[statement],
                                 decorator_list=[], lineno=cls.lineno,
                                 col_offset=cls.col_offset, end_lineno=cls.end_lineno,
                                 end_col_offset=cls.end_col_offset)
    code = python_ast.compile_tree(
        ast.Module(body=[*_module_imports(tree.body), statement], type_ignores=[]), filename)
    qualname = ".".join([*(cls.name for cls in classes), function.name])
    return dict(_code_objects(code)).get(qualname)


def _module_imports(nodes: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The import statements that run in the module's own scope (also under if, try, with)."""
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for field_name in ("body", "orelse", "finalbody", "handlers"):
                yield from _module_imports(getattr(node, field_name, []))


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _body_start(node: Function) -> int | None:
    body = _without_docstring(node.body)
    return body[0].lineno if body else None


def _body_dump(node: Function) -> str:
    return ast.dump(ast.Module(body=_without_docstring(node.body), type_ignores=[]))


def _bodies(tree: ast.Module) -> dict[str, str] | None:
    """Every module- or class-level function's body (its docstring excluded) by qualified
    name; None when a name is defined twice."""
    found: dict[str, str] = {}

    def visit(nodes: list[ast.stmt], prefix: str) -> bool:
        for node in nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                qualname = prefix + node.name
                if qualname in found:
                    return False
                found[qualname] = _body_dump(node)
            elif isinstance(node, ast.ClassDef):
                if not visit(node.body, f"{prefix}{node.name}."):
                    return False
            elif isinstance(node, ast.If | ast.Try | ast.With | ast.For | ast.While):
                # Conditional definitions: which one exists is decided at import time.
                for child in ast.walk(node):
                    if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                        return False
        return True

    return found if visit(tree.body, "") else None


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body


def _skeleton(tree: ast.Module) -> ast.Module:
    """The module with every module- or class-level function body reduced to its docstring:
    what runs at import time (decorators, defaults, annotations, class bodies, statements)."""
    class Blank(ast.NodeTransformer):
        def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
            node.body = node.body[:1] if len(_without_docstring(node.body)) < len(node.body) \
                else [ast.Pass()]
            return node

        visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    return Blank().visit(tree)  # type: ignore[no-any-return]


def _code_objects(code: types.CodeType) -> Iterator[tuple[str, types.CodeType]]:
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and "<locals>" not in const.co_qualname:
            yield const.co_qualname, const
            yield from _code_objects(const)


# --- reimport: the edited module and its importers --------------------------------------------


def _import_graph(original: Original) -> dict[str, set[str]]:
    """Module name -> the modules it imports, parsed once per original (in the launcher, where
    `prepare` asks for it first)."""
    if original.imports is None:
        original.imports = {module_name: _imports_of(module_name, module)
                            for module_name, module in original.modules.items()}
    return original.imports


def _importers(original: Original, name: str) -> set[str]:
    """`name` and every package module that imports it, directly or through others."""
    imports = _import_graph(original)
    affected = {name}
    grew = True
    while grew:
        grew = False
        for module_name, imported in imports.items():
            if module_name not in affected and imported & affected:
                affected.add(module_name)
                grew = True
    return affected


def _imports_of(module_name: str, module: types.ModuleType) -> set[str]:
    filename = getattr(module, "__file__", None)
    if not filename:
        return set()
    try:
        tree = python_ast.parse(Path(filename).read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return set()
    package = module_name if hasattr(module, "__path__") else module_name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            found.add(prefix)
            found.update(f"{prefix}.{alias.name}" for alias in node.names)
    return found


def _defines_mapped_classes(module: types.ModuleType) -> bool:
    return any(isinstance(value, type) and value.__module__ == module.__name__
               and hasattr(value, "__mapper__") for value in vars(module).values())
