"""Parse Medizin Transparent article pages (all three layouts) into articles and claims.

Layouts (docs/sources.md §1):

* ``current`` — one ``div.katechismus`` verdict box per claim (question, answer index/text,
  explanation); body in ``div.pods-post-page__content``; studies in
  ``div.pods-post-page__study-detail``.
* ``2014_2017`` — ``table.table_rating`` with rows Frage/Antwort/Erklärung; the body is the nodes
  after the table up to the heading that mentions "den wissenschaftlichen Studien"; the studies are
  between the comments "Studien im Detail" and "Autoren".
* ``pre_2014`` — the same table with rows Frage/Antwort (the explanation)/Beweislage.

A page that is not an article, or cannot be parsed, raises :class:`PageSkipped` with a reason
code; the caller records it in the step's report.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlparse

import lxml.html
from lxml import etree

from medfc.healthfc.dates import parse_german_date
from medfc.healthfc.verdicts import UnknownVerdict, verdict_from_beweislage, verdict_from_text

TITLE_SUFFIX = re.compile(r"\s*[|–-]\s*Medizin Transparent\s*$")
_WS = re.compile(r"\s+")
_BLOCK_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "blockquote", "td", "th", "dd", "dt", "figcaption"}


class PageSkipped(Exception):
    """A page that yields no article; ``reason`` is a short code, ``detail`` free text."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass
class Claim:
    claim_id: str
    article_id: str
    url: str
    claim_index: int
    question: str
    verdict_text: str
    answer_index: int | None
    label: str
    evidence_level: str
    small_effect: bool
    explanation: str
    layout: str


@dataclass
class Article:
    article_id: str
    url: str
    layout: str
    title: str
    date: str | None
    authors: list[str]
    reviewers: list[str]
    teaser: str
    body_paragraphs: list[str]
    studies: str
    references: list[str]
    topics: list[str]
    n_claims: int = 0
    claims: list[Claim] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def body(self) -> str:
        return "\n\n".join(self.body_paragraphs)

    def record(self) -> dict[str, Any]:
        rec = asdict(self)
        rec.pop("claims")
        rec.pop("problems")
        rec["body"] = self.body
        return rec


def clean(text: str | None) -> str:
    return _WS.sub(" ", text or "").strip()


def article_id_from_url(url: str) -> str:
    """The article slug: the last non-empty path segment of its URL."""
    parts = [p for p in urlparse(url).path.split("/") if p]
    return parts[-1] if parts else "index"


def _text(el: etree._Element | None, drop_sup: bool = False) -> str:
    if el is None:
        return ""
    if drop_sup:
        el = _copy_without(el, "sup")
    return clean(el.text_content())


def _copy_without(el: etree._Element, tag: str) -> etree._Element:
    el = lxml.html.fromstring(lxml.html.tostring(el, encoding="unicode"))
    for sub in el.iter(tag):
        sub.drop_tree()
    return el


