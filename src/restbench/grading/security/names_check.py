"""Names that are dangerous wherever they appear: imports, references, dynamic lookups and the
environment (a part of the static-security checker, `analyzer._Checker`)."""

from __future__ import annotations

import ast

from restbench.grading.security import rules
from restbench.grading.security.checker_state import CheckerState
from restbench.grading.security.findings import Kind
from restbench.grading.security.values import NO, snippet

_VERBS = {
    Kind.PROCESS: "starts or controls processes",
    Kind.DYNAMIC_CODE: "runs or loads code dynamically",
    Kind.SOCKET: "uses sockets or raw network access",
    Kind.NETWORK: "uses a network client other than HTTP to the base URL",
    Kind.EXIT: "ends the interpreter",
    Kind.SKIP: "skips or xfails the test",
    Kind.MONKEYPATCH: "monkeypatches",
}


class NameChecks(CheckerState):
    def imports(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            module = node.module or ""
            names = [f"{module}.{alias.name}" if alias.name != "*" else module
                     for alias in node.names]
        for name in names:
            for kind in rules.kinds_of(name):
                self.flag(node, kind, f"{_VERBS[kind]}: imports {name}")
            if name in rules.ENVIRONMENT | rules.ENVIRONMENT_FUNCTIONS and \
                    isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                self.flag(node, Kind.ENVIRONMENT, "imports the environment with `import *`")

    def reference(self, node: ast.Name | ast.Attribute | ast.Subscript | ast.Call) -> None:
        if isinstance(node, ast.Attribute) and node.attr in rules.ESCAPE_ATTRIBUTES:
            self.flag(node, Kind.DYNAMIC_CODE,
                      f"reaches interpreter internals through .{node.attr}")
        if isinstance(node, ast.Attribute) and node.attr == "skipTest":
            self.flag(node, Kind.SKIP, f"{_VERBS[Kind.SKIP]}: {snippet(node)}")
        if isinstance(getattr(node, "ctx", None), ast.Store | ast.Del) and not isinstance(
                node, ast.Subscript):
            return
        names = self.resolver.qualnames(node)
        if isinstance(node, ast.Call):  # getattr(os, "system"), __import__("os"): what they fetch
            names = {n for n in names if not n.endswith("()")}
        for name in sorted(names):
            for kind in rules.kinds_of(name):
                self.flag(node, kind, f"{_VERBS[kind]}: {rules.display(name)}")
            if name in rules.ENVIRONMENT or name in rules.ENVIRONMENT_FUNCTIONS:
                self.environment(node, name)
        parent = self.index.parent(node)
        if isinstance(parent, ast.Call) and parent.func is node and "builtins.getattr" in names:
            self.dynamic_lookup(parent, parent.args[0] if parent.args else None,
                                parent.args[1] if len(parent.args) > 1 else None)
        if isinstance(node, ast.Subscript):
            namespace = isinstance(node.value, ast.Attribute) and node.value.attr == "__dict__" \
                or isinstance(node.value, ast.Call) and "builtins.vars" in self.resolver.qualnames(
                    node.value.func)
            spaces = self.resolver.qualnames(node.value) & {"sys.modules", "builtins",
                                                           "builtins.globals()"}
            if namespace or spaces:
                self.dynamic_lookup(node, node.value, node.slice)

    def dynamic_lookup(self, node: ast.AST, owner: ast.expr | None,
                       attribute: ast.expr | None) -> None:
        """getattr(os, name), vars(os)[name], sys.modules[name]: a module's member chosen by a
        name built at run time hides which one is used."""
        if owner is None or attribute is None or self.resolver.const(attribute) is not NO:
            return
        owners = sorted(o for o in self.resolver.qualnames(owner)
                        if "()" not in o or o == "builtins.globals()")
        owners = [o for o in owners if not o.startswith(("fixture.", "local."))]
        if owners:
            self.flag(node, Kind.DYNAMIC_CODE, f"looks up a member of {', '.join(owners)} by "
                      "a name built at run time")

    def environment(self, node: ast.AST, name: str) -> None:
        parent = self.index.parent(node)
        key_node: ast.AST | None = None
        reading = True
        if name in rules.ENVIRONMENT_FUNCTIONS:
            if isinstance(parent, ast.Call) and parent.func is node:
                if name.endswith(("putenv", "unsetenv")):
                    self.flag(node, Kind.ENVIRONMENT, f"changes the environment: {snippet(parent)}")
                    return
                key_node = parent.args[0] if parent.args else None
            elif self._aliasing(node, parent):
                return
            else:
                self.flag(node, Kind.ENVIRONMENT, f"reads the environment: {snippet(node)}")
                return
        elif isinstance(parent, ast.Attribute) and parent.value is node:
            grand = self.index.parent(parent)
            if parent.attr in ("get", "__getitem__") and isinstance(grand, ast.Call) \
                    and grand.func is parent:
                key_node = grand.args[0] if grand.args else None
            elif parent.attr in ("setdefault", "update", "pop", "popitem", "clear",
                                 "__setitem__", "__delitem__"):
                self.flag(node, Kind.ENVIRONMENT, f"changes the environment: {snippet(parent)}")
                return
            else:
                self.flag(node, Kind.ENVIRONMENT, f"reads the environment: {snippet(parent)}")
                return
        elif isinstance(parent, ast.Subscript) and parent.value is node:
            if not isinstance(parent.ctx, ast.Load):
                self.flag(node, Kind.ENVIRONMENT, f"changes the environment: {snippet(parent)}")
                return
            key_node = parent.slice
        elif isinstance(parent, ast.Compare) and node in parent.comparators and all(
                isinstance(op, ast.In | ast.NotIn) for op in parent.ops):
            key_node = parent.left
        elif self._aliasing(node, parent):
            return
        else:
            reading = False
        if not reading:
            self.flag(node, Kind.ENVIRONMENT,
                      f"reads the whole environment: {snippet(parent or node)}")
            return
        key = self.resolver.const(key_node) if key_node is not None else NO
        if key in rules.ALLOWED_ENVIRONMENT:
            return
        what = f"environment variable {key!r}" if isinstance(key, str) else (
            "an environment variable named at run time")
        self.flag(node, Kind.ENVIRONMENT, f"reads {what}")

    def _aliasing(self, node: ast.AST, parent: ast.AST | None) -> bool:
        """`env = os.environ`: its uses are judged where they happen."""
        return isinstance(parent, ast.Assign | ast.AnnAssign) and parent.value is node and all(
            isinstance(t, ast.Name) for t in (parent.targets if isinstance(parent, ast.Assign)
                                              else [parent.target]))
