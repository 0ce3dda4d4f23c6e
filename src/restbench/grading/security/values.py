"""What an expression may evaluate to, as far as can be told without running it.

Values are followed through names, fixtures, helper call sites and simple string building
(concatenation, f-strings, `format`, `%`, `join`, decoding of literals):

- `const`: the one constant value of an expression (`"ht" + "tp://x"`, base64 of a literal), if any;
- `qualnames`: the dotted origins an expression may stand for (`sp.run` -> `subprocess.run`,
  `getattr(os, "sys" + "tem")` -> `os.system`, `requests.Session()` for a session object);
- `pieces`: a string expression split into its constant text and the expressions between it.

`urls.py` and `paths.py` build on these to say where a URL points and where a path lies.
`Resolver` is assembled from `bindings.NameFlow` (where names come from) and
`folding.ConstantFolding` (`const`); this module adds `qualnames` and `pieces`.
"""

from __future__ import annotations

import ast
import re
import string
from typing import Any

from restbench.grading.security.basics import (
    BUILTIN_NAMES,
    MAX_DEPTH,
    NO,
    STEP_BUDGET,
    TooComplex,
    snippet,
    worst,
)
from restbench.grading.security.bindings import NameFlow, _arg
from restbench.grading.security.folding import ConstantFolding
from restbench.grading.security.index import ModuleIndex


class Resolver(NameFlow, ConstantFolding):
    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self.steps = 0

    def tick(self) -> None:
        self.steps += 1
        if self.steps > STEP_BUDGET:
            raise TooComplex

    def scope(self, node: ast.AST) -> Any:
        return self.index.scope_of.get(node, self.index.tree)

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


__all__ = ["MAX_DEPTH", "NO", "Resolver", "TooComplex", "_arg", "snippet", "worst"]
