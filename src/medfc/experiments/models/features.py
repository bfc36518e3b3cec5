"""Hand-written features (about 110) of a CliniFact claim–abstract pair for the gradient-boosting model (what they
measure: docs/experiments.md, "Gradient boosting over features"). Only the claim, title and abstract are read (never
the release's label-bearing columns)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np


TEST_TYPES = ("superior or other", "non-inferior or equivalent", "non-inferior", "equivalent", "superior")
_CLAIM_RE = re.compile(r"^(?P<interv>.*?) is (?P<type>" + "|".join(TEST_TYPES) + r") to (?P<comp>.*?) in terms of (?P<outcome>.*)$", re.S)


@dataclass(frozen=True)
class ClaimParts:
    intervention: str
    comparator: str
    outcome: str
    test_type: str


def parse_claim(claim: str) -> ClaimParts:
    """The template's parts; a claim off the template is all outcome, of unknown test type."""
    m = _CLAIM_RE.match(claim.strip())
    if not m:
        return ClaimParts("", "", claim, "unknown")
    return ClaimParts(m["interv"].strip(), m["comp"].strip(), m["outcome"].strip(), m["type"])


_SECTION_RE = re.compile(r"^([A-Z][A-Z ,/&\-]{2,60}):\s*")
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")
_NO_SPLIT_END = re.compile(r"\b(?:vs|e\.g|i\.e|al|approx|Fig|No|no|ca|Dr|St|cf)\.$")


def sentences(abstract: str) -> list[tuple[str, str]]:
    """(section label or '', sentence) in abstract order; structured abstracts are "LABEL: text" lines."""
    out: list[tuple[str, str]] = []
    for line in (x.strip() for x in abstract.split("\n")):
        if not line:
            continue
        m = _SECTION_RE.match(line)
        section, text = (m.group(1).strip(), line[m.end():]) if m else ("", line)
        buf = ""
        for part in _SENT_SPLIT.split(text):
            buf = f"{buf} {part}".strip() if buf else part
            if not _NO_SPLIT_END.search(buf):
                out.append((section, buf))
                buf = ""
        if buf:
            out.append((section, buf))
    return out


# The decimal point may be a middle dot (the Lancet journals' "p=0·034", kept so in PubMed), which is also
# their multiplication sign ("p=2·10−5": the powers of ten are tried first); "less than or equal" may be
# spelt "< or =" / "<or=" (older PubMed records); a space may follow the point ("p <. 001").
_P_RE = re.compile(
    r"(?<![A-Za-z])[Pp](?:\s*-?\s*(?:values?|trend|interaction|for trend|for interaction))?\s*(?:\([^)]{0,20}\))?\s*"
    r"(?P<op>[<>]\s*or\s*=|[<>=≤≥]|&lt;|&gt;|of|was|were)\s*"
    r"(?P<num>\d(?:[.·]\d+)?\s*[x×·]\s*10\s*[-−–]\s*\d+|\d+(?:[.·]\d+)?\s*[eE]\s*[-−]\s*\d+|0?[.·]\s?\d+|\d(?:[.·]\d+)?)"
)
_OPS = {"&lt;": "<", "&gt;": ">", "≤": "<", "≥": ">", "of": "=", "was": "=", "were": "="}


def _op(text: str) -> str:
    """'<', '=' or '>' for an operator as written ("< or =" is '<', "≥" is '>')."""
    text = re.sub(r"\s*or\s*=", "", text)
    return _OPS.get(text, text)


def _number(text: str) -> float | None:
    text = text.replace(" ", "")
    m = re.match(r"^(\d(?:[.·]\d+)?)[x×·]10[-−–](\d+)$", text)
    if m:
        return float(m.group(1).replace("·", ".")) * 10 ** (-int(m.group(2)))
    try:
        return float(text.replace("·", ".").replace("−", "-"))
    except ValueError:
        return None


def pvalues_with_clauses(text: str) -> list[tuple[str, str, float]]:
    """(clause, operator '<' '=' '>', value) of each p-value in ``text``: the clause is the text since the
    previous p-value of its sentence (the comparison the p-value belongs to)."""
    out = []
    for _, sentence in sentences(text):
        last = 0
        for m in _P_RE.finditer(sentence):
            value = _number(m["num"])
            if value is not None and value <= 1:
                out.append((sentence[last:m.start()], _op(m["op"]), value))
                last = m.end()
    return out


def pvalues(text: str) -> list[tuple[str, float]]:
    return [(op, v) for _, op, v in pvalues_with_clauses(text)]


def significant(op: str, value: float) -> bool:
    return op != ">" and value <= 0.05


SIG_WORD = re.compile(r"\bsignificant(ly)?\b", re.I)
NONSIG = re.compile(
    r"\b(no(t)? (statistically )?significant(ly)?|non-?significant(ly)?|did not (differ|reach|show|improve|reduce|significantly)|"
    r"no (significant )?differences?|not (statistically )?different|similar|comparable|failed to|was not associated|were not associated|"
    r"no effect|did not|neither|no evidence|no benefit|no improvement)\b", re.I)
