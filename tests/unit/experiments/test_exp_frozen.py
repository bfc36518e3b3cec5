"""The frozen-encoder model kind: a tiny BERT's mean-pooled embeddings into logistic regression, the
on-disk store of the embeddings (each text encoded once per recipe, kill-safe batches, damaged files
counted and encoded again, two writers at once), and the CliniFact and HealthFC systems run with it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from medfc.common.options import OptionsError
from medfc.experiments import pairs as CF
from medfc.experiments import pairs as CD
from medfc.experiments.healthfc import runs as H
from medfc.experiments.models.embeddings import EmbeddingStore, EmbedStats, Recipe, text_digest
from medfc.experiments.records import Example
from medfc.experiments.models.frozen import FrozenModel, evidence_text
from medfc.experiments.models.kinds import build_model
from medfc.experiments.models.options import CLINIFACT_PAIRS, PairsTrainOptions, FrozenOptions
from tests.helpers.config import section
from tests.helpers.experiment_data import healthfc_options

LABELS = ["evidence", "inconclusive", "NEI"]
WORDS = {"evidence": "trial showed clear benefit", "inconclusive": "evidence is contradictory", "NEI": "we searched for studies"}


def frozen_options(model, cache_dir, **kw) -> FrozenOptions:
    """experiments.frozen as the plan passes it: the schema's defaults, the model and the resolved cache_dir."""
    return FrozenOptions.from_mapping(section("experiments.frozen", model=f"frozen:{model}", cache_dir=str(cache_dir), progress=False, **kw))


def _pairs(n: int, claim: str = "does coffee protect", start: int = 0) -> list[Example]:
    """``n`` examples per label, each claim its own, the evidence naming the label's words and a number."""
    return [Example(f"{claim} {10 * i + k}", f"the {WORDS[lab]} in {k} patients", lab) for i, lab in enumerate(LABELS)
            for k in range(start, start + n)]


def test_a_frozen_model_learns_a_separable_set_and_reports_what_it_encoded(tiny_bert, tmp_path):
    options = frozen_options(tiny_bert, tmp_path / "emb", C_grid=[0.01, 1.0])
    model = build_model(options, threads=1)
    assert isinstance(model, FrozenModel) and options.encoder == str(tiny_bert)
    train, test = _pairs(6), [Example("does zinc help", f"the {WORDS[lab]} in 9 patients", lab) for lab in LABELS]
    fitted = model.fit(train, LABELS, _pairs(2, "is red wine healthy", start=6))
    probs = fitted.probs(test)
    assert probs.shape == (3, 3) and np.allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    assert [LABELS[i] for i in probs.argmax(axis=1)] == LABELS
    info = fitted.result.as_dict()
    assert info["n_train"] == 24 and info["n_features"] == 4 * 16 and info["pairs"] and info["evidence_side"] == "head"  # [u, v, |u-v|, u*v]
    assert set(info["cv"]) == {"0.01", "1"} and info["C"] == max((1.0, 0.01), key=lambda c: (info["cv"][f"{c:g}"], c == 0.01))
    # 18 training + 6 validation examples (refit on both), then 3 test examples sharing one claim: each text encoded once
    assert fitted.encode_stats.as_dict() | {"encode_seconds": 0} == {"texts": 52, "cached": 0, "encoded": 52, "truncated": 0,
                                                                     "files_written": 4, "damaged_files": 0, "encode_seconds": 0}
    assert fitted.probs([]).shape == (0, 3)


def test_the_second_fit_encodes_nothing_and_a_new_text_once(tiny_bert, tmp_path):
    options = frozen_options(tiny_bert, tmp_path / "emb", C_grid=[1.0])
    first = build_model(options, 1).fit(_pairs(3), LABELS)
    p1 = first.probs(_pairs(1, "is ginger good"))
    # a new job (another system, fold or a rerun): every text from the store, and torch never loaded
    again = build_model(options, 1)
    second = again.fit(_pairs(3), LABELS)
    assert again.encoder._loaded is None
    assert np.allclose(second.probs(_pairs(1, "is ginger good")), p1, atol=1e-6)
    assert (again.encoder.stats.encoded, again.encoder.stats.cached) == (0, 9 + 9 + 3 + 3)
    second.probs([Example("a claim never seen", "the trial showed clear benefit in 0 patients")])
    assert again.encoder.stats.encoded == 1  # the claim; its evidence was stored
    # a claim and its evidence are kept apart by recipe: the same text at another length is encoded again
    assert {p.name for p in (tmp_path / "emb").iterdir()} == {Recipe(str(tiny_bert), n, "head").folder for n in (128, 256)}


