"""The papers' example tables (HealthFC Tables 1 and 4, CliniFact Tables 5 and 7), chosen from the run's own data
by a fixed rule that each caption states; excerpts are cut at a stated number of words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from medfc.common import latex
from medfc.common.labels import CLINIFACT_CODES, REFUTED, SUPPORTED, VERDICT_NAMES
from medfc.common.latex import Block, Column, LatexTable, Tex
from medfc.experiments.clinifact.prompts import ANSWER_OPTIONS, PROMPT, answer_options

ELLIPSIS = "…"
GAP = "(…)"
NONE = "[None]"
RunRow = tuple[str, str, str]  # a row of the run's HealthFC tables: its language, model and system
PAIR_LABELS = (CLINIFACT_CODES[1], CLINIFACT_CODES[0], CLINIFACT_CODES[2])  # evidence, inconclusive, NEI: Table 5's order
Table = tuple[pd.DataFrame, LatexTable]  # an example table: its rows (the CSV and Markdown) and its LaTeX


def cut_words(text: str, words: int) -> str:
    """``text`` with its whitespace collapsed, cut after ``words`` words (``…`` marks the cut)."""
    tokens = str(text).split()
    mark = "\u00a0" + ELLIPSIS if len(tokens) > words else ""  # no line break before the mark
    return " ".join(tokens[:words]) + mark


def marked(parts: Sequence[tuple[str, bool]]) -> tuple[str, Tex]:
    """Text parts, each marked or not, as Markdown (marked parts in ``**bold**``) and as a LaTeX cell (``\\textbf``)."""
    md = " ".join(f"**{t}**" if bold else t for t, bold in parts)
    tex = " ".join(rf"\textbf{{{latex.escape(t)}}}" if bold else latex.escape(t) for t, bold in parts)
    return md, Tex(tex, float(sum(len(t) + 1 for t, _ in parts)))


def lines_cell(text: str) -> Tex:
    """Text with its line breaks kept (a blank line as a small gap), as a LaTeX cell of a wrapping column."""
    paragraphs = text.split("\n\n")
    body = r"\par\smallskip{}".join(r"\newline{}".join(latex.escape(line) for line in p.split("\n")) for p in paragraphs)
    return Tex(body, float(max((len(line) for line in text.split("\n")), default=0)))


def article_snippet(sentences: Sequence[str], gold_ids: Sequence[int], words: int) -> tuple[list[tuple[str, bool]], int]:
    """The article's snippet around its gold evidence, from the sentence before the first one (that one when the
    two do not fit), whole sentences within ``words`` words; ``(…)`` where the article goes on. Returns the parts
    (text, whether gold evidence) and how many gold evidence sentences it shows."""
    gold = {int(i) for i in gold_ids if 0 <= int(i) < len(sentences)}
    first = min(gold) if gold else 0
    start = first - 1 if first > 0 and len(sentences[first - 1].split()) + len(sentences[first].split()) <= words else first
    parts: list[tuple[str, bool]] = [(GAP, False)] if start > 0 else []
    used, end = 0, start
    for i in range(start, len(sentences)):
        n = len(sentences[i].split())
        if used + n > words:
            if used == 0:  # one sentence longer than the limit: cut inside it
                parts.append((cut_words(sentences[i], words), i in gold))
                end = i + 1
            break
        parts.append((" ".join(sentences[i].split()), i in gold))
        used += n
        end = i + 1
    if end < len(sentences):
        parts.append((GAP, False))
    return parts, sum(bold for _, bold in parts)


def healthfc_examples(records: Sequence[Mapping[str, Any]], words: int, lang: str = "en") -> Table:
    """HealthFC Table 1: for SUPPORTED, then REFUTED, the first claim by id with gold evidence, and its snippet."""
    rows, latex_rows, notes = [], [], []
    for label in (SUPPORTED, REFUTED):
        eligible = sorted((r for r in records if r.get("label") == label and r.get("evidence_ids") and r.get(f"sentences_{lang}")),
                          key=lambda r: str(r["id"]))
        n = sum(r.get("label") == label for r in records)
        if not eligible:
            notes.append(f"No {VERDICT_NAMES[label].lower()} claim of the {n} has gold evidence sentences.")
            continue
        r = eligible[0]
        parts, shown = article_snippet(r[f"sentences_{lang}"], r["evidence_ids"], words)
        md, tex = marked(parts)
        claim = " ".join(str(r[f"claim_{lang}"]).split())
        total = len({int(i) for i in r["evidence_ids"]})
        rows.append({"claim_id": r["id"], "claim": claim, "evidence": md, "verdict": VERDICT_NAMES[label],
                     "gold_evidence_shown": shown, "gold_evidence_sentences": total})
        latex_rows.append([claim, tex, VERDICT_NAMES[label]])
        notes.append(f"{r['id']}: {shown} of its {total} gold evidence sentences in the snippet.")
    caption = (f"HealthFC Table 1: example claims with a snippet of their article and the verdict. Chosen by a fixed rule: "
               f"for supported, then refuted, the first claim by claim id with gold evidence sentences ({len(records)} claims in the "
               f"rebuilt dataset). Snippet: the article's sentences ({'English' if lang == 'en' else 'German'}) from the one before "
               f"the first gold evidence sentence (from that one when the two exceed the limit), whole sentences up to {words} words "
               f"(one longer sentence cut); gold evidence sentences in bold; "
               f"(…) where the article goes on. " + " ".join(notes))
    table = LatexTable(caption, "tab:healthfc-table1",
                       [Column("Claim", align="l", wrap=1.0), Column("Evidence", align="l", wrap=2.2), Column("Verdict", align="l")],
                       [Block([r]) for r in latex_rows], width="column")
    return pd.DataFrame(rows), table


def _row_of(entry: Mapping[str, Any]) -> RunRow:
    return str(entry["lang"]), str(entry["model"]), str(entry["system"])


def best_row(scores: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> tuple[RunRow, float, int] | None:
    """The row of best mean veracity macro-F1 over its folds (a tie: the first), its mean F1 and its folds."""
    by_row: dict[RunRow, list[float]] = {}
    for entry, s in scores:
        by_row.setdefault(_row_of(entry), []).append(float(s["veracity"]["macro_f1"]))
    means = [(row, sum(v) / len(v), len(v)) for row, v in by_row.items()]
    return max(means, key=lambda m: m[1], default=None)  # max keeps the first of equal values


def _evidence(sentences: Sequence[str] | None, words: int) -> str:
    """Evidence sentences joined and cut at ``words`` words; ``[None]`` when there are none."""
    sentences = [s for s in sentences or [] if str(s).strip()]
    return cut_words(" ".join(sentences), words) if sentences else NONE


def healthfc_errors(scores: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
                    predictions: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]], claims: Mapping[str, Mapping[str, str]], shown: int,
                    words: int, scale_note: str = "") -> Table:
    """HealthFC Table 4: the first ``shown`` wrong claims (by id) of the best row (:func:`best_row`), with gold and
    selected evidence; ``claims``: each claim's text by id and language."""
    best = best_row(scores)
    rows: list[dict[str, Any]] = []
    latex_rows: list[list[object]] = []
    if best is None:
        caption = "HealthFC Table 4: claims where the best row erred. No row of a system that selects evidence ran."
        return pd.DataFrame(rows), _errors_table(caption, latex_rows)
    row, f1, folds = best
    lang, model, system = row
    tested = [p for entry, preds in predictions for p in preds if _row_of(entry) == row]
    wrong = sorted((p for p in tested if p.get("pred_label") != p.get("label")), key=lambda p: str(p["id"]))
    for p in wrong[:shown]:
        gold_ev, selected = _evidence(p.get("gold_evidence"), words), _evidence(p.get("evidence"), words)
        gold, pred = VERDICT_NAMES.get(p["label"], p["label"]), VERDICT_NAMES.get(p.get("pred_label"), str(p.get("pred_label")))
        claim = cut_words(claims.get(str(p["id"]), {}).get(lang) or str(p["id"]), words)
        rows.append({"claim_id": p["id"], "fold": p.get("fold"), "claim": claim, "gold_evidence": gold_ev,
                     "selected_evidence": selected, "gold_label": gold, "predicted_label": pred})
        latex_rows.append([claim, gold_ev, selected, Tex(rf"{latex.escape(gold)} $\|$ {latex.escape(pred)}", len(gold) + len(pred) + 3)])
    caption = (f"HealthFC Table 4: claims where the best row erred. The row of best mean veracity macro-F1 among the systems that "
               f"select evidence: {model} ({system}, {lang}), {100 * f1:.1f} over {folds} "
               f"fold{'s' if folds != 1 else ''}. Its wrong claims in "
               f"claim-id order, the first {min(shown, len(wrong))} of {len(wrong)} wrong of {len(tested)} test claims. Gold and "
               f"selected evidence cut at {words} words; [None]: no sentence."
               + (f" {scale_note}" if scale_note else ""))
    return pd.DataFrame(rows), _errors_table(caption, latex_rows)


