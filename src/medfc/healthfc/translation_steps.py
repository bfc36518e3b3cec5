"""Workflow step of the HealthFC translation stage: parsed articles/claims → English side.

:func:`translate` (``medfc.healthfc.translation_steps:translate``) splits every article into its
sentence list (:func:`medfc.healthfc.sentences.article_sentences`: body, then studies section;
ids = positions, see ``docs/translation.md``) and translates the sentences, titles,
teasers, claim questions and explanations DE→EN through the translation memory: corrections
first, then memory hits (shipped seeds + working store), and only the rest through the model,
which is loaded only when something is missing. :func:`translate_articles` is the library function
behind it; it takes any translator factory, so tests need no model.

Outputs:

* ``sentences`` — JSONL, one record per article: ``{article_id, url, sentences_de, sentences_en,
  sections, title_de, title_en, teaser_de, teaser_en}``; ``sentences_en[i]`` translates
  ``sentences_de[i]`` and ``sections[i]`` says where it stands (``body`` or ``studies``).
* ``claims_en`` — JSONL, one record per claim: ``{claim_id, article_id, url, question_de,
  question_en, explanation_de, explanation_en, title_de, title_en}``.
* ``report`` — JSON: ``n_total``, ``n_unique``, ``n_corrections``, ``n_memory_hits``, ``n_model``
  (as :func:`medfc.healthfc.translate.translate_with_memory`), ``origins`` (unique texts per
  origin of their translation: ``correction``, the memory record's origin, or the translator's),
  counts of articles/claims/sentences, the model, backend and the splitter.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import medfc
from medfc.common.io import read_jsonl, write_json, write_jsonl
from medfc.healthfc.sentences import DEFAULT_BASE, article_sentence_records
from medfc.healthfc.tm import Corrections, TranslationMemory, normalize_key
from medfc.healthfc.translate import Translator, translate_with_memory

__all__ = ["DEFAULT_MODEL", "make_translator_factory", "translate", "translate_articles"]

log = logging.getLogger(__name__)

DEFAULT_MODEL = "Helsinki-NLP/opus-mt-de-en"


def make_translator_factory(options: dict[str, Any]) -> Callable[[], Translator]:
    """A factory for the configured backend; nothing is created (or loaded) until it is called."""
    backend = str(options.get("backend", "marian")).lower()
    model = options.get("model") or DEFAULT_MODEL
    model_name = str(options.get("model_name") or model)

    if backend == "marian":
        def marian() -> Translator:
            from medfc.healthfc.translate import MarianTranslator

            return MarianTranslator(
                model, device=str(options.get("device", "auto")), batch_size=int(options.get("batch_size", 32)),
                max_length=int(options.get("max_length", 512)), num_beams=int(options.get("num_beams", 4)),
                name=model_name, progress=bool(options.get("progress", False)),
            )

        return marian
    if backend == "deepl":
        def deepl() -> Translator:
            from medfc.healthfc.translate import DeepLTranslator

            return DeepLTranslator(name=model_name, target_lang=str(options.get("target_lang", "EN-US")))

        return deepl
    raise ValueError(f"unknown translation backend {backend!r}; use 'marian' or 'deepl'")


def translate_articles(
    articles: Sequence[dict[str, Any]],
    claims: Sequence[dict[str, Any]],
    translator_factory: Callable[[], Translator],
    memory: TranslationMemory,
    corrections: Corrections | None,
    model_name: str,
    *,
    base: str = DEFAULT_BASE,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """Split and translate → (sentence records, claim records, report) — see the module docstring.

    :raises TranslationUnavailableError: texts are missing from corrections/memory and the
        translator cannot be created or loaded.
    """
    corrections = corrections or Corrections()
    sentence_lists = {a["article_id"]: article_sentence_records(a, base=base) for a in articles}  # type: ignore[arg-type]
    split = {aid: [str(r["text"]) for r in recs] for aid, recs in sentence_lists.items()}
    titles = {a["article_id"]: a.get("title", "") or "" for a in articles}
    texts: list[str] = []
    for a in articles:
        texts += [titles[a["article_id"]], a.get("teaser", "") or "", *split[a["article_id"]]]
    for c in claims:
        texts += [c.get("question", "") or "", c.get("explanation", "") or ""]
        texts.append(titles.get(c["article_id"], ""))

    # where each unique text's translation comes from (decided before the model adds anything)
    origin_of: dict[str, str | None] = {}
    for key in dict.fromkeys(normalize_key(t) for t in texts):
        if not key:
            continue
        if corrections.get(model_name, key) is not None:
            origin_of[key] = "correction"
        else:
            rec = memory.record(model_name, key)
            origin_of[key] = rec.origin if rec is not None else None

    translations, stats = translate_with_memory(texts, translator_factory, memory, corrections, model_name)
    table = {normalize_key(s): t for s, t in zip(texts, translations, strict=True)}

    def en(text: str) -> str:
        return table.get(normalize_key(text), "") if text and text.strip() else ""

    origins: Counter = Counter()
    for key, origin in origin_of.items():
        if origin is None:  # sent to the translator just now
            rec = memory.record(model_name, key)
            origin = rec.origin if rec is not None else "model"
        origins[origin] += 1

    sentence_records = []
    for a in articles:
        sents = split[a["article_id"]]
        sentence_records.append({
            "article_id": a["article_id"],
            "url": a.get("url", ""),
            "sentences_de": sents,
            "sentences_en": [en(s) for s in sents],
            "sections": [str(r["section"]) for r in sentence_lists[a["article_id"]]],
            "title_de": titles[a["article_id"]],
            "title_en": en(titles[a["article_id"]]),
            "teaser_de": a.get("teaser", "") or "",
            "teaser_en": en(a.get("teaser", "") or ""),
        })
    claim_records = []
    for c in claims:
        title = titles.get(c["article_id"], "")
        claim_records.append({
            "claim_id": c["claim_id"],
            "article_id": c["article_id"],
            "url": c.get("url", ""),
            "question_de": c.get("question", "") or "",
            "question_en": en(c.get("question", "") or ""),
            "explanation_de": c.get("explanation", "") or "",
            "explanation_en": en(c.get("explanation", "") or ""),
            "title_de": title,
            "title_en": en(title),
        })
    report: dict[str, Any] = {
        **stats,
        "origins": dict(sorted(origins.items())),
        "n_articles": len(sentence_records),
        "n_claims": len(claim_records),
        "n_sentences": sum(len(r["sentences_de"]) for r in sentence_records),
        "model_name": model_name,
        "splitter": {"base": base, "rules": True, "medfc_version": medfc.__version__},
        "memory_skipped_lines": memory.skipped_lines,
    }
    return sentence_records, claim_records, report


def _paths(value: Any) -> list[str]:
    if not value:
        return []
    return [str(v) for v in ([value] if isinstance(value, str) else value) if v]


def translate(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> None:
    """Parsed ``articles`` + ``claims`` → ``sentences``, ``claims_en`` (JSONL) and ``report`` (JSON).

    ``options``: ``model`` (hub id or local directory; default ``Helsinki-NLP/opus-mt-de-en``),
    ``model_name`` (memory key; default ``model``), ``backend`` (``marian`` | ``deepl``), ``device``,
    ``batch_size``, ``max_length``, ``num_beams``, ``memory`` (working store JSONL, under the cache),
    ``memory_seeds`` (read-only shipped memories), ``corrections`` (TSV path or null) and
    ``splitter`` (base segmenter: ``pysbd`` | ``nltk-punkt`` | ``none``). ``memory_seeds`` and
    ``corrections`` may instead be given as inputs (they then win), so a rule reruns when they change.
    """
    articles = sorted(read_jsonl(inputs["articles"]), key=lambda a: a.get("url", ""))
    claims = sorted(read_jsonl(inputs["claims"]), key=lambda c: (c.get("url", ""), c.get("claim_index", 0)))
    backend = str(options.get("backend", "marian")).lower()
    model = options.get("model") or DEFAULT_MODEL
    model_name = str(options.get("model_name") or ("deepl" if backend == "deepl" and not options.get("model") else model))
    # shipped files may come as rule inputs (so Snakemake reruns when they change) or as options
    seeds = _paths(inputs.get("memory_seeds")) or _paths(options.get("memory_seeds"))
    corr_path = next(iter(_paths(inputs.get("corrections")) or _paths(options.get("corrections"))), None)
    memory = TranslationMemory(options.get("memory"), seeds=seeds)
    corrections = Corrections.load(corr_path) if corr_path else None
    factory = make_translator_factory({**options, "model": model, "model_name": model_name})
    sentence_records, claim_records, report = translate_articles(
        articles, claims, factory, memory, corrections, model_name,
        base=str(options.get("splitter", DEFAULT_BASE)),
    )
    report.update(
        backend=backend,
        model=str(model),
        memory=str(options.get("memory")) if options.get("memory") else None,
        memory_seeds=[str(s) for s in seeds],
        corrections=corr_path,
        n_corrections_available=len(corrections) if corrections is not None else 0,
    )
    write_jsonl(outputs["sentences"], sentence_records)
    write_jsonl(outputs["claims_en"], claim_records)
    write_json(outputs["report"], report)
    log.info("translated %d articles / %d claims: %d unique texts, %d corrections, %d memory hits, %d by the model",
             report["n_articles"], report["n_claims"], report["n_unique"], report["n_corrections"],
             report["n_memory_hits"], report["n_model"])