def test_without_a_cache_dir_nothing_is_kept(tiny_bert, tmp_path):
    options = frozen_options(tiny_bert, "", C_grid=[1.0])
    build_model(options, 1).fit(_pairs(2), LABELS)
    again = build_model(options, 1)
    again.fit(_pairs(2), LABELS)
    assert again.encoder.stats.encoded == 12 and not list(tmp_path.iterdir())


def _store(tmp_path, stats=None) -> EmbeddingStore:
    return EmbeddingStore(tmp_path / "emb", Recipe("m", 64, "head"), stats)


def _vecs(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, 4)).astype(np.float32)


def test_a_damaged_batch_file_is_a_counted_miss_and_set_aside(tiny_bert, tmp_path):
    options = frozen_options(tiny_bert, tmp_path / "emb", C_grid=[1.0], batch_size=4)
    build_model(options, 1).fit(_pairs(2), LABELS)  # 6 claims, 6 evidence texts: one merged file per recipe
    files = sorted((tmp_path / "emb").glob("*/*.npz"))
    assert len(files) == 2
    files[0].write_bytes(files[0].read_bytes()[:100])  # cut short, e.g. by a full disk or a copy
    again = build_model(options, 1)
    fitted = again.fit(_pairs(2), LABELS)
    assert (again.encoder.stats.damaged_files, again.encoder.stats.encoded, again.encoder.stats.cached) == (1, 6, 6)
    assert files[0].with_name(files[0].name + ".damaged").exists() and not files[0].exists()
    third = build_model(options, 1)
    third.fit(_pairs(2), LABELS)
    assert (third.encoder.stats.damaged_files, third.encoder.stats.encoded) == (0, 0)  # counted once, encoded once
    assert fitted.probs(_pairs(1)).shape == (3, 3)


@pytest.mark.parametrize("damage", ["other recipe", "not finite", "wrong shape", "not a zip"])
def test_a_batch_file_that_is_not_this_recipes_whole_vectors_is_damaged(tmp_path, damage):
    good = _store(tmp_path)
    good.put([text_digest("a"), text_digest("b")], _vecs(2))
    bad = _store(tmp_path) if damage != "other recipe" else EmbeddingStore(tmp_path / "emb", Recipe("other", 64, "head"))
    bad.dir = good.dir
    vecs = _vecs(1, 1)
    if damage == "not finite":
        vecs[0, 0] = np.nan
    if damage == "wrong shape":
        vecs = _vecs(1, 1)[:, :3]
    bad.put([text_digest("c")], vecs)
    if damage == "not a zip":
        next(p for p in good.dir.glob("*.npz") if p not in good._written).write_bytes(b"PK\x03\x04 not really")
    stats = EmbedStats()
    have = _store(tmp_path, stats).load()
    assert sorted(have) == sorted([text_digest("a"), text_digest("b")]) and stats.damaged_files == 1
    assert np.array_equal(have[text_digest("a")], _vecs(2)[0])


KILLED_WRITER = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    from medfc.experiments.models.embeddings import EmbeddingStore, Recipe, text_digest

    store = EmbeddingStore(sys.argv[1], Recipe("m", 64, "head"))
    store.put([text_digest(t) for t in ("a", "b")], np.ones((2, 4), np.float32))   # committed
    real = np.savez
    def savez_then_die(fh, **arrays):                                              # killed while writing the next
        fh.write(b"PK\\x03\\x04 half a batch")
        fh.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    np.savez = savez_then_die
    store.put([text_digest(t) for t in ("c", "d")], np.zeros((2, 4), np.float32))