CI = re.compile(r"95\s*%|\bCI\b|confidence interval", re.I)
NUMBER = re.compile(r"\d+([.·]\d+)?\s*%|\d+[.·]\d+")  # a decimal point or the Lancet middle dot
REGISTRATION = re.compile(r"\bNCT\s?\d{8}\b|\bISRCTN\d+|\bACTRN\d+|clinicaltrials\.gov|\bregistration\b|\bregistered\b", re.I)
RESULT_SECTION = re.compile(r"RESULT|FINDING|OUTCOME|CONCLU|INTERPRET|EFFECT", re.I)
CONCLUSION_SECTION = re.compile(r"CONCLU|INTERPRET")
STUDY_WORDS = {
    "rand": re.compile(r"\brandomi[sz]", re.I), "trial": re.compile(r"\btrial\b", re.I), "placebo": re.compile(r"placebo", re.I),
    "blind": re.compile(r"\b(double|single|triple)[- ]blind", re.I),
    "protocol": re.compile(r"\b(protocol|rationale and design|study design|will be|we will|is being conducted)\b", re.I),
    "review": re.compile(r"\b(review|meta-analys[ie]s|systematic)\b", re.I),
    "animal": re.compile(r"\b(mice|mouse|rats?|murine|rodents?|in vitro|cell lines?|dogs|pigs|rabbits)\b", re.I),
    "obs": re.compile(r"\b(cohort|retrospective|cross-sectional|observational|case report|case series|survey)\b", re.I),
    "noninf": re.compile(r"\bnon-?inferior|\bequivalen", re.I),
    "primary": re.compile(r"\bprimary (end ?point|outcome|efficacy|analysis)", re.I),
}


_STOP = frozenset("""a an the of in on at to for from by with without and or not no as is are be been was were this that these those
    than then into over under per via vs versus its their his her our your it they we who which whose what when where after before
    during between within baseline change changes week weeks month months day days year years hour hours minute minutes time up end
    visit period number participants participant patients patient subjects subject percentage percent proportion rate mean score
    scores total measured assessed using based treatment group groups arm arms study trial phase double blind blinded open label
    placebo control other superior inferior non equivalent terms""".split())
_WORD = re.compile(r"[a-z0-9][a-z0-9\-]*")


def terms(text: str) -> list[str]:
    """Content words, lower-cased, crudely stemmed (no plural s, the first six characters)."""
    out = []
    for w in _WORD.findall(text.lower()):
        w = w.strip("-")
        if len(w) < 3 or w in _STOP or w.isdigit():
            continue
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w[:6])
    return out


def fit_idf(abstracts: Iterable[str]) -> dict[str, float]:
    """Smoothed IDF of the terms of ``abstracts``; ``__default__`` for terms never seen."""
    df: Counter = Counter()
    n = 0
    for a in abstracts:
        n += 1
        df.update(set(terms(a)))
    return {t: math.log((n + 1) / (c + 1)) + 1 for t, c in df.items()} | {"__default__": math.log(n + 1) + 1}


def _share(query: list[str], doc: set[str], idf: dict[str, float] | None = None) -> float:
    """The (IDF-weighted) share of ``query``'s terms found in ``doc``."""
    if not query:
        return 0.0
    weight = (lambda t: idf.get(t, idf["__default__"])) if idf else (lambda t: 1.0)
    return sum(weight(t) for t in query if t in doc) / sum(weight(t) for t in query)


def _statistics(prefix: str, text: str) -> dict[str, float]:
    ps = pvalues(text)
    return {
        f"{prefix}_has_p": float(bool(ps)),
        f"{prefix}_p_sig": float(any(significant(op, v) for op, v in ps)),
        f"{prefix}_p_nonsig": float(any(op == ">" or (op == "=" and v > 0.05) for op, v in ps)),
        f"{prefix}_min_logp": -math.log10(max(min(v for _, v in ps), 1e-12)) if ps else -1.0,
        f"{prefix}_sig_word": float(bool(SIG_WORD.search(text))),
        f"{prefix}_nonsig_word": float(bool(NONSIG.search(text))),
        f"{prefix}_ci": float(bool(CI.search(text))),
        f"{prefix}_noninf": float(bool(STUDY_WORDS["noninf"].search(text))),
    }


def _carries_statistics(text: str) -> bool:
    return bool(pvalues(text) or SIG_WORD.search(text) or NONSIG.search(text))


