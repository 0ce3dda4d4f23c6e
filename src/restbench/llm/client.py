"""An OpenAI-compatible chat-completions client: bounded concurrency, retries, cost, a call cache.

Works with hosted providers and local servers (vLLM, Ollama, llama.cpp server) alike: it speaks
only `POST {base_url}/chat/completions`. Failures that persist become an `LLMError` with a one-line
message, which generators record as a failed generation rather than crash the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import random
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, Self

import httpx

from restbench.errors import RestbenchError
from restbench.llm.config import ModelConfig
from restbench.llm.fitting import estimate_tokens
from restbench.llm.prices import PriceTable
from restbench.store.sqlite import digest

log = logging.getLogger(__name__)
RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}
MAX_BACKOFF_S = 60.0
ERROR_CHARS = 600  # of the endpoint's error message: enough for a validation error's detail
# An answer's body at most: a chat completion is bounded by its max_tokens (0.5-1 MB of JSON for
# the largest); an endpoint sending more is not answering, and would fill memory and results.
ANSWER_LIMIT_BYTES = 8 * 2**20


class LLMError(RestbenchError):
    """A model call that could not be completed, or whose answer was unusable."""


class CutOffAnswer(LLMError):
    """The answer stopped at the token limit (finish_reason "length"): it is kept, not used."""

    def __init__(self, message: str, result: ChatResult) -> None:
        super().__init__(message)
        self.result = result


class PromptTooLong(LLMError):
    """The prompt would not fit the model's context: refused before anything is paid."""


class MalformedAnswer(ValueError):
    """An HTTP 200 whose body is not a chat completion."""


class WaitLedger:
    """The waits of one task that are not its own time (its calls' waits for a free slot at
    their endpoint): set one in `queue_wait` to learn how much of the task's time was queueing,
    not the model working. A subclass may pause a deadline while the task waits."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self._open = 0

    @contextmanager
    def waiting(self) -> Iterator[None]:
        started = time.perf_counter()
        self._open += 1
        if self._open == 1:
            self.paused()
        try:
            yield
        finally:
            self._open -= 1
            self.seconds.append(time.perf_counter() - started)
            if self._open == 0:
                self.resumed()

    @property
    def total(self) -> float:
        return sum(self.seconds)

    def paused(self) -> None:
        """The first of the task's current waits began."""

    def resumed(self) -> None:
        """The last of the task's current waits ended."""


def spent(results: list[ChatResult]) -> tuple[float, Usage]:
    """What `results` (the answers a task saw, `answers_seen`) cost together."""
    return sum(r.cost_usd for r in results), sum((r.usage for r in results), Usage())


queue_wait: contextvars.ContextVar[WaitLedger | None] = contextvars.ContextVar(
    "restbench_queue_wait", default=None)
# Every answer the current task's calls got, kept as they arrive: a caller that gives up on a
# task (a time limit) still knows what it spent.
answers_seen: contextvars.ContextVar[list[ChatResult] | None] = contextvars.ContextVar(
    "restbench_answers_seen", default=None)


class Replay:
    """Keys for the calls of one task that a rerun of the task should find answered: the
    `n`-th call of a given form within `scope` (what the task's conversation depends on,
    such as the case, the agent and the service's code). The form is the request without the
    contents of its tool messages: those are the service's answers, which its code and the
    replayed tool calls determine up to values such as fresh tokens and timestamps, which would
    otherwise make every request after a login new. Set one in `replay` for the task."""

    def __init__(self, scope: str) -> None:
        self.scope = scope
        self._calls: dict[str, int] = {}

    def key(self, body: dict[str, Any], tag: str | None = None) -> str:
        form = digest("llm-replay", tag, {**body, "messages": [
            {**m, "content": ""} if m.get("role") == "tool" else m for m in body["messages"]]})
        occurrence = self._calls.get(form, 0)
        self._calls[form] = occurrence + 1
        return digest(self.scope, form, occurrence)


replay: contextvars.ContextVar[Replay | None] = contextvars.ContextVar(
    "restbench_replay", default=None)
