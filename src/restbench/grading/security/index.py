"""An index of one parsed module: scopes, what each name may be bound to, functions and fixtures.

The grader follows values through names (`url = BASE + "/x"; requests.get(url)`), through
helper parameters (every call site of the helper), through pytest fixtures (what the fixture
returns or yields) and through `parametrize` values. A name bound in several places may hold any
of those values; the grader judges all of them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

Function = ast.FunctionDef | ast.AsyncFunctionDef
Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef


@dataclass(frozen=True)
class Binding:
    """One way a name gets its value.

    kind: "value" (an assignment, `with ... as`, walrus: `value` is the expression), "item" (a
    loop or comprehension variable: an element of `value`), "part" (unpacked from `value`),
    "import" (`qualname`), "param" (a parameter of `function`), "def" (a local function or
    class), "opaque" (except handlers, starred targets: unknown).
    """

    kind: str
    scope: Scope
    value: ast.expr | None = None
    qualname: str | None = None
    function: Function | ast.Lambda | None = None
    param: str | None = None
    position: int | None = None  # "item" of a tuple target: which part of each element


@dataclass
class ModuleIndex:
    tree: ast.Module
    parents: dict[ast.AST, ast.AST] = field(default_factory=dict)
    scope_of: dict[ast.AST, Scope] = field(default_factory=dict)
    bindings: dict[Scope, dict[str, list[Binding]]] = field(default_factory=dict)
    star_imports: list[str] = field(default_factory=list)
    functions: dict[str, list[Function]] = field(default_factory=dict)
    fixtures: dict[str, Function] = field(default_factory=dict)
    # `self.attr = value` in methods and `attr = value` in class bodies, per class
    class_attrs: dict[ast.ClassDef, dict[str, list[Binding]]] = field(default_factory=dict)
    # parametrize values of a test function: param name -> argument expressions
    parametrized: dict[Function, dict[str, list[ast.expr]]] = field(default_factory=dict)
    calls_by_name: dict[str, list[ast.Call]] = field(default_factory=dict)

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(node)

    def enclosing_scope(self, scope: Scope) -> Scope | None:
        """The scope a name lookup continues in; class bodies are skipped, as Python does."""
        node = self.parents.get(scope)
        while node is not None:
            if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                return node
            node = self.parents.get(node)
        return None

    def enclosing_class(self, node: ast.AST) -> ast.ClassDef | None:
        current = self.parents.get(node)
        while current is not None:
            if isinstance(current, ast.ClassDef):
                return current
            current = self.parents.get(current)
        return None

    def lookup(self, name: str, scope: Scope) -> list[Binding]:
        current: Scope | None = scope
        while current is not None:
            found = self.bindings.get(current, {}).get(name)
            if found:
                return found
            current = self.enclosing_scope(current)
        return [Binding("import", self.tree, qualname=f"{module}.{name}")
                for module in self.star_imports]

    def is_module_name(self, name: str) -> bool:
        return any(b.kind == "import" for b in self.bindings.get(self.tree, {}).get(name, []))


def build_index(tree: ast.Module) -> ModuleIndex:
    index = ModuleIndex(tree)
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            index.parents[child] = parent
    _Builder(index).visit_scope(tree, tree)
    return index


def is_fixture(function: Function) -> bool:
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("fixture", "yield_fixture"):
            return True
    return False


def fixture_name(function: Function) -> str:
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call):
            for keyword in decorator.keywords:
                if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                    return str(keyword.value.value)
    return function.name


def is_test_function(function: Function | ast.Lambda, index: ModuleIndex) -> bool:
    if isinstance(function, ast.Lambda) or not function.name.startswith("test"):
        return False
    owner = index.parents.get(function)
    return isinstance(owner, ast.Module) or (isinstance(owner, ast.ClassDef)
                                             and owner.name.startswith("Test"))


class _Builder:
    def __init__(self, index: ModuleIndex) -> None:
        self.index = index

    def bind(self, scope: Scope, name: str, binding: Binding) -> None:
        self.index.bindings.setdefault(scope, {}).setdefault(name, []).append(binding)

    def visit_scope(self, node: ast.AST, scope: Scope) -> None:
        for child in ast.iter_child_nodes(node):
            self.visit(child, scope)

    def visit(self, node: ast.AST, scope: Scope) -> None:
        self.index.scope_of[node] = scope
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self.function(node, scope)
            return
        if isinstance(node, ast.Lambda):
            self.params(node, node.args, scope)
            self.index.scope_of[node.body] = node
            self.visit_scope(node.args, scope)
            self.visit(node.body, node)
            return
        if isinstance(node, ast.ClassDef):
            self.bind(scope, node.name, Binding("def", scope))
            for child in [*node.bases, *node.keywords, *node.decorator_list]:
                self.visit(child, scope)
            self.index.class_attrs.setdefault(node, {})
            for statement in node.body:
                self.visit(statement, node)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.bind(scope, alias.asname, Binding("import", scope, qualname=alias.name))
                else:
                    top = alias.name.split(".")[0]
                    self.bind(scope, top, Binding("import", scope, qualname=top))
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    self.index.star_imports.append(module)
                else:
                    self.bind(scope, alias.asname or alias.name,
                              Binding("import", scope, qualname=f"{module}.{alias.name}"))
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                self.target(target, node.value, scope)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self.target(node.target, node.value, scope)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            combined = ast.BinOp(left=ast.Name(node.target.id, ast.Load()), op=node.op,
                                 right=node.value)
            ast.copy_location(combined, node)
            self.index.scope_of[combined] = scope
            self.index.scope_of[combined.left] = scope
            self.index.parents[combined.left] = combined
            self.bind(scope, node.target.id, Binding("value", scope, value=combined))
        elif isinstance(node, ast.NamedExpr):
            self.target(node.target, node.value, scope)
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            self.item_target(node.target, node.iter, scope)
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    self.target(item.optional_vars, item.context_expr, scope)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self.bind(scope, node.name, Binding("opaque", scope))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else (
                func.attr if isinstance(func, ast.Attribute) else None)
            if name:
                self.index.calls_by_name.setdefault(name, []).append(node)
        self.visit_scope(node, scope)

    def function(self, node: Function, scope: Scope) -> None:
        self.bind(scope, node.name, Binding("def", scope))
        self.index.functions.setdefault(node.name, []).append(node)
        if is_fixture(node):
            self.index.fixtures[fixture_name(node)] = node
        for decorator in node.decorator_list:
            self.visit(decorator, scope)
            self.parametrize(node, decorator)
        self.visit_scope(node.args, scope)  # defaults are evaluated in the enclosing scope
        if node.returns is not None:
            self.visit(node.returns, scope)
        self.params(node, node.args, node)
        for statement in node.body:
            self.visit(statement, node)

    def params(self, function: Function | ast.Lambda, args: ast.arguments, scope: Scope) -> None:
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                every.append(extra)
        for arg in every:
            self.bind(scope, arg.arg, Binding("param", scope, function=function, param=arg.arg))

    def parametrize(self, function: Function, decorator: ast.expr) -> None:
        if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                and decorator.func.attr == "parametrize" and len(decorator.args) >= 2):
            return
        names, values = decorator.args[0], decorator.args[1]
        if isinstance(names, ast.Constant) and isinstance(names.value, str):
            params = [p.strip() for p in names.value.split(",") if p.strip()]
        elif isinstance(names, ast.List | ast.Tuple):
            params = [str(e.value) for e in names.elts if isinstance(e, ast.Constant)]
        else:
            return
        if not isinstance(values, ast.List | ast.Tuple):
            return
        table = self.index.parametrized.setdefault(function, {})
        for element in values.elts:
            if (isinstance(element, ast.Call) and isinstance(element.func, ast.Attribute)
                    and element.func.attr == "param"):
                element = ast.Tuple(elts=list(element.args), ctx=ast.Load())
            if len(params) == 1:
                table.setdefault(params[0], []).append(element)
            elif isinstance(element, ast.Tuple | ast.List) and len(element.elts) == len(params):
                for param, value in zip(params, element.elts, strict=True):
                    table.setdefault(param, []).append(value)

    def target(self, target: ast.expr, value: ast.expr, scope: Scope) -> None:
        if isinstance(target, ast.Name):
            self.bind(scope, target.id, Binding("value", scope, value=value))
        elif isinstance(target, ast.Tuple | ast.List):
            if isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(target.elts):
                for sub_target, sub_value in zip(target.elts, value.elts, strict=True):
                    self.target(sub_target, sub_value, scope)
            else:
                for sub_target in target.elts:
                    for name in ast.walk(sub_target):
                        if isinstance(name, ast.Name):
                            self.bind(scope, name.id, Binding("part", scope, value=value))
        elif isinstance(target, ast.Starred):
            self.opaque(target.value, scope)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            owner = self.owner_class(scope, target.value.id)
            if owner is not None:
                self.index.class_attrs.setdefault(owner, {}).setdefault(target.attr, []).append(
                    Binding("value", scope, value=value))

    def owner_class(self, scope: Scope, name: str) -> ast.ClassDef | None:
        if isinstance(scope, ast.ClassDef):
            return None
        if name in ("self", "cls"):
            return self.index.enclosing_class(scope)
        return None

    def item_target(self, target: ast.expr, iterable: ast.expr, scope: Scope) -> None:
        if isinstance(target, ast.Name):
            self.bind(scope, target.id, Binding("item", scope, value=iterable))
        elif isinstance(target, ast.Tuple | ast.List) and all(
                isinstance(e, ast.Name) for e in target.elts):
            for position, element in enumerate(target.elts):
                self.bind(scope, element.id,  # type: ignore[attr-defined]
                          Binding("item", scope, value=iterable, position=position))
        else:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    self.opaque(name, scope)

    def opaque(self, target: ast.expr, scope: Scope) -> None:
        for name in ast.walk(target):
            if isinstance(name, ast.Name):
                self.bind(scope, name.id, Binding("opaque", scope))
