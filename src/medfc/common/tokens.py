"""Token utilities over a Hugging Face (fast) tokenizer, shared by the encoders and local LLMs."""

from __future__ import annotations


def token_ids(tokenizer, text: str) -> list[int]:
    """Token ids of ``text`` without special tokens, and without the backend's own truncation or
    padding: a tokenizer.json may pad every encoding to a fixed length (all-MiniLM-L6-v2's pads to 128),
    which would turn each sentence into 128 tokens."""
    backend = tokenizer.backend_tokenizer
    backend.no_truncation()
    backend.no_padding()
    return backend.encode(text or "", add_special_tokens=False).ids
