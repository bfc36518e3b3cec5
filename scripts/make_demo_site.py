#!/usr/bin/env python3
"""Generate the embedded demo snapshot of the Medizin Transparent portal.

The snapshot (``resources/demo/site/``) is demo content written by the medfc project: German,
realistic in shape, but NOT real Medizin Transparent articles. Every page says so in an HTML
comment and in its ``<meta name="description">``.

Inputs:  ``resources/demo/site_src/*.yaml`` (per-article content; format in resources/demo/README.md).
Outputs: ``resources/demo/site/`` (the pages, robots.txt, sitemaps) and
         ``tests/data/demo_site_expected.json`` (what a correct parser must extract).

The output is deterministic (no clocks, no randomness); the generated files are committed.

Usage::

    python scripts/make_demo_site.py            # (re)write the snapshot and the expected JSON
    python scripts/make_demo_site.py --check    # exit 1 if the committed files differ from a fresh run
"""

from __future__ import annotations

import argparse
import datetime as dt
import html
import json
import re
import sys
import tempfile
from pathlib import Path

import yaml
from lxml import html as lxml_html

from medfc.healthfc.verdicts import ANSWER_SCALE

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "resources" / "demo" / "site_src"
SITE = ROOT / "resources" / "demo" / "site"
EXPECTED = ROOT / "tests" / "data" / "demo_site_expected.json"

ORIGIN = "https://www.medizin-transparent.at"
DEMO_COMMENT = "<!-- DEMO CONTENT: written for the medfc demo snapshot; not real Medizin Transparent articles -->"
FOOTER = (
    '<footer class="site-footer"><p>Demo-Snapshot für medfc: vom Projekt geschriebene Beispielseiten, '
    "keine echten Artikel von Medizin Transparent.</p></footer>"
)

MONTHS = ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August",
          "September", "Oktober", "November", "Dezember"]

TOPICS = {
    "ernaehrung": "Ernährung",
    "herz-kreislauf": "Herz-Kreislauf",
    "psyche": "Psyche",
    "krebs": "Krebs",
    "kinder": "Kinder",
    "nahrungsergaenzung": "Nahrungsergänzung",
    "schmerzen": "Schmerzen",
    "haut": "Haut",
    "schlaf": "Schlaf",
    "impfen": "Impfen",
    "allergien": "Allergien",
    "alternativmedizin": "Alternativmedizin",
    "schwangerschaft": "Schwangerschaft",
    "infektionen": "Infektionen",
    "gehirn-nerven": "Gehirn & Nerven",
    "verdauung": "Verdauung",
}

#: Answer scale of the current layout (docs/sources.md §1); 7 is unused.
SCALE = ANSWER_SCALE
SCALE_INDEX = {v: k for k, v in SCALE.items()}

# Abbreviations that end with a period but do not end a sentence (for the approximate sentence count).
ABBREVIATIONS = {
    "z.", "b.", "u.", "a.", "d.", "h.", "dr.", "prof.", "ca.", "bzw.", "s.", "vgl.", "inkl.", "etc.",
    "usw.", "evtl.", "ggf.", "mind.", "max.", "min.", "bzgl.", "sog.", "z.b.", "u.a.", "d.h.", "nr.",
    "abb.", "tab.", "kap.", "mio.", "mrd.", "std.", "jh.", "o.", "ä.", "et", "al.", "v.", "chr.", "mg.",
}


# --------------------------------------------------------------------------------------------
# small helpers


def esc(text: str) -> str:
    """Escape for attributes/text where the source holds plain text (no markup)."""
    return html.escape(text, quote=True)


def german_date(d: dt.date) -> str:
    return f"{d.day}. {MONTHS[d.month - 1]} {d.year}"


def slugify(name: str) -> str:
    s = name.lower()
    for a, b in (("ä", "ae"), ("ö", "oe"), ("ü", "ue"), ("ß", "ss"), ("&", "und")):
        s = s.replace(a, b)
    s = re.sub(r"[^a-z0-9]+", "-", s).strip("-")
    return s


