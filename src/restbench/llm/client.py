"""An OpenAI-compatible chat-completions client: bounded concurrency, retries, cost, a call cache.

Works with hosted providers and local servers (vLLM, Ollama, llama.cpp server) alike: it speaks
only `POST {base_url}/chat/completions`. Failures that persist become an `LLMError` with a one-line
message, which generators record as a failed generation rather than crash the run.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from dataclasses import dataclass, field
from typing import Any, Protocol, Self

import httpx

from restbench.errors import RestbenchError
from restbench.llm.config import ModelConfig
from restbench.llm.prices import PriceTable
from restbench.store.sqlite import digest

log = logging.getLogger(__name__)
RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}
MAX_BACKOFF_S = 60.0


class LLMError(RestbenchError):
    """A model call that could not be completed, or whose answer was unusable."""


class MalformedAnswer(ValueError):
    """An HTTP 200 whose body is not a chat completion."""


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens,
                     self.output_tokens + other.output_tokens)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""  # as the model wrote them, when they were not a JSON object


@dataclass(frozen=True)
class ChatResult:
    content: str
    tool_calls: tuple[ToolCall, ...]
    usage: Usage
    cost_usd: float
    cached: bool = False
    finish_reason: str | None = None
    message: dict[str, Any] = field(default_factory=dict)  # to append to the conversation


class CallCache(Protocol):
    """Where answers are kept so that an identical request is never paid twice."""

    def llm_call(self, key: str) -> dict[str, Any] | None: ...

    def save_llm_call(self, key: str, model: str, response: dict[str, Any]) -> None: ...


# One semaphore per endpoint and event loop: several clients of one endpoint share the bound.
_limits: dict[tuple[int, str], asyncio.Semaphore] = {}


def _limit(config: ModelConfig) -> asyncio.Semaphore:
    key = (id(asyncio.get_running_loop()), config.base_url)
    if key not in _limits:
        _limits[key] = asyncio.Semaphore(config.max_concurrency)
    return _limits[key]


_request_locks: dict[tuple[int, str], asyncio.Lock] = {}


def _same_request(key: str) -> asyncio.Lock:
    return _request_locks.setdefault((id(asyncio.get_running_loop()), key), asyncio.Lock())


def _parse(response: dict[str, Any]) -> tuple[str, tuple[ToolCall, ...], str | None,
                                                dict[str, Any]]:
    """The answer's text, tool calls, finish reason and message; MalformedAnswer otherwise."""
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedAnswer("no choices in the answer")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise MalformedAnswer("no message in the first choice")
    content = message.get("content") or ""
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise MalformedAnswer("message content is not text")
    calls = []
    for raw in message.get("tool_calls") or []:
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise MalformedAnswer("a tool call without a function name")
        text = function.get("arguments") or "{}"
        try:
            arguments = json.loads(text) if isinstance(text, str) else text
        except json.JSONDecodeError:
            arguments = None
        calls.append(ToolCall(str(raw.get("id", f"call_{len(calls)}")), function["name"],
                              arguments if isinstance(arguments, dict) else {},
                              "" if isinstance(arguments, dict) else str(text)))
    kept = {"role": "assistant", "content": content or None}
    if message.get("tool_calls"):
        kept["tool_calls"] = message["tool_calls"]
    return content, tuple(calls), choices[0].get("finish_reason"), kept


def _usage(response: dict[str, Any]) -> Usage:
    usage = response.get("usage") or {}
    try:
        return Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
    except (TypeError, ValueError):
        return Usage()


def _error_text(response: httpx.Response) -> str:
    try:
        error = response.json().get("error")
        message = error.get("message") if isinstance(error, dict) else error
    except (ValueError, AttributeError):
        message = response.text
    return " ".join(str(message or response.reason_phrase).split())[:200]


