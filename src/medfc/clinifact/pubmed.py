"""PubMed E-utilities: efetch (batched, rate-limited, cached per PMID), esearch (PMIDs for a query,
by relevance), and the PubmedArticleSet parser."""

from __future__ import annotations

import logging
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from medfc.common.http import HttpClient, RateLimiter, _atomic_write, progress_bar
from medfc.common.report import SkipReport

log = logging.getLogger(__name__)

EFETCH_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi"
ESEARCH_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/esearch.fcgi"
GET_MAX_IDS = 200
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
_MONTH_BY_NAME = {m.lower(): m for m in MONTHS}
XML_HEADER = '<?xml version="1.0" ?>\n'


# --- parsing ----------------------------------------------------------------------------------
def _flat(elem: ET.Element | None) -> str:
    """All text under an element with inline markup (<i>, <sup>, <b> …) flattened, whitespace collapsed."""
    if elem is None:
        return ""
    return " ".join("".join(elem.itertext()).split())


def _month(value: str | None) -> str | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        n = int(value)
        return MONTHS[n - 1] if 1 <= n <= 12 else None
    return _MONTH_BY_NAME.get(value[:3].lower())


def parse_pub_date(pub_date: ET.Element | None) -> dict[str, Any]:
    """Year/Month/Day, Season or MedlineDate → {"year", "month", "day", "publication_date"}.

    ``publication_date`` follows the CliniFact release: "2021-Dec-21", "2008-Sep-N/A", "2007-N/A-N/A".
    """
    year = month = day = None
    season = None
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
            m = re.search(r"(\d{4})(?:\s+([A-Za-z]{3}))?", medline)
            if m:
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
        label = at.get("Label")
        parts.append(f"{label}: {text}" if label else text)
    return "\n".join(parts) or None


def parse_article(elem: ET.Element) -> dict[str, Any]:
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
        kind = "article"
    return {
        "pmid": pmid,
        "kind": kind,
        "title": title or None,
        "abstract": abstract,
        "abstract_words": len(abstract.split()) if abstract else 0,
        "year": date["year"],
        "month": date["month"],
        "day": date["day"],
        "season": date["season"],
        "publication_date": date["publication_date"],
        "mesh_headings": mesh,
        "publication_types": pub_types,
    }


def _article_elements(root: ET.Element) -> Iterator[ET.Element]:
    for child in root:
        if child.tag in ("PubmedArticle", "PubmedBookArticle"):
            yield child


def parse_pubmed_xml(xml: bytes | str) -> list[dict[str, Any]]:
    """Every article of a PubmedArticleSet document."""
    root = ET.fromstring(xml.encode("utf-8") if isinstance(xml, str) else xml)
    return [parse_article(e) for e in _article_elements(root)]


def split_article_set(xml: bytes | str) -> dict[str, bytes]:
    """PubmedArticleSet → {pmid: a one-article PubmedArticleSet document} (the per-PMID cache unit)."""
    root = ET.fromstring(xml.encode("utf-8") if isinstance(xml, str) else xml)
    out: dict[str, bytes] = {}
    for elem in _article_elements(root):
        pmid = parse_article(elem)["pmid"]
        if not pmid:
            continue
        body = ET.tostring(elem, encoding="unicode")
        out[pmid] = (XML_HEADER + "<PubmedArticleSet>\n" + body.strip() + "\n</PubmedArticleSet>\n").encode("utf-8")
    return out


# --- fetching ---------------------------------------------------------------------------------
class MissingContactEmail(RuntimeError):
    """No contact e-mail for NCBI: a configuration error that stops the run (never a failed search)."""


