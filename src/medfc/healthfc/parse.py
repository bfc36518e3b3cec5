"""Parse Medizin Transparent article pages into articles and claims, in all three layouts (docs/sources.md §1); a page
that yields no article raises :class:`PageSkipped`."""

from __future__ import annotations

import re
from dataclasses import asdict, field, make_dataclass
from urllib.parse import urlparse

import lxml.html
from lxml import etree

from medfc.healthfc.html_text import between_comments, block_texts, clean, element_text, fragment_blocks, has_class
from medfc.healthfc.portal import TITLE_SUFFIX, parse_german_date
from medfc.healthfc.records import ArticleRecord, ClaimRecord
from medfc.healthfc.verdict_boxes import current_claims, detect_layout, table_claims
from medfc.healthfc.verdicts import UnknownVerdict, verdict_from_beweislage, verdict_from_text


class PageSkipped(Exception):
    """A page that yields no article; ``reason`` is a short code, ``detail`` free text."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail


# a parsed claim: the fields of a ClaimRecord as attributes
Claim = make_dataclass("Claim", list(ClaimRecord.__annotations__.items()))


def _article_record(article) -> ArticleRecord:
    """The article's :class:`ArticleRecord`: its fields but its claims and problems, and its paragraphs joined."""
    rec = {k: v for k, v in asdict(article).items() if k not in ("claims", "problems")}
    return {**rec, "body": "\n\n".join(article.body_paragraphs)}


# a parsed article: the fields of an ArticleRecord but ``body`` (``record()`` joins it), with its claims and the
# problems of the claims it skipped
_FIELDS = [(k, t) for k, t in ArticleRecord.__annotations__.items() if k not in ("n_claims", "body")]
_LISTS = [(name, list, field(default_factory=list)) for name in ("claims", "problems")]
Article = make_dataclass("Article", [*_FIELDS, ("n_claims", int, 0), *_LISTS], namespace={"record": _article_record})


_NAME_SPLIT = re.compile(r"\s*,\s*|\s+und\s+|\s*&\s*|\s*;\s*")
_ROLE = re.compile(r"\b(AutorInnen|Autorinnen|AutorIn|Autorin|Autoren|Autor|ReviewerInnen|Reviewerinnen|ReviewerIn|Reviewerin|Reviewer|Review"
                   r"|Redaktion)\s*:", re.I)  # the colon is required: "Review" and "Redaktion" also occur inside names


def parse_people(text: str) -> tuple[list[str], list[str]]:
    """Authors and reviewers from "AutorIn: A und B Review: C" (labels dropped, names split)."""
    authors: list[str] = []
    reviewers: list[str] = []
    pieces = _ROLE.split(clean(text))  # [before, role1, names1, role2, names2, ...]
    for role, names in zip(pieces[1::2], pieces[2::2]):
        target = reviewers if role.lower().startswith("review") else authors
        target.extend(n.strip(" .") for n in _NAME_SPLIT.split(clean(names)) if n.strip(" ."))
    return authors, reviewers


def _title(doc: etree._Element) -> str:
    titles = doc.xpath("//head/title")
    if titles:
        return TITLE_SUFFIX.sub("", clean(titles[0].text_content()))
    h1 = doc.xpath("//h1")
    return clean(h1[0].text_content()) if h1 else ""


def _topics(doc: etree._Element) -> list[str]:
    crumb = has_class("breadcrumb")
    crumbs = [clean(a.text_content()) for a in doc.xpath(f"//nav[{crumb}]//a | //*[{crumb}]//a")]
    tags = [clean(a.text_content()) for a in doc.xpath("//a[@rel='tag']")]
    return list(dict.fromkeys(t for t in [*(c for c in crumbs if c.lower() != "startseite"), *tags] if t))


def _references(doc: etree._Element) -> list[str]:
    box = doc.xpath("//*[@id='collapseFussnote']")
    if not box:
        return []
    items = box[0].xpath(".//li")
    return [t for t in (element_text(li) for li in items) if t] if items else block_texts(list(box[0]))


def _date(doc: etree._Element) -> str | None:
    for el in doc.xpath("//*[contains(@class, 'lastedited')]"):
        text = clean(el.text_content())
        m = re.search(r"zuletzt aktualisiert:?\s*(.*)", text, re.I)
        if iso := parse_german_date(m.group(1) if m else text):
            return iso
    return None


_LISTING_PATH = re.compile(r"^/(themen|thema|tag|category|kategorie|page|author|autor)/", re.I)


def is_listing(url: str, doc: etree._Element) -> bool:
    """WordPress archive pages: archive URLs or markup, or many links without an article."""
    if _LISTING_PATH.search(urlparse(url).path):
        return True
    if doc.xpath("//*[contains(@class, 'archive') or contains(@class, 'post-list')]"):
        return True
    return not doc.xpath("//article") and len(doc.xpath("//a[@href]")) >= 8


