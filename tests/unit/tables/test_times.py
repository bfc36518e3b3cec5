"""The time tables: each row's wall and CPU seconds from its jobs' benchmark files, an ensemble's with its
members' jobs, and the plan that feeds them (experiments.time_tables)."""

from __future__ import annotations

import pandas as pd

from medfc.plan import Plan
from medfc.tables import steps as T
from tests.helpers.config import call_step, defaults

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(tmp_path, name: str, wall, cpu) -> str:
    path = tmp_path / f"{name}.tsv"
    path.write_text(HEADER + f"{wall}\t0:00:10\t1\t1\t1\t1\t0\t0\t0\t{cpu}\n", encoding="utf-8")
    return str(path)


def test_a_healthfc_row_sums_its_folds_and_an_ensemble_counts_its_members(tmp_path):
    entries, files = [], []
    for model, per_fold in {"tfidf": [(2.0, 1.5), (3.0, 2.5)], "frozen-minilm": [(60.0, 110.0), (5.0, 8.0)], "both": [(1.0, 0.5), (1.0, "NA")]}.items():
        for fold, (wall, cpu) in enumerate(per_fold):
            entries.append({"lang": "en", "model": model, "system": "oracle", "fold": fold})
            files.append(_bench(tmp_path, f"{model}{fold}", wall, cpu))
    out = {k: str(tmp_path / f"t.{k}") for k in ("csv", "md", "tex")}
    options = {"entries": entries, "scale": "cpu", "ensembles": {"both": ["tfidf", "frozen-minilm"]}}
    assert call_step(T.healthfc_times, {"benchmarks": files}, out, options) == {"rows": 3}
    df = pd.read_csv(out["csv"], dtype=str, keep_default_na=False)
    assert df.to_dict("records") == [
        {"lang": "en", "model": "tfidf", "system": "oracle", "jobs": "2", "wall s": "5.0", "CPU s": "4.0", "own wall s": "5.0", "own CPU s": "4.0",
         "members": ""},
        {"lang": "en", "model": "frozen-minilm", "system": "oracle", "jobs": "2", "wall s": "65.0", "CPU s": "118.0", "own wall s": "65.0",
         "own CPU s": "118.0", "members": ""},
        # the ensemble's own CPU seconds are unknown (one job too short to sample): its totals say so, not a smaller number
        {"lang": "en", "model": "both", "system": "oracle", "jobs": "2", "wall s": "72.0", "CPU s": "", "own wall s": "2.0", "own CPU s": "",
         "members": "tfidf, frozen-minilm"},
    ]
    assert "an ensemble's wall s and CPU s include its members' jobs" in open(out["md"], encoding="utf-8").read()


def test_the_plan_feeds_the_time_tables_the_benchmark_files_when_asked():
    cfg = defaults()
    cfg["models"]["ensembles"] = {"tfidf+gbm": {"members": ["tfidf", "gbm"], "weights": None, "method": "average"}}
    cfg["models"]["clinifact"] = {"discriminative": ["tfidf", "gbm", "tfidf+gbm"], "zero_shot": ["llm"], "fine_tuned": []}
    cfg["models"]["aliases"] = {"llm": "org/llm"}
    cfg["experiments"]["healthfc"]["folds"] = [0]
    cfg["stages"]["experiments"] = True
    times = [{"table": "clinifact_times"}, {"table": "healthfc_times"}]
    assert not [w for w in Plan(cfg).planned_wildcards()["table"] if w in times]
    cfg["experiments"]["time_tables"] = True
    plan = Plan(cfg)
    assert [w for w in plan.planned_wildcards()["table"] if w in times] == times[::-1]
    assert plan.tables.table_inputs("clinifact_times") == {"benchmarks": [
        "results/timings/experiments/clinifact/tfidf.tsv", "results/timings/experiments/clinifact/gbm.tsv",
        "results/timings/experiments/clinifact/tfidf+gbm.tsv", "results/timings/experiments/clinifact/zero_shot/llm.tsv"]}
    assert plan.tables.table("clinifact_times")["ensembles"] == {"tfidf+gbm": ["tfidf", "gbm"]}
    assert plan.tables.table_inputs("healthfc_times")["benchmarks"][0] == "results/timings/experiments/healthfc/en/tfidf/pipeline/fold0.tsv"
