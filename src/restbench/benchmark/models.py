"""Typed models of the benchmark data as it is stored in a service's requirements.yaml."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    field_validator,
    model_validator,
)

from restbench.benchmark.manifest import Manifest, renamed
from restbench.benchmark.text_files import read_text
from restbench.benchmark.variant import Variant


class Database(str, enum.Enum):
    """A database engine a service can run on."""

    SQLITE = "sqlite"
    POSTGRESQL = "postgresql"


class MutantKind(str, enum.Enum):
    """What kind of fault a mutant is; the rules are in docs/service-contract.md."""

    STATUS = "status"  # only the status code is wrong; the answer is otherwise right
    MESSAGE = "message"  # only a message, error key, header, content type or spelling is wrong
    CRASH = "crash"  # an unhandled 500 on one input path
    BLUNT = "blunt"  # the operation fails for every call
    SEMANTIC = "semantic"  # a wrong value, state, permission, order, filter or validation


def _plain_name(value: str) -> str:
    if not _NAME.fullmatch(value):
        raise ValueError(f"{value!r} is not a plain name (letters, digits, '-', '_' and '.', "
                         "at most 100, not starting with '.', '-' or '_'): it names folders "
                         "and files")
    return value


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
# A service's, requirement's, mutant's or benign variant's name: restbench names folders, files
# and databases by it, so it may not be a path ("../x") or hold spaces.
Name = Annotated[str, AfterValidator(_plain_name)]


def _operation(value: str) -> str:
    if not _OPERATION.fullmatch(value):
        raise ValueError(f"{value!r} is not 'METHOD /path' as the OpenAPI document writes the "
                         "path (e.g. 'GET /notes/{id}')")
    return value


_OPERATION = re.compile(r"(GET|PUT|POST|DELETE|OPTIONS|HEAD|PATCH|TRACE) /\S*")
Operation = Annotated[str, AfterValidator(_operation)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Edit(_Strict):
    """A change to one file of the service's source: an exact-once find/replace, or (for
    services described by a manifest) a unified diff of that file."""

    file: str = Field(min_length=1)
    find: str | None = Field(default=None, min_length=1)
    replace: str | None = None
    diff: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_kind_of_edit(self) -> Edit:
        if self.diff is not None:
            if self.find is not None or self.replace is not None:
                raise ValueError("give either 'diff' or 'find' and 'replace', not both")
        elif self.find is None or self.replace is None:
            raise ValueError("needs 'find' and 'replace' (or a unified 'diff')")
        return self


class Mutant(Edit):
    """A hand-written fault that violates exactly one requirement."""

    id: Name
    description: str = Field(min_length=1)
    kind: MutantKind
    vague_basis: StrictBool  # does the vague wording give a test writer a basis to detect this fault?


class BenignVariant(Edit):
    """A change that keeps every requirement and the OpenAPI contract true."""

    id: Name
    description: str = Field(min_length=1)


class Requirement(_Strict):
    id: Name
    title: str = Field(min_length=1)
    operations: list[Operation] = Field(min_length=1)
    precise: str = Field(min_length=1)
    vague: str = Field(min_length=1)
    golden: str = Field(min_length=1)
    mutants: list[Mutant] = Field(min_length=1)
    # Required exactly when no mutant is semantic: why the requirement has no state to break.
    no_semantic_reason: str | None = Field(default=None, min_length=1)

    def has_semantic_mutant(self) -> bool:
        return any(m.kind is MutantKind.SEMANTIC for m in self.mutants)

    def text(self, variant: Variant) -> str:
        return (self.precise if variant is Variant.PRECISE else self.vague).strip()


class Login(_Strict):
    """How a black-box client logs in as a seeded user (for generators that read no prose)."""

    operation: str = Field(pattern=r"^[A-Z]+ /\S*$")  # e.g. "POST /users/login"
    body: dict[str, Any]  # the seeded credentials, sent as JSON or as a form
    form: StrictBool = False  # application/x-www-form-urlencoded instead of JSON
    token: str = Field(min_length=1)  # dotted path of the token in the JSON answer: "user.token"
    header: str = "Authorization"
    format: str = Field(default="Bearer {token}", pattern=r"\{token\}")


class Seed(_Strict):
    """Facts about the seed state that a client cannot guess from the OpenAPI schemas."""

    path: dict[str, str | int] = {}  # path parameter name -> a value that exists after a reset
    values: dict[str, Any] = {}  # body or query property name -> a value that works


class ServiceData(_Strict):
    """The content of requirements.yaml."""

    service: Name
    title: str = Field(min_length=1)
    description: str = ""
    auth: Login | None = None  # optional: without it, baselines call without authentication
    seed: Seed = Seed()
    requirements: list[Requirement] = Field(min_length=1)
    benign: list[BenignVariant] = []
    databases: list[Database] = Field(default=[Database.SQLITE], min_length=1)

    @field_validator("databases", mode="before")
    @classmethod
    def _postgres_too(cls, value: object) -> object:
        # `--db` and service.toml say postgres: the same name is taken here
        return renamed(value, {"postgres": "postgresql"})


@dataclass(frozen=True)
class Service:
    """A benchmark service: its folder on disk and its validated data."""

    root: Path
    data: ServiceData
    manifest: Manifest | None = None  # an external service (service.toml), not an app package

    @property
    def name(self) -> str:
        return self.data.service

    @property
    def requirements(self) -> list[Requirement]:
        return self.data.requirements

    @property
    def data_file(self) -> Path:
        return self.root / "requirements.yaml"

    @property
    def app_dir(self) -> Path:
        """The source tree that implementations copy and mutants edit."""
        return self.root / (self.manifest.source.tree if self.manifest else "app")

    def requirement(self, requirement_id: str) -> Requirement:
        for requirement in self.data.requirements:
            if requirement.id == requirement_id:
                return requirement
        raise KeyError(requirement_id)

    def mutants(self) -> list[Mutant]:
        return [m for r in self.data.requirements for m in r.mutants]

    def golden_path(self, requirement: Requirement) -> Path:
        return self.root / requirement.golden

    def golden_code(self, requirement: Requirement) -> str:
        """The golden test's text (DataError, one line, when it cannot be read)."""
        return read_text(self.golden_path(requirement))
