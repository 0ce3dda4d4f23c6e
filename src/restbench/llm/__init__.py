"""Model access shared by every part that calls an LLM: generators, agents and graders."""

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

__all__ = ["MODEL_CALL_STORE", "CallCache", "ChatClient", "ChatResult", "CutOffAnswer",
           "LLMError", "ModelConfig", "ModelSettings", "NoCodeError", "Price", "PriceTable",
           "PromptTooLong", "Replay", "ToolCall", "Usage", "WaitLedger", "answers_seen",
           "check_credentials", "extract_python", "queue_wait", "replay", "resolve_model"]
