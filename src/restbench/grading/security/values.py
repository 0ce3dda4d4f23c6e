"""What an expression may evaluate to, as far as can be told without running it.

Values are followed through names, fixtures, helper call sites and simple string building
(concatenation, f-strings, `format`, `%`, `join`, decoding of literals):

- `const`: the one constant value of an expression (`"ht" + "tp://x"`, base64 of a literal), if any;
- `qualnames`: the dotted origins an expression may stand for (`sp.run` -> `subprocess.run`,
  `getattr(os, "sys" + "tem")` -> `os.system`, `requests.Session()` for a session object);
- `pieces`: a string expression split into its constant text and the expressions between it.

`urls.py` and `paths.py` build on these to say where a URL points and where a path lies.
"""

from __future__ import annotations

import ast
import base64
import binascii
import builtins
import codecs
import posixpath
import re
import string
import zlib
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import unquote, urljoin

from restbench.grading.security.index import Binding, ModuleIndex, is_fixture, is_test_function

NO = object()  # "not a constant"
MAX_DEPTH = 24
MAX_CONST = 100_000
STEP_BUDGET = 100_000  # steps per file (real tests need ~2,000); hostile code must not stall us
BUILTIN_NAMES = frozenset(dir(builtins))
BUILTIN_FIXTURES = frozenset({
    "tmp_path", "tmpdir", "tmp_path_factory", "tmpdir_factory", "monkeypatch", "request",
    "capsys", "capfd", "capsysbinary", "capfdbinary", "caplog", "recwarn", "pytestconfig",
    "record_property", "record_testsuite_property", "cache", "testdir", "pytester",
    "doctest_namespace", "mocker",
})
STR_METHODS = frozenset({"decode", "encode", "lower", "upper", "strip", "lstrip", "rstrip",
                         "replace", "join", "format", "removeprefix", "removesuffix", "title",
                         "swapcase", "casefold", "capitalize", "zfill", "hex", "translate",
                         "split", "rsplit", "center", "ljust", "rjust", "expandtabs"})


def _decoders() -> dict[str, Callable[..., Any]]:
    table: dict[str, Callable[..., Any]] = {
        "base64.b64decode": base64.b64decode, "base64.standard_b64decode": base64.b64decode,
        "base64.urlsafe_b64decode": base64.urlsafe_b64decode, "base64.b32decode": base64.b32decode,
        "base64.b16decode": base64.b16decode, "base64.b85decode": base64.b85decode,
        "base64.a85decode": base64.a85decode, "base64.decodebytes": base64.decodebytes,
        "base64.b64encode": base64.b64encode, "base64.b32encode": base64.b32encode,
        "binascii.unhexlify": binascii.unhexlify, "binascii.a2b_hex": binascii.a2b_hex,
        "binascii.a2b_base64": binascii.a2b_base64, "binascii.hexlify": binascii.hexlify,
        "codecs.decode": codecs.decode, "codecs.encode": codecs.encode,
        "builtins.bytes.fromhex": bytes.fromhex, "builtins.bytearray.fromhex": bytearray.fromhex,
        "builtins.chr": chr, "builtins.ord": ord, "builtins.str": str, "builtins.bytes": bytes,
        "builtins.bytearray": bytearray, "builtins.int": int, "builtins.list": list,
        "builtins.reversed": lambda value: list(reversed(value)), "builtins.sorted": sorted,
        "builtins.tuple": tuple, "builtins.len": len, "builtins.repr": repr,
        "urllib.parse.unquote": unquote, "urllib.parse.unquote_plus": unquote,
        "urllib.parse.urljoin": urljoin, "zlib.decompress": zlib.decompress,
        "pathlib.Path": posixpath.join, "pathlib.PurePath": posixpath.join,
        "os.path.join": posixpath.join, "posixpath.join": posixpath.join,
    }
    return table


DECODERS = _decoders()


def worst(states: Iterable[Any], empty: Any) -> Any:
    chosen = None
    for state in states:
        if chosen is None or state.rank > chosen.rank:
            chosen = state
    return chosen if chosen is not None else empty


def snippet(node: ast.AST, limit: int = 60) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of a synthetic node; the message only suffers
        return type(node).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TooComplex(Exception):
    """The code needs more resolution steps than `STEP_BUDGET`: it is not analysed further."""


