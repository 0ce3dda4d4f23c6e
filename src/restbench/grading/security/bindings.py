"""Where names come from: parameters, fixtures, call sites, items and attributes (a mixin of
`Resolver`)."""

from __future__ import annotations

import ast
from typing import Any

from restbench.grading.security.basics import BUILTIN_FIXTURES, NO
from restbench.grading.security.index import Binding, ModuleIndex, is_fixture, is_test_function


class NameFlow:
    """The expressions a name, a parameter or a subscript may stand for."""

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
