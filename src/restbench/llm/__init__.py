"""Model access shared by every part that calls an LLM: generators, agents and graders."""

from restbench.llm.client import (
    CallCache,
    ChatClient,
    ChatResult,
    CutOffAnswer,
    LLMError,
    PromptTooLong,
    ToolCall,
    Usage,
    WaitLedger,
    answers_seen,
    queue_wait,
)
from restbench.llm.config import ModelConfig, ModelSettings, check_credentials, resolve_model
from restbench.llm.extract import NoCodeError, extract_python
from restbench.llm.prices import Price, PriceTable

__all__ = ["CallCache", "ChatClient", "ChatResult", "CutOffAnswer", "LLMError", "ModelConfig",
           "ModelSettings", "NoCodeError", "Price", "PriceTable", "PromptTooLong", "ToolCall",
           "Usage", "WaitLedger", "answers_seen", "check_credentials", "extract_python",
           "queue_wait", "resolve_model"]
