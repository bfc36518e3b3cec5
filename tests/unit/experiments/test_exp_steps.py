"""The experiments stage's workflow steps (training / inference) on tiny random models, called as a rule
calls them (typed options from the schema's defaults)."""

from __future__ import annotations

from pathlib import Path

import pytest

from medfc.experiments.models.options import CLINIFACT_PAIRS

from medfc.common.io import read_json, read_jsonl
from medfc.common.options import OptionsError
from medfc.experiments import steps as S
from medfc.experiments.models.aliases import resolve_model
from medfc.common.labels import CLINIFACT_LABELS
from tests.helpers.config import call_step, section

# ------------------------------------------------------------------------------ models / training


def test_resolve_model_maps_offline_minilm_to_the_packaged_copy():
    path = Path(resolve_model("offline:minilm"))
    assert (path / "config.json").exists()
    assert resolve_model("microsoft/deberta-v3-large") == "microsoft/deberta-v3-large"
    with pytest.raises(ValueError, match="unknown offline model"):
        resolve_model("offline:gpt5")


def test_healthfc_fold_step_writes_predictions_and_info(healthfc_data, train_cfg, tmp_path):
    ds, folds = healthfc_data
    out = {"predictions": str(tmp_path / "p.jsonl"), "info": str(tmp_path / "info.json")}
    hx = section("experiments.healthfc")
    system_options = {k: hx[k] for k in ("threshold", "max_evidence", "neg_ratio", "val_fraction")}
    # the selector's whole model config, as medfc.plan builds it; a model's config names its kind
    train = {"kind": "encoder", **train_cfg.as_dict()}
    system_options["evidence_train"] = train
    options = {"system": "pipeline", "lang": "en", "fold": 1, "train": train, "system_options": system_options, "checkpoint_dir": None}
    call_step(S.healthfc_experiment, {"dataset": str(ds), "folds": str(folds)}, out, options)
    recs = list(read_jsonl(out["predictions"]))
    test_ids = [line.split(",")[0] for line in folds.read_text().splitlines()[1:] if line.endswith(",1")]
    assert [r["id"] for r in recs] == sorted(test_ids)
    assert {r["system"] for r in recs} == {"pipeline"} and all(isinstance(r["pred_evidence_ids"], list) for r in recs)
    info = read_json(out["info"])
    assert info["fold"] == 1 and info["n_test"] == len(recs) and info["model_config_name"] == train_cfg.model
    assert not (tmp_path / "ck").exists()  # no checkpoint_dir: the best weights stay in memory
    # a system's options are exactly its own (its class chosen by the system): a key of another system is refused, naming it
    with pytest.raises(OptionsError, match=r"SingleOptions: unknown options\.system_options\.evidence_train, .*options\.system_options\.threshold$"):
        call_step(S.healthfc_experiment, {"dataset": str(ds), "folds": str(folds)}, out, {**options, "system": "oracle"})


def test_clinifact_train_and_zero_shot_steps(clinifact_data, train_cfg, tiny_gpt2, tmp_path):
    splits = {k: str(v) for k, v in clinifact_data.items()}
    out = {"predictions": str(tmp_path / "d.jsonl"), "info": str(tmp_path / "d.json")}
    call_step(S.pairs_experiment, splits, out, {"data": CLINIFACT_PAIRS.as_dict(), "train": {"kind": "encoder", **train_cfg.as_dict()}, "include_title": True, "predict_splits": ["test"],
                                                    "checkpoint_dir": None})
    recs = list(read_jsonl(out["predictions"]))
    assert len(recs) == 6 and {r["split"] for r in recs} == {"test"}
    assert read_json(out["info"])["sizes"] == {"train": 12, "validation": 6, "test": 6}
    out_zs = {"predictions": str(tmp_path / "z.jsonl"), "info": str(tmp_path / "z.json")}
    zs_options = section("experiments.clinifact.zero_shot", model=str(tiny_gpt2), device="cpu", splits=["test"], cache_dir=str(tmp_path / "c"))
    call_step(S.clinifact_zero_shot, {"test": splits["test"]}, out_zs, zs_options)
    zs = list(read_jsonl(out_zs["predictions"]))
    assert [r["id"] for r in zs] == [r["id"] for r in recs]
    assert all(r["system"] == "zero_shot" and r["pred_label"] in CLINIFACT_LABELS for r in zs)
