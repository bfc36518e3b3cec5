"""MedSNIP's per-unit result cache: :class:`medfc.common.jsoncache.UnitCache` (one JSON file per key), shared
with the search clients of :mod:`medfc.retrieval.search`."""

from medfc.common.jsoncache import UnitCache, cache_key

__all__ = ["UnitCache", "cache_key"]
