"""Where a file path lies: inside the scratch directory the test runs in, outside it, or unknown."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from restbench.grading.security.values import MAX_DEPTH, Resolver, snippet, worst

SCRATCH_FIXTURES = frozenset({"tmp_path", "tmpdir"})
NAME_SOURCES = ("uuid.", "time.", "random.", "secrets.", "datetime.", "builtins.int",
                "builtins.len", "builtins.hash", "builtins.id")
TEMPFILE = re.compile(r"^tempfile\.")
PATH_CLASSES = frozenset({"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath",
                          "pathlib.PurePosixPath", "pathlib.WindowsPath", "pathlib.PureWindowsPath",
                          "py.path.local"})
JOINS = frozenset({"os.path.join", "posixpath.join", "ntpath.join"})
SAME_PATH = frozenset({"os.path.abspath", "os.path.realpath", "os.path.normpath", "os.fspath",
                       "os.fsencode", "os.fsdecode", "builtins.str", "builtins.bytes",
                       "os.path.normcase", "posixpath.abspath", "posixpath.normpath"})
SAME_PATH_METHODS = frozenset({"resolve", "absolute", "expanduser", "with_name", "with_suffix",
                               "with_stem", "as_posix", "__str__", "__fspath__", "strpath",
                               "realpath", "normpath"})
OUTSIDE_SOURCES = frozenset({"sys.executable", "sys.prefix", "sys.base_prefix",
                             "sys.exec_prefix", "site.getsitepackages", "site.getusersitepackages",
                             "site.USER_SITE", "site.USER_BASE", "pathlib.Path.home",
                             "os.path.expanduser"})
CWD_SOURCES = frozenset({"pathlib.Path.cwd", "os.getcwd", "os.getcwdb", "pathlib.Path"})


@dataclass(frozen=True)
class PathState:
    """kind: "scratch" (depth: folders below the scratch root), "outside" or "unknown" (detail)."""

    kind: str
    detail: str = ""
    depth: int = 0

    @property
    def rank(self) -> int:
        return {"scratch": 0, "unknown": 1, "outside": 2}[self.kind]

    def up(self, levels: int = 1) -> PathState:
        if self.kind != "scratch":
            return self
        if self.depth - levels < 0:
            return PathState("outside", "a parent of the scratch directory")
        return PathState("scratch", depth=self.depth - levels)




class PathJudge:
    def __init__(self, values: Resolver) -> None:
        self.values = values

    def literal_path(self, text: str, start: PathState | None = None) -> PathState:
        shown = text if len(text) <= 60 else text[:59] + "…"
        if text.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:[\\/]", text):
            return PathState("outside", shown)
        state = start or PathState("scratch", depth=0)
        for part in re.split(r"[\\/]+", text):
            if part == "..":
                state = state.up()
                if state.kind == "outside":
                    return PathState("outside", shown)
            elif part not in ("", "."):
                state = PathState(state.kind, state.detail, state.depth + 1) \
                    if state.kind == "scratch" else state
        return state

    def path(self, node: ast.expr | None, seen: frozenset[int] = frozenset()) -> PathState:
        self.values.tick()
        if node is None or id(node) in seen or len(seen) > MAX_DEPTH:
            return PathState("unknown", "a path that cannot be followed")
        seen = seen | {id(node)}
        folded = self.values.const(node)
        if isinstance(folded, bytes | bytearray):
            folded = bytes(folded).decode("latin-1")
        if isinstance(folded, str):
            return self.literal_path(folded)
        if isinstance(folded, int):
            return PathState("scratch")  # a file descriptor
        pieces = self.values.pieces(node, seen)
        if len(pieces) > 1:
            first = pieces[0]
            if isinstance(first, str):
                state = self.literal_path(first)
            elif self._name_like(first):
                state = PathState("scratch", depth=1)
            else:
                state = self._path_atom(first, seen)
            for piece in pieces[1:]:
                if isinstance(piece, str):
                    if re.search(r"(^|[\\/])\.\.([\\/]|$)", piece):
                        return PathState("outside", f"a path with '..': {snippet(node)}")
                elif self.path(piece, seen).kind == "outside":
                    return self.path(piece, seen)
            return state
        return self._path_atom(node, seen)

    def _name_like(self, node: ast.expr) -> bool:
        """A value that can only make a file name, never a folder: ids, numbers, timestamps."""
        if isinstance(node, ast.Attribute) and node.attr in ("hex", "int", "name", "stem"):
            return True
        names = self.values.qualnames(node)
        return bool(names) and all(n.startswith(NAME_SOURCES) for n in names)

    def join(self, first: PathState, rest: list[ast.expr], seen: frozenset[int]) -> PathState:
        state = first
        for part in rest:
            value = self.values.const(part)
            if isinstance(value, str):
                if value.startswith(("/", "\\", "~")):
                    return PathState("outside", value[:60])
                state = self.literal_path(value, state)
            else:
                inner = self.path(part, seen)
                if inner.kind == "outside":
                    return inner
                if state.kind == "scratch":
                    state = PathState("scratch", depth=state.depth + 1)
        return state

    def _path_atom(self, node: ast.expr, seen: frozenset[int]) -> PathState:
        unknown = PathState("unknown", snippet(node))
        if isinstance(node, ast.Name):
            if node.id == "__file__" and not self.values.sources(node):
                return PathState("scratch", depth=1)
            states: list[PathState] = []
            for binding in self.values.sources(node):
                if binding.kind == "value" and id(binding.value) in seen:
                    continue  # `path = path.resolve()`: the other assignments decide
                if binding.kind == "value":
                    states.append(self.path(binding.value, seen))
                elif binding.kind == "item" and binding.value is not None:
                    states.append(self._path_item(binding.value, binding.position, seen))
                elif binding.kind == "part" and binding.value is not None and any(
                        TEMPFILE.match(q) for q in self.values.qualnames(binding.value)):
                    states.append(PathState("scratch"))
                elif binding.kind == "param":
                    if binding.param in SCRATCH_FIXTURES:
                        states.append(PathState("scratch"))
                        continue
                    values = self.values.param_values(binding)
                    if values is None:
                        states.append(unknown)
                    else:
                        states.extend(self.path(v, seen) if v is not None else unknown
                                      for v in values)
                else:
                    states.append(unknown)
            return worst(states, unknown)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return self.join(self.path(node.left, seen), [node.right], seen)
        if isinstance(node, ast.Attribute):
            return self._path_attribute(node, seen, unknown)
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
                index = self.values.const(node.slice)
                if isinstance(index, int):
                    return self.path(node.value.value, seen).up(index + 1)
            element = self.values.deref(node)
            if element is not None:
                return self.path(element, seen)
            if any(TEMPFILE.match(q) for q in self.values.qualnames(node.value)):
                return PathState("scratch")
            return unknown
        if isinstance(node, ast.IfExp):
            return worst([self.path(node.body, seen), self.path(node.orelse, seen)], unknown)
        if isinstance(node, ast.BoolOp):
            return worst([self.path(v, seen) for v in node.values], unknown)
        if isinstance(node, ast.Call):
            return self._path_call(node, seen, unknown)
        return unknown

    def _path_attribute(self, node: ast.Attribute, seen: frozenset[int],
                        unknown: PathState) -> PathState:
        names = self.values.qualnames(node)
        if names & OUTSIDE_SOURCES or any(q.endswith(".__file__") for q in names):
            return PathState("outside", snippet(node))
        if node.attr == "parent":
            return self.path(node.value, seen).up()
        if node.attr in ("name", "stem", "suffix"):
            return PathState("scratch", depth=1)
        if node.attr in SAME_PATH_METHODS:
            return self.path(node.value, seen)
        if any(TEMPFILE.match(q) for q in names):
            return PathState("scratch")
        attrs = self.values.class_attr(node)
        if attrs is not None:
            return worst((self.path(v, seen) for v in attrs), unknown)
        return unknown

    def _path_item(self, iterable: ast.expr, position: int | None,
                   seen: frozenset[int]) -> PathState:
        elements = self.values.items(iterable, position)
        if elements is not None:
            return worst((self.path(e, seen) if e is not None else PathState(
                "unknown", snippet(iterable)) for e in elements), PathState("unknown", "?"))
        if isinstance(iterable, ast.Call):
            funcs = self.values.qualnames(iterable.func)
            if isinstance(iterable.func, ast.Attribute) and iterable.func.attr in (
                    "iterdir", "glob", "rglob", "listdir"):
                state = self.path(iterable.func.value, seen)
                return PathState("scratch", depth=state.depth + 1) if state.kind == "scratch" \
                    else state
            if funcs & {"os.listdir", "os.scandir", "glob.glob", "glob.iglob"}:
                state = self.path(iterable.args[0], seen) if iterable.args else PathState(
                    "scratch")
                if state.kind != "scratch":
                    return state
                return PathState("scratch", depth=1)
        return PathState("unknown", snippet(iterable))

    def _path_call(self, node: ast.Call, seen: frozenset[int], unknown: PathState) -> PathState:
        returned = self.values.local_returns(node)
        if returned is not None:
            return worst((self.path(v, seen) if v is not None else unknown for v in returned),
                         unknown)
        funcs = self.values.qualnames(node.func)
        if funcs & OUTSIDE_SOURCES and not (funcs & {"os.path.expanduser"} and node.args):
            return PathState("outside", f"{snippet(node)} (the home or system folders)")
        if funcs & {"os.path.expanduser", "os.path.expandvars"} and node.args:
            value = self.values.const(node.args[0])
            if isinstance(value, str) and value.startswith(("~", "$")):
                return PathState("outside", value[:60])
            return self.path(node.args[0], seen)
        if funcs & CWD_SOURCES and not node.args:
            return PathState("scratch")
        if any(TEMPFILE.match(q) for q in funcs) or any(
                q.startswith(("fixture.tmp_path_factory", "fixture.tmpdir_factory"))
                for q in funcs):
            return PathState("scratch")
        if funcs & (PATH_CLASSES | JOINS) and node.args:
            return self.join(self.path(node.args[0], seen), list(node.args[1:]), seen)
        if funcs & SAME_PATH and node.args:
            return self.path(node.args[0], seen)
        if funcs & {"os.path.dirname"} and node.args:
            return self.path(node.args[0], seen).up()
        if funcs & {"os.path.basename"}:
            return PathState("scratch", depth=1)
        if isinstance(node.func, ast.Attribute):
            method = node.func.attr
            receiver = node.func.value
            if method in ("joinpath", "join", "mkdir", "ensure") and (
                    method != "join" or not isinstance(self.values.const(receiver), str)):
                return self.join(self.path(receiver, seen), list(node.args), seen)
            if method in SAME_PATH_METHODS:
                state = self.path(receiver, seen)
                if method in ("with_name", "with_stem", "with_suffix") and node.args:
                    value = self.values.const(node.args[0])
                    if isinstance(value, str) and ("/" in value or "\\" in value):
                        return PathState("outside", value[:60])
                return state
            if method in ("mktemp", "getbasetemp", "mkdtemp"):
                return PathState("scratch")
        return unknown