# What a folder that keeps model answers (grade's, agent-eval's) calls their store.
MODEL_CALL_STORE = "model-calls.sqlite3"


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
# Where a call takes its endpoint's slot instead, when set (a Ray node: the cluster's, so
# that the limit holds across every node; see restbench.cluster.limits).
EndpointSlots = Callable[[ModelConfig], AbstractAsyncContextManager[Any]]
_shared_slots: EndpointSlots | None = None


def share_endpoint_slots(slots: EndpointSlots | None) -> None:
    """From now on calls of this process take their slot from `slots` (None: from this
    process's own semaphores)."""
    global _shared_slots
    _shared_slots = slots


def _limit(config: ModelConfig) -> asyncio.Semaphore | AbstractAsyncContextManager[Any]:
    if _shared_slots is not None:
        return _shared_slots(config)
    key = (id(asyncio.get_running_loop()), config.base_url)
    if key not in _limits:
        _limits[key] = asyncio.Semaphore(config.max_concurrency)
    return _limits[key]


_request_locks: dict[tuple[int, str], asyncio.Lock] = {}
# Context lengths endpoints reported, shared by clients. An endpoint that reported none is asked
# again by the next client, not remembered: a loopback port may host a different server later.
_reported_contexts: dict[tuple[str, str], int] = {}


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
    # Local servers (llama.cpp) reject a null content next to tool calls; "" is valid everywhere.
    kept: dict[str, Any] = {"role": "assistant", "content": content}
    if message.get("tool_calls"):
        kept["tool_calls"] = message["tool_calls"]
    return content, tuple(calls), choices[0].get("finish_reason"), kept


def _usage(response: dict[str, Any]) -> tuple[Usage, str]:
    """The answer's token counts and, when they cannot be believed, why. A count that is not a
    non-negative whole number (missing, text, negative) counts as 0, never less."""
    usage = response.get("usage")
    if not isinstance(usage, dict):
        return Usage(), "no usage in the answer" if usage is None else f"usage is {usage!r:.40}"
    counts = [usage.get(name) for name in ("prompt_tokens", "completion_tokens")]
    believed = [count if _is_token_count(count) else 0 for count in counts]
    wrong = [f"{name} {count!r:.40}" for name, count in zip(("prompt_tokens", "completion_tokens"),
                                                            counts, strict=True)
             if not _is_token_count(count)]
    return Usage(*believed), ", ".join(wrong)


def _is_token_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


# (endpoint, model name) whose endpoint reported no usable token counts: told once per process.
_usage_unreported: set[tuple[str, str]] = set()


def _tell_usage_unreported(config: ModelConfig, problem: str) -> None:
    key = (config.base_url, config.name)
    if key not in _usage_unreported:
        _usage_unreported.add(key)
        log.warning("model '%s' at %s: the endpoint reported no valid token usage (%s); its "
                    "calls count as 0 tokens and $0", config.name, config.base_url, problem)


def _streamed(response: httpx.Response) -> bool:
    return response.headers.get("content-type", "").split(";")[0].strip().lower() == \
        "text/event-stream"


def _error_text(response: httpx.Response, body: bytes) -> str:
    try:
        error = json.loads(body).get("error")
        message = error.get("message") if isinstance(error, dict) else error
    except (ValueError, AttributeError):
        message = body.decode("utf-8", "replace")
    return " ".join(str(message or response.reason_phrase).split())[:ERROR_CHARS]


