from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from medfc.clinifact import export as EX
from medfc.clinifact import pairs as PR
from medfc.clinifact import steps
from medfc.common.report import SkipReport
from tests.helpers.config import call_step, section
from tests.helpers.figures import PAPERS

REPO = Path(__file__).resolve().parents[3]
DEMO_ZIP = REPO / "resources" / "demo" / "ctgov" / "studies.zip"
DEMO_PUBMED = REPO / "resources" / "demo" / "pubmed"


def _row(i, label, **kw):
    row = {c: f"{c}-{i}" for c in PR.RELEASE_COLUMNS}
    row.update({"index": i, "PMID": 1000 + i, "label": label, "nctId": f"NCT{i:08d}", "pValues": "['<0.001']", "statisticalMethods": "['ANCOVA']",
                "nonInferiorityTypes": "['Superiority']", "Publication Date": f"{2000 + i % 5}-Jan-N/A", "article_abstract": "word " * 20})
    row.update(kw)
    return row


def test_downsample_nei_is_seeded_and_keeps_order():
    df = pd.DataFrame([_row(i, lab) for i, lab in enumerate([1, 1, 1, 0, 0] + [2] * 9)])
    a = PR.downsample_nei(df, seed=1234)
    b = PR.downsample_nei(df.sample(frac=1, random_state=0).sort_values("index"), seed=1234)
    assert a["label"].value_counts().to_dict() == {2: 5, 1: 3, 0: 2}
    assert list(a["index"]) == sorted(a["index"]) and list(a["index"]) == list(b["index"])
    assert list(PR.downsample_nei(df[df.label != 2], seed=1234)["index"]) == [0, 1, 2, 3, 4]


def test_split_64_16_20_is_train_test_split_twice():
    from sklearn.model_selection import train_test_split

    df = pd.DataFrame([_row(i, i % 3) for i in range(100)])
    s = PR.split_pairs(df, seed=1234, test_size=0.2, validation_size=0.2, stratify=False)
    assert (len(s["train"]), len(s["validation"]), len(s["test"])) == (64, 16, 20)
    rest, test = train_test_split(df, test_size=0.2, random_state=1234)
    train, val = train_test_split(rest, test_size=0.2, random_state=1234)
    assert list(s["test"]["index"]) == list(test["index"]) and list(s["validation"]["index"]) == list(val["index"])
    assert list(s["train"]["index"]) == list(train["index"])


def test_make_pairs_filters_with_reasons():
    base = {"nctId": "NCT99000001", "claim": "A is superior to B in terms of X 1 week", "label_id": 1, "outcome_type": "PRIMARY", "outcome_title": "X",
            "intervention_group_title": "A", "comparator_group_title": "B", "intervention_group_arm_group_type": "EXPERIMENTAL",
            "comparator_group_arm_group_type": "PLACEBO_COMPARATOR", "pValues": ["<0.001", ".2"], "statisticalMethods": ["ANCOVA", ""], "nonInferiorityTypes": ["Superiority"]}
    long_abs = "BACKGROUND: " + "text " * 20
    arts = {"1": {"title": "T1", "abstract": long_abs, "publication_date": "2001-Jan-N/A"}, "2": {"title": "T2", "abstract": "too short abstract", "publication_date": "2001-N/A-N/A"},
            "3": {"title": "T3", "abstract": None, "publication_date": "2001-N/A-N/A"}, "5": {"title": None, "abstract": long_abs, "publication_date": "2001-N/A-N/A"}}
    labelled = [{**base, "PMID": "1"}, {**base, "PMID": "1"}, {**base, "PMID": "2"}, {**base, "PMID": "3"}, {**base, "PMID": "4"}, {**base, "PMID": "5"}]
    report = SkipReport("pairs")
    df = PR.make_pairs(labelled, arts, report)
    assert report.reasons() == {"abstract_not_fetched": 1, "abstract_under_min_words": 1, "duplicate_pair": 1, "missing_fields": 1, "no_abstract": 1}
    assert list(df.columns) == PR.RELEASE_COLUMNS and len(df) == 1
    r = df.iloc[0]
    assert (r["index"], r["PMID"], r["label"], r["pValues"], r["statisticalMethods"]) == (0, 1, 1, "['<0.001', '.2']", "['ANCOVA', '']")
    assert PR.parse_list_literal(r["pValues"]) == ["<0.001", ".2"]