class PubmedFetcher:
    """efetch in batches (GET up to 200 ids, POST above), ≤3 req/s (10 with an API key), cached per PMID.

    The cache is a directory of ``<pmid>.xml`` files, each a one-article PubmedArticleSet; a
    rerun asks NCBI only for the PMIDs that have no file yet. ``offline=True`` never asks.
    """

    def __init__(
        self,
        cache_dir: str | os.PathLike,
        api_key: str | None = None,
        tool: str = "medfc",
        email: str | None = None,
        batch_size: int = GET_MAX_IDS,
        url: str = EFETCH_URL,
        esearch_url: str = ESEARCH_URL,
        http: HttpClient | None = None,
        offline: bool = False,
        requests_per_second: float | None = None,
        extra_cache_dirs: Sequence[str | os.PathLike] = (),
        **http_kwargs: Any,
    ):
        self.cache_dir = Path(cache_dir)
        self.extra_cache_dirs = [Path(p) for p in extra_cache_dirs]
        self.api_key = api_key if api_key is not None else os.environ.get("NCBI_API_KEY") or None
        self.tool = tool
        self.email = email if email is not None else os.environ.get("NCBI_EMAIL") or None
        self.batch_size = max(1, int(batch_size))
        self.url = url
        self.esearch_url = esearch_url
        self.offline = offline
        limit = 10.0 if self.api_key else 3.0  # NCBI's limits: 3 requests/s without an API key, 10 with one
        rate = min(requests_per_second or limit, limit)
        if requests_per_second and requests_per_second > limit:
            log.warning("PubMed: %g requests/s asked for, but NCBI allows %g %s an API key: using %g",
                        requests_per_second, limit, "with" if self.api_key else "without", limit)
        if http is None:
            limiter_kwargs = {k: http_kwargs[k] for k in ("clock", "sleep") if k in http_kwargs}
            http = HttpClient(cache_dir=None, limiter=RateLimiter(rate, **limiter_kwargs), **http_kwargs)
        self.http = http

    def cached_path(self, pmid: str) -> Path | None:
        for d in [self.cache_dir, *self.extra_cache_dirs]:
            p = d / f"{pmid}.xml"
            if p.exists():
                return p
        return None

    def _params(self) -> dict[str, str]:
        """The parameters of every request; NCBI asks each to carry the tool and a contact e-mail, so a
        request without an e-mail is never sent (cached and offline reads need none)."""
        if not self.email:
            raise MissingContactEmail("PubMed E-utilities requests must carry a contact e-mail (NCBI's usage policy): set "
                             "clinifact.pubmed.email (medsnip.retrieval.pubmed.email for MedSNIP's searches) or NCBI_EMAIL, "
                             "or read only cached records (clinifact.pubmed.offline: true)")
        params = {"db": "pubmed", "retmode": "xml", "tool": self.tool, "email": self.email}
        if self.api_key:
            params["api_key"] = self.api_key
        return params

    def _fetch_batch(self, ids: list[str]) -> bytes:
        params = self._params()
        if len(ids) <= GET_MAX_IDS:
            params["id"] = ",".join(ids)
            return self.http.get_bytes(self.url, params, use_cache=False)
        return self.http.post_bytes(self.url, data={**params, "id": ",".join(ids)}, use_cache=False)

    def esearch(self, term: str, retmax: int, sort: str = "relevance") -> list[str]:
        """PMIDs matching ``term`` (at most ``retmax``, in ``sort`` order), from esearch's JSON answer.

        Not cached here: the caller caches per (query, k) — the MedSNIP search cache — so the API key,
        a request parameter, never lands in a cache key."""
        params = {**self._params(), "term": term, "retmax": str(int(retmax)), "sort": sort, "retmode": "json"}
        data = self.http.get_json(self.esearch_url, params, use_cache=False)
        return [str(x) for x in ((data or {}).get("esearchresult") or {}).get("idlist") or []]

    def fetch(self, pmids: Iterable[str], report: SkipReport | None = None, progress: bool = True) -> dict[str, Path]:
        """Make sure every PMID is cached; return {pmid: cache file} for those that exist."""
        wanted = list(dict.fromkeys(str(p).strip() for p in pmids if str(p).strip()))
        have = {p: self.cached_path(p) for p in wanted}
        missing = [p for p, path in have.items() if path is None]
        if report is not None:
            report.count("pmids_cached", len(wanted) - len(missing))
        if missing and self.offline:
            for p in missing:
                if report is not None:
                    report.skip(p, "pmid_not_cached_offline")
            missing = []
        batches = [missing[i : i + self.batch_size] for i in range(0, len(missing), self.batch_size)]
        for batch in progress_bar(batches, total=len(batches), desc="efetch", enabled=progress and len(batches) > 1):
            xml = self._fetch_batch(batch)
            if report is not None:
                report.count("efetch_requests")
            articles = split_article_set(xml)
            for pmid, body in articles.items():
                path = self.cache_dir / f"{pmid}.xml"
                _atomic_write(path, body)
                have[pmid] = path
            for p in batch:
                if p not in articles and report is not None:
                    report.skip(p, "pmid_not_returned")
            if report is not None:
                report.count("pmids_fetched", sum(p in articles for p in batch))
        return {p: path for p, path in have.items() if path is not None}

    def records(self, pmids: Iterable[str], report: SkipReport | None = None, progress: bool = True) -> Iterator[dict[str, Any]]:
        """Parsed records for the PMIDs (fetching what is missing); records without abstract are reported, not dropped."""
        for pmid, path in self.fetch(pmids, report=report, progress=progress).items():
            parsed = [r for r in parse_pubmed_xml(path.read_bytes()) if r["pmid"] == pmid]
            if not parsed:
                if report is not None:
                    report.skip(pmid, "cache_file_without_record")
                continue
            rec = parsed[0]
            if not rec["abstract"] and report is not None:
                report.skip(pmid, "no_abstract")
            yield rec