def _errors_table(caption: str, rows: list[list[object]]) -> LatexTable:
    return LatexTable(caption, "tab:healthfc-table4",
                      [Column("Claim", align="l", wrap=0.8), Column("Gold evidence", align="l", wrap=1.3),
                       Column("Selected evidence", align="l", wrap=1.3), Column("Gold | predicted", align="l", wrap=0.6)],
                      [Block([r]) for r in rows], width="text")


def clinifact_examples(splits: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], words: int) -> Table:
    """CliniFact Table 5: per label, the first pair of the first split (in the order given) that has one."""
    rows, latex_rows, missing = [], [], []
    for label in PAIR_LABELS:
        found = next(((name, p) for name, pairs in splits for p in pairs if _pair_label(p) == label), None)
        if found is None:
            missing.append(label)
            continue
        split, pair = found
        claim = " ".join(str(pair["claim"]).split())
        abstract = cut_words(str(pair["article_abstract"]), words)
        rows.append({"label": label, "split": split, "index": pair.get("index"), "nctId": pair.get("nctId"), "PMID": pair.get("PMID"),
                     "claim": claim, "abstract": abstract})
        latex_rows.append([label, claim, abstract])
    order = ", then ".join(f"{name} ({len(pairs)} pairs)" for name, pairs in splits)
    taken = "; ".join(f"{r['label']} from {r['split']}" for r in rows)
    caption = (f"CliniFact Table 5: example pairs of each label. Chosen by a fixed rule: per label, the first pair in row "
               f"order of the first split that has one, searching {order}; the abstract cut at {words} words"
               + (f" ({taken})." if rows else ".")
               + (f" No split has an {' or '.join(missing)} pair." if missing else ""))
    table = LatexTable(caption, "tab:clinifact-table5",
                       [Column("Label", align="l"), Column("Claim", align="l", wrap=1.0), Column("Abstract (excerpt)", align="l", wrap=1.8)],
                       [Block([r]) for r in latex_rows], width="text")
    return pd.DataFrame(rows), table


