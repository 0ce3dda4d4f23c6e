"""Request and response bodies. JSON property names are camelCase; on input they are
matched case-insensitively (``Title``, ``title`` and ``TITLE`` are the same property)."""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel


class ApiModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _match_property_names_case_insensitively(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        known = {(field.alias or name).lower(): field.alias or name
                 for name, field in cls.model_fields.items()}
        return {known.get(key.lower(), key) if isinstance(key, str) else key: value
                for key, value in data.items()}


# --- todos -----------------------------------------------------------------------------


class TodoItem(ApiModel):
    """A todo as the API returns it."""

    id: int
    title: str
    is_complete: bool


class TodoCreate(ApiModel):
    """Body of POST /todos. Only the title is used."""

    model_config = ConfigDict(json_schema_extra={"required": ["title"]})

    id: int = Field(default=0, description="Ignored: the server assigns the id.")
    title: str | None = Field(
        default=None, description="Required; must not be empty or whitespace only."
    )
    is_complete: bool = Field(
        default=False, description="Ignored: a new todo always starts with isComplete false."
    )


class TodoUpdate(ApiModel):
    """Body of PUT /todos/{id}: a full replacement of the todo."""

    model_config = ConfigDict(json_schema_extra={"required": ["id", "title"]})

    id: int = Field(
        default=0,
        description="Must equal the id in the path; a missing id counts as 0 and is rejected.",
    )
    title: str | None = Field(
        default=None, description="Required; must not be empty or whitespace only."
    )
    is_complete: bool = Field(default=False, description="Defaults to false when absent.")


# --- users -----------------------------------------------------------------------------


class RegisterRequest(ApiModel):
    email: str
    password: str


class LoginRequest(ApiModel):
    email: str = Field(description="The e-mail address the account was registered with.")
    password: str


class RefreshRequest(ApiModel):
    refresh_token: str


class EmailRequest(ApiModel):
    email: str


class ResetPasswordRequest(ApiModel):
    email: str
    reset_code: str
    new_password: str


class InfoRequest(ApiModel):
    new_email: str | None = None
    new_password: str | None = None
    old_password: str | None = None


class AccessTokenResponse(ApiModel):
    token_type: str = "Bearer"
    access_token: str
    expires_in: int = Field(description="Lifetime of the access token in seconds.")
    refresh_token: str


class InfoResponse(ApiModel):
    email: str
    is_email_confirmed: bool


# --- problem bodies (application/problem+json), documented in the OpenAPI ---------------


class ValidationProblem(BaseModel):
    type: str = "https://tools.ietf.org/html/rfc9110#section-15.5.1"
    title: str = "One or more validation errors occurred."
    status: int = 400
    errors: dict[str, list[str]] = Field(
        description="Error messages keyed by property name or by error code."
    )


class Problem(BaseModel):
    type: str
    title: str
    status: int
    detail: str | None = None
