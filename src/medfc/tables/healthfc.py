"""HealthFC Tables 3 and 5, the open-domain comparison and the significance tests (Vladika et al., 2024): each a
tidy frame and a LaTeX table in the paper's layout; ``*_extra``: what we score beyond its columns."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
import pandas as pd

from medfc.common.io import read_json
from medfc.common.latex import DASH, Block, Column, LatexTable, MeanSD, Tex, marked
from medfc.common.labels import VERACITY_LABELS
from medfc.experiments.healthfc.systems import OPEN_DOMAIN_SYSTEMS, TABLE3_SYSTEMS, TABLE5_SYSTEMS, evidence_source, system as system_spec
from medfc.scoring import classification, medsnip
from medfc.common.jsontypes import JSONValue
from medfc.common.papers import reported_title
from medfc.tables.common import (SCALE_TITLES, SMOKE_NOTE, Entry, grouped, mean_sd, not_run_note, ours_only, pct, pm,
                                 pooled, stack_kept, stack_note)

Row = dict[str, object]  # one row of a table
ExperimentRow = tuple[str, str, str, list[dict], dict]  # lang, model, system, the folds' scores, their aggregate


T3_COLUMNS = ["source", "scale", "lang", "model", "system", "folds", "evidence P", "evidence R", "evidence F1", "evidence-class F1",
              "veracity P", "veracity R", "veracity F1", "FEVER strict", "AVeriTeC@0.25", "FF1", "FF1 coverage"]
T5_COLUMNS = ["source", "scale", "lang", "model", "experiment", "folds", "P", "R", "F1", "accuracy"]
T3_KEYS = {"evidence P": "evidence.macro_precision", "evidence R": "evidence.macro_recall",
           "evidence F1": "evidence.macro_f1", "veracity P": "veracity.macro_precision",
           "veracity R": "veracity.macro_recall", "veracity F1": "veracity.macro_f1"}
T3_PAPER_KEYS = ("ev_p", "ev_r", "ev_f1", "ver_p", "ver_r", "ver_f1")  # the same columns in the numbers file
# what we score beyond the paper's columns (FF1 coverage: the share of the supported / refuted claims FF1 scores)
T3_EXTRA_KEYS = {"evidence-class F1": "evidence.f1", "FEVER strict": "fever.strict",
                 "AVeriTeC@0.25": "averitec.score.0.25", "FF1": "medsnip.ff1", "FF1 coverage": "medsnip.coverage"}
OPEN_DOMAIN_COLUMNS = ["source", "scale", "lang", "model", "experiment", "evidence", "claims", "folds", "P", "R", "F1", "accuracy"]


def _paper_row(papers: Mapping[str, JSONValue], model: str, **values: JSONValue) -> Row:
    lang = "de" if "German" in model else "en"
    return {"source": f"paper ({papers['healthfc']['cite']})", "scale": "paper", "lang": lang, "model": model, "folds": 5, **values}


def _our_rows(data: Sequence[ExperimentRow], systems: Sequence[str], scale: str, name: str,
             cells: Callable[[dict, list[dict]], Row]) -> list[Row]:
    """One row of ours per (lang, model, system) of :func:`_experiment_rows` (the system under ``name``), sorted by
    lang, model and the order of ``systems``, with the ``cells`` of the folds' aggregate and the folds' scores."""
    rows = [{"source": "ours", "scale": scale, "lang": lang, "model": model, name: system, "folds": len(folds),
             **cells(agg, folds)} for lang, model, system, folds, agg in data]
    order = {s: i for i, s in enumerate(systems)}
    return sorted(rows, key=lambda r: (r["lang"], r["model"], order[r[name]]))


def _veracity_rows(data: Sequence[ExperimentRow], systems: Sequence[str], scale: str) -> list[Row]:
    """One row of ours per (lang, model, system): macro P/R/F1 and accuracy, mean ± std over folds."""
    return _our_rows(data, systems, scale, "experiment", lambda agg, folds: {
        "P": pm(agg, "veracity.macro_precision"), "R": pm(agg, "veracity.macro_recall"),
        "F1": pm(agg, "veracity.macro_f1"), "accuracy": pm(agg, "veracity.accuracy"),
        "n": sum(int(f.get("n", 0)) for f in folds)})


def significance(predictions: Sequence[str], entries: Sequence[Entry], comparisons: Sequence[Sequence[str]], *,
                 metric: str, n_resamples: int, seed: int, abstain: str) -> pd.DataFrame:
    """Per (lang, model) and configured pair (A, B) of systems, folds pooled: McNemar–Bowker on their labels and the
    MedSNIP paired bootstrap 95% CI of Δ = metric(B) − metric(A) over the supported / refuted claims."""
    groups = grouped(entries, predictions, ("lang", "model", "system"))
    rows = []
    for lang, model in sorted({(k[0], k[1]) for k in groups}):
        for a, b in comparisons:
            if (lang, model, a) not in groups or (lang, model, b) not in groups:
                continue
            pa, pb = (pooled([f for _, f in groups[(lang, model, s)]]) for s in (a, b))
            ids = sorted(set(pa) & set(pb))
            mb = classification.mcnemar_bowker([str(pa[i]["pred_label"]) for i in ids], [str(pb[i]["pred_label"]) for i in ids], VERACITY_LABELS)
            kept, gold, pred_a = medsnip.healthfc_binary([pa[i] for i in ids])
            pred_b = [medsnip.normalise_verdict(pb[ids[k]]["pred_label"]) for k in kept]
            row: Row = {"lang": lang, "model": model, "system A": a, "system B": b, "claims": len(ids),
                                   "McNemar-Bowker chi2": round(mb["statistic"], 3), "df": mb["df"], "p": mb["p_value"],
                                   "metric": metric, "claims (S/R)": len(kept)}
            if kept:
                bs = medsnip.paired_bootstrap(gold, pred_a, pred_b, metric=metric, n_resamples=n_resamples, seed=seed, abstain=abstain)
                row.update({"A": pct(bs["score_a"]), "B": pct(bs["score_b"]), "delta B-A": pct(bs["diff"]), "CI low": pct(bs["ci_low"]),
                            "CI high": pct(bs["ci_high"]), "bootstrap p": bs["p_value"], "significant": bs["significant"]})
            rows.append(row)
    cols = ["lang", "model", "system A", "system B", "claims", "McNemar-Bowker chi2", "df", "p", "metric", "claims (S/R)",
            "A", "B", "delta B-A", "CI low", "CI high", "bootstrap p", "significant"]
    return pd.DataFrame(rows, columns=cols)


EXPERIMENT_TITLES = {"claims_only": "Claims only", "retrieved_web": "Web snippets", "retrieved_pubmed": "PubMed snippets",
                     "retrieved_wikipedia": "Wikipedia snippets", "gold_explanations": "Gold explanations", "level_of_evidence": "Level of evidence"}
PAPER_EXPERIMENT_TITLES = {**EXPERIMENT_TITLES, "retrieved_web": "Google snippets"}  # the paper's names of its rows


def _model_title(lang: str, model: str) -> str:
    return f"{model} (German)" if lang == "de" else model


def _model_cell(lang: str, model: str, marks: Mapping[str, str]) -> object:
    title = _model_title(lang, model)
    return marked(title, marks[model]) if model in marks else title


def _paper_sd(row: Mapping[str, JSONValue], key: str) -> MeanSD | None:
    v = row.get(key)
    return None if v is None else MeanSD(float(v), (row.get("sd") or {}).get(key))


def _notes(scale: str, marks: Mapping[str, str], kept: Mapping[str, str], paper_models: Sequence[str], our_models: Sequence[str],
           *extra: str) -> list[str]:
    notes = [n for n in extra if n]
    notes += [f"{marks[m]}: {stack_note(m, kept[m])}" for m in marks]
    notes.append(not_run_note(paper_models, our_models))
    if scale == "smoke":
        notes.append(SMOKE_NOTE)
    return [n for n in notes if n]


def table3(scores: Sequence[str], entries: Sequence[Entry], papers: Mapping[str, JSONValue], scale: str,
           infos: Sequence[str] = ()) -> tuple[pd.DataFrame, LatexTable]:
    """Table 3: evidence and veracity macro P/R/F1, mean ± std over folds, our rows then the paper's; as a frame and in
    the paper's layout (the oracle's veracity F1 on the same model's pipeline row)."""
    data = _experiment_rows(scores, entries, TABLE3_SYSTEMS)
    rows = _our_rows(data, TABLE3_SYSTEMS, scale, "system",
                     lambda agg, _: {c: pm(agg, k) for c, k in {**T3_KEYS, **T3_EXTRA_KEYS}.items()})
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
                values = {c: v[k] for c, k in zip(T3_KEYS, T3_PAPER_KEYS)}
                rows.append(_paper_row(papers, model, system=system, **values))
    agg = {(lang, model, system): a for lang, model, system, _, a in data}
    kept, marks = stack_kept(infos, scores, entries)
    ours = []
    for system in ("pipeline", "joint"):
        for lang, model in sorted({(k[0], k[1]) for k in agg}):
            a = agg.get((lang, model, system))
            oracle = agg.get((lang, model, "oracle")) if system == "pipeline" else None
            if a is None and oracle is None:
                continue
            a = a or {}
            ours.append([system, _model_cell(lang, model, marks), *(mean_sd(a, k) for k in T3_KEYS.values()),
                         mean_sd(oracle, "veracity.macro_f1") if oracle else (DASH if system == "joint" else None)])
    ran = {k[2] for k in agg} | ({"pipeline"} if any(k[2] == "oracle" for k in agg) else set())
    paper, paper_models = [], []
    for system in ("pipeline", "joint"):
        if system not in ran:
            continue
        for model, v in t3[system].items():
            paper_models.append(model)
            paper.append([system, model, *(_paper_sd(v, k) for k in T3_PAPER_KEYS),
                          _paper_sd(v, "oracle_f1") if "oracle_f1" in v else DASH])
    columns = [Column("System", align="l"), Column("Base Model", align="l"),
               *(Column(h, group="Evidence Selection") for h in ("Precision", "Recall", "F1 Macro")),
               *(Column(h, group="Veracity Prediction") for h in ("Precision", "Recall", "F1 Macro")), Column("F1 Macro", group="Oracle Ver. Pred.")]
    folds = max((len(r[3]) for r in data), default=0)
    caption = ("HealthFC Table 3: evidence selection and veracity prediction, macro precision, recall and F1 (%), the mean "
               f"and standard deviation (subscript) over the folds of a cross-validation (ours: {folds} folds; the paper: 5). "
               "Oracle Ver. Pred.: the pipeline's veracity prediction with the gold evidence sentences.")
    notes = _notes(scale, marks, kept, paper_models, [k[1] for k in agg],
                   "FEVER, AVeriTeC and false-class F1 of our rows: the companion table healthfc_table3_extra.")
    blocks = [Block(ours, SCALE_TITLES[scale]),
              *([Block(paper, reported_title(papers["healthfc"]["cite"]))] if paper else [])]
    return (pd.DataFrame(rows, columns=T3_COLUMNS).fillna(""),
            LatexTable(caption, "tab:healthfc-table3", columns, blocks, notes=notes, merge_first=True))


