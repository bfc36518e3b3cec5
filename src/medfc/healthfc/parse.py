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
from typing import TypedDict
from urllib.parse import urlparse

import lxml.html
from lxml import etree

from medfc.healthfc.dates import parse_german_date
from medfc.healthfc.portal import TITLE_SUFFIX
from medfc.healthfc.records import ArticleRecord
from medfc.healthfc.verdicts import UnknownVerdict, verdict_from_beweislage, verdict_from_text

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

    def record(self) -> ArticleRecord:
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


# elements whose boundaries separate words: text on either side of them is never glued together
_BREAK_TAGS = _BLOCK_TAGS | {"br", "div", "tr", "table", "ul", "ol", "section", "article", "header", "footer"}


def _segments(el: etree._Element | None, drop_sup: bool = False) -> list[str]:
    """The element's text in document order, cut at block boundaries and ``<br>`` (inline markup such
    as ``<em>`` or ``<strong>`` stays inside its segment); empty segments dropped, whitespace cleaned."""
    if el is None:
        return []
    out: list[str] = [""]

    def cut() -> None:
        if out[-1].strip():
            out.append("")

    def walk(node: etree._Element) -> None:
        if not isinstance(node.tag, str):  # a comment or processing instruction: only its tail is text
            out[-1] += node.tail or ""
            return
        if drop_sup and node.tag == "sup":
            out[-1] += node.tail or ""
            return
        brk = node.tag in _BREAK_TAGS
        if brk:
            cut()
        out[-1] += node.text or ""
        for child in node:
            walk(child)
        if brk:
            cut()
        out[-1] += node.tail or ""

    out[-1] += el.text or ""
    for child in el:
        walk(child)
    return [t for t in (clean(x) for x in out) if t]


def _text(el: etree._Element | None, drop_sup: bool = False) -> str:
    """The element's text, with a space wherever a block boundary or ``<br>`` separates two words."""
    return " ".join(_segments(el, drop_sup))


