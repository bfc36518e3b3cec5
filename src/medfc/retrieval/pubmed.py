"""PubMed E-utilities: efetch (batched, rate-limited, cached per PMID), esearch (PMIDs for a query,
by relevance), and the PubmedArticleSet parser."""

from __future__ import annotations

import logging
import os
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypedDict

from medfc.common.http import AnswerError, HttpClient, answer_says
from medfc.common.io import InputFileError, atomic_write
from medfc.common.jsontypes import JSONValue
from medfc.common.progress import progress_bar
from medfc.common.report import SkipReport

log = logging.getLogger(__name__)

EUTILS_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/"


def eutils_urls(base: str = EUTILS_URL) -> dict[str, str]:
    """The ``url`` and ``esearch_url`` of :class:`PubmedFetcher` under an E-utilities base address (``…/eutils/``)."""
    base = base if base.endswith("/") else base + "/"
    return {"url": base + "efetch.fcgi", "esearch_url": base + "esearch.fcgi"}


GET_MAX_IDS = 200
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
_MONTH_BY_NAME = {m.lower(): m for m in MONTHS}
XML_HEADER = '<?xml version="1.0" ?>\n'
_ARTICLE_TAGS = ("PubmedArticle", "PubmedBookArticle")


#: Layout is ASCII whitespace holding a line break (pretty-printed XML); any other space character is text.
_ASCII_WS = " \t\r\n"
_LAYOUT_INSIDE = re.compile(r"[ \t\r\n]*[\r\n][ \t\r\n]*")
_LINE_BREAK = re.compile(r"\r\n?|\n")
_INDENT_BEFORE_TAG = re.compile(r"(?:\r\n?|\n)([ \t]*)$")


def _child_indent(nodes: Sequence[str]) -> str | None:
    """The (most common) indentation before an element's child tags, from the text nodes before them; None if none."""
    seen = Counter(m.group(1) for m in map(_INDENT_BEFORE_TAG.search, nodes) if m)
    return max(seen, key=lambda i: (seen[i], -len(i))) if seen else None


def _dedent(line: str, indent: str | None) -> str:
    """What follows the pretty-printer's indentation on a line (nothing when the indentation is not known)."""
    return line[len(indent):] if indent is not None and line.startswith(indent) else ""


def _unlayout(node: str, indent: str | None) -> str:
    """One text node without its layout: a line break beside a tag goes with the ``indent`` after it, the text's own
    spaces stay, a line break inside the text is one space."""
    if not node or ("\n" not in node and "\r" not in node):
        return node
    core = node.strip(_ASCII_WS)
    if not core:  # only whitespace between two tags: the text lines between the first and the last break
        lines = _LINE_BREAK.split(node)
        return lines[0] + "".join(_dedent(line, indent) for line in lines[1:-1])
    start, end = node.index(core[0]), node.rindex(core[-1]) + 1
    lead, body, trail = node[:start], node[start:end], node[end:]
    if "\n" in lead or "\r" in lead:
        lead = _dedent(_LINE_BREAK.split(lead)[-1], indent)
    if "\n" in trail or "\r" in trail:
        trail = _LINE_BREAK.split(trail)[0]
    return lead + _LAYOUT_INSIDE.sub(" ", body) + trail


def _text_of(elem: ET.Element) -> str:
    """The text nodes under ``elem`` (its own tail left out) without layout, in document order."""
    children = list(elem)
    indent = _child_indent([elem.text or ""] + [c.tail or "" for c in children[:-1]])
    parts = [_unlayout(elem.text or "", indent)]
    for child in children:
        if isinstance(child.tag, str):  # comments and processing instructions hold no text; their tail does
            parts.append(_text_of(child))
        parts.append(_unlayout(child.tail or "", indent))
    return "".join(parts)


def _flat(elem: ET.Element | None) -> str:
    """All text under an element as PubMed has it: inline markup removed (``β<sub>2</sub>`` → "β2"), layout gone."""
    return "" if elem is None else _text_of(elem).strip(_ASCII_WS)


