"""Which endpoint serves a model name: a TOML config file, else environment variables.

The API key itself is never held here, only the name of the environment variable that has it; it
is read at call time, so it cannot end up in the result store, the results or the logs.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from restbench.errors import DataError
from restbench.llm.prices import PriceTable, load_price_file

CONFIG_ENV = "RESTBENCH_LLM_CONFIG"
DEFAULT_CONFIG_FILE = Path("restbench-models.toml")
BASE_URL_ENVS = ("RESTBENCH_LLM_BASE_URL", "OPENAI_BASE_URL")
API_KEY_ENVS = ("RESTBENCH_LLM_API_KEY", "OPENAI_API_KEY")
DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class ModelConfig:
    name: str  # what the user chose; results are labelled with it
    model: str  # the id sent to the endpoint
    base_url: str
    api_key_env: str | None = None
    max_concurrency: int = 4  # calls in flight per endpoint
    timeout_s: float = 120.0  # per request, counted from when it is sent
    max_retries: int = 4
    retry_base_s: float = 1.0  # backoff: retry_base_s * 2**attempt, unless Retry-After says
    temperature: float | None = 0.0
    price_name: str | None = None  # price table entry, when it differs from `model`
    source: str = "environment"  # the config file that named it, for messages
    max_tokens: int | None = None  # longest answer asked for; None: the endpoint's own limit
    context_tokens: int | None = None  # prompt + answer limit; None: asked from the endpoint

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def is_local(self) -> bool:
        host = urlsplit(self.base_url).hostname or ""
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    def describe(self) -> dict[str, Any]:
        """What may be stored with results: everything but the key (which is not here anyway)."""
        return asdict(self)


# A local server (llama.cpp, vLLM, Ollama on loopback) usually answers one request at a time and
# slowly: more in flight only queue there, where the client's timeout would already run.
LOCAL_DEFAULTS = {"max_concurrency": 1, "timeout_s": 600.0, "max_tokens": 2048}


def _http_url(value: str | None) -> str | None:
    if value and urlsplit(value).scheme not in ("http", "https"):
        raise ValueError("must be an http(s) URL")
    return value


class _Entry(BaseModel):
    """A [defaults] or [models.NAME] table as the file may write it: TOML's own types, no
    conversions (a quoted number is a mistake, not a number)."""

    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)

    model: str | None = Field(None, min_length=1)
    base_url: Annotated[str | None, AfterValidator(_http_url)] = None  # "": the environment's
    api_key_env: str | None = None  # "": no key
    price: str | None = Field(None, min_length=1)
    max_concurrency: int | None = Field(None, ge=1)
    # Bounded: 1e11 retries overflowed the back-off's arithmetic, a failed generation instead of
    # a configuration error
    timeout_s: float | None = Field(None, gt=0, le=86_400)
    max_retries: int | None = Field(None, ge=0, le=100)
    retry_base_s: float | None = Field(None, ge=0, le=3_600)
    temperature: float | None = Field(None, ge=0)
    max_tokens: int | None = Field(None, ge=1)
    context_tokens: int | None = Field(None, ge=1)


_TYPES = {"string_type": "must be a string", "int_type": "must be a whole number",
          "float_type": "must be a number", "string_too_short": "must not be empty",
          "greater_than": "must be more than {gt}", "greater_than_equal": "must be at least {ge}",
          "less_than_equal": "must be at most {le}",
          "finite_number": "must be a finite number"}


def _problem(error: ValidationError) -> str:
    """The first problem of an entry, as `key must be ... (not VALUE)`."""
    first = error.errors()[0]
    key = str(first["loc"][0]) if first["loc"] else ""
    if first["type"] == "extra_forbidden":
        return f"unknown setting {key!r} (allowed: {', '.join(_Entry.model_fields)})"
    wanted = _TYPES.get(first["type"])
    if wanted is None:
        wanted = first["msg"].removeprefix("Value error, ")
    else:
        wanted = wanted.format(**{name: f"{value:g}" for name, value
                                  in first.get("ctx", {}).items()})
    return f"{key} {wanted}, not {first['input']!r}"


def config_path(explicit: Path | None = None) -> Path | None:
    if explicit is not None:
        return explicit
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV])
    return DEFAULT_CONFIG_FILE if DEFAULT_CONFIG_FILE.is_file() else None


def _entry(values: object, where: str) -> dict[str, Any]:
    """The settings a table gives, checked, as ModelConfig's fields; DataError naming the
    table and the key otherwise."""
    if not isinstance(values, dict):
        raise DataError(f"{where}: expected a table")
    try:
        entry = _Entry.model_validate(values).model_dump(exclude_unset=True)
    except ValidationError as error:
        raise DataError(f"{where}: {_problem(error)}") from None
    if "price" in entry:
        entry["price_name"] = entry.pop("price")
    if entry.get("api_key_env") == "":
        entry["api_key_env"] = None
    return entry


def _tables(data: dict[str, Any], section: str, where: str) -> dict[str, Any]:
    tables = data.get(section, {})
    if not isinstance(tables, dict):
        raise DataError(f"{where}: {section} must be tables ([{section}.NAME])")
    return tables


@dataclass(frozen=True)
class ModelSettings:
    """A parsed config file: defaults, per-model entries and extra prices."""

    defaults: dict[str, Any]
    models: dict[str, dict[str, Any]]
    prices: PriceTable
    source: str
    lists_models: bool = False  # the file has a [models] table: only its names may be used

    @classmethod
    def load(cls, path: Path | None = None) -> ModelSettings:
        chosen = config_path(path)
        prices = PriceTable.default()
        if chosen is None:
            return cls({}, {}, prices, "environment")
        data = load_price_file(chosen)
        where = str(chosen)
        unknown = sorted(set(data) - {"defaults", "models", "prices"})
        if unknown:
            raise DataError(f"{where}: unknown section [{unknown[0]}] "
                            "(allowed: [defaults], [models.NAME], [prices.NAME])")
        prices.extend(_tables(data, "prices", where), where)
        models = {name: _entry(values, f"{where}: [models.{name}]")
                  for name, values in _tables(data, "models", where).items()}
        return cls(_entry(data.get("defaults", {}), f"{where}: [defaults]"), models, prices,
                   where, lists_models="models" in data)

    def resolve(self, name: str) -> ModelConfig:
        name = name.strip()
        if not name:
            raise DataError("model name is empty")
        if self.lists_models and name not in self.models:
            # A name the file does not list is a typo, not a model for [defaults]' endpoint.
            raise DataError(f"{self.source}: no [models.{name}] entry "
                            f"(models: {', '.join(sorted(self.models)) or 'none'})")
        entry = {**self.defaults, **self.models.get(name, {})}
        from_environment = next((os.environ[e] for e in BASE_URL_ENVS if os.environ.get(e)), None)
        base_url = entry.pop("base_url", None) or from_environment
        if base_url is None and self.source != "environment":
            # A config file was given: an entry without an endpoint must not quietly go to the
            # hosted default with whatever key is set.
            where = f"[models.{name}] has no base_url" if name in self.models \
                else f"no [models.{name}] entry"
            raise DataError(f"{self.source}: {where}, and [defaults] has no base_url; add "
                            f'base_url = "{DEFAULT_BASE_URL}" for the OpenAI API')
        base_url = base_url or DEFAULT_BASE_URL
        if "api_key_env" not in entry:
            entry["api_key_env"] = next((e for e in API_KEY_ENVS if os.environ.get(e)),
                                        API_KEY_ENVS[-1])
        config = ModelConfig(name=name, model=entry.pop("model", name),
                             base_url=base_url.rstrip("/"), source=self.source, **entry)
        if config.is_local():
            config = replace(config, **{key: value for key, value in LOCAL_DEFAULTS.items()
                                        if key not in entry})
        if urlsplit(config.base_url).scheme not in ("http", "https"):
            raise DataError(f"model '{name}' ({self.source}): base_url {config.base_url!r} is not "
                            "an http(s) URL")
        if config.context_tokens is not None and config.max_tokens is not None \
                and config.max_tokens >= config.context_tokens:
            given = "" if "max_tokens" in entry else \
                f" (the default{' for a local endpoint' if config.is_local() else ''})"
            raise DataError(f"model '{name}' ({self.source}): max_tokens {config.max_tokens}"
                            f"{given} leaves no room for the prompt in context_tokens "
                            f"{config.context_tokens}; set max_tokens below it")
        return config


def resolve_model(name: str, config_file: Path | None = None) -> ModelConfig:
    """The endpoint for `name`: its [models.NAME] entry over [defaults] over the environment."""
    return ModelSettings.load(config_file).resolve(name)


def check_credentials(config: ModelConfig) -> None:
    """A hosted endpoint without a key fails every call: say so before the run starts."""
    if config.is_local() or config.api_key():
        return
    variable = config.api_key_env or API_KEY_ENVS[-1]
    if config.source == "environment":
        elsewhere = "or name a key variable with api_key_env in a model config file (--llm-config)"
    else:
        elsewhere = f"or name another with api_key_env in {config.source}"
    raise DataError(f"model '{config.name}': no API key for {config.base_url}: set {variable}, "
                    f"{elsewhere}")


@dataclass(frozen=True)
class ModelEnvironment:
    """What another machine needs to reach the models as this process would: the variables that
    choose endpoints and hold keys, and the text of the config files in use (by path here)."""

    variables: dict[str, str]
    files: dict[str, str]
    config_file: str | None  # the config file used when no generator names one


def model_environment(extra_config_files: Iterable[str] = ()) -> ModelEnvironment:
    """This process's model environment; `extra_config_files` are config files that generators
    were given by argument."""
    files: dict[str, str] = {}
    names = {*BASE_URL_ENVS, *API_KEY_ENVS}
    default = config_path(None)
    for path in [default, *(Path(p) for p in extra_config_files)]:
        if path is None or str(path) in files:
            continue
        try:
            files[str(path)] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # the generator reports a missing file as it would locally
        try:
            settings = ModelSettings.load(path)
        except DataError:
            continue  # a generator that uses it reports the error on the node as it would here
        names |= {entry["api_key_env"] for entry in [settings.defaults, *settings.models.values()]
                  if entry.get("api_key_env")}
    return ModelEnvironment({name: os.environ[name] for name in sorted(names)
                             if name in os.environ}, files,
                            str(default) if default is not None else None)
