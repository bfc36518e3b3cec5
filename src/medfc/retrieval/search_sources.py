"""The search sources, each declared once in :data:`REGISTRY` (:class:`SearchSource`), looked up by HealthFC's
open-domain evidence, MedSNIP's retrieval verifier and the plan. The clients are imported only when one is built.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from medfc.common.jsontypes import JSONObject
from medfc.common.options import Options
from medfc.common.registry import lookup

if TYPE_CHECKING:  # the clients load requests: imported when one is built
    from medfc.common.http import HttpClient
    from medfc.retrieval.search import SearchBackend


@dataclass(frozen=True)
class WebSourceOptions(Options):
    """``healthfc.retrieval.web``: a Serper-compatible endpoint; its key is read from ``api_key_env``."""

    url: str
    api_key_env: str
    requests_per_second: float
    file: str


@dataclass(frozen=True)
class PubMedSourceOptions(Options):
    """``healthfc.retrieval.pubmed``: E-utilities (contact e-mail, optional API key from ``api_key_env``)."""

    email: str
    eutils_url: str
    api_key_env: str
    requests_per_second: float
    records_dir: str  # the per-PMID efetch cache (shared with CliniFact and MedSNIP)
    file: str


@dataclass(frozen=True)
class WikipediaSourceOptions(Options):
    """``healthfc.retrieval.wikipedia``: a MediaWiki ``api.php`` and the address page titles are appended to."""

    url: str
    page_url: str
    requests_per_second: float
    file: str


@dataclass(frozen=True)
class Connection:
    """How a consumer connects: the HTTP client's retries (None: its default), an HTTP cache (``""``: none) and
    whether a source whose key is optional stops without one."""

    max_retries: int | None = None
    http_cache_dir: str = ""
    require_key: bool = True


@dataclass(frozen=True)
class SearchSource:
    """One search source: ``options`` types its config section, ``client`` builds its client, ``title`` names it.
    Checked when planned: ``key_env`` names the API key's option; ``contact`` the contact e-mail's (else
    ``contact_env``'s variable) unless ``local_url``'s is local; ``complete(section, cache_dir)`` fills in defaults."""

    name: str
    options: type[Options]
    client: Callable[[Any, Connection], SearchBackend]  # takes an instance of ``options`` (each source its own class)
    title: str
    key_env: str | None = None
    contact: str | None = None
    contact_env: str | None = None
    local_url: str | None = None
    complete: Callable[[JSONObject, str], JSONObject] = lambda own, cache_dir: own


REGISTRY: dict[str, SearchSource] = {}


def register(source: SearchSource) -> SearchSource:
    """Add ``source`` to :data:`REGISTRY` (a name registered twice is an error)."""
    if source.name in REGISTRY:
        raise ValueError(f"search source {source.name!r} is registered twice")
    REGISTRY[source.name] = source
    return source


def source_names() -> tuple[str, ...]:
    """The registered sources' names, in registration order."""
    return tuple(REGISTRY)


def search_source(name: str) -> SearchSource:
    """The record of a source; an unknown name is an error naming the known ones."""
    return lookup(REGISTRY, name, "evidence source")


def options_class(name: str) -> type[Options]:
    """The options class of a source's section (a name its options checked against the registry)."""
    return search_source(name).options


def wildcard_pattern() -> str:
    """The regular expression of a rule's ``{source}`` wildcard: the registered names."""
    return "|".join(REGISTRY)


def build_client(name: str, options: Options, connection: Connection) -> SearchBackend:
    """The search client of source ``name`` from its options."""
    return search_source(name).client(options, connection)


def _http(rate: float, c: Connection) -> HttpClient:
    from medfc.common.http import HttpClient

    return HttpClient(cache_dir=c.http_cache_dir or None, rate=rate,
                      **({} if c.max_retries is None else {"max_retries": c.max_retries}))


def _web(o: WebSourceOptions, c: Connection) -> SearchBackend:
    from medfc.retrieval.search import WebSearch

    return WebSearch(o.url, o.api_key_env, _http(o.requests_per_second, c), require_key=c.require_key)


def _pubmed(o: PubMedSourceOptions, c: Connection) -> SearchBackend:
    from medfc.retrieval.pubmed import PubmedFetcher, eutils_urls
    from medfc.retrieval.search import PubMedSearch

    key = (os.environ.get(o.api_key_env) or None) if o.api_key_env else None
    fetcher = PubmedFetcher(o.records_dir, api_key=key, email=o.email or None, **eutils_urls(o.eutils_url),
                            requests_per_second=o.requests_per_second or None,
                            **({} if c.max_retries is None else {"max_retries": c.max_retries}))
    return PubMedSearch(fetcher, api_key_env=o.api_key_env)


def _wikipedia(o: WikipediaSourceOptions, c: Connection) -> SearchBackend:
    from medfc.retrieval.search import WikipediaSearch

    return WikipediaSearch(o.url, _http(o.requests_per_second, c), page_url=o.page_url)


def _pubmed_records(own: JSONObject, cache_dir: str) -> JSONObject:
    """PubMed's per-PMID records: unless set, CliniFact's cache of them, shared."""
    return {**own, "records_dir": own["records_dir"] or f"{cache_dir}/clinifact/pubmed"}


register(SearchSource("web", WebSourceOptions, _web, "the web", key_env="api_key_env"))
register(SearchSource("pubmed", PubMedSourceOptions, _pubmed, "PubMed", contact="email", contact_env="NCBI_EMAIL",
                      local_url="eutils_url", complete=_pubmed_records))
register(SearchSource("wikipedia", WikipediaSourceOptions, _wikipedia, "Wikipedia"))