class ChatClient:
    """Use as `async with ChatClient(config) as client: await client.complete(messages)`."""

    def __init__(self, config: ModelConfig, prices: PriceTable | None = None,
                 cache: CallCache | None = None, read_cache: bool = True) -> None:
        self.config = config
        self.prices = prices or PriceTable.default()
        self.cache = cache
        self.read_cache = read_cache
        self._http: httpx.AsyncClient | None = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self.config.timeout_s, trust_env=False)
        return self._http

    def request_body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                     max_tokens: int | None) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.config.model, "messages": messages}
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if tools:
            body["tools"] = tools
        return body

    async def complete(self, messages: list[dict[str, Any]], *,
                       tools: list[dict[str, Any]] | None = None, max_tokens: int | None = None,
                       cache_tag: str | None = None, cache_key: str | None = None) -> ChatResult:
        """One chat completion. `cache_tag` (e.g. the repetition) separates otherwise equal calls.

        The cache key is the request itself (endpoint, model, messages, parameters) plus the tag;
        a caller whose messages vary run to run for no reason that matters (timings, random ids
        in a trace) can name the call with `cache_key` instead.
        """
        body = self.request_body(messages, tools, max_tokens)
        key = digest("llm-call", self.config.base_url, self.config.model, cache_key) \
            if cache_key is not None else digest("llm-call", self.config.base_url, body, cache_tag)
        if self.cache is None:
            return self._result(await self._post(body), cached=False)
        # Identical requests in flight at once (refine's first draft for every mutant) take turns,
        # so only the first is paid for and the others find its answer in the store.
        async with _same_request(key):
            stored = self.cache.llm_call(key) if self.read_cache else None
            if stored is not None:
                return self._result(stored, cached=True)
            response = await self._post(body)
            result = self._result(response, cached=False)  # raises before anything is kept
            self.cache.save_llm_call(key, self.config.name, response)
            return result

    def _result(self, response: dict[str, Any], cached: bool) -> ChatResult:
        try:
            content, calls, finish, message = _parse(response)
        except ValueError as exc:
            raise LLMError(f"model '{self.config.name}': malformed answer ({exc})") from None
        usage = _usage(response)
        cost = self.prices.cost(self.config.price_name or self.config.model,
                                usage.input_tokens, usage.output_tokens)
        return ChatResult(content, calls, usage, cost, cached, finish, message)

    async def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"content-type": "application/json"}
        key = self.config.api_key()
        if key:
            headers["authorization"] = f"Bearer {key}"
        url = f"{self.config.base_url}/chat/completions"
        problem = ""
        for attempt in range(self.config.max_retries + 1):
            wait = self.config.retry_base_s * 2 ** attempt * (0.5 + random.random() / 2)
            try:
                async with _limit(self.config):
                    response = await self._client().post(url, json=body, headers=headers)
            except httpx.TimeoutException:
                problem = f"no answer within {self.config.timeout_s:g} s"
            except httpx.TransportError as exc:
                problem = f"cannot reach {self.config.base_url} ({type(exc).__name__})"
            else:
                if response.status_code == 200:
                    try:
                        answer = response.json()
                        _parse(answer)
                        return dict(answer)
                    except (ValueError, AttributeError) as exc:
                        problem = f"malformed answer ({exc})"
                else:
                    problem = f"HTTP {response.status_code}: {_error_text(response)}"
                    if response.status_code not in RETRYABLE_STATUS:
                        break  # a bad key or a bad request does not get better by asking again
                    retry_after = response.headers.get("retry-after", "")
                    if retry_after.replace(".", "", 1).isdigit():
                        wait = float(retry_after)
            if attempt < self.config.max_retries:
                log.info("model %s: %s; retrying in %.1f s", self.config.name, problem, wait)
                await asyncio.sleep(min(wait, MAX_BACKOFF_S))
        raise LLMError(f"model '{self.config.name}' at {self.config.base_url}: {problem} "
                       f"(gave up after {attempt + 1} attempt{'s' if attempt else ''})")
