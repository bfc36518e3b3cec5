"""The options of a crawl, apart from the crawler (:mod:`medfc.healthfc.crawl` imports Scrapy; the steps do not)."""

from __future__ import annotations

from dataclasses import dataclass

from medfc.common.options import Options


@dataclass(frozen=True)
class CrawlOptions(Options):
    """The ``healthfc.crawl`` config section (keys documented in the schema) + ``http_cache_dir`` and ``jobdir``."""

    base_url: str
    sitemap_path: str
    sitemap_follow: tuple[str, ...]
    url_list: tuple[str, ...]
    mirror_dir: str | None
    mirror_url: str | None
    user_agent: str
    contact: str
    download_delay: float
    concurrent_requests_per_domain: int
    autothrottle_target_concurrency: float
    autothrottle_max_delay: float
    retry_times: int
    download_timeout: float
    http_cache_dir: str
    http_cache_expiration_secs: int
    jobdir: str
    max_pages: int
    log_level: str

    @property
    def full_user_agent(self) -> str:
        return f"{self.user_agent} (+mailto:{self.contact})" if self.contact else self.user_agent