def collapse(text: str) -> str:
    return " ".join(text.split())


def fragment_text(markup: str) -> str:
    """Visible text of an inline-HTML fragment, entities decoded, whitespace collapsed."""
    if not markup.strip():
        return ""
    el = lxml_html.fragment_fromstring(markup, create_parent="div")
    return collapse(el.text_content())


def join_names(names: list[str], style: str) -> str:
    if len(names) == 1:
        return names[0]
    if style == "und":  # "A und B und C"
        return " und ".join(names)
    if style == "comma":  # "A, B, C"
        return ", ".join(names)
    if style == "mixed":  # "A, B und C"
        return ", ".join(names[:-1]) + " und " + names[-1]
    raise ValueError(f"unknown name join style {style!r}")


def split_sentences(text: str) -> list[str]:
    """A small abbreviation-aware German sentence splitter (used only for the approximate count).

    A boundary is [.!?] (optionally followed by a closing quote/bracket) + whitespace + an
    uppercase letter, digit or opening quote, unless the token before the period is a known
    abbreviation or a one/two-digit number (a date "3. Mai" or an ordinal).
    """
    sents: list[str] = []
    start = 0
    for m in re.finditer(r"[.!?][“”\"')]?\s+(?=[A-ZÄÖÜ0-9„\"(])", text):
        end = m.start() + 1
        before = text[start:end]
        last_tok = before.split()[-1].lower() if before.split() else ""
        if text[m.start()] == ".":
            if last_tok in ABBREVIATIONS or re.fullmatch(r"\(?\d{1,2}\.", last_tok) or re.fullmatch(r"[a-zäöü]\.", last_tok):
                continue
        sents.append(text[start:m.end()].strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        sents.append(tail)
    return sents


# --------------------------------------------------------------------------------------------
# verdicts


def classify(verdict: str, layout: str) -> dict:
    """Label, level of evidence, small-effect flag and answer index for one verdict text."""
    t = collapse(verdict)
    low = t.lower()
    index = SCALE_INDEX.get(t) if layout == "current" else None
    small = "ein bisschen" in low
    if layout == "pre_2014":
        m = re.fullmatch(r"(Hohe|Mittlere|Niedrige|Unzureichende) wissenschaftliche Beweislage(?: (dafür|dagegen))?", t)
        if not m:
            raise ValueError(f"bad Beweislage {t!r}")
        level = {"Hohe": "high", "Mittlere": "moderate", "Niedrige": "low", "Unzureichende": "insufficient"}[m.group(1)]
        if level == "insufficient":
            if m.group(2):
                raise ValueError("Unzureichende has no direction")
            return dict(label="NOT ENOUGH INFO", evidence_level=level, small_effect=False, answer_index=None)
        label = "SUPPORTED" if m.group(2) == "dafür" else "REFUTED"
        return dict(label=label, evidence_level=level, small_effect=False, answer_index=None)
    if "belege fehlen" in low or "beweise fehlen" in low:
        return dict(label="NOT ENOUGH INFO", evidence_level="insufficient", small_effect=False, answer_index=index)
    if "widersprüchlich" in low:
        return dict(label="NOT ENOUGH INFO", evidence_level="conflicting", small_effect=False, answer_index=index)
    if low.startswith("ja") or low in ("wahrscheinlich", "möglicherweise"):
        label = "SUPPORTED"
    elif low.startswith("nein"):
        label = "REFUTED"
    else:
        raise ValueError(f"unknown verdict {t!r}")
    if "möglicherweise" in low:
        level = "low"
    elif "wahrscheinlich" in low:
        level = "moderate"
    else:
        level = "high"
    return dict(label=label, evidence_level=level, small_effect=small, answer_index=index)


# --------------------------------------------------------------------------------------------
# body markup → HTML blocks
#
# Body source is a light markup: blank-line separated blocks; "## x" → <h2>, "### x" → <h3>,
# lines starting "- " → one <ul>, "@snippet-name" → a shared paragraph from snippets.yaml,
# anything else → <p> (inline HTML allowed).


def parse_blocks(src: str, snippets: dict[str, str]) -> list[tuple[str, object]]:
    blocks: list[tuple[str, object]] = []
    for raw in re.split(r"\n\s*\n", src.strip()):
        chunk = raw.strip()
        if not chunk:
            continue
        if chunk.startswith("@"):
            name = chunk[1:].strip()
            blocks.extend(parse_blocks(snippets[name], snippets))
        elif chunk.startswith("### "):
            blocks.append(("h3", chunk[4:].strip()))
        elif chunk.startswith("## "):
            blocks.append(("h2", chunk[3:].strip()))
        elif chunk.startswith("- "):
            items = [collapse(x) for x in re.split(r"(?m)^- ", chunk) if x.strip()]
            blocks.append(("ul", items))
        else:
            blocks.append(("p", collapse(chunk)))
    return blocks


def blocks_html(blocks: list[tuple[str, object]], subheading: str = "h2") -> str:
    out = []
    for kind, val in blocks:
        if kind == "h2":
            out.append(f"<{subheading}>{val}</{subheading}>")
        elif kind == "h3":
            out.append(f"<h3>{val}</h3>")
        elif kind == "ul":
            out.append("<ul>" + "".join(f"<li>{x}</li>" for x in val) + "</ul>")  # type: ignore[union-attr]
        else:
            out.append(f"<p>{val}</p>")
    return "\n".join(out)


def blocks_stats(blocks: list[tuple[str, object]]) -> dict:
    """First/last 8 words (of the first/last paragraph) and the sentence count (headings excluded)."""
    if blocks[0][0] != "p" or blocks[-1][0] != "p":
        raise ValueError("a body must start and end with a paragraph")
    first = fragment_text(blocks[0][1]).split()[:8]  # type: ignore[arg-type]
    last = fragment_text(blocks[-1][1]).split()[-8:]  # type: ignore[arg-type]
    n = 0
    for kind, val in blocks:
        if kind == "p":
            n += len(split_sentences(fragment_text(val)))  # type: ignore[arg-type]
        elif kind == "ul":
            for item in val:  # type: ignore[union-attr]
                n += len(split_sentences(fragment_text(item)))
    return {"first": " ".join(first), "last": " ".join(last), "n_sentences": n}


# --------------------------------------------------------------------------------------------
# page parts


def head(title: str) -> str:
    return (
        '<!DOCTYPE html><html lang="de"><head><meta charset="utf-8">'
        f'<meta name="description" content="Demo snapshot (medfc), keine echten Inhalte: {esc(title)}">'
        f"<title>{esc(title)} | Medizin Transparent</title></head><body>\n{DEMO_COMMENT}\n"
        '<header class="site-header"><a class="site-logo" href="/">Medizin Transparent</a></header>\n'
    )


def breadcrumb(topic_slugs: list[str], title: str) -> str:
    parts = ['<a href="/">Startseite</a>']
    parts += [f'<a href="/themen/{s}/">{esc(TOPICS[s])}</a>' for s in topic_slugs]
    parts.append(f"<span>{esc(title)}</span>")
    return '<nav class="breadcrumb">' + " › ".join(parts) + "</nav>\n"


def tags_html(tags: list[str]) -> str:
    return '<div class="post-tags">' + " ".join(
        f'<a rel="tag" href="/tag/{slugify(t)}/">{esc(t)}</a>' for t in tags) + "</div>\n"


def footnotes_html(refs: list[str]) -> str:
    # references are written as HTML-ready strings in the source (entities allowed, e.g. &amp;)
    return '<div class="collapse" id="collapseFussnote"><ol>' + "".join(f"<li>{r}</li>" for r in refs) + "</ol></div>\n"


def render_current(a: dict, snippets: dict) -> str:
    title = a["title"]
    s = head(title) + breadcrumb(a["breadcrumb"], title)
    s += '<article class="pods-post-page">\n'
    s += f'<h1 class="pods-post-page__title">{esc(title)}</h1>\n'
    s += f'<div class="pods-post-page__teaser"><p>{a["teaser"]}</p></div>\n'
    s += f'<div class="lastedited">zuletzt aktualisiert: {german_date(a["date"])}</div>\n'
    s += "<!-- Autoren -->\n"
    s += ('<div class="pods-post-page__authors"><p>AutorIn: '
          f'{join_names(a["authors"], a.get("author_join", "und"))}</p>'
          f'<p>Review: {join_names(a["reviewers"], a.get("reviewer_join", "und"))}</p></div>\n')
    s += "<!-- SECTION END -->\n"
    for c in a.get("claims", []):
        idx = SCALE_INDEX.get(c["verdict"])
        attr = f' data-answer="{idx}"' if c.get("index") else ""
        if c.get("index") and idx is None:
            raise ValueError(f"{a['slug']}: verdict {c['verdict']!r} has no index on the scale")
        s += (
            '<div class="katechismus">\n'
            f'  <div class="katechismus__question"><strong>Frage:</strong> {c["q"]}</div>\n'
            f'  <div class="katechismus__answer"{attr}><span class="katechismus__answer-text">{c["verdict"]}</span></div>\n'
            f'  <div class="katechismus__explanation"><strong>Erklärung:</strong> {c["expl"]}</div>\n'
            "</div>\n"
        )
    body = parse_blocks(a["body"], snippets)
    s += '<div class="pods-post-page__content">\n' + blocks_html(body, "h2") + "\n</div>\n"
    s += ('<div class="pods-post-page__study-detail"><h3>Studien im Detail</h3>\n'
          + "\n".join(f"<p>{collapse(p)}</p>" for p in a["studies"]) + "\n</div>\n")
    if a.get("refs"):
        s += footnotes_html(a["refs"])
    s += tags_html(a["tags"])
    s += "</article>\n" + FOOTER + "\n</body></html>\n"
    return s


def render_old(a: dict, snippets: dict) -> str:
    layout = a["layout"]
    title = a["title"]
    s = head(title) + breadcrumb(a["breadcrumb"], title)
    s += '<article class="post">\n'
    s += f'<h1 class="entry-title">{esc(title)}</h1>\n'
    s += f'<div class="lastedited">zuletzt aktualisiert: {german_date(a["date"])}</div>\n'
    if layout == "2014_2017":
        s += f'<p class="teaser"><strong>{a["teaser"]}</strong></p>\n'
    else:
        s += f'<p class="teaser">{a["teaser"]}</p>\n'
    for c in a["claims"]:
        s += '<table class="table_rating"><tbody>\n'
        s += f'<tr><td>Frage:</td><td>{c["q"]}</td></tr>\n'
        if layout == "2014_2017":
            s += f'<tr><td>Antwort:</td><td>{c["verdict"]}</td></tr>\n'
            s += f'<tr><td>Erklärung:</td><td>{c["expl"]}</td></tr>\n'
        else:
            s += f'<tr><td>Antwort:</td><td>{c["expl"]}</td></tr>\n'
            s += f'<tr><td>Beweislage:</td><td>{c["verdict"]}</td></tr>\n'
        s += "</tbody></table>\n"
    body = parse_blocks(a["body"], snippets)
    s += blocks_html(body, "h3") + "\n"
    s += f'<h3>{a.get("studies_heading", "Ergebnisse aus den wissenschaftlichen Studien")}</h3>\n'
    s += "<!-- Studien im Detail -->\n"
    s += "\n".join(f"<p>{collapse(p)}</p>" for p in a["studies"]) + "\n"
    s += "<!-- Autoren -->\n"
    s += (f'<p>Autor: {join_names(a["authors"], a.get("author_join", "und"))}</p>'
          f'<p>Review: {join_names(a["reviewers"], a.get("reviewer_join", "und"))}</p>\n')
    s += "<!-- SECTION END -->\n"
    if a.get("refs"):
        s += footnotes_html(a["refs"])
    s += tags_html(a["tags"])
    s += "</article>\n" + FOOTER + "\n</body></html>\n"
    return s


def render_listing(listing: dict, articles: list[dict]) -> str:
    title = listing["title"]
    s = head(title)
    s += f'<nav class="breadcrumb"><a href="/">Startseite</a> › <span>{esc(title)}</span></nav>\n'
    s += '<main class="archive">\n'
    s += f'<h1 class="archive-title">{esc(title)}</h1>\n'
    s += f'<p class="archive-description">{listing["description"]}</p>\n'
    s += '<ul class="post-list">\n'
    for a in articles:
        s += (f'<li class="post-list__item"><a href="{ORIGIN}/{a["slug"]}/">{esc(a["title"])}</a> '
              f'<span class="post-list__date">{german_date(a["date"])}</span>'
              f'<p class="post-list__teaser">{a["teaser"]}</p></li>\n')
    s += "</ul>\n</main>\n" + FOOTER + "\n</body></html>\n"
    return s


# --------------------------------------------------------------------------------------------
# expected fields


def expected_for(a: dict, snippets: dict, kind: str) -> dict:
    layout = a.get("layout")
    body = parse_blocks(a["body"], snippets) if a.get("body") else None
    stats = blocks_stats(body) if body else None
    topics: list[str] = []
    for t in [TOPICS[s] for s in a["breadcrumb"]] + (a["tags"] if kind != "truncated" else []):
        t = collapse(html.unescape(t))
        if t not in topics:
            topics.append(t)
    claims = []
    if kind in ("article", "disallowed"):
        for c in a["claims"]:
            cls = classify(fragment_text(c["verdict"]), layout)
            claims.append({
                "question": fragment_text(c["q"]),
                "verdict_text": fragment_text(c["verdict"]),
                "answer_index": cls["answer_index"],
                "label": cls["label"],
                "evidence_level": cls["evidence_level"],
                "small_effect": cls["small_effect"],
                "explanation": fragment_text(c["expl"]),
            })
    full = kind in ("article", "disallowed", "no_verdict")
    studies_first = fragment_text(a["studies"][0]).split()[:8] if full else None
    return {
        "path": f'{a["slug"]}/index.html',
        "url": f'{ORIGIN}/{a["slug"]}/',
        "kind": kind,
        "layout": layout if kind in ("article", "disallowed") else None,
        "title": collapse(a["title"]),
        "date": a["date"].isoformat(),
        "authors": [collapse(n) for n in a["authors"]],
        "reviewers": [collapse(n) for n in a["reviewers"]],
        "teaser": fragment_text(a["teaser"]),
        "topics": topics,
        "n_body_sentences_approx": stats["n_sentences"] if (stats and full) else None,
        "references": [fragment_text(r) for r in a.get("refs", [])] if full else [],
        "studies_first_words": " ".join(studies_first) if studies_first else None,
        "body_first_words": stats["first"] if (stats and full) else None,
        "body_last_words": stats["last"] if (stats and full) else None,
        "claims": claims,
    }


# --------------------------------------------------------------------------------------------
# sitemaps and robots


def robots_txt() -> str:
    return (
        "# DEMO CONTENT: written for the medfc demo snapshot\n"
        "User-agent: *\n"
        "Disallow: /intern/\n"
        "Disallow: /wp-admin/\n"
        "\n"
        f"Sitemap: {ORIGIN}/sitemap_index.xml\n"
    )


XML_HEAD = ('<?xml version="1.0" encoding="UTF-8"?>'
            '<?xml-stylesheet type="text/xsl" href="//www.medizin-transparent.at/main-sitemap.xsl"?>\n'
            "<!-- DEMO CONTENT: written for the medfc demo snapshot; not real Medizin Transparent articles -->\n")


def lastmod(d: dt.date, n: int) -> str:
    # a deterministic time of day per entry, Yoast style (W3C datetime with offset)
    hour = 7 + (n * 5) % 11
    minute = (n * 17) % 60
    off = "+01:00" if d.month in (1, 2, 3, 11, 12) else "+02:00"
    return f"{d.isoformat()}T{hour:02d}:{minute:02d}:{(n * 7) % 60:02d}{off}"


def urlset(entries: list[tuple[str, str]]) -> str:
    s = XML_HEAD
    s += ('<urlset xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
          'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
          'xsi:schemaLocation="http://www.sitemaps.org/schemas/sitemap/0.9 '
          'http://www.sitemaps.org/schemas/sitemap/0.9/sitemap.xsd '
          'http://www.google.com/schemas/sitemap-image/1.1 '
          'http://www.google.com/schemas/sitemap-image/1.1/sitemap-image.xsd" '
          'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n')
    for loc, lm in entries:
        s += f"\t<url>\n\t\t<loc>{loc}</loc>\n\t\t<lastmod>{lm}</lastmod>\n\t</url>\n"
    s += "</urlset>\n"
    return s


def sitemap_index(entries: list[tuple[str, str]]) -> str:
    s = XML_HEAD
    s += '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    for loc, lm in entries:
        s += f"\t<sitemap>\n\t\t<loc>{loc}</loc>\n\t\t<lastmod>{lm}</lastmod>\n\t</sitemap>\n"
    s += "</sitemapindex>\n"
    return s


# --------------------------------------------------------------------------------------------


def load_sources() -> tuple[list[dict], dict, dict]:
    articles: list[dict] = []
    snippets: dict[str, str] = {}
    special: dict = {}
    for path in sorted(SRC.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if path.name == "snippets.yaml":
            snippets = data
        elif path.name == "special.yaml":
            special = data
        else:
            articles.extend(data)
    for a in articles + special.get("pages", []):
        if isinstance(a.get("date"), str):
            a["date"] = dt.date.fromisoformat(a["date"])
    return articles, snippets, special


def check_layout_dates(a: dict) -> None:
    d, lay = a["date"], a["layout"]
    ok = {
        "current": dt.date(2018, 1, 1) <= d <= dt.date(2023, 12, 31),
        "2014_2017": dt.date(2014, 1, 1) <= d <= dt.date(2017, 12, 31),
        "pre_2014": dt.date(2012, 1, 1) <= d < dt.date(2014, 6, 1),
    }[lay]
    if not ok:
        raise ValueError(f"{a['slug']}: date {d} does not fit layout {lay}")


def build(site: Path, expected_path: Path) -> None:
    articles, snippets, special = load_sources()
    files: dict[str, str] = {}
    expected: list[dict] = []
    posts: list[tuple[dt.date, str]] = []  # (date, url) for the post sitemaps

    for a in articles:
        check_layout_dates(a)
        page = render_current(a, snippets) if a["layout"] == "current" else render_old(a, snippets)
        files[f'{a["slug"]}/index.html'] = page
        expected.append(expected_for(a, snippets, "article"))
        posts.append((a["date"], f'{ORIGIN}/{a["slug"]}/'))

    intern_url = None
    for p in special["pages"]:
        kind = p["kind"]
        if kind == "no_verdict":
            p = dict(p, layout="current", claims=[])
            page = render_current(p, snippets)
            posts.append((p["date"], f'{ORIGIN}/{p["slug"]}/'))
        elif kind == "truncated":
            full = render_current(dict(p, layout="current"), snippets)
            cut = full.index(p["cut_after"]) + len(p["cut_after"])
            page = full[:cut]  # cut off mid-element: no closing tags, no question text
            posts.append((p["date"], f'{ORIGIN}/{p["slug"]}/'))
        elif kind == "disallowed":
            check_layout_dates(p)
            page = render_current(p, snippets)
            intern_url = (p["date"], f'{ORIGIN}/{p["slug"]}/')
        else:
            raise ValueError(kind)
        files[f'{p["slug"]}/index.html'] = page
        expected.append(expected_for(p, snippets, kind))

    listing = special["listing"]
    members = [a for a in articles if listing["topic"] in a["breadcrumb"]]
    members.sort(key=lambda a: a["date"], reverse=True)
    files[f'{listing["slug"]}/index.html'] = render_listing(listing, members)
    expected.append({
        "path": f'{listing["slug"]}/index.html', "url": f'{ORIGIN}/{listing["slug"]}/', "kind": "listing",
        "layout": None, "title": listing["title"], "date": None, "authors": [], "reviewers": [], "teaser": None,
        "topics": [], "n_body_sentences_approx": None, "references": [], "studies_first_words": None,
        "body_first_words": None, "body_last_words": None, "claims": [],
        "links": [f'{ORIGIN}/{a["slug"]}/' for a in members],
    })

    # sitemaps: posts by date, split across two post sitemaps; the /intern/ draft is listed too
    posts.sort()
    half = (len(posts) + 1) // 2
    sm1 = [(u, lastmod(d, i)) for i, (d, u) in enumerate(posts[:half])]
    sm2 = [(u, lastmod(d, i + half)) for i, (d, u) in enumerate(posts[half:])]
    assert intern_url is not None
    sm2.append((intern_url[1], lastmod(intern_url[0], 99)))
    files["post-sitemap.xml"] = urlset(sm1)
    files["post-sitemap2.xml"] = urlset(sm2)
    newest = max(d for d, _ in posts)
    files["page-sitemap.xml"] = urlset([(f'{ORIGIN}/{listing["slug"]}/', lastmod(newest, 3))])
    files["sitemap_index.xml"] = sitemap_index([
        (f"{ORIGIN}/post-sitemap.xml", sm1[-1][1]),
        (f"{ORIGIN}/post-sitemap2.xml", max(lm for _, lm in sm2)),
        (f"{ORIGIN}/page-sitemap.xml", lastmod(newest, 3)),
    ])
    files["robots.txt"] = robots_txt()

    for rel, text in files.items():
        out = site / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    expected.sort(key=lambda e: e["path"])
    doc = {
        "origin": ORIGIN,
        "conventions": {
            "text": "all strings are visible text with HTML entities decoded and whitespace collapsed to single spaces",
            "words": "words are whitespace-separated tokens (punctuation stays attached)",
            "body": "current layout: div.pods-post-page__content; older layouts: the nodes after the last "
                    "table.table_rating and before the h3 containing 'den wissenschaftlichen Studien'. "
                    "Every body starts and ends with a <p>; body_first_words/body_last_words come from those.",
            "studies_first_words": "first 8 words of the first <p> of the studies section (the 'Studien im Detail' "
                                   "heading of the current layout is not counted)",
            "n_body_sentences_approx": "sentences in the body's <p> and <li> text (headings excluded), by an "
                                       "abbreviation-aware splitter; compare with a tolerance",
            "answer_index": "current layout: data-answer, or the scale index implied by the verdict text "
                            "(null for texts not on the scale); older layouts: always null",
            "non_claim_pages": "listing, no_verdict and truncated pages yield no claims; the disallowed /intern/ "
                               "page would parse (its fields are given) but robots.txt forbids fetching it",
        },
        "pages": expected,
    }
    expected_path.parent.mkdir(parents=True, exist_ok=True)
    expected_path.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare a fresh build with the committed files")
    args = ap.parse_args(argv)
    if not args.check:
        if SITE.exists():
            for f in sorted(SITE.rglob("*"), reverse=True):
                f.unlink() if f.is_file() else f.rmdir()
        build(SITE, EXPECTED)
        print(f"wrote {sum(1 for f in SITE.rglob('*') if f.is_file())} files under {SITE.relative_to(ROOT)}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        build(t / "site", t / "expected.json")
        bad = []
        fresh = {p.relative_to(t / "site") for p in (t / "site").rglob("*") if p.is_file()}
        have = {p.relative_to(SITE) for p in SITE.rglob("*") if p.is_file()}
        bad += [f"missing {p}" for p in sorted(fresh - have)] + [f"extra {p}" for p in sorted(have - fresh)]
        for p in sorted(fresh & have):
            if (t / "site" / p).read_bytes() != (SITE / p).read_bytes():
                bad.append(f"differs {p}")
        if (t / "expected.json").read_bytes() != EXPECTED.read_bytes():
            bad.append(f"differs {EXPECTED.relative_to(ROOT)}")
        for b in bad:
            print(b)
        print("OK" if not bad else f"{len(bad)} problem(s)")
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
