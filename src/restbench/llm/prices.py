"""What a model call costs: USD per million input and output tokens, from an extensible table."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from restbench.documents import DocumentError, parse_toml
from restbench.errors import DataError


@dataclass(frozen=True)
class Price:
    input_per_million: float
    output_per_million: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_million
                + output_tokens * self.output_per_million) / 1_000_000


# Decimals of USD kept in what is written to JSON: far below a millionth of a cent, and no
# float noise from summing (0.024999999999999998).
USD_DECIMALS = 10


def rounded_usd(value: float) -> float:
    return round(value, USD_DECIMALS)


def usd(value: float) -> str:
    """A cost for people: always six decimals, so that a cheap model's cost does not round to
    nothing and every cost in a table or summary reads alike."""
    return f"{value:.6f}"


def normalize(name: str) -> str:
    """'openai/GPT-5_Mini' -> 'gpt-5-mini': provider prefix dropped, separators unified."""
    name = name.strip().lower().rsplit("/", 1)[-1]
    return re.sub(r"[\s_]+", "-", name)


class PriceTable:
    def __init__(self, prices: dict[str, Price] | None = None) -> None:
        self._prices: dict[str, Price] = {}
        self._names: dict[str, list[str]] = {}  # entry name -> its aliases, for listing
        for name, price in (prices or {}).items():
            self._prices[normalize(name)] = price
            self._names[name] = []

    @classmethod
    def default(cls) -> PriceTable:
        text = resources.files("restbench.llm").joinpath("prices.toml").read_text("utf-8")
        table = cls()
        table.extend(tomllib.loads(text), "restbench/llm/prices.toml")
        return table

    def extend(self, entries: dict[str, Any], source: str) -> None:
        """Adds `{name: {input, output, aliases?}}` entries; later entries override earlier ones
        of the same name. An alias that is another entry's name or alias in `source`, or the
        name of an earlier entry, is an error: which price applied depended on the order."""
        earlier = {normalize(name) for name in self._names}
        names = {normalize(name): name for name in entries}
        claimed = dict(names)  # in this source: name or alias -> its entry
        for name, entry in entries.items():
            checked = _checked(entry, f"{source}: price of '{name}'")
            price = Price(checked.input, checked.output)
            for alias in checked.aliases:
                key = normalize(alias)
                owner = claimed.setdefault(key, name)
                if owner != name:
                    raise DataError(f"{source}: price of '{name}': alias {alias!r} is also "
                                    f"the price of '{owner}' in this file")
                if key in earlier and key not in names:
                    raise DataError(f"{source}: price of '{name}': alias {alias!r} is the name "
                                    f"of a known price; to change it, give [prices.{alias}]")
            for alias in [name, *checked.aliases]:
                self._prices[normalize(alias)] = price
            self._names[name] = checked.aliases

    def price(self, model: str) -> Price | None:
        """Exact name first, then the longest known name that `model` starts with (snapshots)."""
        key = normalize(model)
        if key in self._prices:
            return self._prices[key]
        prefixes = [known for known in self._prices if key.startswith(known + "-")]
        return self._prices[max(prefixes, key=len)] if prefixes else None

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float:
        """USD for the call; 0.0 for a model the table does not know (a local model, say)."""
        price = self.price(model)
        return price.cost(input_tokens, output_tokens) if price else 0.0

    def entries(self) -> list[tuple[str, list[str], Price]]:
        """(name, aliases, price) of every entry, in the order they were added."""
        return [(name, aliases, self._prices[normalize(name)])
                for name, aliases in self._names.items()]

    def known(self, model: str) -> bool:
        return self.price(model) is not None


class _Entry(BaseModel):
    """A [prices.NAME] table as the file may write it."""

    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)

    input: float = Field(ge=0)  # USD per million tokens
    output: float = Field(ge=0)
    aliases: list[str] = []


_PROBLEMS = {"missing": "missing {key!r} (USD per million tokens)",
             "float_type": "{key} must be a number (USD per million tokens), not {value!r}",
             "finite_number": "{key} must be a finite number, not {value!r}",
             "greater_than_equal": "{key} cannot be negative, not {value!r}",
             "list_type": "aliases must be a list of names, not {value!r}",
             "string_type": "aliases must be a list of names, not {value!r}",
             "extra_forbidden": "unknown key {key!r} (allowed: input, output, aliases)"}


def _checked(entry: object, where: str) -> _Entry:
    if not isinstance(entry, dict):
        raise DataError(f"{where}: expected a table with input and output")
    try:
        return _Entry.model_validate(entry)
    except ValidationError as error:
        first = error.errors()[0]
        key = str(first["loc"][0])
        value = entry.get(key, first["input"])
        message = _PROBLEMS.get(first["type"], f"{key}: {first['msg']}")
        raise DataError(f"{where}: {message.format(key=key, value=value)}") from None


def load_price_file(path: Path) -> dict[str, Any]:
    try:
        return parse_toml(path.read_text("utf-8"))
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except DocumentError as exc:
        raise DataError(f"{path}: {exc}") from None
