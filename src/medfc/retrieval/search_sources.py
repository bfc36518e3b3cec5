"""The search sources, each declared once: a registry of small records (:class:`SearchSource`) that
HealthFC's open-domain evidence (rule ``healthfc_retrieve``, the systems ``retrieved_<source>`` and
``open_domain_<source>``), MedSNIP's retrieval verifier, the plan and its prerequisite checks look up, so a
source's name, options, client and needs are written in one place.

A record holds the options class of the source's config section (``healthfc.retrieval.<source>``), the
factory of its client (:data:`medfc.retrieval.search.SearchBackend`) from those options and how the consumer
connects (:class:`Connection`), what a live search needs from outside the config (an API key's variable, a
contact e-mail) and how the plan completes the section (PubMed's per-PMID records directory). The rule's
wildcard pattern, the experiments' systems and the steps' checks are derived from :data:`REGISTRY`; a new
source is one :func:`register` call here (or, for a test, in the test). A light module: the clients are
imported when one is built.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from medfc.common.jsontypes import JSONObject
from medfc.common.options import Options, OptionsError
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
    """How a consumer connects to a source, beyond the source's own options: the HTTP client's retries (None:
    the client's default), an HTTP cache of the answers (``""``: none; for the clients that keep one) and
    whether a source whose key is optional to the API stops before sending anything without it."""

    max_retries: int | None = None
    http_cache_dir: str = ""
    require_key: bool = True


def _no_completion(own: JSONObject, cache_dir: str) -> JSONObject:
    return own


@dataclass(frozen=True)
class SearchSource:
    """One search source.

    ``options`` types its config section (every section has ``file``: a prepared evidence file that replaces
    searching); ``client(options, connection)`` builds its search client; ``title`` names it in messages
    ("a retrieval verifier searches {title}"). What a live search needs, checked when the run is planned
    (:mod:`medfc.plan.prerequisites`): ``key_env`` — the option naming the environment variable that must
    hold an API key; ``contact`` — the option holding a contact e-mail (else ``contact_env``'s variable),
    unless the option ``local_url`` points at this machine. ``complete(section, cache_dir)`` fills in what
    the plan derives (a directory under the run's ``cache_dir``)."""

    name: str
    options: type[Options]
    client: Callable[[Any, Connection], SearchBackend]  # takes an instance of ``options`` (each source its own class)
    title: str
    key_env: str | None = None
    contact: str | None = None
    contact_env: str | None = None
    local_url: str | None = None
    complete: Callable[[JSONObject, str], JSONObject] = _no_completion


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
    """The options class of a source's section, for :class:`~medfc.common.options.Tagged` and the steps: an
    unknown name is an :class:`~medfc.common.options.OptionsError` naming the known ones."""
    if name not in REGISTRY:
        raise OptionsError(f"unknown evidence source {name!r}; known: {source_names()}")
    return REGISTRY[name].options


def wildcard_pattern() -> str:
    """The regular expression of a rule's ``{source}`` wildcard: the registered names."""
    return "|".join(REGISTRY)


def build_client(name: str, options: Options, connection: Connection) -> SearchBackend:
    """The search client of source ``name`` from its options (a :data:`~medfc.retrieval.search.SearchBackend`)."""
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
