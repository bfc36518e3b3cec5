"""What the crawled pages and the release file share about the portal, apart, so that the release reader does not
depend on the page parser (docs/sources.md §1): the title suffix, and German dates as the portal writes them
("5. Dezember 2022", "05.12.2022")."""

from __future__ import annotations

import datetime as dt
import re

# the suffix a page's <title> and the release's de_title carry: "Titel | Medizin Transparent"
TITLE_SUFFIX = re.compile(r"\s*[|–-]\s*Medizin Transparent\s*$")

MONTHS = {
    "januar": 1, "jänner": 1, "februar": 2, "feber": 2, "märz": 3, "maerz": 3, "april": 4, "mai": 5,
    "juni": 6, "juli": 7, "august": 8, "september": 9, "oktober": 10, "november": 11, "dezember": 12,
}
_LONG = re.compile(r"(\d{1,2})\.\s*([A-Za-zÄÖÜäöü]+)\s+(\d{4})")
_NUMERIC = re.compile(r"(\d{1,2})\.\s*(\d{1,2})\.\s*(\d{4})")


def parse_german_date(text: str) -> str | None:
    """Return YYYY-MM-DD for the first German date in ``text``, or None if there is none."""
    if not text:
        return None
    m = _LONG.search(text)
    if m and m.group(2).lower() in MONTHS:
        day, month, year = int(m.group(1)), MONTHS[m.group(2).lower()], int(m.group(3))
    else:
        m = _NUMERIC.search(text)
        if not m:
            return None
        day, month, year = int(m.group(1)), int(m.group(2)), int(m.group(3))
    try:
        return dt.date(year, month, day).isoformat()
    except ValueError:
        return None