class Resolver:
    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self.steps = 0

    def tick(self) -> None:
        self.steps += 1
        if self.steps > STEP_BUDGET:
            raise TooComplex

    def scope(self, node: ast.AST) -> Any:
        return self.index.scope_of.get(node, self.index.tree)

    # --- where names come from -------------------------------------------------------------

    def sources(self, name: ast.Name) -> list[Binding]:
        return self.index.lookup(name.id, self.scope(name))

    def param_values(self, binding: Binding) -> list[ast.expr | None] | None:
        """The expressions a parameter may receive; None in the list: an unknown one.
        None overall: a pytest built-in fixture, or nothing known."""
        function, param = binding.function, binding.param or ""
        if isinstance(function, ast.Lambda) or function is None:
            return [None]
        if param in ("self", "cls") and isinstance(self.index.parents.get(function), ast.ClassDef):
            return [None]
        values: list[ast.expr | None] = list(self.index.parametrized.get(function, {}).get(param, []))
        if values:
            return values
        if is_test_function(function, self.index) or _is_fixture_like(function):
            if param in BUILTIN_FIXTURES:
                return None
            fixture = self.index.fixtures.get(param)
            if fixture is None:
                return [None]
            return _returned(fixture) or [None]
        default = _default_of(function, param)
        calls = [c for c in self.index.calls_by_name.get(function.name, [])
                 if not _inside(c, function, self.index)]
        if not calls:
            return [default] if default is not None else [None]
        for call in calls:
            values.append(self._argument(call, function, param, default))
        return values

    def _argument(self, call: ast.Call, function: Any, param: str,
                  default: ast.expr | None) -> ast.expr | None:
        names = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
        if (isinstance(call.func, ast.Attribute) and names and names[0] in ("self", "cls")
                and isinstance(self.index.parents.get(function), ast.ClassDef)):
            names = names[1:]
        for keyword in call.keywords:
            if keyword.arg == param:
                return keyword.value
            if keyword.arg is None:
                return None
        if param in names:
            position = names.index(param)
            for index, arg in enumerate(call.args):
                if isinstance(arg, ast.Starred):
                    return None
                if index == position:
                    return arg
        if function.args.vararg and function.args.vararg.arg == param:
            return None
        return default

    def items(self, iterable: ast.expr | None, position: int | None = None,
              depth: int = 0) -> list[ast.expr | None] | None:
        """What a loop over `iterable` binds: its elements, or with `position` the element's
        part at that index (`for method, url in ...`). None: not known; None in the list: an
        unknown element."""
        self.tick()
        if iterable is None or depth > 6:
            return None
        elements: list[ast.expr | None] | None = None
        if isinstance(iterable, ast.List | ast.Tuple | ast.Set):
            elements = [e for e in iterable.elts if not isinstance(e, ast.Starred)]
        elif isinstance(iterable, ast.ListComp | ast.GeneratorExp | ast.SetComp):
            elements = [iterable.elt]
        elif isinstance(iterable, ast.Dict):
            elements = [k for k in iterable.keys if k is not None]
        elif isinstance(iterable, ast.Name):
            sources = self.sources(iterable)
            if len(sources) == 1 and sources[0].kind == "value":
                return self.items(sources[0].value, position, depth + 1)
        elif isinstance(iterable, ast.Call):
            return self._call_items(iterable, position, depth)
        if elements is None or position is None:
            return elements
        return [e.elts[position] if isinstance(e, ast.Tuple | ast.List) and len(e.elts) > position
                else None for e in elements]

    def _call_items(self, call: ast.Call, position: int | None,
                    depth: int) -> list[ast.expr | None] | None:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ("items", "values", "keys"):
            container = func.value
            if isinstance(container, ast.Name):
                sources = self.sources(container)
                container = sources[0].value if len(sources) == 1 else None
            if not isinstance(container, ast.Dict):
                return None
            keys = [k for k in container.keys]
            if func.attr == "values" or (func.attr == "items" and position == 1):
                return list(container.values)
            if func.attr == "keys" or (func.attr == "items" and position == 0):
                return list(keys)
            return None
        name = func.id if isinstance(func, ast.Name) else ""
        if name in ("list", "tuple", "sorted", "reversed", "set") and call.args:
            return self.items(call.args[0], position, depth + 1)
        if name == "enumerate" and call.args and position is not None:
            return [None] if position == 0 else self.items(call.args[0], position - 1
                                                         if position > 1 else None, depth + 1)
        if name == "zip" and position is not None and position < len(call.args):
            return self.items(call.args[position], None, depth + 1)
        return None

    def deref(self, node: ast.Subscript) -> ast.expr | None:
        """`NAME[const]` where NAME is a dict or list literal: the element expression."""
        container: ast.expr | None = node.value
        if isinstance(container, ast.Name):
            sources = self.sources(container)
            container = sources[0].value if len(sources) == 1 and sources[0].kind == "value" else None
        key = self.const(node.slice)
        if key is NO:
            return None
        if isinstance(container, ast.Dict):
            for k, v in zip(container.keys, container.values, strict=True):
                if k is not None and self.const(k) == key:
                    return v
        if isinstance(container, ast.List | ast.Tuple) and isinstance(key, int):
            try:
                return container.elts[key]
            except IndexError:
                return None
        return None

    # --- constants -------------------------------------------------------------------------

    def const(self, node: ast.AST | None, seen: frozenset[int] = frozenset(),
              env: dict[str, Any] | None = None) -> Any:
        self.tick()
        if node is None or id(node) in seen or len(seen) > MAX_DEPTH:
            return NO
        seen = seen | {id(node)}
        try:
            value = self._const(node, seen, env or {})
        except Exception:  # noqa: BLE001 - folding is best effort: a failure means "not constant"
            return NO
        if _weight(value) > MAX_CONST:
            return NO
        return value

    def _const(self, node: ast.AST, seen: frozenset[int], env: dict[str, Any]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            values = []
            for binding in self.sources(node):
                if binding.kind == "value" and id(binding.value) in seen:
                    continue  # `x = x.strip()`: the other assignments decide
                if binding.kind == "value":
                    values.append(self.const(binding.value, seen))
                elif binding.kind == "param":
                    params = self.param_values(binding) or [None]
                    values.extend(self.const(v, seen) for v in params)
                else:
                    return NO
            if values and all(v is not NO for v in values) and all(v == values[0] for v in values):
                return values[0]
            return NO
        if isinstance(node, ast.JoinedStr):
            parts = []
            for part in node.values:
                if isinstance(part, ast.Constant):
                    parts.append(str(part.value))
                elif isinstance(part, ast.FormattedValue):
                    inner = self.const(part.value, seen, env)
                    if inner is NO:
                        return NO
                    spec = self.const(part.format_spec, seen, env) if part.format_spec else ""
                    if spec is NO or (isinstance(spec, str) and not _small_format(spec)):
                        return NO
                    if part.conversion == ord("r"):
                        inner = repr(inner)
                    elif part.conversion == ord("s"):
                        inner = str(inner)
                    parts.append(format(inner, spec if isinstance(spec, str) else ""))
            return "".join(parts)
        if isinstance(node, ast.BinOp):
            left, right = self.const(node.left, seen, env), self.const(node.right, seen, env)
            if left is NO or right is NO:
                return NO
            return _binop(node.op, left, right)
        if isinstance(node, ast.UnaryOp):
            operand = self.const(node.operand, seen, env)
            if operand is NO:
                return NO
            return {ast.Not: lambda v: not v, ast.USub: lambda v: -v, ast.UAdd: lambda v: +v,
                    ast.Invert: lambda v: ~v}[type(node.op)](operand)
        if isinstance(node, ast.Subscript):
            value = self.const(node.value, seen, env)
            if value is NO:
                element = self.deref(node)
                return self.const(element, seen, env) if element is not None else NO
            if isinstance(node.slice, ast.Slice):
                bounds = [self.const(b, seen, env) if b is not None else None
                          for b in (node.slice.lower, node.slice.upper, node.slice.step)]
                if any(b is NO for b in bounds):
                    return NO
                return value[slice(*bounds)]
            key = self.const(node.slice, seen, env)
            return NO if key is NO else value[key]
        if isinstance(node, ast.List | ast.Tuple):
            values = [self.const(e, seen, env) for e in node.elts]
            if any(v is NO for v in values):
                return NO
            return values if isinstance(node, ast.List) else tuple(values)
        if isinstance(node, ast.IfExp):
            body, orelse = self.const(node.body, seen, env), self.const(node.orelse, seen, env)
            return body if body is not NO and body == orelse else NO
        if isinstance(node, ast.GeneratorExp | ast.ListComp):
            return self._comprehension(node, seen, env)
        if isinstance(node, ast.Call):
            return self._call_const(node, seen, env)
        return NO

    def _comprehension(self, node: ast.GeneratorExp | ast.ListComp, seen: frozenset[int],
                       env: dict[str, Any]) -> Any:
        if len(node.generators) != 1 or node.generators[0].ifs:
            return NO
        generator = node.generators[0]
        iterable = self.const(generator.iter, seen, env)
        if iterable is NO or not isinstance(generator.target, ast.Name):
            return NO
        out = []
        for item in list(iterable)[:MAX_CONST]:
            value = self.const(node.elt, seen, {**env, generator.target.id: item})
            if value is NO:
                return NO
            out.append(value)
        return out

    def _call_const(self, node: ast.Call, seen: frozenset[int], env: dict[str, Any]) -> Any:
        if isinstance(node.func, ast.Name) and node.func.id == "map" and len(node.args) == 2:
            mapped = [DECODERS.get(q) for q in self.qualnames(node.args[0], seen)]
            values = self.const(node.args[1], seen, env)
            if len(mapped) == 1 and mapped[0] is not None and values is not NO:
                return [mapped[0](v) for v in values]
            return NO
        args = [self.const(a, seen, env) for a in node.args]
        kwargs = {k.arg: self.const(k.value, seen, env) for k in node.keywords if k.arg}
        if any(a is NO for a in args) or any(v is NO for v in kwargs.values()) \
                or any(k.arg is None for k in node.keywords):
            return NO
        if not all(_small(v) for v in [*args, *kwargs.values()]):
            return NO  # bytes(10**10), "x".ljust(10**10): not folded
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in STR_METHODS:
            receiver = self.const(func.value, seen, env)
            if isinstance(receiver, str | bytes | bytearray):
                if func.attr == "join":
                    args = [[x if isinstance(x, str | bytes) else str(x) for x in args[0]]]
                if func.attr == "replace" and len(args) > 1 and \
                        len(receiver) * max(1, len(args[1])) > MAX_CONST * 10:
                    return NO
                return getattr(receiver, func.attr)(*args, **kwargs)
        for qualname in self.qualnames(func, seen):
            decoder = DECODERS.get(qualname)
            if decoder is not None:
                return decoder(*args, **kwargs)
        return NO

    # --- dotted origins --------------------------------------------------------------------

    def qualnames(self, node: ast.AST | None, seen: frozenset[int] = frozenset()) -> set[str]:
        self.tick()
        if node is None or id(node) in seen or len(seen) > MAX_DEPTH:
            return set()
        seen = seen | {id(node)}
        if isinstance(node, ast.Name):
            return self._name_qualnames(node, seen)
        if isinstance(node, ast.Attribute):
            if node.attr in ("__dict__",):
                return self.qualnames(node.value, seen)
            return {f"{q}.{node.attr}" for q in self.qualnames(node.value, seen)}
        if isinstance(node, ast.Call):
            return self._call_qualnames(node, seen)
        if isinstance(node, ast.Subscript):
            key = self.const(node.slice)
            bases = self.qualnames(node.value, seen)
            out = set()
            if isinstance(key, str):
                for base in bases:
                    if base == "sys.modules":
                        out.add(key)
                    elif base == "builtins.globals()":
                        out.add(self._global_name(key))
                    else:
                        out.add(f"{base}.{key}")
            element = self.deref(node)
            if element is not None:
                out |= self.qualnames(element, seen)
            return out
        if isinstance(node, ast.IfExp):
            return self.qualnames(node.body, seen) | self.qualnames(node.orelse, seen)
        if isinstance(node, ast.BoolOp):
            return set().union(*(self.qualnames(v, seen) for v in node.values))
        if isinstance(node, ast.Await | ast.NamedExpr):
            return self.qualnames(node.value, seen)
        return set()

    def _global_name(self, key: str) -> str:
        if key == "__builtins__":
            return "builtins"
        found = self.index.bindings.get(self.index.tree, {}).get(key, [])
        for binding in found:
            if binding.kind == "import" and binding.qualname:
                return binding.qualname
        return f"builtins.{key}" if key in BUILTIN_NAMES else f"local.{key}"

    def _name_qualnames(self, node: ast.Name, seen: frozenset[int]) -> set[str]:
        bindings = self.sources(node)
        if not bindings:
            if node.id == "__builtins__":
                return {"builtins"}
            if node.id in BUILTIN_NAMES:
                return {f"builtins.{node.id}"}
            return set()
        out: set[str] = set()
        for binding in bindings:
            if binding.kind == "import" and binding.qualname:
                out.add(binding.qualname)
            elif binding.kind == "value" and binding.value is not None:
                out |= self.qualnames(binding.value, seen)
            elif binding.kind == "item":
                for element in self.items(binding.value, binding.position) or []:
                    out |= self.qualnames(element, seen)
            elif binding.kind == "param":
                values = self.param_values(binding)
                if values is None:
                    out.add(f"fixture.{binding.param}")
                else:
                    for value in values:
                        out |= self.qualnames(value, seen)
        return out

    def _call_qualnames(self, node: ast.Call, seen: frozenset[int]) -> set[str]:
        funcs = self.qualnames(node.func, seen)
        out = set()
        if funcs & {"builtins.getattr"} and len(node.args) >= 2:
            attribute = self.const(node.args[1])
            if isinstance(attribute, str):
                out |= {f"{q}.{attribute}" for q in self.qualnames(node.args[0], seen)}
        if funcs & {"builtins.__import__", "importlib.import_module", "importlib.__import__"} \
                and node.args:
            module = self.const(node.args[0])
            if isinstance(module, str):
                out.add(module)
                out.add(module.split(".")[0])
        if funcs & {"builtins.vars"} and node.args:
            out |= {f"{q}" for q in self.qualnames(node.args[0], seen)}
        if funcs & {"builtins.globals", "builtins.locals"}:
            out.add("builtins.globals()")
        if funcs & {"operator.attrgetter"} and node.args:
            attribute = self.const(node.args[0])
            if isinstance(attribute, str):
                out.add(f"operator.attrgetter:{attribute}")
        if isinstance(node.func, ast.Call):
            inner = self.qualnames(node.func.func, seen)
            if "operator.attrgetter" in inner and node.args and node.func.args:
                attribute = self.const(node.func.args[0])
                if isinstance(attribute, str):
                    out |= {f"{q}.{attribute}" for q in self.qualnames(node.args[0], seen)}
        out |= {f"{q}()" for q in funcs}
        return out

    # --- strings built from pieces ----------------------------------------------------

    def pieces(self, node: ast.expr, seen: frozenset[int] = frozenset()) -> list[Any]:
        """A string expression split into constant text and the expressions between it."""
        self.tick()
        folded = self.const(node)
        if isinstance(folded, str | bytes):
            return [folded.decode("latin-1") if isinstance(folded, bytes) else folded]
        out: list[Any] = []
        if isinstance(node, ast.JoinedStr):
            for part in node.values:
                if isinstance(part, ast.Constant):
                    out.append(str(part.value))
                elif isinstance(part, ast.FormattedValue):
                    out.extend(self.pieces(part.value, seen))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            out = self.pieces(node.left, seen) + self.pieces(node.right, seen)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) \
                and isinstance(self.const(node.left), str):
            template = self.const(node.left)
            values = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            chunks = re.split(r"%[-#0 +]*\d*(?:\.\d+)?[sdrifx]", template)
            for i, chunk in enumerate(chunks):
                out.append(chunk)
                if i < len(chunks) - 1:
                    out.extend(self.pieces(values[i], seen) if i < len(values) else [node])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "format" and isinstance(self.const(node.func.value), str):
            out = self._format_pieces(node, seen)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "join" and isinstance(self.const(node.func.value), str) \
                and node.args and isinstance(node.args[0], ast.List | ast.Tuple):
            separator = self.const(node.func.value)
            for i, element in enumerate(node.args[0].elts):
                if i:
                    out.append(separator)
                out.extend(self.pieces(element, seen))
        else:
            out = [node]
        merged: list[Any] = []
        for piece in out:
            if isinstance(piece, str) and merged and isinstance(merged[-1], str):
                merged[-1] += piece
            else:
                merged.append(piece)
        return merged

    def _format_pieces(self, node: ast.Call, seen: frozenset[int]) -> list[Any]:
        template = self.const(node.func.value)  # type: ignore[union-attr]
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        out: list[Any] = []
        auto = 0
        for literal, field, _spec, _conversion in string.Formatter().parse(template):
            out.append(literal)
            if field is None:
                continue
            if field == "":
                value = node.args[auto] if auto < len(node.args) else None
                auto += 1
            elif field.isdigit():
                value = node.args[int(field)] if int(field) < len(node.args) else None
            else:
                value = keywords.get(field)
            out.extend(self.pieces(value, seen) if value is not None else [node])
        return out

    def local_returns(self, node: ast.Call) -> list[ast.expr | None] | None:
        """What a call to a function defined in this module may return (None: not local)."""
        func = node.func
        if isinstance(func, ast.Name):
            lambdas = [b.value for b in self.sources(func) if isinstance(b.value, ast.Lambda)]
            if lambdas:
                return [function.body for function in lambdas]
        if isinstance(func, ast.Name) and any(b.kind == "def" for b in self.sources(func)):
            name = func.id
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id in ("self", "cls"):
            name = func.attr
        else:
            return None
        functions = self.index.functions.get(name)
        if not functions:
            return None
        return [value for function in functions for value in (_returned(function) or [None])]

    def class_attr(self, node: ast.Attribute) -> list[ast.expr] | None:
        if not isinstance(node.value, ast.Name):
            return None
        klass = None
        if node.value.id in ("self", "cls"):
            klass = self.index.enclosing_class(node)
        else:
            for candidate in self.index.class_attrs:
                if candidate.name == node.value.id:
                    klass = candidate
        if klass is None:
            return None
        found = list(self.index.class_attrs.get(klass, {}).get(node.attr, []))
        for statement in klass.body:
            if isinstance(statement, ast.Assign):
                for target in statement.targets:
                    if isinstance(target, ast.Name) and target.id == node.attr:
                        found.append(Binding("value", klass, value=statement.value))
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None \
                    and isinstance(statement.target, ast.Name) and statement.target.id == node.attr:
                found.append(Binding("value", klass, value=statement.value))
        return [b.value for b in found if b.value is not None] or None