def _has_class(cls: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {cls} ')"


def _blocks(nodes: list[etree._Element]) -> list[str]:
    """Paragraph texts of a node list: block elements in document order, footnote marks dropped."""
    out: list[str] = []
    for node in nodes:
        if not isinstance(node.tag, str):
            continue  # comments, processing instructions
        node = _copy_without(node, "sup")
        if node.tag in _BLOCK_TAGS:
            candidates = [node]
        else:
            candidates = [e for e in node.iter() if isinstance(e.tag, str) and e.tag in _BLOCK_TAGS]
            # keep only innermost-outermost: skip blocks nested in other collected blocks (li in blockquote)
            candidates = [e for e in candidates if not any(a in candidates for a in e.iterancestors())]
            if not candidates and clean(node.text_content()):
                candidates = [node]
        for c in candidates:
            t = clean(c.text_content())
            if t:
                out.append(t)
    return out


def _between_comments(html: str, start: str, end: str) -> str | None:
    m = re.search(rf"<!--\s*{re.escape(start)}\s*-->(.*?)<!--\s*{re.escape(end)}\s*-->", html, re.S | re.I)
    return m.group(1) if m else None


def _fragment_blocks(fragment: str) -> list[str]:
    if not fragment or not fragment.strip():
        return []
    root = lxml.html.fragment_fromstring(fragment, create_parent="div")
    return _blocks(list(root)) or ([clean(root.text_content())] if clean(root.text_content()) else [])


_NAME_SPLIT = re.compile(r"\s*,\s*|\s+und\s+|\s*&\s*|\s*;\s*")
_ROLE = re.compile(r"(AutorInnen|Autorinnen|AutorIn|Autorin|Autoren|Autor|Review|Reviewer|Redaktion)\s*:", re.I)


def split_names(text: str) -> list[str]:
    return [n.strip(" .") for n in _NAME_SPLIT.split(clean(text)) if n.strip(" .")]


def parse_people(text: str) -> tuple[list[str], list[str]]:
    """Authors and reviewers from "AutorIn: A und B Review: C" (labels dropped, names split)."""
    authors: list[str] = []
    reviewers: list[str] = []
    pieces = _ROLE.split(clean(text))
    # pieces: [before, role1, names1, role2, names2, ...]
    for role, names in zip(pieces[1::2], pieces[2::2]):
        target = reviewers if role.lower().startswith("review") else authors
        target.extend(split_names(names))
    return authors, reviewers


def _title(doc: etree._Element) -> str:
    titles = doc.xpath("//head/title")
    if titles:
        return TITLE_SUFFIX.sub("", clean(titles[0].text_content()))
    h1 = doc.xpath("//h1")
    return clean(h1[0].text_content()) if h1 else ""


def _topics(doc: etree._Element) -> list[str]:
    topics: list[str] = []
    for a in doc.xpath(f"//nav[{_has_class('breadcrumb')}]//a | //*[{_has_class('breadcrumb')}]//a"):
        t = clean(a.text_content())
        if t and t.lower() != "startseite" and t not in topics:
            topics.append(t)
    for a in doc.xpath("//a[@rel='tag']"):
        t = clean(a.text_content())
        if t and t not in topics:
            topics.append(t)
    return topics


def _references(doc: etree._Element) -> list[str]:
    box = doc.xpath("//*[@id='collapseFussnote']")
    if not box:
        return []
    items = box[0].xpath(".//li")
    if items:
        return [t for t in (_text(li) for li in items) if t]
    return _blocks(list(box[0]))


def _date(doc: etree._Element) -> str | None:
    for el in doc.xpath("//*[contains(@class, 'lastedited')]"):
        text = clean(el.text_content())
        m = re.search(r"zuletzt aktualisiert:?\s*(.*)", text, re.I)
        iso = parse_german_date(m.group(1) if m else text)
        if iso:
            return iso
    return None


def _strip_label(text: str, label: str) -> str:
    return clean(re.sub(rf"^\s*{label}\s*:?", "", clean(text), flags=re.I))


_LISTING_PATH = re.compile(r"^/(themen|thema|tag|category|kategorie|page|author|autor)/", re.I)


def is_listing(url: str, doc: etree._Element) -> bool:
    """WordPress archive pages: topic/tag/category/paging URLs, archive markup, or many post links without an article."""
    if _LISTING_PATH.search(urlparse(url).path):
        return True
    if doc.xpath("//*[contains(@class, 'archive') or contains(@class, 'post-list')]"):
        return True
    return not doc.xpath("//article") and len(doc.xpath("//a[@href]")) >= 8


def detect_layout(doc: etree._Element) -> str | None:
    if doc.xpath(f"//div[{_has_class('katechismus')}]"):
        return "current"
    tables = doc.xpath(f"//table[{_has_class('table_rating')}]")
    if tables:
        labels = {clean(td.text_content()).rstrip(":").lower() for t in tables for td in t.xpath(".//tr/td[1] | .//tr/th[1]")}
        return "pre_2014" if "beweislage" in labels else "2014_2017"
    return None


def _current_claims(doc: etree._Element) -> list[dict[str, Any]]:
    claims = []
    for box in doc.xpath(f"//div[{_has_class('katechismus')}]"):
        q = box.xpath(f".//*[{_has_class('katechismus__question')}]")
        a = box.xpath(f".//*[{_has_class('katechismus__answer')}]")
        e = box.xpath(f".//*[{_has_class('katechismus__explanation')}]")
        if q:
            question = _strip_label(_text(q[0]), "Frage")
            explanation = _strip_label(_text(e[0]), "Erklärung") if e else ""
            answer_text = _text(a[0]) if a else ""
            raw_index = a[0].get("data-answer") if a else None
            for t in a[0].xpath(f".//*[{_has_class('katechismus__answer-text')}]") if a else []:
                answer_text = _text(t)
        else:  # a box without the inner structure: fall back to its text
            text = _text(box)
            m = re.search(r"Frage:\s*(?P<q>.*?)\s*(?:Antwort:\s*(?P<a>.*?))?\s*Erklärung:\s*(?P<e>.*)$", text)
            if not m:
                claims.append({"error": "verdict_box_without_question"})
                continue
            question, answer_text, explanation, raw_index = m.group("q"), clean(m.group("a")), clean(m.group("e")), None
        index = int(raw_index) if raw_index and raw_index.strip().isdigit() else None
        claims.append({"question": question, "verdict_text": answer_text, "answer_index": index, "explanation": explanation})
    return claims


def _table_claims(doc: etree._Element, layout: str) -> list[dict[str, Any]]:
    claims = []
    for table in doc.xpath(f"//table[{_has_class('table_rating')}]"):
        rows: dict[str, str] = {}
        for tr in table.xpath(".//tr"):
            cells = tr.xpath("./td | ./th")
            if len(cells) >= 2:
                rows[clean(cells[0].text_content()).rstrip(":").lower()] = _text(cells[1])
        if not rows.get("frage"):
            claims.append({"error": "verdict_box_without_question"})
            continue
        if layout == "pre_2014":
            claims.append({"question": rows["frage"], "verdict_text": rows.get("beweislage", ""), "answer_index": None,
                           "explanation": rows.get("antwort", ""), "beweislage": True})
        else:
            claims.append({"question": rows["frage"], "verdict_text": rows.get("antwort", ""), "answer_index": None,
                           "explanation": rows.get("erklärung", rows.get("erklaerung", ""))})
    return claims


def _old_body(doc: etree._Element) -> list[str]:
    tables = doc.xpath(f"//table[{_has_class('table_rating')}]")
    nodes: list[etree._Element] = []
    for sib in tables[-1].itersiblings():
        if not isinstance(sib.tag, str):
            if "Studien im Detail" in str(sib.text or ""):
                break
            continue
        if sib.tag in ("h3", "h4") and "den wissenschaftlichen studien" in clean(sib.text_content()).lower():
            break
        if sib.tag == "table" and "table_rating" in (sib.get("class") or ""):
            continue
        nodes.append(sib)
    return _blocks(nodes)


def parse_page(url: str, html: str, status: int = 200) -> Article:
    """Parse one fetched page; raise :class:`PageSkipped` when it yields no article."""
    if status != 200:
        raise PageSkipped(f"http_{status}", url)
    if not html or not html.strip():
        raise PageSkipped("empty_page")
    if not re.search(r"</html>\s*$", html.strip()[-200:], re.I):
        raise PageSkipped("truncated_html", "the document does not end with </html>")
    try:
        doc = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError) as exc:
        raise PageSkipped("unparseable_html", str(exc)) from None

    layout = detect_layout(doc)
    if layout is None:
        kind = "listing_page" if is_listing(url, doc) else "no_verdict_box"
        raise PageSkipped(kind, "no verdict box (div.katechismus or table.table_rating)")

    raw_claims = _current_claims(doc) if layout == "current" else _table_claims(doc, layout)
    html_str = html
    if layout == "current":
        body_el = doc.xpath("//div[contains(@class, 'pods-post-page__content')]")
        body = _blocks(list(body_el[0])) if body_el else []
        study_el = doc.xpath("//div[contains(@class, 'pods-post-page__study-detail')]")
        studies_blocks = _blocks(list(study_el[0])) if study_el else []
        studies_blocks = [b for b in studies_blocks if b.lower() != "studien im detail"]
        teaser_el = doc.xpath(f"//*[{_has_class('pods-post-page__teaser')}]")
    else:
        body = _old_body(doc)
        studies_blocks = _fragment_blocks(_between_comments(html_str, "Studien im Detail", "Autoren") or "")
        teaser_el = doc.xpath(f"//*[{_has_class('teaser')}]")
    people = _between_comments(html_str, "Autoren", "SECTION END")
    authors, reviewers = parse_people(" ".join(_fragment_blocks(people))) if people else ([], [])

    article = Article(
        article_id=article_id_from_url(url),
        url=url,
        layout=layout,
        title=_title(doc),
        date=_date(doc),
        authors=authors,
        reviewers=reviewers,
        teaser=_text(teaser_el[0]) if teaser_el else "",
        body_paragraphs=body,
        studies="\n\n".join(studies_blocks),
        references=_references(doc),
        topics=_topics(doc),
    )
    if not body:
        raise PageSkipped("empty_body", "the page has a verdict box but no article text")

    problems = article.problems
    for raw in raw_claims:
        if "error" in raw:
            problems.append(raw["error"])
            continue
        try:
            if raw.get("beweislage"):
                verdict = verdict_from_beweislage(raw["verdict_text"])
            else:
                verdict = verdict_from_text(raw["verdict_text"], raw["answer_index"])
        except UnknownVerdict as exc:
            problems.append(f"unknown_verdict ({exc})")
            continue
        k = len(article.claims)
        article.claims.append(
            Claim(
                claim_id=f"{article.article_id}#{k}",
                article_id=article.article_id,
                url=url,
                claim_index=k,
                question=raw["question"],
                verdict_text=raw["verdict_text"],
                answer_index=verdict.answer_index if layout == "current" else None,  # the scale is the current layout's
                label=verdict.label,
                evidence_level=verdict.evidence_level,
                small_effect=verdict.small_effect,
                explanation=raw["explanation"],
                layout=layout,
            )
        )
    article.n_claims = len(article.claims)
    if not article.claims:
        raise PageSkipped("no_valid_claim", "; ".join(problems) or "verdict box without claims")
    return article