def _old_body(doc: etree._Element) -> list[str]:
    tables = doc.xpath(f"//table[{has_class('table_rating')}]")
    nodes: list[etree._Element] = []
    anchor = tables[-1]
    # a table wrapped in its own container (a div around it alone): the body follows the container
    while anchor.getparent() is not None and anchor.getparent().tag not in ("body", "article", "html") \
            and [c for c in anchor.getparent() if isinstance(c.tag, str)] == [anchor]:
        anchor = anchor.getparent()
    for sib in anchor.itersiblings():
        if not isinstance(sib.tag, str):
            if "Studien im Detail" in str(sib.text or ""):
                break
            continue
        if sib.tag in ("h3", "h4") and "den wissenschaftlichen studien" in clean(sib.text_content()).lower():
            break
        if sib.tag == "table" and "table_rating" in (sib.get("class") or ""):
            continue
        nodes.append(sib)
    return block_texts(nodes)


def _ends_with_html_close(html: str) -> bool:
    """Whether the page ends with ``</html>`` (before the comments cache plugins append): a cut body does not."""
    tail = html[-20000:].rstrip()
    while tail.endswith("-->") and "<!--" in tail:
        tail = tail[: tail.rfind("<!--")].rstrip()
    return tail[-7:].lower() == "</html>"


def parse_page(url: str, html: str, status: int = 200) -> Article:
    """Parse one fetched page; raise :class:`PageSkipped` when it yields no article."""
    if status != 200:
        raise PageSkipped(f"http_{status}", url)
    if not html or not html.strip():
        raise PageSkipped("empty_page")
    if not _ends_with_html_close(html):
        raise PageSkipped("truncated_html", "the document does not end with </html>")
    try:
        doc = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError) as exc:
        raise PageSkipped("unparseable_html", str(exc)) from None

    layout = detect_layout(doc)
    if layout is None:
        kind = "listing_page" if is_listing(url, doc) else "no_verdict_box"
        raise PageSkipped(kind, "no verdict box (div.katechismus or table.table_rating)")

    raw_claims = current_claims(doc) if layout == "current" else table_claims(doc, layout)
    if layout == "current":
        body_el = doc.xpath("//div[contains(@class, 'pods-post-page__content')]")
        body = block_texts(list(body_el[0])) if body_el else []
        study_el = doc.xpath("//div[contains(@class, 'pods-post-page__study-detail')]")
        studies_blocks = block_texts(list(study_el[0])) if study_el else []
        studies_blocks = [b for b in studies_blocks if b.lower() != "studien im detail"]
        teaser_el = doc.xpath(f"//*[{has_class('pods-post-page__teaser')}]")
    else:
        body = _old_body(doc)
        studies_blocks = fragment_blocks(between_comments(html, "Studien im Detail", "Autoren") or "")
        teaser_el = doc.xpath(f"//*[{has_class('teaser')}]")
    people = between_comments(html, "Autoren", "SECTION END")
    authors, reviewers = parse_people(" ".join(fragment_blocks(people))) if people else ([], [])

    slug = [p for p in urlparse(url).path.split("/") if p]  # the article id: its URL's last path segment
    article = Article(article_id=slug[-1] if slug else "index", url=url, layout=layout, title=_title(doc),
                      date=_date(doc), authors=authors, reviewers=reviewers, body_paragraphs=body, topics=_topics(doc),
                      teaser=element_text(teaser_el[0]) if teaser_el else "", references=_references(doc),
                      studies="\n\n".join(studies_blocks))
    if not body:
        raise PageSkipped("empty_body", "the page has a verdict box but no article text")

    problems = article.problems
    for raw in raw_claims:
        if "error" in raw:
            problems.append(raw["error"])
            continue
        try:
            verdict = (verdict_from_beweislage(raw["verdict_text"]) if raw.get("beweislage")
                       else verdict_from_text(raw["verdict_text"], raw["answer_index"]))
        except UnknownVerdict as exc:
            problems.append(f"unknown_verdict ({exc})")
            continue
        k = len(article.claims)
        article.claims.append(Claim(
            claim_id=f"{article.article_id}#{k}", article_id=article.article_id, url=url, claim_index=k, question=raw["question"],
            verdict_text=raw["verdict_text"],
            answer_index=verdict.answer_index if layout == "current" else None,  # the scale is the current layout's
            label=verdict.label, evidence_level=verdict.evidence_level, small_effect=verdict.small_effect,
            explanation=raw["explanation"], layout=layout))
    article.n_claims = len(article.claims)
    if not article.claims:
        raise PageSkipped("no_valid_claim", "; ".join(problems) or "verdict box without claims")
    return article