""")


def test_a_kill_while_writing_loses_only_the_batch_in_flight(tmp_path):
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(tmp_path / "emb")], env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == -signal.SIGKILL
    stats = EmbedStats()
    have = _store(tmp_path, stats).load()
    assert sorted(have) == sorted(text_digest(t) for t in "ab") and stats.damaged_files == 0
    assert np.array_equal(have[text_digest("a")], np.ones(4, np.float32))
    assert len(list((tmp_path / "emb").glob("*/.*.tmp"))) == 1  # the torn batch stays under its temporary name, never read


WRITER = textwrap.dedent("""
    import sys
    import numpy as np
    from medfc.experiments.models.embeddings import EmbeddingStore, Recipe, text_digest

    store = EmbeddingStore(sys.argv[1], Recipe("m", 64, "head"))
    me = int(sys.argv[2])
    for b in range(40):
        texts = [f"shared {b}", f"own {me} {b}"]
        store.put([text_digest(t) for t in texts], np.array([[b, 0, 0, 1], [b, me, 1, 0]], np.float32))
        store.load()  # reading while the other writes
    store.merge_written()
""")


def test_two_jobs_writing_one_store_at_once_leave_every_vector_whole(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path / "emb"), str(me)], env=env) for me in (1, 2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    stats = EmbedStats()
    have = _store(tmp_path, stats).load()
    assert stats.damaged_files == 0 and len(have) == 40 * 3
    assert all(np.array_equal(have[text_digest(f"own {me} {b}")], [b, me, 1, 0]) for me in (1, 2) for b in range(40))
    assert len(list((tmp_path / "emb").glob("*/*.npz"))) == 2  # each job's batches merged into one file


def test_the_options_name_the_encoder_and_refuse_a_name_without_one(tmp_path):
    assert frozen_options("offline:mpnet", tmp_path).encoder == "offline:mpnet"
    with pytest.raises(OptionsError, match=r"x\.model: 'frozen' names no encoder"):
        FrozenOptions.from_mapping(section("experiments.frozen", model="frozen", cache_dir=""), where="x")


def test_clinifact_keeps_the_abstracts_end_and_its_title(clinifact_data, tiny_bert, tmp_path):
    options = PairsTrainOptions(CLINIFACT_PAIRS, frozen_options(tiny_bert, tmp_path / "emb", evidence_length=32, C_grid=[1.0]), include_title=True,
                                    predict_splits=("validation", "test"), checkpoint_dir=None)
    records, info = CF.run_discriminative(clinifact_data, options, threads=1)
    test = CD.load_pairs(clinifact_data["test"])
    assert [r["id"] for r in records if r["split"] == "test"] == [p.id for p in test]
    assert all(r["pred_label"] == max(r["probs"], key=r["probs"].get) for r in records)
    assert info["train"]["evidence_side"] == "tail" and info["train"]["n_train"] == 18  # system: an abstract's end; refit on train + validation
    assert info["encode"]["truncated"] > 0 and info["config"]["model"] == f"frozen:{tiny_bert}"
    pair = CD.pair_example(test[0])
    assert evidence_text(pair) == f"{test[0].title}. {test[0].abstract}"


@pytest.mark.parametrize("system, pairs", [("claims_only", False), ("oracle", True), ("level_of_evidence", True)])
def test_healthfc_systems_run_with_a_frozen_model(healthfc_data, tiny_bert, tmp_path, system, pairs):
    ds, folds = healthfc_data
    options = healthfc_options(system, frozen_options(tiny_bert, tmp_path / "emb", C_grid=[1.0]), fold=0, val_fraction=0.0)
    records, info = H.run_fold(ds, folds, options, threads=1)
    assert records and all(r["pred_label"] in r["probs"] for r in records)
    assert info["model"]["train"]["pairs"] is pairs and info["model"]["encode"]["encoded"] > 0


def test_a_job_whose_texts_are_all_stored_loads_no_torch(tiny_bert, tmp_path):
    options = frozen_options(tiny_bert, tmp_path / "emb", C_grid=[1.0])
    examples = _pairs(2)
    build_model(options, 1).fit(examples, LABELS)
    code = textwrap.dedent("""
        import json, sys
        from medfc.experiments.records import Example
        from medfc.experiments.models.kinds import build_model
        from medfc.experiments.models.options import FrozenOptions
        options, examples, labels = json.loads(sys.argv[1])
        model = build_model(FrozenOptions.from_mapping(options), 1)
        model.fit([Example(*e) for e in examples], labels)
        print(json.dumps([model.encoder.stats.encoded, "torch" in sys.modules, "transformers" in sys.modules]))
    """)
    data = [options.to_mapping(), [[e.text_a, e.text_b, e.label] for e in examples], LABELS]
    out = subprocess.run([sys.executable, "-c", code, json.dumps(data)], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [0, False, False]
