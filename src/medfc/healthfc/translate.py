"""DE→EN translation through a translation memory: corrections first, then memory hits, the translator only for the
rest (docs/translation.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import medfc
from medfc.healthfc.records import ArticleRecord, ClaimRecord
from medfc.healthfc.sentences import article_sentence_records
from medfc.healthfc.tm import Corrections, TranslationMemory, normalize_key
from medfc.healthfc.translators import ModelUnavailableError, Translator


class TranslationUnavailableError(RuntimeError):
    """Sentences are missing from the memory and no translator is available for them."""


def translate_with_memory(texts: Sequence[str], translator_factory: Callable[[], Translator], memory: TranslationMemory,
                          corrections: Corrections | None, model_name: str) -> tuple[list[str], dict[str, int]]:
    """Translate ``texts``: corrections, then memory hits, the rest through the translator (made only then;
    TranslationUnavailableError when it cannot be), appended to ``memory`` per batch. Returns the translations in
    input order (blank inputs give "") and counts over the unique sources."""
    corrections = corrections or Corrections()
    keys = [normalize_key(t) for t in texts]
    unique = list(dict.fromkeys(k for k in keys if k))
    fixed = {k: t for k in unique if (t := corrections.get(model_name, k)) is not None}
    hits = {k: t for k in unique if k not in fixed and (t := memory.get(model_name, k)) is not None}
    resolved = {**fixed, **hits}
    missing = [k for k in unique if k not in resolved]
    if missing:
        try:
            translator = translator_factory()
            load = getattr(translator, "load", None)
            if callable(load):
                load()
        except (ModelUnavailableError, OSError, ValueError, ImportError) as exc:
            raise TranslationUnavailableError(
                f"{len(missing)} sentence(s) are not in the translation memory for model {model_name!r}, "
                f"and the model cannot be loaded ({exc}). Fix: run the translation once with access to the "
                f"model hub (the model is then cached), or set `translation.model` to a local directory "
                f"holding the model, or add the missing sentences to the translation memory / corrections file."
            ) from exc

        def write_batch(sources: list[str], targets: list[str]) -> None:
            if len(targets) != len(sources):
                raise RuntimeError(f"translator returned {len(targets)} texts for a batch of {len(sources)}")
            memory.put_many(model_name, zip(sources, targets), origin=translator.origin)

        translated = translator.translate(missing, on_batch=write_batch)
        if len(translated) != len(missing):
            raise RuntimeError(f"translator returned {len(translated)} texts for {len(missing)} inputs")
        resolved.update(zip(missing, translated))
    translations = [resolved[k] if k else "" for k in keys]
    return translations, {"n_total": len(texts), "n_unique": len(unique), "n_corrections": len(fixed),
                          "n_memory_hits": len(hits), "n_model": len(missing)}


def translate_articles(articles: Sequence[ArticleRecord], claims: Sequence[ClaimRecord], translator_factory: Callable[[], Translator],
                       memory: TranslationMemory, corrections: Corrections | None, model_name: str, *,
                       base: str) -> tuple[list[dict[str, object]], list[dict[str, object]], dict[str, object]]:
    """Split the articles into sentences and translate them, their titles, teasers, topics and claims → (sentence
    records, claim records, report)."""
    corrections = corrections or Corrections()
    sentence_lists = {a["article_id"]: article_sentence_records(a, base=base) for a in articles}  # type: ignore[arg-type]
    split = {aid: [str(r["text"]) for r in recs] for aid, recs in sentence_lists.items()}
    titles = {a["article_id"]: a.get("title", "") or "" for a in articles}
    texts: list[str] = []
    for a in articles:
        texts += [titles[a["article_id"]], a.get("teaser", "") or "", *split[a["article_id"]], *(a.get("topics") or [])]
    for c in claims:
        texts += [c.get("question", "") or "", c.get("explanation", "") or "", titles.get(c["article_id"], "")]

    translations, stats = translate_with_memory(texts, translator_factory, memory, corrections, model_name)
    table = {normalize_key(s): t for s, t in zip(texts, translations, strict=True)}

    def en(text: str) -> str:
        return table.get(normalize_key(text), "") if text and text.strip() else ""

    # each unique text's origin: a correction, else its memory record's (a translation made just now included)
    origins = Counter("correction" if corrections.get(model_name, key) is not None
                      else getattr(memory.record(model_name, key), "origin", "model")
                      for key in filter(None, dict.fromkeys(normalize_key(t) for t in texts)))

    sentence_records: list[dict[str, object]] = [{  # the ``sentences`` output, one per article
        "article_id": a["article_id"], "url": a.get("url", ""), "sentences_de": split[a["article_id"]],
        "sentences_en": [en(s) for s in split[a["article_id"]]],
        "sections": [str(r["section"]) for r in sentence_lists[a["article_id"]]],
        "title_de": titles[a["article_id"]], "title_en": en(titles[a["article_id"]]),
        "teaser_de": a.get("teaser", "") or "", "teaser_en": en(a.get("teaser", "") or ""),
        "topics_de": list(a.get("topics") or []), "topics_en": [en(t) for t in a.get("topics") or []],
    } for a in articles]
    claim_records: list[dict[str, object]] = [{  # the ``claims_en`` output
        "claim_id": c["claim_id"], "article_id": c["article_id"], "url": c.get("url", ""),
        "question_de": c.get("question", "") or "", "question_en": en(c.get("question", "") or ""),
        "explanation_de": c.get("explanation", "") or "", "explanation_en": en(c.get("explanation", "") or ""),
        "title_de": titles.get(c["article_id"], ""), "title_en": en(titles.get(c["article_id"], "")),
    } for c in claims]
    report: dict[str, object] = {
        **stats, "origins": dict(sorted(origins.items())), "n_articles": len(sentence_records), "n_claims": len(claim_records),
        "n_sentences": sum(len(r["sentences_de"]) for r in sentence_records), "model_name": model_name,
        "splitter": {"base": base, "rules": True, "medfc_version": medfc.__version__}, "memory_skipped_lines": memory.skipped_lines,
    }
    return sentence_records, claim_records, report