def table3_extra(scores: Sequence[str], entries: Sequence[Entry], scale: str) -> tuple[pd.DataFrame, LatexTable]:
    """Table 3's companion: evidence-class F1, FEVER, AVeriTeC, false-class F1 of our rows (frame and LaTeX)."""
    keys = T3_EXTRA_KEYS.items()
    rows, tex_rows = [], []
    for lang, model, system, folds, agg in _experiment_rows(scores, entries, TABLE3_SYSTEMS):
        rows.append({"scale": scale, "lang": lang, "model": model, "system": system, "folds": len(folds),
                     **{name: pm(agg, key) for name, key in keys}})
        tex_rows.append([system, _model_title(lang, model), len(folds), *(mean_sd(agg, key) for _, key in keys)])
    columns = [Column("System", align="l"), Column("Base Model", align="l"), Column("Folds", fmt="int"),
               Column("Evid. F1", group="Evidence"), Column("Strict", group="FEVER"), Column("@0.25", group="AVeriTeC"),
               Column("FF1", group="False class"), Column("Coverage", group="False class")]
    caption = ("HealthFC Table 3, companion: what we score beyond the paper's columns (%), mean and standard deviation "
               "(subscript) over folds. Evid. F1: F1 of the evidence class of the sentences; FEVER strict: the claims whose "
               "label is right and whose selected sentences hold a complete gold set; AVeriTeC@0.25: the label counts "
               "where the selected evidence matches the gold at 0.25 or more; FF1: F1 of the false class over the supported "
               "and refuted claims with a TRUE or FALSE prediction (scoring.abstain), Coverage: the share of them it scores.")
    table = ours_only(caption, "tab:healthfc-table3-extra", columns, tex_rows, scale)
    cols = ["scale", "lang", "model", "system", "folds", *(name for name, _ in keys)]
    return pd.DataFrame(rows, columns=cols), table