def _month(value: str | None) -> str | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        n = int(value)
        return MONTHS[n - 1] if 1 <= n <= 12 else None
    return _MONTH_BY_NAME.get(value[:3].lower())


class PubmedRecord(TypedDict):
    """One article's record (:func:`parse_article`)."""

    pmid: str
    kind: str  # "article" or "book"
    title: str | None
    abstract: str | None
    abstract_words: int
    year: int | None
    month: str | None
    day: int | None
    season: str | None
    publication_date: str | None
    mesh_headings: list[str]
    publication_types: list[str]
    nct_ids: list[str]


def parse_pub_date(pub_date: ET.Element | None) -> dict[str, int | str | None]:
    """Year/Month/Day, Season or MedlineDate → {"year", "month", "day", "season", "publication_date"}, the last as the
    CliniFact release writes it: "2021-Dec-21", "2008-Sep-N/A", "2007-N/A-N/A"."""
    year = month = day = season = None
    if pub_date is not None:
        y = pub_date.findtext("Year")
        if y and y.strip().isdigit():
            year = int(y.strip())
            month = _month(pub_date.findtext("Month"))
            d = pub_date.findtext("Day")
            day = int(d) if d and d.strip().isdigit() else None
            season = pub_date.findtext("Season")
        else:
            medline = pub_date.findtext("MedlineDate") or ""
            if m := re.search(r"(\d{4})(?:\s+([A-Za-z]{3}))?", medline):
                year = int(m.group(1))
                month = _month(m.group(2)) if m.group(2) else None
    if year is None:
        return {"year": None, "month": None, "day": None, "season": season, "publication_date": None}
    date = f"{year}-{month or 'N/A'}-{f'{day:02d}' if (day and month) else 'N/A'}"
    return {"year": year, "month": month, "day": day if month else None, "season": season, "publication_date": date}


def _abstract(abstract: ET.Element | None) -> str | None:
    if abstract is None:
        return None
    parts = []
    for at in abstract.findall("AbstractText"):
        text = _flat(at)
        if not text:
            continue
        label = (at.get("Label") or "").strip(_ASCII_WS)
        parts.append(f"{label}: {text}" if label else text)
    return "\n".join(parts) or None


def nct_ids(article: ET.Element) -> list[str]:
    """The ClinicalTrials.gov accession numbers of an Article's DataBankList, in order, each once."""
    banks = [bank for bank in article.findall("DataBankList/DataBank")
             if (bank.findtext("DataBankName") or "").strip(_ASCII_WS) == "ClinicalTrials.gov"]
    numbers = ((acc.text or "").strip(_ASCII_WS) for bank in banks
               for acc in bank.findall("AccessionNumberList/AccessionNumber"))
    return list(dict.fromkeys(n for n in numbers if n))


def parse_article(elem: ET.Element) -> PubmedRecord:
    """One PubmedArticle or PubmedBookArticle element → record."""
    if elem.tag == "PubmedBookArticle":
        doc = elem.find("BookDocument")
        doc = doc if doc is not None else ET.Element("BookDocument")
        book = doc.find("Book")
        title = _flat(doc.find("ArticleTitle")) or _flat(book.find("BookTitle") if book is not None else None)
        date = parse_pub_date(book.find("PubDate") if book is not None else None)
        pmid = (doc.findtext("PMID") or "").strip()
        abstract = _abstract(doc.find("Abstract"))
        pub_types = [_flat(p) for p in doc.findall("PublicationType")]
        mesh: list[str] = []
        trials: list[str] = []
        kind = "book"
    else:
        mc = elem.find("MedlineCitation")
        mc = mc if mc is not None else ET.Element("MedlineCitation")
        art = mc.find("Article")
        art = art if art is not None else ET.Element("Article")
        pmid = (mc.findtext("PMID") or "").strip()
        title = _flat(art.find("ArticleTitle"))
        abstract = _abstract(art.find("Abstract"))
        date = parse_pub_date(art.find("Journal/JournalIssue/PubDate"))
        if date["year"] is None:
            date = parse_pub_date(art.find("ArticleDate"))
        pub_types = [_flat(p) for p in art.findall("PublicationTypeList/PublicationType")]
        mesh = [_flat(h.find("DescriptorName")) for h in mc.findall("MeshHeadingList/MeshHeading") if h.find("DescriptorName") is not None]
        trials = nct_ids(art)
        kind = "article"
    return {"pmid": pmid, "kind": kind, "title": title or None, "abstract": abstract,
            "abstract_words": len(abstract.split()) if abstract else 0, **date,
            "mesh_headings": mesh, "publication_types": pub_types, "nct_ids": trials}


