"""Request and response bodies."""

import re
import uuid
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema

_LOCAL_PART = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$")
_DOMAIN_LABEL = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")


def _normalize_email(value: str) -> str:
    """Check the address syntax; the domain is lower-cased, the local part keeps its case."""
    local, sep, domain = value.rpartition("@")
    labels = domain.split(".")
    if (
        not sep
        or not _LOCAL_PART.match(local)
        or len(labels) < 2
        or not all(_DOMAIN_LABEL.match(label) for label in labels)
        or labels[-1].isdigit()
    ):
        raise ValueError("value is not a valid email address")
    return f"{local}@{domain.lower()}"


EmailAddress = Annotated[
    str,
    StringConstraints(max_length=255),
    AfterValidator(_normalize_email),
    WithJsonSchema({"type": "string", "format": "email", "maxLength": 255}),
]
Password = Annotated[str, StringConstraints(min_length=8, max_length=128)]
FullName = Annotated[str, StringConstraints(max_length=255)]


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def optional(**constraints: Any) -> Any:
    """An optional key that may be left out but is not nullable."""
    return Field(default=None, json_schema_extra=_no_default, **constraints)


class Message(BaseModel):
    message: str


class HTTPError(BaseModel):
    detail: str


class Token(BaseModel):
    access_token: str
    token_type: str = "bearer"


class LoginForm(BaseModel):
    """Fields of the OAuth2 password-flow form."""

    grant_type: Annotated[str, StringConstraints(pattern=r"^password$")] | None = None
    username: str
    password: str = Field(json_schema_extra={"format": "password"})
    scope: str = ""
    client_id: str | None = None
    client_secret: str | None = Field(default=None, json_schema_extra={"format": "password"})


class NewPassword(BaseModel):
    token: str
    new_password: Password


# ----- users -----


class UserPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    email: str = Field(json_schema_extra={"format": "email"})
    is_active: bool
    is_superuser: bool
    full_name: str | None
    id: uuid.UUID
    created_at: datetime


class UsersPublic(BaseModel):
    data: list[UserPublic]
    count: int


class UserCreate(BaseModel):
    email: EmailAddress
    password: Password
    full_name: FullName | None = None
    is_active: bool = True
    is_superuser: bool = False


class UserRegister(BaseModel):
    email: EmailAddress
    password: Password
    full_name: FullName | None = None


class UserUpdate(BaseModel):
    email: EmailAddress = optional()
    password: Password = optional()
    full_name: FullName | None = None
    is_active: bool = optional()
    is_superuser: bool = optional()


class UserUpdateMe(BaseModel):
    full_name: FullName | None = None
    email: EmailAddress = optional()


class UpdatePassword(BaseModel):
    current_password: Password
    new_password: Password


# ----- items -----


class ItemCreate(BaseModel):
    title: Annotated[str, StringConstraints(min_length=1, max_length=255)]
    description: Annotated[str, StringConstraints(max_length=255)] | None = None


class ItemUpdate(BaseModel):
    title: Annotated[str, StringConstraints(min_length=1, max_length=255)] = optional()
    description: Annotated[str, StringConstraints(max_length=255)] | None = None


class ItemPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    title: str
    description: str | None
    id: uuid.UUID
    owner_id: uuid.UUID
    created_at: datetime


class ItemsPublic(BaseModel):
    data: list[ItemPublic]
    count: int


# ----- captured e-mail -----


class SentEmail(BaseModel):
    email_to: str
    subject: str
    html_content: str
    sent_at: datetime


class SentEmails(BaseModel):
    data: list[SentEmail]
    count: int
