"""Constant folding: the one value an expression has, if any (a mixin of `Resolver`).

Strings are followed through concatenation, f-strings, `format`, `%`, `join` and decoders of
literals (base64, hex, unquote, ...); sizes are bounded so hostile code cannot make us build
huge values.
"""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import posixpath
import re
import zlib
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urljoin

from restbench.grading.security.basics import MAX_CONST, MAX_DEPTH, NO, STR_METHODS


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


class ConstantFolding:
    """`const`: the one constant value of an expression, or NO."""

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