def features(claim: str, title: str, abstract: str, idf: dict[str, float]) -> dict[str, float]:
    """The features of one pair (see the module docstring); every pair gets the same keys."""
    c = parse_claim(claim)
    sents = sentences(abstract)
    f: dict[str, float] = {f"type={t}": float(c.test_type == t) for t in TEST_TYPES}
    f.update(n_words=len(abstract.split()), n_sents=len(sents), structured=float(any(s for s, _ in sents)),
             has_results_section=float(any(s and RESULT_SECTION.search(s) for s, _ in sents)),
             claim_words=len(claim.split()), outcome_words=len(c.outcome.split()))
    for name, rx in STUDY_WORDS.items():
        f[f"abs_{name}"] = float(len(rx.findall(abstract)))
        f[f"title_{name}"] = float(bool(rx.search(title)))
    f["claim_placebo"] = float(bool(STUDY_WORDS["placebo"].search(c.comparator)))
    f["placebo_match"] = f["claim_placebo"] * float(f["abs_placebo"] > 0)
    f["registration"] = float(bool(REGISTRATION.search(abstract)))
    f["nct_number"] = float(bool(re.search(r"NCT\s?\d{8}", abstract)))

    clauses = pvalues_with_clauses(abstract)
    ps = [(op, v) for _, op, v in clauses]
    n_sig = sum(significant(op, v) for op, v in ps)
    f.update(n_p=len(ps), n_p_sig=n_sig, n_p_nonsig=sum(op == ">" or (op == "=" and v > 0.05) for op, v in ps),
             frac_p_sig=n_sig / len(ps) if ps else -1.0, min_logp=-math.log10(max(min(v for _, v in ps), 1e-12)) if ps else -1.0,
             max_p=max(v for _, v in ps) if ps else -1.0, n_sig_word=float(len(SIG_WORD.findall(abstract))),
             n_nonsig_word=float(len(NONSIG.findall(abstract))), n_ci=float(len(CI.findall(abstract))),
             n_numbers=float(len(NUMBER.findall(abstract))))

    q_out, q_int, q_cmp = terms(c.outcome), terms(c.intervention), terms(c.comparator)
    doc, tdoc = set(terms(f"{title}\n{abstract}")), set(terms(title))
    for name, query in (("outcome", q_out), ("interv", q_int), ("comp", q_cmp)):
        f[f"ov_{name}"] = _share(query, doc)
        f[f"wov_{name}"] = _share(query, doc, idf)
    for name, query in (("interv", q_int), ("outcome", q_out)):
        f[f"ov_title_{name}"] = _share(query, tdoc)
        f[f"wov_title_{name}"] = _share(query, tdoc, idf)
    f["ov_claim_all"] = _share(terms(claim), doc)
    numbers = set(re.findall(r"\b\d+\b", c.outcome)) - {"0", "1"}
    in_abstract = set(re.findall(r"\b\d+\b", abstract))
    f["ov_numbers"] = sum(n in in_abstract for n in numbers) / len(numbers) if numbers else -1.0
    if q_int:
        rare = max(q_int, key=lambda t: idf.get(t, idf["__default__"]))
        f["rare_interv_found"], f["rare_interv_idf"] = float(rare in doc), idf.get(rare, idf["__default__"])
    else:
        f["rare_interv_found"] = f["rare_interv_idf"] = -1.0

    scores = [_share(q_out, set(terms(s)), idf) for _, s in sents]
    order = sorted(range(len(sents)), key=lambda i: -scores[i])
    f["best_outcome_score"] = scores[order[0]] if sents else -1.0
    f |= _statistics("top2", " ".join(sents[i][1] for i in order[:2]))
    beststat = next((i for i in order if _carries_statistics(sents[i][1])), None)
    f["beststat_score"] = scores[beststat] if beststat is not None else -1.0
    f |= _statistics("beststat", sents[beststat][1] if beststat is not None else "")
    results = [s for sec, s in sents if sec and RESULT_SECTION.search(sec) and not CONCLUSION_SECTION.match(sec)]
    results = results or [s for _, s in sents[len(sents) // 3:]]
    f |= _statistics("firstres", next((s for s in results if _carries_statistics(s)), ""))
    conclusion = " ".join(s for sec, s in sents if sec and CONCLUSION_SECTION.match(sec)) or (sents[-1][1] if sents else "")
    f |= _statistics("concl", conclusion)
    concl_terms = set(terms(conclusion))
    f["concl_wov_outcome"] = _share(q_out, concl_terms, idf)
    f["concl_wov_interv"] = _share(q_int, concl_terms, idf)

    if clauses:
        match = [_share(q_out, set(terms(clause)), idf) for clause, _, _ in clauses]
        j = int(np.argmax(match))
        good = [k for k in range(len(clauses)) if match[j] > 0 and match[k] >= 0.5 * match[j]]
        f.update(pmatch_score=match[j], pmatch_sig=float(significant(*clauses[j][1:])), pmatch_logp=-math.log10(max(clauses[j][2], 1e-12)),
                 pmatch_first_sig=float(significant(*clauses[0][1:])),
                 pmatch_frac_sig=float(np.mean([significant(*clauses[k][1:]) for k in good])) if good else -1.0)
    else:
        f.update(pmatch_score=-1.0, pmatch_sig=-1.0, pmatch_logp=-1.0, pmatch_first_sig=-1.0, pmatch_frac_sig=-1.0)
    return f
