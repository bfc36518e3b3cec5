#!/usr/bin/env python3
"""Build and check the demo translation memory (``resources/demo/translation/memory.jsonl``).

The demo workflow must run without model weights, so the repository ships an English translation
of every German text the translation step (``medfc.healthfc.steps:translate``) sends to
the memory for the demo snapshot: each body sentence of each crawlable article page (split exactly
as the workflow splits it), each title, teaser and topic, and each claim's question and explanation.

The English was written by hand by the medfc project (like the German demo articles themselves, it
is demo content, not a real Medizin Transparent translation). It lives in a human-editable TSV,
``resources/demo/translation/translations_en.tsv`` (``source<TAB>target``, ``#`` comment lines
name the article a block belongs to), which this script converts into the memory JSONL in the
format of :class:`medfc.healthfc.tm.TranslationMemory` — sorted by source, one line per source,
``origin: "demo"``, a fixed timestamp — so the output is deterministic and diffable.

The source texts are found the way the workflow finds them: every page of ``resources/demo/site``
that robots.txt lets the crawler fetch is run through the real parse step
(:func:`medfc.healthfc.steps.parse_pages`, pages it skips are skipped here too), and articles are
split with :func:`medfc.healthfc.sentences.article_sentences` (body, then studies section).

Usage::

    python scripts/make_demo_translations.py --list [FILE]     # every source text (one a line)
    python scripts/make_demo_translations.py --template FILE   # TSV rows (empty target) for missing texts
    python scripts/make_demo_translations.py --build           # TSV → memory.jsonl
    python scripts/make_demo_translations.py --check           # exit 1 if a text is missing or the
                                                               # memory is stale w.r.t. the TSV
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from medfc.common.io import write_jsonl  # noqa: E402
from medfc.healthfc.sentences import DEFAULT_BASE, article_sentences  # noqa: E402
from medfc.healthfc.tm import MemoryRecord, TranslationMemory, normalize_key  # noqa: E402

SITE = ROOT / "resources" / "demo" / "site"
TRANSLATION_DIR = ROOT / "resources" / "demo" / "translation"
TSV = TRANSLATION_DIR / "translations_en.tsv"
MEMORY = TRANSLATION_DIR / "memory.jsonl"
CORRECTIONS = TRANSLATION_DIR / "corrections.tsv"
MODEL_NAME = "Helsinki-NLP/opus-mt-de-en"
ORIGIN = "demo"
TIMESTAMP = "2025-01-01T00:00:00+00:00"
BASE_URL = "https://www.medizin-transparent.at"


# --------------------------------------------------------------------------- source texts


def _disallowed(site: Path) -> list[str]:
    robots = site / "robots.txt"
    out: list[str] = []
    if robots.exists():
        for line in robots.read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip().lower() == "disallow" and value.strip():
                out.append(value.strip())
    return out


def crawlable_pages(site: Path = SITE) -> list[dict]:
    """Raw page records (url, status, html) for every page the demo crawl can fetch."""
    disallowed = _disallowed(site)
    pages = []
    for f in sorted(site.rglob("index.html")):
        rel = f.parent.relative_to(site).as_posix()
        path = "/" if rel == "." else f"/{rel}/"
        if any(path.startswith(d) for d in disallowed):
            continue
        pages.append({"url": BASE_URL + path, "status": 200, "html": f.read_text(encoding="utf-8")})
    return pages


def parsed_demo(site: Path = SITE) -> tuple[list[dict], list[dict]]:
    """(articles, claims) exactly as the workflow's parse step produces them for the demo."""
    from medfc.healthfc.steps import parse_pages

    with tempfile.TemporaryDirectory() as tmp:
        pages = Path(tmp) / "pages.jsonl.gz"
        write_jsonl(pages, crawlable_pages(site))
        articles, claims, _ = parse_pages(str(pages))
    articles.sort(key=lambda a: a["url"])
    claims.sort(key=lambda c: (c["url"], c["claim_index"]))
    return articles, claims


