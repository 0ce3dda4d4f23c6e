"""What a model call costs: USD per million input and output tokens, from an extensible table."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from restbench.errors import DataError


@dataclass(frozen=True)
class Price:
    input_per_million: float
    output_per_million: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_million
                + output_tokens * self.output_per_million) / 1_000_000


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
        """Adds `{name: {input, output, aliases?}}` entries; later entries override earlier ones."""
        for name, entry in entries.items():
            where = f"{source}: price of '{name}'"
            if not isinstance(entry, dict):
                raise DataError(f"{where}: expected a table with input and output")
            try:
                price = Price(float(entry["input"]), float(entry["output"]))
            except KeyError as missing:
                raise DataError(f"{where}: missing {missing.args[0]!r} (USD per million tokens)")
            except (TypeError, ValueError):
                raise DataError(f"{where}: input and output must be numbers") from None
            if price.input_per_million < 0 or price.output_per_million < 0:
                raise DataError(f"{where}: prices cannot be negative")
            aliases = [str(alias) for alias in entry.get("aliases", [])]
            for alias in [name, *aliases]:
                self._prices[normalize(alias)] = price
            self._names[name] = aliases

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


def load_price_file(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"{path}: not valid TOML ({exc})") from None