def _experiment_rows(scores: Sequence[str], entries: Sequence[Entry], systems: Sequence[str]) -> list[ExperimentRow]:
    """(lang, model, system, the folds' scores, their aggregate) of the runs of ``systems``, by system, lang, model."""
    data = {(str(k[0]), str(k[1]), str(k[2])): [read_json(f) for _, f in items]
            for k, items in grouped(entries, scores, ("lang", "model", "system")).items() if k[2] in systems}
    order = {s: i for i, s in enumerate(systems)}
    keys = sorted(data, key=lambda k: (order[k[2]], k[0], k[1]))
    return [(*k, data[k], classification.aggregate_folds(data[k])) for k in keys]


def table5(scores: Sequence[str], entries: Sequence[Entry], papers: Mapping[str, JSONValue], scale: str,
           infos: Sequence[str] = ()) -> tuple[pd.DataFrame, LatexTable]:
    """Table 5: veracity with other evidence or none, macro P/R/F1 mean ± std, our rows then the paper's (those of the
    experiments we ran); as a frame and in the paper's layout, with a Base Model column."""
    ran = _experiment_rows(scores, entries, TABLE5_SYSTEMS)
    rows = _veracity_rows(ran, TABLE5_SYSTEMS, scale)
    hf = papers["healthfc"]
    for system in [s for s in TABLE5_SYSTEMS if any(r["experiment"] == s for r in rows)]:
        v = hf["table5"].get(system)
        if v is not None:
            rows.append(_paper_row(papers, hf["table5_model"], experiment=system, P=v["p"], R=v["r"], F1=v["f1"]))
    kept, marks = stack_kept(infos, scores, entries)
    ours = [[EXPERIMENT_TITLES.get(system, system), _model_cell(lang, model, marks),
             *(mean_sd(agg, f"veracity.{k}") for k in ("macro_precision", "macro_recall", "macro_f1"))]
            for lang, model, system, _, agg in ran]
    paper = [[PAPER_EXPERIMENT_TITLES.get(s, s), hf["table5_model"], *(_paper_sd(hf["table5"][s], k) for k in ("p", "r", "f1"))]
             for s in TABLE5_SYSTEMS if any(r[2] == s for r in ran) and s in hf["table5"]]
    columns = [Column("Experiment", align="l"), Column("Base Model", align="l"), Column("P"), Column("R"), Column("F1")]
    caption = ("HealthFC Table 5: veracity prediction with other evidence (none, retrieved snippets, the gold explanations) "
               "and the prediction of the level of evidence; macro precision, recall and F1 (%), the mean and standard "
               "deviation (subscript) over folds. The paper's Google snippets are the first ten results of a Google search; "
               "ours come from the run's own search (experiments.retrieval).")
    notes = _notes(scale, marks, kept, [hf["table5_model"]] if paper else [], [r[1] for r in ran],
                   "Accuracy and the claims scored of our rows: the companion table healthfc_table5_extra.")
    blocks = [Block(ours, SCALE_TITLES[scale]), *([Block(paper, reported_title(hf["cite"]))] if paper else [])]
    return (pd.DataFrame(rows, columns=T5_COLUMNS).fillna(""),
            LatexTable(caption, "tab:healthfc-table5", columns, blocks, notes=notes, merge_first=True))


