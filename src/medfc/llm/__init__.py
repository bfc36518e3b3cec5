"""The LLM layer: one client interface, a local ``transformers`` and an OpenAI-compatible backend, structured JSON
answers, call accounting and versioned prompts. See docs/medsnip.md ("LLM layer")."""

from medfc.llm.base import Completion, Conversation, GenerationParams, Ledger, LLMClient, Message, Prices
from medfc.llm.prompts import Prompt, PromptError, load_prompt, prompt_hashes
from medfc.llm.structured import Structured, ask_json, parse_json_answer

__all__ = ["Completion", "Conversation", "GenerationParams", "LLMClient", "Ledger", "Message", "Prices", "Prompt", "PromptError",
           "Structured", "ask_json", "load_prompt", "make_client", "parse_json_answer", "prompt_hashes"]


def make_client(backend: str, model: str, *, ledger: Ledger | None = None, **kwargs) -> LLMClient:
    """The client of ``backend`` (:data:`medfc.common.llm_backends.LLM_BACKENDS`), ``kwargs`` passed to its class."""
    from medfc.common.llm_backends import llm_backend

    return llm_backend(backend).build(model, ledger=ledger, **kwargs)
