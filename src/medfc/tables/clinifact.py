"""CliniFact Table 8 and the significance tests between systems (Zhang et al., 2025)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
import pandas as pd

from medfc.common.io import read_json, read_jsonl
from medfc.scoring import classification
from medfc.common.labels import CLINIFACT_LABELS
from medfc.experiments.clinifact_systems import DEFAULT_SYSTEM, system_of_row
from medfc.common.jsontypes import JSONValue
from medfc.tables.common import Entry, clinifact_name, pct


T8_COLUMNS = ["source", "scale", "model", "system", "n", "accuracy", "macro P", "macro R", "macro F1", "macro F1 95% CI"]


def _interval(scores: Mapping[str, JSONValue]) -> str:
    ci = (scores.get("ci") or {}).get("macro_f1")
    return f"{pct(ci['low'])}–{pct(ci['high'])}" if ci else ""


def table8(scores: Sequence[str], entries: Sequence[Entry], papers: Mapping[str, JSONValue], scale: str) -> pd.DataFrame:
    """Table 8: accuracy and macro P/R/F1 on the test split per model: our rows (at ``scale``), then the
    paper's rows of the same kinds of system (discriminative, zero-shot, fine-tuned generative), each its own row. Our rows carry
    the percentile bootstrap interval of macro-F1 over the test pairs (``low–high``), so a reader can
    see whether a paper's number lies inside it."""
    rows = []
    for e, f in zip(entries, scores):
        s = read_json(f)
        rows.append({"source": "ours", "scale": scale, "model": clinifact_name(e), "system": e.get("system", DEFAULT_SYSTEM),
                     "n": s["n"], "accuracy": pct(s["accuracy"]), "macro P": pct(s["macro_precision"]),
                     "macro R": pct(s["macro_recall"]), "macro F1": pct(s["macro_f1"]), "macro F1 95% CI": _interval(s)})
    cf = papers["clinifact"]
    systems = {r["system"] for r in rows}
    for model, v in cf["table8"].items():
        system = system_of_row(model)
        if system in systems:
            rows.append({"source": f"paper ({cf['cite']})", "scale": "paper", "model": model, "system": system,
                         "accuracy": v["accuracy"], "macro F1": v["macro_f1"]})
    return pd.DataFrame(rows, columns=T8_COLUMNS).astype(object).fillna("")


def significance(predictions: Sequence[str], entries: Sequence[Entry]) -> pd.DataFrame:
    """McNemar–Bowker between every pair of CliniFact systems on the same test pairs (among them each
    fine-tuned generative model against its own zero-shot run, the paper's test)."""
    recs = [(e, {str(r["id"]): r for r in read_jsonl(f) if r.get("split", "test") == "test"}) for e, f in zip(entries, predictions)]
    rows = []
    for (ea, ra), (eb, rb) in itertools.combinations(recs, 2):
        ids = sorted(i for i in set(ra) & set(rb) if ra[i].get("pred_label") is not None and rb[i].get("pred_label") is not None)
        la = [str(ra[i]["pred_label"]) for i in ids]
        lb = [str(rb[i]["pred_label"]) for i in ids]
        mb = classification.mcnemar_bowker(la, lb, CLINIFACT_LABELS)
        gold = [str(ra[i]["label"]) for i in ids]
        rows.append({"system A": clinifact_name(ea), "system B": clinifact_name(eb), "pairs": len(ids),
                     "accuracy A": pct(classification.accuracy(gold, la)) if ids else None,
                     "accuracy B": pct(classification.accuracy(gold, lb)) if ids else None,
                     "McNemar-Bowker chi2": round(mb["statistic"], 3), "df": mb["df"], "p": mb["p_value"]})
    return pd.DataFrame(rows, columns=["system A", "system B", "pairs", "accuracy A", "accuracy B", "McNemar-Bowker chi2", "df", "p"])