def test_release_import_reads_the_official_format(tmp_path, server):
    rel = tmp_path / "release"
    rel.mkdir()
    for name, labels in (("train_set.csv", [1, 0, 2, 2]), ("validation_set.csv", [1]), ("test_set.csv", [0, 2])):
        pd.DataFrame([_row(i, lab) for i, lab in enumerate(labels)]).to_csv(rel / name, index=False)
    out = {k: str(tmp_path / "out" / f"{k}.csv") for k in PR.SPLITS} | {"report": str(tmp_path / "out" / "report.json")}
    assert call_step(steps.import_release, {}, out, {"source": str(rel), "sha256": dict.fromkeys(PR.SPLITS), "cache_dir": str(tmp_path / "cache")}) == {"train": 4, "validation": 1, "test": 2}
    back = PR.read_release_csv(out["train"])
    assert list(back.columns) == PR.RELEASE_COLUMNS and list(back["label"]) == [1, 0, 2, 2]
    assert PR.parse_list_literal(back["nonInferiorityTypes"][0]) == ["Superiority"]
    # from a URL: downloaded once into the cache
    server.handler = lambda m, path, q, b: (200, {}, (rel / path.rsplit("/", 1)[1]).read_bytes())
    opts = {"source": server.url + "/ds4dh/release", "sha256": dict.fromkeys(PR.SPLITS), "cache_dir": str(tmp_path / "cache")}
    call_step(steps.import_release, {}, out, opts)
    call_step(steps.import_release, {}, out, opts)
    assert [p for _, p, _, _ in server.requests] == ["/ds4dh/release/train_set.csv", "/ds4dh/release/validation_set.csv", "/ds4dh/release/test_set.csv"]
    (rel / "bad").mkdir()
    pd.DataFrame([{"nctId": "x"}]).to_csv(rel / "bad" / "train_set.csv", index=False)
    with pytest.raises(ValueError, match="missing columns"):
        PR.read_release_csv(rel / "bad" / "train_set.csv")