class ChatClient:
    """Use as `async with ChatClient(config) as client: await client.complete(messages)`."""

    def __init__(self, config: ModelConfig, prices: PriceTable | None = None,
                 cache: CallCache | None = None, read_cache: bool = True) -> None:
        self.config = config
        self.prices = prices or PriceTable.default()
        self.cache = cache
        self.read_cache = read_cache
        self._http: httpx.AsyncClient | None = None
        self._context_lookup: asyncio.Future[int | None] | None = None  # one per client

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
        max_tokens = max_tokens or self.config.max_tokens
        if max_tokens is not None:
            # OpenAI's reasoning models refuse max_tokens; everything else knows only max_tokens.
            field_name = "max_completion_tokens" if "api.openai.com" in self.config.base_url \
                else "max_tokens"
            body[field_name] = max_tokens
        if tools:
            body["tools"] = tools
            # Some servers (llama-cpp-python's function calling) ignore tools unless asked.
            body["tool_choice"] = "auto"
        return body

    async def prompt_budget(self) -> int | None:
        """Estimated tokens a prompt may have: the context less the answer's limit; None when
        the context length is unknown."""
        context = await self.context_tokens()
        return None if context is None else context - (self.config.max_tokens or 0)

    async def check_fits(self, messages: list[dict[str, Any]],
                         tools: list[dict[str, Any]] | None = None) -> None:
        budget = await self.prompt_budget()
        estimate = estimate_tokens(messages, tools)
        if budget is not None and estimate > budget:
            raise PromptTooLong(
                f"model '{self.config.name}': the prompt does not fit: about {estimate} tokens "
                f"(estimated), {budget} available ({await self.context_tokens()} context less "
                f"{self.config.max_tokens or 0} for the answer)")

    async def context_tokens(self) -> int | None:
        """The model's context length: configured, else as the endpoint's model list reports
        it (vLLM's max_model_len, llama.cpp's n_ctx, context_length), else None."""
        if self.config.context_tokens is not None:
            return self.config.context_tokens
        key = (self.config.base_url, self.config.model)
        if key in _reported_contexts:
            return _reported_contexts[key]
        if self._context_lookup is None:  # concurrent first calls share the one request
            self._context_lookup = asyncio.ensure_future(self._ask_context())
        reported = await asyncio.shield(self._context_lookup)
        if reported is not None:
            _reported_contexts[key] = reported
        return reported

    async def _ask_context(self) -> int | None:
        headers = {}
        if self.config.api_key():
            headers["authorization"] = f"Bearer {self.config.api_key()}"
        try:
            response = await self._client().get(f"{self.config.base_url}/models", headers=headers,
                                                 timeout=10.0)
            models = response.json().get("data") if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError, AttributeError):
            return None
        for entry in models if isinstance(models, list) else []:
            if not isinstance(entry, dict) or entry.get("id") not in (self.config.model, None):
                continue
            meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
            for value in (entry.get("max_model_len"), entry.get("context_length"),
                          meta.get("n_ctx"), meta.get("n_ctx_train")):
                if isinstance(value, int) and value > 0:
                    return value
        return None

    async def complete(self, messages: list[dict[str, Any]], *,
                       tools: list[dict[str, Any]] | None = None, max_tokens: int | None = None,
                       cache_tag: str | None = None, cache_key: str | None = None,
                       usable: Callable[[ChatResult], bool] | None = None) -> ChatResult:
        """One chat completion. `cache_tag` (e.g. the repetition) separates otherwise equal calls.
        In a task that set `replay`, the key is its `Replay.key` of the body and the tag.

        The cache key is the request itself (endpoint, model, messages, parameters) plus the tag;
        a caller whose messages vary run to run for no reason that matters (timings, random ids
        in a trace) can name the call with `cache_key` instead. An answer cut off at the token
        limit raises CutOffAnswer; it, and an answer `usable` refuses, is not kept, so a rerun
        asks again, as it does after a failed call.
        """
        body = self.request_body(messages, tools, max_tokens)
        replaying = replay.get()
        if cache_key is None and replaying is not None and self.cache is not None:
            cache_key = replaying.key(body, cache_tag)
        key = digest("llm-call", self.config.base_url, self.config.model, cache_key) \
            if cache_key is not None else digest("llm-call", self.config.base_url, body, cache_tag)
        if self.cache is None:
            await self.check_fits(messages, tools)
            return self._checked(self._result(await self._post(body), cached=False))
        # Identical requests in flight at once (refine's first draft for every mutant) take turns,
        # so only the first is paid for and the others find its answer in the store.
        async with self._waiting(_same_request(key)):
            stored = self.cache.llm_call(key) if self.read_cache else None
            if stored is not None:
                return self._checked(self._result(stored, cached=True))
            await self.check_fits(messages, tools)
            response = await self._post(body)
            result = self._result(response, cached=False)  # raises before anything is kept
            if result.finish_reason != "length" and (usable is None or usable(result)):
                self.cache.save_llm_call(key, self.config.name, response)
            return self._checked(result)

    def _checked(self, result: ChatResult) -> ChatResult:
        if result.finish_reason == "length":
            raise CutOffAnswer(f"model '{self.config.name}': answer cut off at the token limit "
                               f"(finish_reason length, {result.usage.output_tokens} tokens; "
                               "raise max_tokens)", result)
        return result

    @staticmethod
    @asynccontextmanager
    async def _waiting(lock: asyncio.Semaphore | asyncio.Lock | AbstractAsyncContextManager[Any]
                       ) -> AsyncIterator[None]:
        """Holds `lock`; the time spent waiting for it goes to `queue_wait`."""
        ledger = queue_wait.get()
        async with contextlib.AsyncExitStack() as held:
            with ledger.waiting() if ledger is not None else contextlib.nullcontext():
                await held.enter_async_context(lock)
            yield

    def _result(self, response: dict[str, Any], cached: bool) -> ChatResult:
        try:
            content, calls, finish, message = _parse(response)
        except ValueError as exc:
            raise LLMError(f"model '{self.config.name}': malformed answer ({exc})") from None
        usage, problem = _usage(response)
        if problem:
            _tell_usage_unreported(self.config, problem)
        cost = self.prices.cost(self.config.price_name or self.config.model,
                                usage.input_tokens, usage.output_tokens)
        result = ChatResult(content, calls, usage, cost, cached, finish, message)
        seen = answers_seen.get()
        if seen is not None:
            seen.append(result)
        return result

    async def _send(self, url: str, body: dict[str, Any], headers: dict[str, str]
                    ) -> tuple[httpx.Response, bytes | None]:
        """POSTs `body`; the answer and its body, or None for a body over the limit (not read
        further)."""
        async with self._client().stream("POST", url, json=body, headers=headers) as response:
            chunks, size = [], 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > ANSWER_LIMIT_BYTES:
                    return response, None
                chunks.append(chunk)
        return response, b"".join(chunks)

    async def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"content-type": "application/json"}
        key = self.config.api_key()
        if key:
            headers["authorization"] = f"Bearer {key}"
        url = f"{self.config.base_url}/chat/completions"
        problem = ""
        previous = ""
        for attempt in range(self.config.max_retries + 1):
            wait = self.config.retry_base_s * 2 ** attempt * (0.5 + random.random() / 2)
            try:
                async with self._waiting(_limit(self.config)):
                    response, data = await self._send(url, body, headers)
            except httpx.TimeoutException:
                problem = f"no answer within {self.config.timeout_s:g} s"
            except httpx.TransportError as exc:
                problem = f"cannot reach {self.config.base_url} ({type(exc).__name__})"
            else:
                if data is None:
                    problem = (f"HTTP {response.status_code}: an answer over "
                               f"{ANSWER_LIMIT_BYTES // 2**20} MiB, more than any chat "
                               "completion holds")
                    break
                if response.status_code == 200 and _streamed(response):
                    # a server that streams whatever it is asked; asking again will not help
                    problem = ("the endpoint answered a stream (text/event-stream), not one JSON "
                               "answer: restbench does not read streamed answers; turn streaming "
                               "off on the server")
                    break
                if response.status_code == 200:
                    try:
                        answer = json.loads(data)
                        _parse(answer)
                        return dict(answer)
                    except (ValueError, AttributeError) as exc:
                        problem = f"malformed answer ({exc})"
                else:
                    problem = f"HTTP {response.status_code}: {_error_text(response, data)}"
                    if response.status_code == 404 and not self.config.base_url.endswith("/v1"):
                        problem += " (OpenAI-compatible servers usually serve under /v1: " \
                                   f"try base_url {self.config.base_url}/v1)"
                    if response.status_code not in RETRYABLE_STATUS or (
                            response.status_code == 500 and problem == previous):
                        # A bad key or a bad request does not get better by asking again, nor
                        # does an internal error that repeats word for word (a local server's
                        # way of refusing a request it cannot parse).
                        break
                    previous = problem
                    retry_after = response.headers.get("retry-after", "")
                    if retry_after.replace(".", "", 1).isdigit():
                        wait = float(retry_after)
            if attempt < self.config.max_retries:
                log.info("model %s: %s; retrying in %.1f s", self.config.name, problem, wait)
                await asyncio.sleep(min(wait, MAX_BACKOFF_S))
        raise LLMError(f"model '{self.config.name}' at {self.config.base_url}: {problem} "
                       f"(gave up after {attempt + 1} attempt{'s' if attempt else ''})")
