"""What the crawled pages and the release file share about the portal, apart, so that the release reader does not
depend on the page parser (docs/sources.md §1)."""

from __future__ import annotations

import re

# the suffix a page's <title> and the release's de_title carry: "Titel | Medizin Transparent"
TITLE_SUFFIX = re.compile(r"\s*[|–-]\s*Medizin Transparent\s*$")