def test_demo_end_to_end_through_the_steps(tmp_path, minilm):
    o = {k: str(tmp_path / k) for k in ("studies.jsonl.gz", "fetch.json", "claims.jsonl.gz", "labelled.jsonl.gz", "claims.json", "abstracts.jsonl.gz", "abs.json")}
    studies_opts = {k: v for k, v in section("clinifact.studies", progress=False).items() if k != "bulk_zip"}
    studies_opts |= {"cache_dir": str(tmp_path / "cache"), "user_agent": "medfc-test"}
    assert call_step(steps.fetch_studies, {"zip": str(DEMO_ZIP)}, {"studies": o["studies.jsonl.gz"], "report": o["fetch.json"]}, studies_opts) == 41
    got = call_step(steps.build_claims, {"studies": o["studies.jsonl.gz"]}, {"claims": o["claims.jsonl.gz"], "labelled": o["labelled.jsonl.gz"], "report": o["claims.json"]},
                    section("clinifact.claims"), embedder=minilm)
    assert got == {"claims": 35, "labelled": 39}
    n = call_step(steps.fetch_abstracts, {"labelled": o["labelled.jsonl.gz"]}, {"abstracts": o["abstracts.jsonl.gz"], "report": o["abs.json"]},
                  section("clinifact.pubmed", cache_dir=str(tmp_path / "pm"), extra_cache_dirs=[str(DEMO_PUBMED)], offline=True, progress=False, user_agent="medfc-test"))
    assert n == 36 and json.loads(Path(o["abs.json"]).read_text())["skipped_by_reason"] == {"no_abstract": 1}
    outs = {k: str(tmp_path / "pairs" / f"{k}.csv") for k in ("pairs", "train", "validation", "test")} | {"card": str(tmp_path / "pairs" / "card.md"), "report": str(tmp_path / "pairs" / "report.json")}
    outs |= {f"{k}_parquet": str(tmp_path / "pairs" / f"{k}_set.parquet") for k in PR.SPLITS}
    outs |= {f"instruction_{k}": str(tmp_path / "pairs" / "instruction" / f"{k}_set.jsonl") for k in PR.SPLITS}
    sizes = call_step(steps.build_pairs, {"labelled": o["labelled.jsonl.gz"], "abstracts": o["abstracts.jsonl.gz"]}, outs, section("clinifact.pairs"))
    assert sizes == {"train": 23, "validation": 6, "test": 8}
    rep = json.loads(Path(outs["report"]).read_text())
    # NCT99000041 reports one outcome twice (two analyses, p 0.01 and 0.009): two rows, as in the release
    assert rep["skipped_by_reason"] == {"abstract_under_min_words": 1, "no_abstract": 1}
    allp = pd.concat([PR.read_release_csv(outs[k]) for k in PR.SPLITS])
    assert allp["label"].value_counts().to_dict() == {1: 19, 2: 11, 0: 7}  # NCT99000039's p = 0.05 is EVIDENCE under "<="
    assert len(PR.read_release_csv(outs["pairs"])) == 37
    card = Path(outs["card"]).read_text()
    assert "- pairs: 37" in card and "| total      |         19 |              7 |                       11 |      37 |" in card
    meta = yaml.safe_load(card.split("---\n")[1])  # Hugging Face metadata: the splits' files beside the card
    assert meta["license"] == "mit" and meta["size_categories"] == ["n<1K"] and meta["task_categories"] == ["text-classification"]
    assert meta["configs"] == [{"config_name": "default", "data_files": [{"split": k, "path": f"{k}.csv"} for k in PR.SPLITS]},
                               {"config_name": "parquet", "data_files": [{"split": k, "path": f"{k}_set.parquet"} for k in PR.SPLITS]},
                               {"config_name": "instruction", "data_files": [{"split": k, "path": f"instruction/{k}_set.jsonl"} for k in PR.SPLITS]}]
    assert "## Files and configs" in card
    # beside each split: the typed Parquet copy (same rows) and the release's instruction lines (same order)
    import pyarrow.parquet as pq

    for k in PR.SPLITS:
        csv = PR.read_release_csv(outs[k])
        rows = pq.read_table(outs[f"{k}_parquet"]).to_pylist()
        assert [r["index"] for r in rows] == list(csv["index"]) and [r["claim"] for r in rows] == list(csv["claim"])
        assert [r["pValues"] for r in rows] == [PR.parse_list_literal(v) for v in csv["pValues"]]
        texts = [json.loads(line)["text"] for line in Path(outs[f"instruction_{k}"]).read_text().splitlines()]
        answers = [t.rsplit("## Response:\n", 1)[1] for t in texts]
        assert answers == ([EX.ANSWER_WORDS[int(v)] for v in csv["label"]] if k != "test" else [""] * len(csv))
        assert all(f"Claim: {c}\nAbstract: " in t for c, t in zip(csv["claim"], texts))
    st = tmp_path / "stats"
    souts = {"table_labels": str(st / "t6.csv"), "table_words": str(st / "t4.csv"), "table_classes": str(st / "classes.csv"), "fig_classes": str(st / "fig2.png"),
             "table_years": str(st / "years.csv"), "fig_years": str(st / "figS1.png")}
    call_step(steps.clinifact_stats, {k: outs[k] for k in PR.SPLITS} | {"studies": o["studies.jsonl.gz"], "papers": str(PAPERS)}, souts,
              section("clinifact.stats"))
    for stem in ("t6", "t4", "classes", "years"):
        assert all((st / f"{stem}.{ext}").exists() for ext in ("csv", "md", "tex"))
    assert all((st / f).stat().st_size > 1000 for f in ("fig2.png", "fig2.pdf", "figS1.png", "figS1.pdf"))
    t6 = pd.read_csv(st / "t6.csv")
    assert t6.iloc[-1].to_dict() == {"split": "total", "evidence": 19, "inconclusive": 7, "not enough information": 11, "total": 37}
    classes = pd.read_csv(st / "classes.csv")
    assert "All Conditions" not in set(classes["disease_class"]) and "Rare Diseases" not in set(classes["disease_class"])
    assert classes["claims"].sum() >= 36
    years = pd.read_csv(st / "years.csv")
    assert years["publications"].sum() == allp["PMID"].nunique()
    t4 = pd.read_csv(st / "t4.csv")
    assert list(t4["text"]) == ["claim", "title", "abstract"] and t4.loc[2, "min"] >= 15


def test_rows_sharing_trial_claim_and_pmid_but_not_their_analyses_are_both_kept():
    """The release keeps two rows of one outcome reported twice (e.g. per-protocol and full analysis set,
    p 0.816 and 0.606): only rows identical in every column are duplicates."""
    base = {"nctId": "NCT99000001", "PMID": "1", "claim": "A is superior to B in terms of X 1 week", "label_id": 0, "outcome_type": "PRIMARY",
            "outcome_title": "X", "outcome_description": "Per Protocol", "intervention_group_title": "A", "comparator_group_title": "B",
            "intervention_group_arm_group_type": "EXPERIMENTAL", "comparator_group_arm_group_type": "PLACEBO_COMPARATOR",
            "pValues": ["0.816"], "statisticalMethods": ["ANCOVA"], "nonInferiorityTypes": ["Superiority"]}
    arts = {"1": {"title": "T1", "abstract": "BACKGROUND: " + "text " * 20, "publication_date": "2001-Jan-N/A"}}
    other = {**base, "outcome_description": "Full analysis set", "pValues": ["0.606"]}
    report = SkipReport("pairs")
    df = PR.make_pairs([base, other, dict(base)], arts, report)
    assert list(df["pValues"]) == ["['0.816']", "['0.606']"] and list(df["outcome_description"]) == ["Per Protocol", "Full analysis set"]
    assert report.reasons() == {"duplicate_pair": 1}  # the third row repeats the first in every column