def texts_by_article(articles: list[dict], claims: list[dict], base: str = DEFAULT_BASE) -> dict[str, list[str]]:
    """article_id → its texts to translate, in reading order (title, teaser, claims, body and studies sentences,
    topics)."""
    by_article: dict[str, list[str]] = {}
    for art in articles:
        texts = [art.get("title", ""), art.get("teaser", "")]
        for c in claims:
            if c["article_id"] == art["article_id"]:
                texts += [c.get("question", ""), c.get("explanation", "")]
        texts += article_sentences(art, base=base)
        texts += art.get("topics") or []
        by_article[art["article_id"]] = [normalize_key(t) for t in texts if t and t.strip()]
    return by_article


def source_texts(site: Path = SITE, base: str = DEFAULT_BASE) -> list[str]:
    """Every unique (normalised) German text the demo translation needs, in article order."""
    articles, claims = parsed_demo(site)
    seen: dict[str, None] = {}
    for texts in texts_by_article(articles, claims, base).values():
        seen.update(dict.fromkeys(texts))
    return list(seen)


# --------------------------------------------------------------------------- TSV ↔ memory


def read_tsv(path: Path = TSV) -> dict[str, str]:
    """source → target from the hand-written TSV (later rows win; blank targets are ignored)."""
    out: dict[str, str] = {}
    if not path.exists():
        return out
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            raise ValueError(f"{path}:{lineno}: expected source<TAB>target, got {len(parts)} field(s)")
        source, target = normalize_key(parts[0]), parts[1].strip()
        if target:
            out[source] = target
    return out


def memory_lines(pairs: dict[str, str], model: str = MODEL_NAME) -> list[str]:
    return [
        MemoryRecord(model, source, pairs[source], ORIGIN, TIMESTAMP).to_json() + "\n"
        for source in sorted(pairs)
    ]


def build(tsv: Path = TSV, out: Path = MEMORY) -> int:
    lines = memory_lines(read_tsv(tsv))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(lines), encoding="utf-8")
    return len(lines)


def missing_texts(texts: list[str], memory_path: Path = MEMORY, model: str = MODEL_NAME) -> list[str]:
    memory = TranslationMemory(None, seeds=[memory_path] if memory_path.exists() else [])
    return [t for t in texts if memory.get(model, t) is None]


# --------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", nargs="?", const="-", metavar="FILE", help="print (or write) every source text")
    ap.add_argument("--template", metavar="FILE", help="append TSV rows with an empty target for missing texts")
    ap.add_argument("--build", action="store_true", help="convert the TSV into memory.jsonl")
    ap.add_argument("--check", action="store_true", help="fail if a text is missing or memory.jsonl is stale")
    ap.add_argument("--base", default=DEFAULT_BASE, help="sentence splitter base (default: %(default)s)")
    args = ap.parse_args(argv)
    if not (args.list or args.template or args.build or args.check):
        ap.error("choose --list, --template, --build or --check")

    texts = source_texts(base=args.base)
    rc = 0
    if args.list:
        payload = "".join(t + "\n" for t in texts)
        if args.list == "-":
            sys.stdout.write(payload)
        else:
            Path(args.list).write_text(payload, encoding="utf-8")
        print(f"{len(texts)} source texts", file=sys.stderr)
    if args.template:
        articles, claims = parsed_demo()
        have = read_tsv(TSV)
        with open(args.template, "a", encoding="utf-8") as fh:
            for aid, atexts in texts_by_article(articles, claims, args.base).items():
                todo = [t for t in atexts if t not in have]
                if todo:
                    fh.write(f"# {aid}\n" + "".join(f"{t}\t\n" for t in dict.fromkeys(todo)))
                    have.update(dict.fromkeys(todo, "x"))
    if args.build:
        n = build(TSV, MEMORY)
        print(f"wrote {MEMORY} ({n} records)", file=sys.stderr)
    if args.check:
        missing = missing_texts(texts, MEMORY)
        for t in missing:
            print(f"MISSING\t{t}")
        expected = "".join(memory_lines(read_tsv(TSV)))
        actual = MEMORY.read_text(encoding="utf-8") if MEMORY.exists() else ""
        stale = expected != actual
        if stale:
            print(f"STALE\t{MEMORY} differs from a build of {TSV}; run --build")
        unused = sorted(set(read_tsv(TSV)) - set(texts))
        print(
            f"{len(texts)} source texts, {len(texts) - len(missing)} covered, {len(missing)} missing, "
            f"{len(unused)} unused TSV rows" + (", memory stale" if stale else ""),
            file=sys.stderr,
        )
        if missing or stale:
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
