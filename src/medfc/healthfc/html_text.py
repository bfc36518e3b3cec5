"""Text out of a Medizin Transparent page's HTML, for :mod:`medfc.healthfc.parse` and
:mod:`medfc.healthfc.verdict_boxes`."""

from __future__ import annotations

import re

import lxml.html
from lxml import etree

_WS = re.compile(r"\s+")
_BLOCK_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "blockquote", "td", "th", "dd", "dt", "figcaption"}


def clean(text: str | None) -> str:
    """``text`` with each run of whitespace one space, stripped ("" for None)."""
    return _WS.sub(" ", text or "").strip()


# elements whose boundaries separate words: text on either side of them is never glued together
_BREAK_TAGS = _BLOCK_TAGS | {"br", "div", "tr", "table", "ul", "ol", "section", "article", "header", "footer"}


def element_segments(el: etree._Element, drop_sup: bool = False) -> list[str]:
    """The element's text in document order, cut at block boundaries and ``<br>``; empty segments dropped."""
    out: list[str] = [""]

    def cut() -> None:
        if out[-1].strip():
            out.append("")

    def walk(node: etree._Element) -> None:
        if not isinstance(node.tag, str) or (drop_sup and node.tag == "sup"):  # a comment, PI or dropped <sup>: only its tail
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


def element_text(el: etree._Element, drop_sup: bool = False) -> str:
    """The element's text, with a space wherever a block boundary or ``<br>`` separates two words."""
    return " ".join(element_segments(el, drop_sup))


def has_class(cls: str) -> str:
    """An XPath predicate: the element's ``class`` attribute holds ``cls`` as one of its words."""
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {cls} ')"


def block_texts(nodes: list[etree._Element]) -> list[str]:
    """Paragraph texts of a node list: block elements in document order, footnote marks dropped."""
    out: list[str] = []
    for node in nodes:
        if not isinstance(node.tag, str):
            continue  # comments, processing instructions
        if node.tag in _BLOCK_TAGS:
            candidates = [node]
        else:
            candidates = [e for e in node.iter() if isinstance(e.tag, str) and e.tag in _BLOCK_TAGS]
            candidates = [e for e in candidates if not any(a in candidates for a in e.iterancestors())]
            if not candidates and clean(node.text_content()):
                candidates = [node]
        out.extend(t for c in candidates if (t := element_text(c, drop_sup=True)))
    return out


def _comment_with(words: str) -> str:
    """A regex for an HTML comment that contains ``words`` ("Studien im Detail START" counts too)."""
    return rf"<!--(?:(?!-->).)*?(?<!\w){re.escape(words)}(?!\w)(?:(?!-->).)*?-->"


def between_comments(html: str, start: str, end: str) -> str | None:
    """The HTML between the first comment containing ``start`` and the next one containing ``end`` or
    ``start`` again (a section closed by its own marker, "Studien im Detail END")."""
    m = re.search(rf"{_comment_with(start)}(.*?)(?:{_comment_with(end)}|{_comment_with(start)})", html, re.S | re.I)
    return m.group(1) if m else None


def fragment_blocks(fragment: str) -> list[str]:
    """The paragraph texts of an HTML fragment (:func:`block_texts`), else its whole text as one; [] when empty."""
    if not fragment or not fragment.strip():
        return []
    root = lxml.html.fragment_fromstring(fragment, create_parent="div")
    return block_texts(list(root)) or ([clean(root.text_content())] if clean(root.text_content()) else [])
