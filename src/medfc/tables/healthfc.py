"""HealthFC Tables 3 and 5, the open-domain comparison (supported vs refuted with retrieved evidence) and the
significance tests between systems (Vladika et al., 2024)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import pandas as pd

from medfc.common.io import read_json
from medfc.common.labels import VERACITY_LABELS
from medfc.experiments.systems import OPEN_DOMAIN_SYSTEMS, TABLE3_SYSTEMS, TABLE5_SYSTEMS, evidence_source, system as system_spec
from medfc.scoring import classification, medsnip
from medfc.common.jsontypes import JSONValue
from medfc.tables.common import Entry, grouped, pct, pm, pooled

Row = dict[str, object]  # one row of a table


T3_COLUMNS = ["source", "scale", "lang", "model", "system", "folds", "evidence P", "evidence R", "evidence F1", "evidence-class F1",
              "veracity P", "veracity R", "veracity F1", "FEVER strict", "AVeriTeC@0.25", "FF1", "FF1 coverage"]
T5_COLUMNS = ["source", "scale", "lang", "model", "experiment", "folds", "P", "R", "F1", "accuracy"]
OPEN_DOMAIN_COLUMNS = ["source", "scale", "lang", "model", "experiment", "evidence", "claims", "folds", "P", "R", "F1", "accuracy"]


def _paper_row(papers: Mapping[str, JSONValue], model: str, **values: JSONValue) -> Row:
    lang = "de" if "German" in model else "en"
    return {"source": f"paper ({papers['healthfc']['cite']})", "scale": "paper", "lang": lang, "model": model, "folds": 5, **values}


def table3(scores: Sequence[str], entries: Sequence[Entry], papers: Mapping[str, JSONValue], scale: str) -> pd.DataFrame:
    """Table 3: pipeline / joint / oracle, evidence and veracity macro P/R/F1, mean ± std over folds. Our
    rows first (``source`` ours, at ``scale``), then the paper's rows of the same systems, each its own
    row: no number of the paper stands beside a row of ours."""
    rows = []
    for (lang, model, system), items in grouped(entries, scores, ("lang", "model", "system")).items():
        if system not in TABLE3_SYSTEMS:
            continue
        agg = classification.aggregate_folds([read_json(f) for _, f in items])
        rows.append({
            "source": "ours", "scale": scale, "lang": lang, "model": model, "system": system, "folds": len(items),
            "evidence P": pm(agg, "evidence.macro_precision"), "evidence R": pm(agg, "evidence.macro_recall"),
            "evidence F1": pm(agg, "evidence.macro_f1"), "evidence-class F1": pm(agg, "evidence.f1"),
            "veracity P": pm(agg, "veracity.macro_precision"), "veracity R": pm(agg, "veracity.macro_recall"),
            "veracity F1": pm(agg, "veracity.macro_f1"),
            "FEVER strict": pm(agg, "fever.strict"),
            "AVeriTeC@0.25": pm(agg, "averitec.score.0.25"),
            "FF1": pm(agg, "medsnip.ff1"),
            # the share of the supported / refuted claims that FF1 scores (an NEI prediction abstains)
            "FF1 coverage": pm(agg, "medsnip.coverage"),
        })
    order = {s: i for i, s in enumerate(TABLE3_SYSTEMS)}
    rows.sort(key=lambda r: (r["lang"], r["model"], order[r["system"]]))
    systems = {r["system"] for r in rows}
    t3 = papers["healthfc"]["table3"]
    for system in TABLE3_SYSTEMS:
        if system not in systems:
            continue
        paper_row = system_spec(system).paper_row
        if paper_row is not None:  # the paper states only its veracity F1, in another system's row
            row, key = paper_row
            for model, v in t3[row].items():
                rows.append(_paper_row(papers, model, system=system, **{"veracity F1": v[key]}))
        else:
            for model, v in t3[system].items():
                rows.append(_paper_row(papers, model, system=system, **{
                    "evidence P": v["ev_p"], "evidence R": v["ev_r"], "evidence F1": v["ev_f1"],
                    "veracity P": v["ver_p"], "veracity R": v["ver_r"], "veracity F1": v["ver_f1"]}))
    return pd.DataFrame(rows, columns=T3_COLUMNS).fillna("")


def _veracity_rows(scores: Sequence[str], entries: Sequence[Entry], systems: Sequence[str], scale: str) -> list[Row]:
    """One row of ours per (lang, model, system) of ``systems``: macro P/R/F1 and accuracy, mean ± std over folds."""
    rows = []
    for (lang, model, system), items in grouped(entries, scores, ("lang", "model", "system")).items():
        if system not in systems:
            continue
        agg = classification.aggregate_folds([read_json(f) for _, f in items])
        rows.append({"source": "ours", "scale": scale, "lang": lang, "model": model, "experiment": system, "folds": len(items),
                     "P": pm(agg, "veracity.macro_precision"), "R": pm(agg, "veracity.macro_recall"),
                     "F1": pm(agg, "veracity.macro_f1"), "accuracy": pm(agg, "veracity.accuracy"),
                     "n": sum(int(read_json(f).get("n", 0)) for _, f in items)})
    order = {s: i for i, s in enumerate(systems)}
    rows.sort(key=lambda r: (r["lang"], r["model"], order[r["experiment"]]))
    return rows


def table5(scores: Sequence[str], entries: Sequence[Entry], papers: Mapping[str, JSONValue], scale: str) -> pd.DataFrame:
    """Table 5: claims only, retrieved evidence (retrieved_web: the paper's "Google snippets"; retrieved_pubmed,
    retrieved_wikipedia: no paper row), gold explanations, level of evidence; macro P/R/F1 mean ± std. Our
    rows, then the paper's (DeBERTa) rows of the same experiments."""
    rows = _veracity_rows(scores, entries, TABLE5_SYSTEMS, scale)
    order = {s: i for i, s in enumerate(TABLE5_SYSTEMS)}
    for system in sorted({r["experiment"] for r in rows}, key=order.get):
        v = papers["healthfc"]["table5"].get(system)
        if v is not None:
            rows.append(_paper_row(papers, papers["healthfc"]["table5_model"], experiment=system, P=v["p"], R=v["r"], F1=v["f1"]))
    return pd.DataFrame(rows, columns=T5_COLUMNS).fillna("")


