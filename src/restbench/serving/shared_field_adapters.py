"""FastAPI's per-field pydantic adapters, built once per distinct field and shared.

FastAPI builds a pydantic `TypeAdapter` (a core schema, a validator and a serializer) for every
parameter, body and response field of every route, and again for each route of an included
router on that router's first request. A server that imports some of its service's modules again
(`originals.REIMPORT`) runs `create_app` again, so it builds them all anew: ~150 adapters per
fullstack server, most of them for the very fields the launcher built them for (`int` query
parameters, the unchanged modules' models): a large part of such a server's CPU.

An adapter is a function of what FastAPI builds it from: the field's annotation, its metadata and
its other attributes, and the config. Keyed by exactly those, compared so that nothing unequal
in behaviour compares equal, a field gets the adapter built for an identical one, in this process
or in the launcher it was forked from. The key compares:

- plain immutable values by type and value (`0`, `False` and `0.0` are three keys);
- tuples, frozen sets, frozen dataclasses (annotated_types' constraints) and typing constructs
  (`list[Item]`, `int | None`, `Literal[...]`) by their parts, recursively;
- everything else (classes, functions, enum members, lists, dicts) by identity, so that a class
  or function that a re-import made again, or a mutable value, is always a different key; a
  class also by the identity of its pydantic schema, which `model_rebuild` replaces.

A field with a forward reference (a string annotation), or with a part that fails to be read
for its key, is built as FastAPI builds it.
Installed once in the launcher, before any service is imported.
"""

from __future__ import annotations

import dataclasses
import importlib
import typing
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

_PLAIN = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis))
_MAX_DEPTH = 12
_SCHEMA = "__pydantic_core_schema__"


class _Unkeyable(Exception):
    """The field is built as FastAPI builds it."""


class _Same:
    """A key part equal only to the same object."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value  # held, so its id is never reused while the cache lives

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)


def field_key(annotation: object, metadata: Iterable[object],
              attributes: Mapping[str, object], config: object) -> Hashable:
    """The key of the adapter FastAPI builds from these; raises `_Unkeyable`."""
    if isinstance(annotation, str):
        raise _Unkeyable
    if config is not None and not isinstance(config, dict):
        raise _Unkeyable
    # FastAPI lists the attributes in one fixed order, a model its config too: equal fields give
    # equal tuples.
    return (_frozen(annotation, 0), tuple(_frozen(item, 0) for item in metadata),
            _frozen_items(attributes), None if config is None else _frozen_items(config))


def _frozen_items(mapping: Mapping[str, object]) -> Hashable:
    # Most of a field's ~20 attributes are None, the rest mostly plain: those inline (this runs
    # for every field FastAPI builds). `_frozen` never returns None, so None stays apart.
    return tuple([(name, value if value is None else (kind, value) if (kind := type(value))
                   in _PLAIN else _frozen(value, 0)) for name, value in mapping.items()])


def _frozen(value: object, depth: int) -> Hashable:
    if depth > _MAX_DEPTH:
        raise _Unkeyable
    kind = type(value)
    if kind in _PLAIN:
        return (kind, value)
    if isinstance(value, typing.ForwardRef):  # resolved in some namespace: never shared
        raise _Unkeyable
    if kind is tuple:
        return (tuple, tuple(_frozen(item, depth + 1) for item in value))  # type: ignore[attr-defined]
    if kind is frozenset:
        return (frozenset, frozenset(_frozen(item, depth + 1) for item in value))  # type: ignore[attr-defined]
    origin = typing.get_origin(value)
    if origin is not None:
        arguments = typing.get_args(value)
        if origin is not typing.Literal and any(isinstance(arg, str) for arg in arguments):
            raise _Unkeyable  # `list["Item"]` keeps its forward reference as a string
        return (kind, _frozen(origin, depth + 1),
                tuple(_frozen(arg, depth + 1) for arg in arguments))
    if (dataclasses.is_dataclass(value) and not isinstance(value, type)
            and value.__dataclass_params__.frozen):  # type: ignore[attr-defined]
        return (kind, tuple((item.name, _frozen(getattr(value, item.name), depth + 1))
                            for item in dataclasses.fields(value)))
    if isinstance(value, type):
        return (_Same(value), _Same(vars(value).get(_SCHEMA)))
    return _Same(value)


def install() -> None:
    """Has FastAPI's model fields share their adapters (see above). No-op without FastAPI, or
    with a FastAPI whose model field is built differently."""
    try:
        v2 = importlib.import_module("fastapi._compat.v2")
    except ImportError:
        return
    model_field = getattr(v2, "ModelField", None)
    build: Callable[[Any], None] | None = getattr(model_field, "__post_init__", None)
    field_parts = getattr(v2, "asdict", None)
    if model_field is None or build is None or field_parts is None \
            or getattr(build, "_shares_adapters", False):
        return
    adapters: dict[Hashable, Any] = {}

    def build_or_share(field: Any) -> None:
        try:
            parts = field_parts(field.field_info)
            key = field_key(parts["annotation"], parts["metadata"], parts["attributes"],
                            field.config)
            adapter = adapters.get(key)
        except Exception:  # noqa: BLE001 - _Unkeyable, or a part that will not be read: as before
            build(field)
            return
        if adapter is not None:
            field._type_adapter = adapter
            return
        build(field)
        adapters[key] = field._type_adapter

    build_or_share._shares_adapters = True  # type: ignore[attr-defined]
    model_field.__post_init__ = build_or_share
