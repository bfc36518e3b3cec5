"""The claims of a Medizin Transparent page read from its verdict boxes, each a :class:`RawClaim`: the current
layout's ``div.katechismus`` boxes (:func:`current_claims`) or the older rating tables (:func:`table_claims`)."""

from __future__ import annotations

import re
from typing import TypedDict

from lxml import etree

from medfc.healthfc.html_text import clean, element_segments, element_text, has_class


def _strip_label(text: str, label: str) -> str:
    return clean(re.sub(rf"^\s*{label}\s*:?", "", clean(text), flags=re.I))


def detect_layout(doc: etree._Element) -> str | None:
    """``current`` (``div.katechismus``), ``pre_2014`` (a rating table with "Beweislage"), ``2014_2017`` or None."""
    if doc.xpath(f"//div[{has_class('katechismus')}]"):
        return "current"
    tables = doc.xpath(f"//table[{has_class('table_rating')}]")
    if tables:
        labels = {label for t in tables for label, _ in _labelled(_table_segments(t))}
        return "pre_2014" if "beweislage" in labels else "2014_2017"
    return None


_LABELS = r"(Frage|Antwort|Erklärung|Erklaerung|Beweislage)\s*:\s*"
_BOX_LABEL = re.compile("^" + _LABELS, re.I)  # a label that opens a text
_ANY_LABEL = re.compile(r"(?<!\w)" + _LABELS, re.I)  # a label anywhere in a text
_FIELD_END = "\x00"  # a segment that ends the current field (a table row with a label we do not read)


def _labelled(segments: list[str]) -> list[tuple[str | None, str]]:
    """Text segments as (label, text): the text after "Frage:", "Antwort:", "Erklärung:" or "Beweislage:" carries that
    label (lower case), also where several share one segment; text before any label has None, a field end "end"."""
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
    """Claims of a rating table from labelled text in page order: each "Frage" starts a claim, a label met twice
    without one starts a claim without a question (reported); a pre-2014 "Beweislage" and its direction are joined
    with " | ", as the release writes them."""
    claims: list[dict[str, str]] = []
    field_name: str | None = None
    for label, text in _labelled(segments):
        if label == "end":
            field_name = None
            continue
        if label is not None:
            if label == "frage" or not claims or (label in claims[-1] and label != "erklärung"):
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
    """The last explanation among claims of one table or box goes to each of them without one of its own."""
    shared = next((c["erklärung"] for c in reversed(claims) if c.get("erklärung")), "")
    for c in claims:
        if not c.get("erklärung"):
            c["erklärung"] = shared


class RawClaim(TypedDict, total=False):
    """A claim of a page's verdict boxes before it is checked, or the ``error`` of a box without a question."""

    question: str
    verdict_text: str
    answer_index: int | None
    explanation: str
    beweislage: bool  # pre-2014: the verdict is a "Beweislage"
    error: str


def _box_claims(segments: list[str]) -> tuple[list[dict[str, str]], str]:
    """A current-layout verdict box read as text, as the real pages print it: "Frage:" and the question, the selected
    answer unlabelled (its scale index or text), then the whole scale, each option labelled "Antwort:" (only a lone
    one is the answer), then "Erklärung:". A box without question and answer (an unused one) is no claim. Returns the
    claims and the explanation an unused box gives ("" for none)."""
    rows: list[dict] = []  # frage, antwort, erklärung: texts; options: the answer scale's
    field_name: str | None = None

    def row() -> dict:
        rows.append({"frage": "", "antwort": "", "options": [], "erklärung": ""})
        return rows[-1]

    for label, text in _labelled(segments):
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
        elif label is not None:  # a field end, or a label a box does not use ("Beweislage"): not read, nor what follows
            field_name = None
            continue
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
                    f"{has_class('pods-post-page__content')} or {has_class('pods-post-page__study-detail')}")


def _explanation_after(boxes: list[etree._Element]) -> str:
    """An "Erklärung:" the page gives once after its verdict boxes (up to the body, studies, footnotes or a heading):
    a piece that starts with the label and those after it up to the next label; "" when none."""
    segments: list[str] = []
    for sib in boxes[-1].itersiblings():
        if not isinstance(sib.tag, str):
            continue
        if sib.xpath(f"boolean({_AFTER_BOXES_END})"):
            break
        segments += element_segments(sib)
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


