"""Tiny random models and a tiny synthetic HealthFC / CliniFact dataset, built offline in the test.

The fixtures are imported by the conftest.py of the test folders that use them (experiments, tables,
figures); the builders by the workflow tests."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

import torch

from tests.helpers.model_cache import cached_builder

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

EN_WORDS = (
    "does vitamin d help against colds coffee protect diabetes ginger relieve nausea zinc shorten "
    "exercise lower blood pressure homeopathy work red wine healthy acupuncture headaches the a an "
    "evidence is contradictory there no reliable participants received placebo risk drops by about "
    "percent doctors advise it effect has not been proven studies study lasted weeks we searched for "
    "quality of was low more research needed side effects were rare result significant researchers "
    "compared two groups women and men surveyed trial showed clear benefit harm in patients with "
    "better than outcome primary intervention comparator superior terms at months background methods "
    "results conclusions randomized abstract title claim true false none answer or if"
).split()
DE_WORDS = (
    "hilft gegen erkältungen kaffee schützt vor die studienlage ist widersprüchlich es gibt keine "
    "verlässlichen belege wirkung nicht nachgewiesen teilnehmenden bekamen ein placebo mehr forschung "
    "nötig studie zeigte einen klaren nutzen"
).split()


def _vocab(words):
    seen = list(SPECIAL)
    extra = list("abcdefghijklmnopqrstuvwxyzäöüß0123456789.,?!:-();'\"")
    for w in [*words, *extra, *("##" + c for c in "abcdefghijklmnopqrstuvwxyzäöüß0123456789")]:
        if w not in seen:
            seen.append(w)
    return {w: i for i, w in enumerate(seen)}


@cached_builder
def build_bert(out: Path, *, hidden: int = 16, max_positions: int = 512, seed: int = 0) -> Path:
    from transformers import BertConfig, BertModel, BertTokenizerFast

    if (out / "config.json").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    vocab = _vocab(EN_WORDS + DE_WORDS)
    tok = BertTokenizerFast(vocab=vocab, do_lower_case=True, strip_accents=False, model_max_length=max_positions)
    tok.save_pretrained(out)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=2 * hidden, max_position_embeddings=max_positions, pad_token_id=0)
    torch.manual_seed(seed)
    BertModel(cfg).save_pretrained(out)
    return out


@cached_builder
def build_gpt2(out: Path, *, seed: int = 0) -> Path:
    """A tiny GPT-2 with a word-level tokenizer in which TRUE, FALSE and NONE are single tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    if (out / "config.json").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    words = ["<|endoftext|>", "<unk>", "TRUE", "FALSE", "NONE", "Claim", "Title", "Abstract", "Answer",
             "(TRUE,", "Answer", *EN_WORDS, *list(".,?!:-()")]
    vocab = {}
    for w in words:
        vocab.setdefault(w, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace()])
    backend.decoder = decoders.WordPiece()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>", bos_token="<|endoftext|>",
                                  unk_token="<unk>", pad_token="<|endoftext|>", model_max_length=1024)
    tok.save_pretrained(out)
    cfg = GPT2Config(vocab_size=len(vocab), n_embd=16, n_layer=1, n_head=2, n_positions=1024,
                     bos_token_id=0, eos_token_id=0, pad_token_id=0)
    torch.manual_seed(seed)
    GPT2LMHeadModel(cfg).save_pretrained(out)
    return out