def open_domain(scores: Sequence[str], entries: Sequence[Entry], papers: Mapping[str, JSONValue], scale: str) -> pd.DataFrame:
    """The open-domain comparison: supported vs refuted on the supported / refuted claims with evidence
    retrieved from each source (open_domain_<source>), macro P/R/F1 over the two classes, mean ± std over
    folds (``claims``: the test claims scored, all folds). Our rows, then the binary F1 of each source that
    the HealthFC paper cites (Vladika and Matthes 2024, 327 claims), for the sources we ran."""
    rows = _veracity_rows(scores, entries, OPEN_DOMAIN_SYSTEMS, scale)
    for r in rows:
        r["evidence"] = evidence_source(r["experiment"])
        r["claims"] = r.pop("n")
    od = papers["healthfc"]["open_domain"]
    order = {s: i for i, s in enumerate(OPEN_DOMAIN_SYSTEMS)}
    for system in sorted({r["experiment"] for r in rows}, key=order.get):
        source = evidence_source(system)
        if source in od["f1"]:
            rows.append({"source": f"paper ({od['cite']})", "scale": "paper", "lang": "en", "model": od["model"], "experiment": system,
                         "evidence": source, "claims": od["claims"], "folds": "", "F1": od["f1"][source]})
    return pd.DataFrame(rows, columns=OPEN_DOMAIN_COLUMNS).fillna("")


def significance(predictions: Sequence[str], entries: Sequence[Entry], comparisons: Sequence[Sequence[str]], *,
                 metric: str, n_resamples: int, seed: int, abstain: str) -> pd.DataFrame:
    """For each (lang, model) and each configured pair (A, B) of veracity systems: predictions pooled
    over the folds, McNemar–Bowker on the two systems' labels (same claims) and the MedSNIP paired
    bootstrap 95% CI of Δ = metric(B) − metric(A) over the supported / refuted claims."""
    groups = grouped(entries, predictions, ("lang", "model", "system"))
    rows = []
    for lang, model in sorted({(k[0], k[1]) for k in groups}):
        for a, b in comparisons:
            if (lang, model, a) not in groups or (lang, model, b) not in groups:
                continue
            pa = pooled([f for _, f in groups[(lang, model, a)]])
            pb = pooled([f for _, f in groups[(lang, model, b)]])
            ids = sorted(set(pa) & set(pb))
            mb = classification.mcnemar_bowker([str(pa[i]["pred_label"]) for i in ids], [str(pb[i]["pred_label"]) for i in ids], VERACITY_LABELS)
            kept, gold, pred_a = medsnip.healthfc_binary([pa[i] for i in ids])
            pred_b = [medsnip.normalise_verdict(pb[ids[k]]["pred_label"]) for k in kept]
            row: Row = {"lang": lang, "model": model, "system A": a, "system B": b, "claims": len(ids),
                                   "McNemar-Bowker chi2": round(mb["statistic"], 3), "df": mb["df"], "p": mb["p_value"],
                                   "metric": metric, "claims (S/R)": len(kept)}
            if kept:
                bs = medsnip.paired_bootstrap(gold, pred_a, pred_b, metric=metric, n_resamples=n_resamples, seed=seed, abstain=abstain)
                row.update({"A": pct(bs["score_a"]), "B": pct(bs["score_b"]), "delta B-A": pct(bs["diff"]),
                            "CI low": pct(bs["ci_low"]), "CI high": pct(bs["ci_high"]), "bootstrap p": bs["p_value"],
                            "significant": bs["significant"]})
            rows.append(row)
    cols = ["lang", "model", "system A", "system B", "claims", "McNemar-Bowker chi2", "df", "p", "metric", "claims (S/R)",
            "A", "B", "delta B-A", "CI low", "CI high", "bootstrap p", "significant"]
    return pd.DataFrame(rows, columns=cols)