def _has_class(cls: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {cls} ')"


def _blocks(nodes: list[etree._Element]) -> list[str]:
    """Paragraph texts of a node list: block elements in document order, footnote marks dropped."""
    out: list[str] = []
    for node in nodes:
        if not isinstance(node.tag, str):
            continue  # comments, processing instructions
        if node.tag in _BLOCK_TAGS:
            candidates = [node]
        else:
            candidates = [e for e in node.iter() if isinstance(e.tag, str) and e.tag in _BLOCK_TAGS]
            # keep only innermost-outermost: skip blocks nested in other collected blocks (li in blockquote)
            candidates = [e for e in candidates if not any(a in candidates for a in e.iterancestors())]
            if not candidates and clean(node.text_content()):
                candidates = [node]
        for c in candidates:
            t = _text(c, drop_sup=True)  # footnote marks (<sup>) are left out, the text after them kept
            if t:
                out.append(t)
    return out


def _comment_with(words: str) -> str:
    """A regex for an HTML comment that contains ``words`` ("Studien im Detail START" counts too)."""
    return rf"<!--(?:(?!-->).)*?(?<!\w){re.escape(words)}(?!\w)(?:(?!-->).)*?-->"


def _between_comments(html: str, start: str, end: str) -> str | None:
    """The HTML between the first comment containing ``start`` and the next one containing ``end`` or
    ``start`` again (a section closed by its own marker, "Studien im Detail END")."""
    m = re.search(rf"{_comment_with(start)}(.*?)(?:{_comment_with(end)}|{_comment_with(start)})", html, re.S | re.I)
    return m.group(1) if m else None


def _fragment_blocks(fragment: str) -> list[str]:
    if not fragment or not fragment.strip():
        return []
    root = lxml.html.fragment_fromstring(fragment, create_parent="div")
    return _blocks(list(root)) or ([clean(root.text_content())] if clean(root.text_content()) else [])


_NAME_SPLIT = re.compile(r"\s*,\s*|\s+und\s+|\s*&\s*|\s*;\s*")
_ROLE = re.compile(r"\b(AutorInnen|Autorinnen|AutorIn|Autorin|Autoren|Autor|ReviewerInnen|Reviewerinnen|ReviewerIn|Reviewerin|Reviewer|Review"
                   r"|Redaktion)\s*:", re.I)  # the colon is required: "Review" and "Redaktion" also occur inside names


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
        labels = {label for t in tables for label, _ in _labelled(_table_segments(t))}
        return "pre_2014" if "beweislage" in labels else "2014_2017"
    return None


_LABELS = r"(Frage|Antwort|Erklärung|Erklaerung|Beweislage)\s*:\s*"
_BOX_LABEL = re.compile("^" + _LABELS, re.I)  # a label that opens a text
_ANY_LABEL = re.compile(r"(?<!\w)" + _LABELS, re.I)  # a label anywhere in a text
_FIELD_END = "\x00"  # a segment that ends the current field (a table row with a label we do not read)


def _labelled(segments: list[str]) -> list[tuple[str | None, str]]:
    """Text segments as (label, text): the text after "Frage:", "Antwort:", "Erklärung:" or "Beweislage:"
    carries that label (lower case, "erklärung" for both spellings), also where several labels share
    one segment; its text may be empty (it then follows in the next segments). Text before any label has
    none; the field-end marker becomes ("end", "")."""
    out: list[tuple[str | None, str]] = []
    for seg in segments:
        if seg == _FIELD_END:
            out.append(("end", ""))
            continue
        marks = list(_ANY_LABEL.finditer(seg))
        if not marks or marks[0].start() > 0:
            out.append((None, seg[: marks[0].start()].strip() if marks else seg))
        for k, m in enumerate(marks):
            stop = marks[k + 1].start() if k + 1 < len(marks) else len(seg)
            out.append((m.group(1).lower().replace("erklaerung", "erklärung"), seg[m.end():stop].strip()))
    return out


def _claims_from_segments(segments: list[str], *, beweislage: bool) -> list[dict[str, str]]:
    """Claims of a rating table from labelled text in page order: each "Frage" starts a claim, and the text
    after a label up to the next label is that field's value (a pre-2014 "Beweislage" and its direction
    joined with " | ", as the release writes them; a current-layout box is read by :func:`_box_claims`). A label
    met twice without a "Frage" between starts a claim without a question (reported, never merged). An
    explanation given once after several questions (one table, several claims) belongs to every claim
    without one of its own."""
    claims: list[dict[str, str]] = []
    field_name: str | None = None
    for label, text in _labelled(segments):
        if label == "end":
            field_name = None
            continue
        if label == "frage":
            claims.append({})
            field_name = "frage"
        elif label is not None:
            if not claims or (label in claims[-1] and label != "erklärung"):
                claims.append({})
            field_name = label
        elif field_name is None:
            continue
        if text:
            current = claims[-1].get(field_name, "")
            sep = " | " if beweislage and field_name == "beweislage" else " "
            claims[-1][field_name] = f"{current}{sep}{text}" if current else text
        else:
            claims[-1].setdefault(field_name, "")
    _share_explanation(claims)
    return claims


def _share_explanation(claims: list[dict[str, str]]) -> None:
    """The last explanation given among claims read from one table or one box goes to each of them
    without one of its own (several questions, one explanation)."""
    shared = next((c["erklärung"] for c in reversed(claims) if c.get("erklärung")), "")
    for c in claims:
        if not c.get("erklärung"):
            c["erklärung"] = shared


def _answer_index(raw: str | None) -> int | None:
    return int(raw) if raw and raw.strip().isdigit() else None


class _BoxRow(TypedDict):
    """A question of a verdict box as read (:func:`_box_claims`): its fields' texts and the answer scale's options."""

    frage: str
    antwort: str
    options: list[str]
    erklärung: str


class _RawClaim(TypedDict, total=False):
    """A claim of a page's verdict boxes before it is checked, or the ``error`` of a box without a question."""

    question: str
    verdict_text: str
    answer_index: int | None
    explanation: str
    beweislage: bool  # pre-2014: the verdict is a "Beweislage"
    error: str


def _box_claims(segments: list[str]) -> tuple[list[dict[str, str]], str]:
    """A current-layout verdict box read as text, as the real pages print it without the inner classes the
    demo has: "Frage:" and the question, the selected answer (its index into the answer scale, e.g. "1" or
    "11", or its text) with no label, then the whole answer scale with every option labelled "Antwort:",
    then, in the box or after the boxes, "Erklärung:" and the explanation. Each "Frage" starts a claim;
    the scale's "Antwort:" options are not answers (only a single "Antwort:" under a question that has no
    unlabelled answer is that question's answer). A box with an empty question and no selected answer
    (the pages print three boxes, the unused ones empty) is no claim. An explanation given once after
    several questions of the box belongs to each of them without one of its own. Returns the claims
    (question, answer, explanation) and the explanation an unused box gives ("" for none), which is the
    page's for every claim without one (:func:`_current_claims`)."""
    rows: list[_BoxRow] = []
    field_name: str | None = None

    def row() -> _BoxRow:
        rows.append({"frage": "", "antwort": "", "options": [], "erklärung": ""})
        return rows[-1]

    for label, text in _labelled(segments):
        if label == "end":
            field_name = None
            continue
        if label == "frage":
            row()
            field_name = "frage"
        elif label == "antwort":
            (rows[-1] if rows else row())["options"].append("")
            field_name = "option"
        elif label == "erklärung":
            if not rows:
                row()
            field_name = "erklärung"
        elif label is not None:  # a label a verdict box does not use ("Beweislage"): not read
            field_name = None
        elif field_name == "frage" and rows[-1]["frage"]:
            field_name = "antwort"
        elif field_name is None:
            continue
        if not text:
            continue
        r = rows[-1]
        if field_name == "option":
            r["options"][-1] = f"{r['options'][-1]} {text}".strip()
        else:
            r[field_name] = f"{r[field_name]} {text}".strip()
    claims, unused = [], ""
    for r in rows:
        answer = r["antwort"] or (r["options"][0] if len(r["options"]) == 1 else "")
        if r["frage"] or answer:
            claims.append({"frage": r["frage"], "antwort": answer, "erklärung": r["erklärung"]})
        else:
            unused = unused or r["erklärung"]
    _share_explanation(claims)
    return claims, unused


# where the text after the verdict boxes ends: the article's body, its studies, its footnotes, a heading
_AFTER_BOXES_END = (f"self::h1 or self::h2 or self::h3 or @id='collapseFussnote' or "
                    f"{_has_class('pods-post-page__content')} or {_has_class('pods-post-page__study-detail')}")


def _explanation_after(boxes: list[etree._Element]) -> str:
    """An "Erklärung:" the page gives once after its verdict boxes, in their container (the release's
    scraper reads the container's text): the text of the elements after the last box, up to the article's
    body, studies or footnotes or a heading, read as one stream; a piece that starts with the label, and
    the pieces after it up to the next label. "" when there is none (a label inside a sentence, "Eine
    mögliche Erklärung: …", is no explanation)."""
    segments: list[str] = []
    for sib in boxes[-1].itersiblings():
        if not isinstance(sib.tag, str):
            continue
        if sib.xpath(f"boolean({_AFTER_BOXES_END})"):
            break
        segments += _segments(sib)
    parts: list[str] | None = None
    for seg in segments:
        (label, text), *rest = _labelled([seg])
        if parts is None:
            if label == "erklärung":  # the label opens the piece
                parts = [text]
            continue
        if label is not None or rest:  # the next label ends it
            break
        parts.append(text)
    return " ".join(p for p in parts or [] if p)


def _current_claims(doc: etree._Element) -> list[_RawClaim]:
    claims: list[_RawClaim] = []
    boxes = doc.xpath(f"//div[{_has_class('katechismus')}]")
    unused = ""  # an explanation in an unused box: the page's, for every claim without one of its own
    for box in boxes:
        q = box.xpath(f".//*[{_has_class('katechismus__question')}]")
        a = box.xpath(f".//*[{_has_class('katechismus__answer')}]")
        e = box.xpath(f".//*[{_has_class('katechismus__explanation')}]")
        if q:
            question = _strip_label(_text(q[0]), "Frage")
            explanation = _strip_label(_text(e[0]), "Erklärung") if e else ""
            answer_text = _strip_label(_text(a[0]), "Antwort") if a else ""
            raw_index = a[0].get("data-answer") if a else None
            for t in a[0].xpath(f".//*[{_has_class('katechismus__answer-text')}]") if a else []:
                answer_text = _text(t)
            found = [(question, answer_text, explanation, raw_index)]
        else:  # a box without the inner structure: its text pieces in order
            pieces, box_unused = _box_claims(_segments(box))
            unused = unused or box_unused
            found = [(c["frage"], c["antwort"], c["erklärung"], None) for c in pieces]
        for question, answer_text, explanation, raw_index in found:
            if not question:
                claims.append({"error": "verdict_box_without_question"})
                continue
            # the selected answer may be given as its index into the answer scale, as text
            index = _answer_index(raw_index) if raw_index else _answer_index(answer_text)
            answer_text = "" if index is not None and answer_text.strip().isdigit() else answer_text
            claims.append({"question": question, "verdict_text": answer_text, "answer_index": index, "explanation": explanation})
    lacking = [c for c in claims if "error" not in c and not c["explanation"]]
    if lacking:  # one explanation for the page's questions, in an unused box or after the boxes
        shared = unused or _explanation_after(boxes)
        for c in lacking:
            c["explanation"] = shared
    return claims


def _table_segments(table: etree._Element) -> list[str]:
    """A rating table's text in row order, each value led by its row's label ("Frage: …"), also where
    label and value share one cell; a row without a label continues the field of the row before."""
    out: list[str] = []
    for tr in table.xpath(".//tr"):
        cells = tr.xpath("./td | ./th")
        if not cells:
            continue
        head = _text(cells[0])
        m = _BOX_LABEL.match(head if head.endswith(":") else head + ":")
        if len(cells) >= 2 and m and m.end() >= len(head):  # the first cell holds the label alone
            label = head.rstrip(":").strip()
            values = [seg for cell in cells[1:] for seg in _segments(cell)] or [""]
            repeated = _BOX_LABEL.match(values[0])  # the value cell repeats the label ("Frage: Frage: …")
            out.append(values[0] if repeated and repeated.group(1).lower() == label.lower() else f"{label}: {values[0]}".strip())
            out.extend(values[1:])
        elif _BOX_LABEL.match(head):  # label and value in one cell
            out.extend(seg for cell in cells for seg in _segments(cell))
        elif not head and len(cells) >= 2:  # no label: the row continues the field above
            out.extend(seg for cell in cells[1:] for seg in _segments(cell))
        else:  # a row of something else ("Stand: …", a note across the table): not part of any field
            out.append(_FIELD_END)
    return out


def _table_claims(doc: etree._Element, layout: str) -> list[_RawClaim]:
    claims: list[_RawClaim] = []
    pre_2014 = layout == "pre_2014"
    for table in doc.xpath(f"//table[{_has_class('table_rating')}]"):
        found = _claims_from_segments(_table_segments(table), beweislage=pre_2014)
        if not any(c.get("frage") for c in found):
            claims.append({"error": "verdict_box_without_question"})
            continue
        for c in found:
            if not c.get("frage"):
                claims.append({"error": "verdict_box_without_question"})
            elif pre_2014:
                claims.append({"question": c["frage"], "verdict_text": c.get("beweislage", ""), "answer_index": None,
                               "explanation": c.get("antwort", ""), "beweislage": True})
            else:
                claims.append({"question": c["frage"], "verdict_text": c.get("antwort", ""), "answer_index": None,
                               "explanation": c.get("erklärung", "")})
    return claims


def _old_body(doc: etree._Element) -> list[str]:
    tables = doc.xpath(f"//table[{_has_class('table_rating')}]")
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
    return _blocks(nodes)


def _ends_with_html_close(html: str) -> bool:
    """Whether the page ends with ``</html>``, after the comments WordPress cache and optimisation plugins
    append behind it ("<!-- Cached page generated by WP-Super-Cache … -->"): a cut body does not."""
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