def _small(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return abs(value) <= MAX_CONST
    if isinstance(value, list | tuple):
        return all(_small(v) for v in value)
    return True


def _small_format(template: str) -> bool:
    """No field width or precision big enough to build a huge string."""
    return all(int(digits) <= MAX_CONST for digits in re.findall(r"\d+", template))


def _weight(value: Any) -> int:
    """Characters, bytes and items in a folded value, nested lists included."""
    if isinstance(value, str | bytes | bytearray):
        return len(value)
    if isinstance(value, list | tuple):
        return len(value) + sum(_weight(v) for v in value)
    return 1


def _sized(value: Any) -> int:
    return len(value) if isinstance(value, str | bytes | bytearray | list | tuple) else 1


def _binop(op: ast.operator, left: Any, right: Any) -> Any:
    if isinstance(op, ast.Add):
        return left + right
    if isinstance(op, ast.Mult):
        if isinstance(left, int) and isinstance(right, int):
            return left * right if abs(left * right) <= 10**18 else NO
        count = right if isinstance(right, int) else left
        sequence = left if isinstance(right, int) else right
        if not isinstance(count, int) or _sized(sequence) * count > MAX_CONST:
            return NO
        return left * right
    if isinstance(op, ast.Mod):
        if isinstance(left, str | bytes) and not _small_format(
                left if isinstance(left, str) else left.decode("latin-1")):
            return NO
        return left % right
    if isinstance(op, ast.Sub):
        return left - right
    if isinstance(op, ast.BitXor):
        return left ^ right
    if isinstance(op, ast.Div) and isinstance(left, str) and isinstance(right, str):
        return posixpath.join(left, right)
    if isinstance(op, ast.FloorDiv):
        return left // right
    return NO


def _arg(node: ast.Call, position: int, keyword: str) -> ast.expr | None:
    for item in node.keywords:
        if item.arg == keyword:
            return item.value
    if len(node.args) > position and not any(isinstance(a, ast.Starred)
                                             for a in node.args[: position + 1]):
        return node.args[position]
    return None


def _is_fixture_like(function: Any) -> bool:
    return not isinstance(function, ast.Lambda) and is_fixture(function)


def _returned(function: Any) -> list[ast.expr | None]:
    values: list[ast.expr | None] = []
    stack = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(node, ast.Return | ast.Yield) and node.value is not None:
            values.append(node.value)
        stack.extend(ast.iter_child_nodes(node))
    return values


def _default_of(function: Any, param: str) -> ast.expr | None:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    offset = len(positional) - len(args.defaults)
    for index, arg in enumerate(positional):
        if arg.arg == param and index >= offset:
            return args.defaults[index - offset]
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if arg.arg == param:
            return default
    return None


def _inside(node: ast.AST, container: ast.AST, index: ModuleIndex) -> bool:
    current = index.parents.get(node)
    while current is not None:
        if current is container:
            return True
        current = index.parents.get(current)
    return False


__all__ = ["NO", "Resolver", "TooComplex", "snippet", "worst"]
