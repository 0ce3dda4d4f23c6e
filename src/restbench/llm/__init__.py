"""Model access shared by every part that calls an LLM: generators, agents and graders.

Exported lazily: `restbench.llm.config` alone (a run's check of its models, the command line's
options) does not import the client and httpx with it (~90 ms of CPU)."""

from typing import TYPE_CHECKING

from restbench.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from restbench.llm.client import (
        MODEL_CALL_STORE,
        CallCache,
        ChatClient,
        ChatResult,
        CutOffAnswer,
        LLMError,
        PromptTooLong,
        Replay,
        ToolCall,
        Usage,
        WaitLedger,
        answers_seen,
        queue_wait,
        replay,
    )
    from restbench.llm.config import ModelConfig, ModelSettings, check_credentials, resolve_model
    from restbench.llm.extract import NoCodeError, extract_python
    from restbench.llm.prices import Price, PriceTable

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "client": ("MODEL_CALL_STORE", "CallCache", "ChatClient", "ChatResult", "CutOffAnswer",
               "LLMError", "PromptTooLong", "Replay", "ToolCall", "Usage", "WaitLedger",
               "answers_seen", "queue_wait", "replay"),
    "config": ("ModelConfig", "ModelSettings", "check_credentials", "resolve_model"),
    "extract": ("NoCodeError", "extract_python"),
    "prices": ("Price", "PriceTable"),
})