def table5_extra(scores: Sequence[str], entries: Sequence[Entry], scale: str) -> tuple[pd.DataFrame, LatexTable]:
    """Table 5's companion: accuracy and the claims scored of our rows."""
    data = _experiment_rows(scores, entries, TABLE5_SYSTEMS)
    rows = _our_rows(data, TABLE5_SYSTEMS, scale, "experiment", lambda agg, folds: {  # the frame in Table 5's row order
        "claims": sum(int(f.get("n", 0)) for f in folds), "accuracy": pm(agg, "veracity.accuracy")})
    tex_rows = [[EXPERIMENT_TITLES.get(system, system), _model_title(lang, model), len(folds),
                 sum(int(f.get("n", 0)) for f in folds), mean_sd(agg, "veracity.accuracy")]
                for lang, model, system, folds, agg in data]
    columns = [Column("Experiment", align="l"), Column("Base Model", align="l"), Column("Folds", fmt="int"),
               Column("Claims", fmt="int"), Column("Accuracy")]
    caption = ("HealthFC Table 5, companion: accuracy (%), the mean and standard deviation (subscript) over folds, and the "
               "claims scored over all folds, of our rows.")
    table = ours_only(caption, "tab:healthfc-table5-extra", columns, tex_rows, scale)
    return pd.DataFrame(rows, columns=["scale", "lang", "model", "experiment", "folds", "claims", "accuracy"]), table