RELEASE_INSTRUCTION = (  # the release's instruction files, data/processed/primary_outcome_publication_instruction/
    "## Instruction:\nGiven a scientific claim and an abstract, determine if the abstract reports positive results (TRUE), inconclusive results (FALSE), "
    "or offers no information (NONE) about the claim.\nThe task is to classify the pair claim abstract as follows:\n"
    "TRUE: if the abstract provides positive support for the claim.\nFALSE: if the abstract provides negative or inconclusive support for the claim.\n"
    "NONE: if the abstract provides contextual or background information without directly reporting results about the claim.\n## Input:\n"
)


def test_instruction_lines_are_the_releases_format(tmp_path):
    """One ``{"text": ...}`` a line, json.dumps' defaults (ASCII escapes, ", " and ": "), the answer word after
    "## Response:" in train/validation and none in test, rows in the split's order."""
    df = pd.DataFrame([_row(0, 1, claim="A is superior to B in terms of X 1 week", article_abstract='BACKGROUND: dose \u2265200\u00a0mg "off".\nRESULTS: p = 0.01'),
                       _row(1, 0, claim="C is non-inferior to D in terms of Y", article_abstract="Plain abstract."),
                       _row(2, 2, claim="E is superior or other to F in terms of Z", article_abstract="Background only.")])
    with_answer, without = tmp_path / "instruction" / "train_set.jsonl", tmp_path / "instruction" / "test_set.jsonl"
    assert EX.write_instruction_jsonl(df, with_answer, with_response=True) == 3
    assert EX.write_instruction_jsonl(df, without, with_response=False) == 3
    raw = with_answer.read_bytes()
    assert raw.isascii() and raw.endswith(b"\n") and raw.count(b"\n") == 3
    first = raw.decode().split("\n")[0]
    assert first == ('{"text": "' + RELEASE_INSTRUCTION.replace("\n", "\\n") + 'Claim: A is superior to B in terms of X 1 week\\n'
                     'Abstract: BACKGROUND: dose \\u2265200\\u00a0mg \\"off\\".\\nRESULTS: p = 0.01\\n## Response:\\nTRUE"}')
    recs = [json.loads(line) for line in with_answer.read_text().splitlines()]
    assert [list(r) for r in recs] == [["text"]] * 3
    assert [r["text"].rsplit("## Response:\n", 1)[1] for r in recs] == ["TRUE", "FALSE", "NONE"]  # 1 evidence, 0 inconclusive, 2 NEI
    assert recs[1]["text"] == RELEASE_INSTRUCTION + "Claim: C is non-inferior to D in terms of Y\nAbstract: Plain abstract.\n## Response:\nFALSE"
    tests = [json.loads(line)["text"] for line in without.read_text().splitlines()]
    assert [t.endswith("\n## Response:\n") for t in tests] == [True] * 3 and tests[2] == recs[2]["text"][: -len("NONE")]
    assert EX.SPLITS_WITH_RESPONSE == ("train", "validation")


def test_parquet_copy_has_typed_list_columns(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    df = pd.DataFrame([_row(0, 1, pValues="['<0.001', '.2']", statisticalMethods="['ANCOVA', '']"),
                       _row(1, 2, pValues="[]", outcome_description=float("nan"))])
    csv = tmp_path / "train_set.csv"
    PR.write_release_csv(df, str(csv))
    split = PR.read_release_csv(csv)  # as build_pairs has them: the CSV's strings
    EX.write_parquet(split, tmp_path / "train_set.parquet")
    table = pq.read_table(tmp_path / "train_set.parquet")
    assert table.schema.names == PR.RELEASE_COLUMNS
    assert {c: table.schema.field(c).type for c in PR.LIST_COLUMNS} == dict.fromkeys(PR.LIST_COLUMNS, pa.list_(pa.string()))
    assert [table.schema.field(c).type for c in ("index", "PMID", "label", "claim", "Publication Date")] == [pa.int64()] * 3 + [pa.string()] * 2
    rows = table.to_pylist()
    assert [r["pValues"] for r in rows] == [["<0.001", ".2"], []] and rows[0]["statisticalMethods"] == ["ANCOVA", ""]
    assert rows[1]["outcome_description"] is None and rows[0]["PMID"] == 1000 and rows[1]["label"] == 2
    # every other cell as in the CSV
    back = pd.read_parquet(tmp_path / "train_set.parquet")
    plain = [c for c in PR.RELEASE_COLUMNS if c not in PR.LIST_COLUMNS]
    pd.testing.assert_frame_equal(back[plain], split[plain], check_dtype=False)
    # an empty split has the same schema
    EX.write_parquet(split.iloc[0:0], tmp_path / "test_set.parquet")
    assert pq.read_schema(tmp_path / "test_set.parquet").remove_metadata() == table.schema.remove_metadata()
