"""Token utilities over a Hugging Face (fast) tokenizer, shared by the encoders and local LLMs."""

from __future__ import annotations


def token_ids(tokenizer, text: str) -> list[int]:
    """Token ids of ``text`` without special tokens, truncation or padding (a tokenizer.json may pad to a fixed
    length: all-MiniLM-L6-v2's to 128)."""
    backend = tokenizer.backend_tokenizer
    backend.no_truncation()
    backend.no_padding()
    return backend.encode(text or "", add_special_tokens=False).ids