def open_domain(scores: Sequence[str], entries: Sequence[Entry], papers: Mapping[str, JSONValue],
                scale: str) -> tuple[pd.DataFrame, LatexTable]:
    """The open-domain comparison (supported vs refuted, evidence from each source): our rows, then the binary F1
    the HealthFC paper cites for the sources we ran; as a frame and in LaTeX."""
    exp = _experiment_rows(scores, entries, OPEN_DOMAIN_SYSTEMS)
    rows = _veracity_rows(exp, OPEN_DOMAIN_SYSTEMS, scale)
    for r in rows:
        r["evidence"] = evidence_source(r["experiment"])
        r["claims"] = r.pop("n")
    od = papers["healthfc"]["open_domain"]
    for system in [s for s in OPEN_DOMAIN_SYSTEMS if any(r["experiment"] == s for r in rows)]:
        source = evidence_source(system)
        if source in od["f1"]:
            rows.append({"source": f"paper ({od['cite']})", "scale": "paper", "lang": "en", "model": od["model"],
                         "experiment": system, "evidence": source, "claims": od["claims"], "folds": "",
                         "F1": od["f1"][source]})
    ours = [[str(evidence_source(system)), _model_title(lang, model), sum(int(f.get("n", 0)) for f in folds),
             *(mean_sd(agg, f"veracity.{k}") for k in ("macro_precision", "macro_recall", "macro_f1", "accuracy"))]
            for lang, model, system, folds, agg in exp]
    ran = dict.fromkeys(str(evidence_source(s)) for _, _, s, *_ in exp)
    paper = [[src, od["model"], od["claims"], None, None, MeanSD(float(od["f1"][src])), None] for src in ran if src in od["f1"]]
    columns = [Column("Evidence", align="l"), Column("Base Model", align="l"), Column("Claims", fmt="int"),
               Column("P"), Column("R"), Column("F1"), Column("Accuracy")]
    caption = ("HealthFC open-domain verification: supported vs refuted claims with evidence retrieved from each source; "
               "macro precision, recall and F1 over the two classes and accuracy (%), the mean and standard deviation "
               "(subscript) over folds; Claims: the claims scored over all folds.")
    notes = ["The reported F1 is the binary F1 of Vladika and Matthes (2024) on 327 supported and refuted claims, as the "
             "HealthFC paper cites it; it states no precision, recall or accuracy."] if paper else []
    if scale == "smoke":
        notes.append(SMOKE_NOTE)
    blocks = [Block(ours, SCALE_TITLES[scale]), *([Block(paper, reported_title(od["cite"]))] if paper else [])]
    return (pd.DataFrame(rows, columns=OPEN_DOMAIN_COLUMNS).fillna(""),
            LatexTable(caption, "tab:healthfc-open-domain", columns, blocks, notes=notes, merge_first=True))


def significance_latex(df: pd.DataFrame, scale: str) -> LatexTable:
    """The significance tests of :func:`significance` in LaTeX."""
    rows = []
    for r in df.to_dict("records"):
        has_bs = r.get("delta B-A") is not None and not (isinstance(r.get("delta B-A"), float) and pd.isna(r["delta B-A"]))
        ci = Tex(rf"[{_signed(r['CI low'])}, {_signed(r['CI high'])}]", 13) if has_bs else None
        rows.append([_model_title(str(r["lang"]), str(r["model"])), str(r["system A"]), str(r["system B"]), r["claims"], r["McNemar-Bowker chi2"],
                     r["df"], r["p"], r["claims (S/R)"], *((r["A"], r["B"], r["delta B-A"], ci, r["bootstrap p"]) if has_bs else (None,) * 5)])
    metric = str(df["metric"].iloc[0]) if len(df) else ""
    metric_title = {"ff1": "FF1", "tf1": "TF1", "macro_f1": "macro-F1", "accuracy": "accuracy"}.get(metric, metric)
    bs = f"Paired bootstrap, {metric_title} (%)"
    columns = [Column("Base Model", align="l"), Column("A", align="l"), Column("B", align="l"), Column("Claims", fmt="int"),
               Column("χ²", group="McNemar–Bowker", fmt="dec1"), Column("df", group="McNemar–Bowker", fmt="int"),
               Column("p", group="McNemar–Bowker", fmt="p3"), Column("Claims", group=bs, fmt="int"),
               *(Column(h, group=bs, fmt="dec1") for h in ("A", "B", "Δ")), Column("95% CI", group=bs),
               Column("p", group=bs, fmt="p3")]
    caption = ("HealthFC: significance of the differences between systems, the folds' test predictions pooled. "
               "McNemar–Bowker on the three-way labels of the same claims; the MedSNIP paired bootstrap of "
               f"{metric_title} over the supported and refuted claims, Δ = B − A with its 95% interval.")
    return ours_only(caption, "tab:healthfc-significance", columns, rows, scale)


def _signed(x: object) -> str:
    v = float(x)  # type: ignore[arg-type]
    return f"$-${abs(v):.1f}" if v < 0 else f"{v:.1f}"