class PubmedXmlError(InputFileError):
    """A PubMed document that is not well-formed XML: ``path`` (or what the text came from), ``line``, ``message``."""


def _root(xml: bytes | str, source: str) -> ET.Element:
    try:
        return ET.fromstring(xml.encode("utf-8") if isinstance(xml, str) else xml)
    except ET.ParseError as exc:
        line, column = getattr(exc, "position", (None, None))
        reason = re.sub(r": line \d+, column \d+$", "", str(exc))
        raise PubmedXmlError(source, line, f"not well-formed XML: {reason} (column {column})") from exc


def parse_pubmed_xml(xml: bytes | str, source: str = "PubMed XML") -> list[PubmedRecord]:
    """Every article of a PubmedArticleSet document; :class:`PubmedXmlError` (``source``, line) if not well-formed."""
    return [parse_article(e) for e in _root(xml, source) if e.tag in _ARTICLE_TAGS]


def split_article_set(xml: bytes | str, source: str = "efetch answer") -> dict[str, bytes]:
    """PubmedArticleSet → {pmid: a one-article PubmedArticleSet document} (the per-PMID cache unit)."""
    out: dict[str, bytes] = {}
    for elem in _root(xml, source):
        if elem.tag not in _ARTICLE_TAGS or not (pmid := parse_article(elem)["pmid"]):
            continue
        body = ET.tostring(elem, encoding="unicode")
        out[pmid] = (XML_HEADER + "<PubmedArticleSet>\n" + body.strip() + "\n</PubmedArticleSet>\n").encode("utf-8")
    return out


def check_esearch(doc: JSONValue) -> None:
    """An esearch JSON answer, or AnswerError: ``esearchresult.ERROR`` (with HTTP 200) and an answer without an
    ``idlist`` are retried, NCBI's ``{"error": …}`` is refused; an empty ``idlist`` means nothing found."""
    if not isinstance(doc, dict):
        raise AnswerError(f"the answer is a JSON {type(doc).__name__}, not an object", retryable=False)
    res = doc.get("esearchresult")
    if not isinstance(res, dict):
        if said := answer_says(doc, "error", "message"):
            raise AnswerError(f"E-utilities error: {said}", retryable="rate limit" in said.lower(), status=400)
        raise AnswerError("an esearch answer without 'esearchresult'", retryable=True)
    if res.get("ERROR"):
        raise AnswerError(f"E-utilities error: {answer_says(res, 'ERROR')}", retryable=True)
    if not isinstance(res.get("idlist"), list):
        raise AnswerError("an esearch answer without 'esearchresult.idlist'", retryable=True)


def check_efetch(raw: bytes) -> None:
    """An efetch answer, or AnswerError (retried): not a PubmedArticleSet (``<ERROR>``, an HTML page) or cut short."""
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as exc:
        head = raw.lstrip()[:15].lower()
        what = "an HTML page" if head.startswith((b"<!doctype html", b"<html")) else f"not well-formed XML ({exc})"
        raise AnswerError(f"the efetch answer is {what}, not a PubmedArticleSet", retryable=True) from None
    if root.tag != "PubmedArticleSet":
        error = answer_says(root.findtext("ERROR") or root.findtext(".//ERROR"))
        raise AnswerError(f"E-utilities error: {error}" if error else f"the efetch answer is a <{root.tag}>, not a PubmedArticleSet",
                          retryable=True)


class MissingContactEmail(RuntimeError):
    """No contact e-mail for NCBI: a configuration error that stops the run (never a failed search)."""