def _pair_label(pair: Mapping[str, Any]) -> str | None:
    """A pair's label name from its release code (0, 1, 2) or name."""
    raw = str(pair.get("label", "")).strip()
    if raw in PAIR_LABELS:
        return raw
    try:
        return CLINIFACT_CODES.get(int(float(raw)))
    except ValueError:
        return None


def clinifact_prompt(pairs: Sequence[Mapping[str, Any]], words: int, split: str = "test") -> Table:
    """CliniFact Table 7: the generative models' prompt as a template and filled with the split's first pair."""
    options = answer_options()
    mapping = ", ".join(f"{o} = {options[o]}" for o in ANSWER_OPTIONS)
    rows: list[dict[str, Any]] = [{"part": "template", "pair": "", "text": PROMPT}]
    latex_rows: list[list[object]] = [["Template", lines_cell(PROMPT)]]
    if pairs:
        pair = pairs[0]
        abstract = cut_words(str(pair["article_abstract"]), words)
        filled = PROMPT.format(claim=" ".join(str(pair["claim"]).split()), title=" ".join(str(pair.get("article_title", "")).split()),
                               abstract=abstract)
        rows.append({"part": "example", "pair": str(pair.get("index", "")), "text": filled})
        latex_rows.append(["Example", lines_cell(filled)])
    rows.append({"part": "answer options", "pair": "", "text": mapping})
    latex_rows.append(["Answer", mapping])
    example = (f"the example fills it with the first pair of the {split} split (its abstract cut at {words} words)" if pairs
               else f"the {split} split has no pair to fill it with")
    caption = (f"CliniFact Table 7: the prompt the generative models read (zero-shot and fine-tuned), as sent: its template, "
               f"with the claim, the publication's title and abstract in braces; {example}. The answer is the option of highest "
               f"log-probability after the prompt ({mapping}); an abstract too long for the model is trimmed from its start.")
    table = LatexTable(caption, "tab:clinifact-table7", [Column("", align="l"), Column("Prompt", align="l", wrap=1.0)],
                       [Block([r]) for r in latex_rows], width="text")
    return pd.DataFrame(rows), table
