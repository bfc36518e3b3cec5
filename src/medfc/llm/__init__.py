"""The LLM layer: one client interface (``base``), a local ``transformers`` and an OpenAI-compatible backend (the
registry :mod:`medfc.common.llm_backends` builds them), structured JSON answers, call accounting and versioned
prompts. See docs/medsnip.md ("LLM layer")."""