@cached_builder
def build_llama(out: Path, *, seed: int = 0) -> Path:
    """A tiny random Llama (1 layer, hidden 16, rotary positions) with :func:`build_gpt2`'s word-level
    tokenizer, in which TRUE, FALSE and NONE are single tokens."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    if (out / "config.json").exists():
        return out
    tok_dir = build_gpt2(out.parent / f"{out.name}-tokenizer")
    tok = AutoTokenizer.from_pretrained(tok_dir)
    tok.save_pretrained(out)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                      num_key_value_heads=1, max_position_embeddings=1024, bos_token_id=tok.bos_token_id,
                      eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, tie_word_embeddings=False,
                      initializer_range=0.3)  # output rows long enough that a frozen head can separate the answers
    torch.manual_seed(seed)
    LlamaForCausalLM(cfg).save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    return build_bert(tmp_path_factory.mktemp("models") / "tiny-bert")


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory) -> Path:
    return build_gpt2(tmp_path_factory.mktemp("models") / "tiny-gpt2")


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory) -> Path:
    return build_llama(tmp_path_factory.mktemp("models") / "tiny-llama")


LABELS = ["SUPPORTED", "NOT ENOUGH INFO", "REFUTED"]
LEVELS = ["high", "moderate", "low", "insufficient", "conflicting"]
EN_SENT = [
    "the study lasted two weeks.",
    "we searched for studies.",
    "the participants received a placebo.",
    "the evidence is contradictory.",
    "there is no reliable evidence.",
    "side effects were rare.",
    "the result was not significant.",
    "the researchers compared two groups.",
    "more research is needed.",
    "the trial showed a clear benefit in patients with colds.",
    "women and men were surveyed.",
    "the quality of the studies was low.",
]
DE_SENT = ["die studie zeigte einen klaren nutzen.", "es gibt keine verlässlichen belege.", "mehr forschung ist nötig."]


def healthfc_records(n: int = 12) -> list[dict]:
    recs = []
    for i in range(n):
        label = LABELS[i % 3]
        n_sent = 3 + i % 5
        if i == 5:
            n_sent = 40  # a long document: several joint windows at small max_length
        sentences = [EN_SENT[(i + j) % len(EN_SENT)] for j in range(n_sent)]
        sentences_de = [DE_SENT[(i + j) % len(DE_SENT)] for j in range(n_sent)]
        ev = [] if (label == "NOT ENOUGH INFO" and i % 2) else sorted({i % n_sent, (i + 2) % n_sent})
        level = "insufficient" if label == "NOT ENOUGH INFO" else LEVELS[i % 3]
        recs.append({
            "id": f"c{i:02d}",
            "url": f"https://example.org/{i}",
            "claim_de": "hilft kaffee gegen erkältungen?",
            "claim_en": ["does coffee help against colds?", "does zinc shorten colds?", "does ginger relieve nausea?"][i % 3],
            "label": label,
            "evidence_level": level,
            "explanation_de": "die studienlage ist widersprüchlich.",
            "explanation_en": "the evidence is contradictory.",
            "sentences_de": sentences_de,
            "sentences_en": sentences,
            "evidence_ids": ev,
            "date": "2020-01-01",
            "topics": ["colds"],
            "authors": ["a"],
        })
    return recs


@pytest.fixture()
def healthfc_data(tmp_path) -> tuple[Path, Path]:
    recs = healthfc_records()
    ds = tmp_path / "healthfc.jsonl"
    ds.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    folds = tmp_path / "folds.csv"
    folds.write_text("id,fold\n" + "".join(f"{r['id']},{k % 2}\n" for k, r in enumerate(recs)), encoding="utf-8")
    return ds, folds


CLINIFACT_COLUMNS = [
    "index", "nctId", "claim", "PMID", "article_title", "article_abstract", "label", "outcome_type", "outcome_title",
    "outcome_description", "intervention_group_title", "comparator_group_title", "intervention_group_description",
    "comparator_group_description", "intervention_group_intervention_label", "comparator_group_intervention_label",
    "intervention_group_arm_group_type", "comparator_group_arm_group_type", "pValues", "statisticalMethods",
    "nonInferiorityTypes", "Publication Date",
]


def clinifact_rows(start: int, n: int) -> list[dict]:
    rows = []
    for k in range(n):
        i = start + k
        code = [1, 0, 2][i % 3]
        body = " ".join(EN_SENT[(i + j) % len(EN_SENT)] for j in range(3 + (i % 4) * 20))
        rows.append({c: "" for c in CLINIFACT_COLUMNS} | {
            "index": str(1000 + i), "nctId": f"NCT{i:08d}", "PMID": str(2000 + i),
            "claim": "intervention is superior to placebo in terms of blood pressure at two months",
            "article_title": "a randomized trial of exercise in patients with blood pressure",
            "article_abstract": f"BACKGROUND: {body}\nCONCLUSIONS: the result was significant.",
            "label": str(code), "pValues": "['<0.001']", "nonInferiorityTypes": "['SUPERIORITY']",
            "Publication Date": "2019-05-01",
        })
    return rows


@pytest.fixture()
def clinifact_data(tmp_path) -> dict[str, Path]:
    paths = {}
    for split, (start, n) in {"train": (0, 12), "validation": (12, 6), "test": (18, 6)}.items():
        p = tmp_path / f"{split}_set.csv"
        with open(p, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=CLINIFACT_COLUMNS)
            w.writeheader()
            w.writerows(clinifact_rows(start, n))
        paths[split] = p
    return paths


TINY_TRAIN = {"lr": 1e-3, "batch_size": 4, "eval_batch_size": 8, "epochs": 1, "max_length": 64, "seed": 1,
              "device": "cpu", "progress": False, "warmup_ratio": 0.1}


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def tiny_train_config(model: str, **overrides):
    """A TrainConfig as a rule builds it: the schema's defaults of experiments.healthfc.train, the tiny
    settings, the model and the test's overrides."""
    from medfc.experiments.models.options import TrainConfig
    from tests.helpers.config import section

    return TrainConfig.from_mapping(section("experiments.healthfc.train", **{**TINY_TRAIN, "model": str(model), **overrides}))


def healthfc_options(system: str, train, fold: int = 1, lang: str = "en", checkpoint_dir=None, **system_overrides):
    """A HealthFC run's whole options as the plan builds them: ``train`` (any model kind's config), the
    system's own options from the schema's defaults of experiments.healthfc with the test's overrides (the
    pipeline's selector: the run's own model config unless ``evidence_train`` is given)."""
    from medfc.experiments.healthfc.systems import HealthFCFoldOptions, system_option_keys
    from tests.helpers.config import section

    hx = section("experiments.healthfc")
    own = {k: hx[k] for k in system_option_keys(system)}
    if "evidence_train" in own:
        own["evidence_train"] = train
    ckpt = str(checkpoint_dir) if checkpoint_dir is not None else None
    return HealthFCFoldOptions.from_mapping({"system": system, "lang": lang, "fold": fold, "train": train, "checkpoint_dir": ckpt,
                                            "system_options": {**own, **system_overrides}})


@pytest.fixture()
def train_cfg(tiny_bert):
    """The tiny training config (a TrainConfig) pointing at the tiny BERT."""
    return tiny_train_config(tiny_bert)


@pytest.fixture()
def healthfc_recs():
    return healthfc_records()


def clinifact_test_predictions(tmp_path: Path, test_csv: Path) -> tuple[object, Path]:
    """The test split with one pair made Non-inferiority, and predictions of "evidence" for every pair."""
    import pandas as pd

    from medfc.common.io import write_jsonl

    test = pd.read_csv(test_csv, dtype=str, keep_default_na=False)
    test.loc[0, "nonInferiorityTypes"] = "['Non-Inferiority']"
    test.to_csv(test_csv, index=False)
    preds = tmp_path / "p.jsonl"
    labels = ["evidence", "inconclusive", "NEI"]
    write_jsonl(preds, [{"id": r["index"], "split": "test", "label": labels[[1, 0, 2].index(int(r["label"]))],
                         "pred_label": "evidence"} for _, r in test.iterrows()])
    return test, preds