def current_claims(doc: etree._Element) -> list[RawClaim]:
    """One claim per question of the page's ``div.katechismus`` boxes (by their inner classes, else as text), or an
    ``error`` for a box without a question; an explanation given once goes to each claim without one."""
    claims: list[RawClaim] = []
    boxes = doc.xpath(f"//div[{has_class('katechismus')}]")
    unused = ""  # an explanation in an unused box
    for box in boxes:
        q = box.xpath(f".//*[{has_class('katechismus__question')}]")
        a = box.xpath(f".//*[{has_class('katechismus__answer')}]")
        e = box.xpath(f".//*[{has_class('katechismus__explanation')}]")
        if q:
            question = _strip_label(element_text(q[0]), "Frage")
            explanation = _strip_label(element_text(e[0]), "Erklärung") if e else ""
            answer_text = _strip_label(element_text(a[0]), "Antwort") if a else ""
            raw_index = a[0].get("data-answer") if a else None
            for t in a[0].xpath(f".//*[{has_class('katechismus__answer-text')}]") if a else []:
                answer_text = element_text(t)
            found = [(question, answer_text, explanation, raw_index)]
        else:  # a box without the inner structure: its text pieces in order
            pieces, box_unused = _box_claims(element_segments(box))
            unused = unused or box_unused
            found = [(c["frage"], c["antwort"], c["erklärung"], None) for c in pieces]
        for question, answer_text, explanation, raw_index in found:
            if not question:
                claims.append({"error": "verdict_box_without_question"})
                continue
            raw = raw_index or answer_text
            index = int(raw) if raw and raw.strip().isdigit() else None
            answer_text = "" if index is not None and answer_text.strip().isdigit() else answer_text
            claims.append({"question": question, "verdict_text": answer_text, "answer_index": index, "explanation": explanation})
    lacking = [c for c in claims if "error" not in c and not c["explanation"]]
    if lacking:  # one explanation for the page's questions, in an unused box or after the boxes
        shared = unused or _explanation_after(boxes)
        for c in lacking:
            c["explanation"] = shared
    return claims


def _table_segments(table: etree._Element) -> list[str]:
    """A rating table's text in row order, each value led by its row's label ("Frage: …"); a row without a label
    continues the field above."""
    out: list[str] = []
    for tr in table.xpath(".//tr"):
        cells = tr.xpath("./td | ./th")
        if not cells:
            continue
        head = element_text(cells[0])
        m = _BOX_LABEL.match(head if head.endswith(":") else head + ":")
        if len(cells) >= 2 and m and m.end() >= len(head):  # the first cell holds the label alone
            label = head.rstrip(":").strip()
            values = [seg for cell in cells[1:] for seg in element_segments(cell)] or [""]
            repeated = _BOX_LABEL.match(values[0])  # the value cell repeats the label ("Frage: Frage: …")
            out.append(values[0] if repeated and repeated.group(1).lower() == label.lower() else f"{label}: {values[0]}".strip())
            out.extend(values[1:])
        elif _BOX_LABEL.match(head):  # label and value in one cell
            out.extend(seg for cell in cells for seg in element_segments(cell))
        elif not head and len(cells) >= 2:  # no label: the row continues the field above
            out.extend(seg for cell in cells[1:] for seg in element_segments(cell))
        else:  # a row of something else ("Stand: …", a note across the table): not part of any field
            out.append(_FIELD_END)
    return out


def table_claims(doc: etree._Element, layout: str) -> list[RawClaim]:
    """The claims of a ``2014_2017`` or ``pre_2014`` page's rating tables, or an ``error`` for one without a question;
    a pre-2014 claim's verdict is its "Beweislage", its explanation the answer."""
    claims: list[RawClaim] = []
    pre_2014 = layout == "pre_2014"
    verdict, explanation = ("beweislage", "antwort") if pre_2014 else ("antwort", "erklärung")
    for table in doc.xpath(f"//table[{has_class('table_rating')}]"):
        found = _claims_from_segments(_table_segments(table), beweislage=pre_2014)
        if not any(c.get("frage") for c in found):
            claims.append({"error": "verdict_box_without_question"})
            continue
        for c in found:
            if not c.get("frage"):
                claims.append({"error": "verdict_box_without_question"})
            else:
                claims.append({"question": c["frage"], "verdict_text": c.get(verdict, ""), "answer_index": None,
                               "explanation": c.get(explanation, ""), **({"beweislage": True} if pre_2014 else {})})
    return claims
