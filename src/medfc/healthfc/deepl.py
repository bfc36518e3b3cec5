"""The DeepL API v2 as a DE→EN translation backend (optional; needs ``DEEPL_AUTH_KEY``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from medfc.healthfc.translators import BatchCallback, ModelUnavailableError

if TYPE_CHECKING:  # the HTTP stack is loaded by the translator's constructor
    import requests


class DeepLError(RuntimeError):
    """The DeepL API refused or failed a request after retries."""


class DeepLTranslator:
    """DeepL API v2 backend (needs ``DEEPL_AUTH_KEY``). Free-plan keys (ending in ``:fx``) go to api-free.deepl.com;
    429, 5xx and connection errors are retried with exponential backoff, 456 (quota exceeded) and other 4xx fail."""

    origin = "deepl"

    def __init__(self, auth_key: str | None = None, *, source_lang: str = "DE", target_lang: str = "EN-US", base_url: str | None = None,
                 session: requests.Session | None = None, batch_size: int = 50, retries: int = 4, backoff_s: float = 1.0,
                 timeout_s: float = 60.0, name: str = "deepl"):
        key = auth_key if auth_key is not None else os.environ.get("DEEPL_AUTH_KEY", "")
        if not key:
            raise ModelUnavailableError("DeepL backend selected but DEEPL_AUTH_KEY is not set")
        self.auth_key = key
        self.base_url = (base_url or ("https://api-free.deepl.com" if key.endswith(":fx") else "https://api.deepl.com")).rstrip("/")
        self.source_lang, self.target_lang = source_lang, target_lang
        self.batch_size = max(1, min(int(batch_size), 50))
        self.retries, self.backoff_s, self.timeout_s, self.name = int(retries), float(backoff_s), float(timeout_s), name
        from medfc.common.http import HttpClient

        self.http = HttpClient(cache_dir=None, rate=10.0, burst=5, user_agent="medfc", timeout=self.timeout_s,
                               max_retries=self.retries, backoff=self.backoff_s, session=session)

    def translate(self, texts: Sequence[str], on_batch: BatchCallback | None = None) -> list[str]:
        from medfc.common.http import HttpError

        out: list[str] = []
        for i in range(0, len(texts), self.batch_size):
            sources = list(texts[i : i + self.batch_size])
            payload = {"text": sources, "source_lang": self.source_lang, "target_lang": self.target_lang}
            try:
                data = self.http.post_json(f"{self.base_url}/v2/translate", payload,
                                           headers={"Authorization": f"DeepL-Auth-Key {self.auth_key}"})
            except HttpError as exc:  # 456 (quota exceeded) and other 4xx are not retried
                raise DeepLError(f"DeepL request failed ({exc})") from exc
            targets = [t["text"] for t in data.get("translations", [])]
            if len(targets) != len(sources):
                raise DeepLError(f"DeepL returned {len(targets)} translations for {len(sources)} texts")
            out.extend(targets)
            if on_batch is not None:
                on_batch(sources, targets)
        return out
