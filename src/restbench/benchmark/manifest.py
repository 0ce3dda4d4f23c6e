"""The manifest (service.toml) of an external service: a service in any language that the
harness builds, starts, resets and reads through commands and HTTP, instead of importing it.

The format is documented in docs/service-contract.md ("External services").
"""

from __future__ import annotations

import re
import string
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from restbench.execution.limits import LONGEST_TIMEOUT_S

MANIFEST_FILE = "service.toml"
PLACEHOLDERS = ("port", "data_dir", "database_url")
OWN_STORAGE = "own"
STORAGE_CHOICES = (OWN_STORAGE, "sqlite", "postgres")
_REQUEST = re.compile(r"^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) (/\S*)$")


def _placeholders(text: str) -> list[str]:
    try:
        return [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]
    except ValueError as exc:
        raise ValueError(f"{text!r}: {exc}") from None


def _check_placeholders(text: str) -> str:
    names = _placeholders(text)
    unknown = [name for name in names if name not in PLACEHOLDERS]
    if unknown:
        raise ValueError(f"{text!r}: unknown placeholder {{{unknown[0]}}} (known: "
                         + ", ".join(f"{{{p}}}" for p in PLACEHOLDERS) + ")")
    return text


def fill(text: str, values: dict[str, str]) -> str:
    """`text` with its placeholders replaced (they were checked when the manifest loaded)."""
    return text.format(**values)


class Request(str):
    """"METHOD /path", e.g. "GET /health"."""

    @property
    def method(self) -> str:
        return self.split(" ", 1)[0]

    @property
    def path(self) -> str:
        return self.split(" ", 1)[1]


def _request(value: str) -> Request:
    if not _REQUEST.match(value):
        raise ValueError(f"{value!r} is not 'METHOD /path' (e.g. 'GET /health')")
    return Request(value)


# A time limit as TOML writes a number (20 or 20.5, not "20"): above 0, at most a day
Seconds = Annotated[float, Field(gt=0, le=LONGEST_TIMEOUT_S, strict=True, allow_inf_nan=False)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Command = list[str]


def _command(value: list[str]) -> list[str]:
    if not value or not all(value):
        raise ValueError("must be a non-empty list of non-empty strings")
    for part in value:
        _check_placeholders(part)
    return value


class Source(_Strict):
    tree: str = Field(min_length=1)

    @field_validator("tree")
    @classmethod
    def _relative(cls, value: str) -> str:
        if value.startswith("/") or ".." in value.split("/"):
            raise ValueError(f"{value!r} must be a folder inside the service folder")
        return value


class Build(_Strict):
    command: Command
    timeout_s: Seconds = 300.0

    _check = field_validator("command")(_command)


class Start(_Strict):
    command: Command
    env: dict[str, str] = {}
    ready: str
    timeout_s: Seconds = 20.0

    _check = field_validator("command")(_command)

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        for text in value.values():
            _check_placeholders(text)
        return value

    @field_validator("ready")
    @classmethod
    def _ready(cls, value: str) -> str:
        return _request(value)

    @model_validator(mode="after")
    def _told_its_port(self) -> Start:
        # Instances run side by side, each on a port restbench picks: one that is not told it
        # listens where another already does.
        if not any("port" in _placeholders(text) for text in [*self.command, *self.env.values()]):
            raise ValueError("neither 'command' nor 'env' has {port}: the instance must listen "
                             "on the port restbench gives it (several run at once)")
        return self


class Reset(_Strict):
    request: str | None = None
    command: Command | None = None
    timeout_s: Seconds = 10.0

    @field_validator("request")
    @classmethod
    def _request_form(cls, value: str | None) -> str | None:
        if value is not None and _placeholders(value):
            raise ValueError(f"{value!r}: no placeholders here (they are for commands and env): "
                             "restbench sends the request to the instance's own port")
        return None if value is None else _request(value)

    @field_validator("command")
    @classmethod
    def _command_form(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _command(value)

    @model_validator(mode="after")
    def _one(self) -> Reset:
        if (self.request is None) == (self.command is None):
            raise ValueError("give exactly one of 'request' or 'command'")
        return self


class OpenAPI(_Strict):
    file: str | None = None
    url: str | None = None

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return None if value is None else _request(value)

    @model_validator(mode="after")
    def _one(self) -> OpenAPI:
        if (self.file is None) == (self.url is None):
            raise ValueError("give exactly one of 'file' or 'url'")
        return self


def renamed(names: object, aliases: dict[str, str]) -> object:
    """A list of names as given, with each alias replaced by the name it stands for (anything
    else is left for the model to refuse)."""
    if not isinstance(names, list):
        return names
    return [aliases.get(name, name) if isinstance(name, str) else name for name in names]


class Storage(_Strict):
    databases: list[Literal["own", "sqlite", "postgres"]] = Field(default=["own"], min_length=1)

    @field_validator("databases", mode="before")
    @classmethod
    def _postgresql_too(cls, value: object) -> object:
        # requirements.yaml says postgresql: the same name is taken here
        return renamed(value, {"postgresql": "postgres"})

    @model_validator(mode="after")
    def _own_alone(self) -> Storage:
        if OWN_STORAGE in self.databases and len(self.databases) > 1:
            raise ValueError("'own' (the service keeps its state itself) stands alone")
        return self


class Manifest(_Strict):
    """The content of service.toml."""

    source: Source
    build: Build | None = None
    start: Start
    reset: Reset
    openapi: OpenAPI
    storage: Storage = Storage()

    @property
    def own_storage(self) -> bool:
        return OWN_STORAGE in self.storage.databases