def is_pmid(value: str) -> bool:
    """Whether ``value`` is a PMID: ASCII digits only (what may become a cache file's name)."""
    return value.isascii() and value.isdigit()


class PubmedFetcher:
    """efetch in batches (GET up to 200 ids, POST above), ≤3 req/s (10 with an API key), cached per PMID as
    ``<pmid>.xml``; ``offline=True`` never asks NCBI."""

    def __init__(self, cache_dir: str | os.PathLike, api_key: str | None = None, tool: str = "medfc", email: str | None = None,
                 batch_size: int = GET_MAX_IDS, url: str = EUTILS_URL + "efetch.fcgi",
                 esearch_url: str = EUTILS_URL + "esearch.fcgi", http: HttpClient | None = None,
                 offline: bool = False, requests_per_second: float | None = None, extra_cache_dirs: Sequence[str | os.PathLike] = (),
                 **http_kwargs: Any):
        self.cache_dir = Path(cache_dir)
        self.extra_cache_dirs = [Path(p) for p in extra_cache_dirs]
        self.api_key = api_key if api_key is not None else os.environ.get("NCBI_API_KEY") or None
        self.email = email if email is not None else os.environ.get("NCBI_EMAIL") or None
        self.batch_size = max(1, int(batch_size))
        self.tool, self.url, self.esearch_url, self.offline = tool, url, esearch_url, offline
        limit = 10.0 if self.api_key else 3.0  # NCBI's limits: 3 requests/s without an API key, 10 with one
        rate = min(requests_per_second or limit, limit)
        if requests_per_second and requests_per_second > limit:
            log.warning("PubMed: %g requests/s asked for, but NCBI allows %g %s an API key: using %g",
                        requests_per_second, limit, "with" if self.api_key else "without", limit)
        self.http = http or HttpClient(cache_dir=None, rate=rate, **http_kwargs)

    def cached_path(self, pmid: str) -> Path | None:
        if not is_pmid(pmid):
            return None
        return next((p for d in [self.cache_dir, *self.extra_cache_dirs] if (p := d / f"{pmid}.xml").exists()), None)

    def _params(self) -> dict[str, str]:
        """The parameters of every request; NCBI asks each to carry the tool and a contact e-mail."""
        if not self.email:
            raise MissingContactEmail("PubMed E-utilities requests must carry a contact e-mail (NCBI's usage policy): set "
                             "clinifact.pubmed.email (medsnip.retrieval.pubmed.email for MedSNIP's searches, healthfc.retrieval.pubmed.email "
                             "for HealthFC's open-domain evidence) or NCBI_EMAIL, "
                             "or read only cached records (clinifact.pubmed.offline: true)")
        key = {"api_key": self.api_key} if self.api_key else {}
        return {"db": "pubmed", "retmode": "xml", "tool": self.tool, "email": self.email, **key}

    def _fetch_batch(self, ids: list[str]) -> bytes:
        params = {**self._params(), "id": ",".join(ids)}
        if len(ids) <= GET_MAX_IDS:
            return self.http.fetch("GET", self.url, params, kind="bytes", use_cache=False, check=check_efetch)
        return self.http.fetch("POST", self.url, data=params, kind="bytes", use_cache=False, check=check_efetch)

    def esearch(self, term: str, retmax: int, sort: str = "relevance") -> list[str]:
        """PMIDs matching ``term`` (at most ``retmax``, in ``sort`` order); not cached (the caller caches per query)."""
        params = {**self._params(), "term": term, "retmax": str(int(retmax)), "sort": sort, "retmode": "json"}
        data = self.http.get_json(self.esearch_url, params, use_cache=False, check=check_esearch)
        return [str(x) for x in ((data or {}).get("esearchresult") or {}).get("idlist") or []]

    def fetch(self, pmids: Iterable[str], report: SkipReport | None = None, progress: bool = True) -> dict[str, Path]:
        """Make sure every PMID is cached; return {pmid: cache file} for those that exist."""
        wanted = []
        for p in dict.fromkeys(str(p).strip() for p in pmids if str(p).strip()):
            if is_pmid(p):
                wanted.append(p)
                continue
            if report is not None:
                report.skip(p, "pmid_not_digits", "a PMID is ASCII digits")
            else:
                log.warning("PubMed: %r is not a PMID (digits only): skipped", p)
        have = {p: self.cached_path(p) for p in wanted}
        missing = [p for p, path in have.items() if path is None]
        if report is not None:
            report.count("pmids_cached", len(wanted) - len(missing))
        if self.offline:
            for p in missing if report is not None else []:
                report.skip(p, "pmid_not_cached_offline")
            missing = []
        have.update(self._fetch_missing(missing, report, progress))
        return {p: path for p, path in have.items() if path is not None}

    def _fetch_missing(self, missing: list[str], report: SkipReport | None, progress: bool) -> dict[str, Path]:
        """efetch ``missing`` in batches into the cache (a file there is replaced); {pmid: file} of those returned."""
        got: dict[str, Path] = {}
        batches = [missing[i : i + self.batch_size] for i in range(0, len(missing), self.batch_size)]
        for batch in progress_bar(batches, total=len(batches), desc="efetch", enabled=progress and len(batches) > 1):
            xml = self._fetch_batch(batch)
            if report is not None:
                report.count("efetch_requests")
            where = f"efetch answer for {len(batch)} PMIDs from {batch[0]}"
            articles = split_article_set(xml, source=where)
            asked = set(batch)
            for pmid in [p for p in articles if p not in asked]:  # never stored under its name, nor returned
                del articles[pmid]
                if report is not None:
                    report.skip(pmid, "record_not_asked_for", f"in the {where}")
                else:
                    log.warning("PubMed: the %s holds PMID %r, not asked for: dropped", where, pmid)
            for pmid, body in articles.items():
                path = self.cache_dir / f"{pmid}.xml"
                atomic_write(path, body)
                got[pmid] = path
            for p in batch:
                if p not in articles and report is not None:
                    report.skip(p, "pmid_not_returned")
            if report is not None:
                report.count("pmids_fetched", sum(p in articles for p in batch))
        return got

    @staticmethod
    def _read(pmid: str, path: Path) -> PubmedRecord | None:
        """The record of ``pmid`` in its cache file (None if the file holds none); PubmedXmlError naming the file."""
        return next((r for r in parse_pubmed_xml(path.read_bytes(), source=str(path)) if r["pmid"] == pmid), None)

    def records(self, pmids: Iterable[str], report: SkipReport | None = None, progress: bool = True) -> Iterator[PubmedRecord]:
        """Parsed records for the PMIDs (fetching what is missing); those without abstract are reported, not dropped. A
        cached file that is not well-formed XML is fetched again, or skipped (``cache_file_unreadable``)."""
        broken: dict[str, PubmedXmlError] = {}
        for pmid, path in self.fetch(pmids, report=report, progress=progress).items():
            try:
                rec = self._read(pmid, path)
            except PubmedXmlError as exc:
                broken[pmid] = exc
                continue
            yield from self._checked(pmid, rec, report)
        again: dict[str, Path] = {}
        if broken and not self.offline:
            for pmid, exc in broken.items():
                log.warning("PubMed: %s; fetching PMID %s again", exc, pmid)
            again = self._fetch_missing(list(broken), None, progress)
            if report is not None:
                report.count("cache_files_refetched", len(again))
        for pmid, exc in broken.items():
            if pmid in again:
                try:
                    rec = self._read(pmid, again[pmid])
                except PubmedXmlError as exc2:
                    exc = exc2
                else:
                    yield from self._checked(pmid, rec, report)
                    continue
            if report is not None:
                report.skip(pmid, "cache_file_unreadable", str(exc))

    @staticmethod
    def _checked(pmid: str, rec: PubmedRecord | None, report: SkipReport | None) -> Iterator[PubmedRecord]:
        if rec is None:
            if report is not None:
                report.skip(pmid, "cache_file_without_record")
            return
        if not rec["abstract"] and report is not None:
            report.skip(pmid, "no_abstract")
        yield rec
