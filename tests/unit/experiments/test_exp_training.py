from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from medfc.common.device import Placement, resolve_precision
from medfc.common.options import OptionsError
from medfc.experiments.models.training import (
    PadCollator,
    length_grouped_batches,
    linear_warmup_schedule,
    load_checkpoint,
    predict,
    set_seed,
    default_loss,
    subsample,
    train,
)
from medfc.experiments.models.options import TrainConfig
from tests.helpers.config import section

CPU = Placement.resolve("cpu", "auto")  # what a job resolves once from device: cpu


def config(**kw) -> TrainConfig:
    """A TrainConfig as a rule builds it: the schema's defaults of experiments.healthfc.train + changes."""
    return TrainConfig.from_mapping(section("experiments.healthfc.train", model="m", **kw))


def test_config_takes_every_key_from_the_config_and_names_bad_ones():
    cfg = config(lr=2e-5, batch_size=8, epochs=3, max_steps=None)
    assert (cfg.model, cfg.lr, cfg.batch_size, cfg.epochs, cfg.max_steps) == ("m", 2e-5, 8, 3.0, None)
    assert isinstance(cfg.epochs, float) and cfg.eval_metric == "macro_f1"
    with pytest.raises(OptionsError, match=r"unknown TrainConfig\.bogus"):
        config(bogus=1)
    with pytest.raises(OptionsError, match=r"missing TrainConfig\.lr"):
        TrainConfig.from_mapping({k: v for k, v in config().as_dict().items() if k != "lr"})
    with pytest.raises(OptionsError, match=r"TrainConfig\.precision: 'int8' is not one of"):
        config(precision="int8")
    with pytest.raises(OptionsError, match=r"TrainConfig\.batch_size: expected an integer, got '8'"):
        config(batch_size="8")


def test_length_grouped_batches_cover_every_index_once_and_group_lengths():
    rng = np.random.default_rng(0)
    lengths = rng.integers(5, 500, size=403).tolist()
    spreads = []
    for epoch in range(2):
        batches = length_grouped_batches(lengths, batch_size=8, seed=3, epoch=epoch, group_factor=10)
        flat = [i for b in batches for i in b]
        assert sorted(flat) == list(range(403))
        assert len(batches) == 51
        assert max(lengths[i] for i in batches[0]) == max(lengths)  # longest batch first
        spreads.append(np.mean([max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches]))
    random_spread = np.mean([np.ptp(rng.choice(lengths, 8)) for _ in range(200)])
    assert max(spreads) < random_spread / 5
    first = length_grouped_batches(lengths, batch_size=8, seed=3, epoch=0, group_factor=10)
    assert length_grouped_batches(lengths, batch_size=8, seed=3, epoch=1, group_factor=10) != first  # reshuffled per epoch
    assert length_grouped_batches(lengths, batch_size=8, seed=3, epoch=0, group_factor=10) == first  # deterministic per (seed, epoch)


def test_batches_without_shuffle_are_sorted_by_length():
    assert length_grouped_batches([3, 9, 1, 7, 5], batch_size=2, shuffle=False) == [[1, 3], [4, 0], [2]]


def test_pad_collator_pads_to_the_longest():
    feats = [{"input_ids": [5, 6, 7], "attention_mask": [1, 1, 1], "labels": 2}, {"input_ids": [5], "attention_mask": [1], "labels": 0}]
    batch = PadCollator(pad_token_id=9)(feats)
    assert batch["input_ids"].tolist() == [[5, 6, 7], [5, 9, 9]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]
    assert batch["labels"].tolist() == [2, 0]


def test_linear_warmup_then_linear_decay():
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = linear_warmup_schedule(opt, warmup_steps=2, total_steps=6)
    lrs = []
    for _ in range(6):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs == pytest.approx([0.5, 1.0, 1.0, 0.75, 0.5, 0.25])


def test_precision_resolution_on_cpu():
    assert resolve_precision("auto", torch.device("cpu")) == (None, False)
    assert resolve_precision("bf16", torch.device("cpu")) == (torch.bfloat16, False)
    with pytest.raises(ValueError):
        resolve_precision("fp16", torch.device("cpu"))


def test_subsample_is_seeded_and_capped():
    assert subsample(10, None, 0) == list(range(10))
    a = subsample(100, 7, 1)
    assert a == subsample(100, 7, 1) and len(a) == 7 and a == sorted(a)


class Toy(nn.Module):
    """A bag-of-embeddings classifier with the transformers calling convention."""

    def __init__(self, vocab: int = 20, n_labels: int = 2) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, 8)
        self.out = nn.Linear(8, n_labels)

    def forward(self, input_ids, attention_mask, labels=None):
        m = attention_mask.unsqueeze(-1).float()
        h = (self.emb(input_ids) * m).sum(1) / m.sum(1)
        logits = self.out(h)
        loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return type("Out", (), {"loss": loss, "logits": logits})()


def _toy_data(n: int = 32):
    feats = []
    for i in range(n):
        label = i % 2
        ids = [1 + label] * (2 + i % 5)
        feats.append({"input_ids": ids, "attention_mask": [1] * len(ids), "labels": label})
    return feats


def _probs(model, batch):
    return list(torch.softmax(model(batch["input_ids"], batch["attention_mask"]).logits, -1).numpy())


def test_train_learns_separable_data_and_predict_keeps_order():
    set_seed(0)
    model = Toy()
    feats = _toy_data()
    cfg = config(lr=0.1, epochs=5, batch_size=4, device="cpu", progress=False, warmup_ratio=0.0)
    res = train(model, feats, cfg, placement=CPU, collate=PadCollator())
    assert res.steps == 5 * 8 and res.epochs_run == 5 and res.examples_seen == 5 * 32
    out = predict(model, [{k: v for k, v in f.items() if k != "labels"} for f in feats], collate=PadCollator(), forward_fn=_probs, batch_size=5, placement=CPU)
    assert [int(np.argmax(p)) for p in out] == [f["labels"] for f in feats]


def test_max_steps_and_max_examples_caps():
    cfg = config(lr=0.01, epochs=10, batch_size=2, device="cpu", progress=False, max_steps=3, max_examples=6)
    res = train(Toy(), _toy_data(), cfg, placement=CPU, collate=PadCollator())
    assert res.steps == 3 and res.examples_seen == 6 and res.epochs_run == 1


def test_gradient_accumulation_matches_large_batch():
    feats = [{"input_ids": [1 + i % 7, 2], "attention_mask": [1, 1], "labels": i % 2} for i in range(8)]
    states = []
    for bs, accum in ((4, 1), (2, 2)):
        set_seed(5)
        model = Toy()
        cfg = config(lr=0.5, epochs=1, batch_size=bs, grad_accum=accum, device="cpu", progress=False,
                                     warmup_ratio=0.0, weight_decay=0.0, length_grouping=False, max_grad_norm=0)
        res = train(model, feats, cfg, placement=CPU, collate=PadCollator())
        assert res.steps == 2
        states.append({k: v.clone() for k, v in model.state_dict().items()})
    for k in states[0]:
        assert torch.allclose(states[0][k], states[1][k], atol=1e-6), k


def test_best_checkpoint_is_saved_and_restored(tmp_path):
    scores = iter([0.2, 0.9, 0.5])
    snapshots = []

    def evaluate(m):
        snapshots.append({k: v.clone() for k, v in m.state_dict().items()})
        return {"macro_f1": next(scores)}

    model = Toy()
    cfg = config(lr=0.1, epochs=3, batch_size=4, device="cpu", progress=False)
    res = train(model, _toy_data(), cfg, placement=CPU, collate=PadCollator(), evaluate=evaluate, checkpoint_dir=tmp_path)
    assert res.best_epoch == 1 and res.best_metric == 0.9
    assert [h["macro_f1"] for h in res.history] == [0.2, 0.9, 0.5]
    assert (tmp_path / "best" / "model.safetensors").exists() and (tmp_path / "best" / "meta.json").exists()
    for k, v in model.state_dict().items():  # the model ends with the epoch-1 weights
        assert torch.equal(v, snapshots[1][k])
    other = Toy()
    load_checkpoint(other, tmp_path / "best")
    assert torch.equal(other.out.weight, snapshots[1]["out.weight"])


def test_a_validation_loss_is_minimised_and_trainable_only_keeps_just_the_trainable_weights(tmp_path):
    losses = iter([0.9, 0.4, 0.6])
    snapshots = []

    def evaluate(m):
        snapshots.append({k: v.clone() for k, v in m.state_dict().items()})
        return {"val_loss": next(losses)}

    model = Toy()
    for name, p in model.named_parameters():  # a frozen base with one trainable layer, as LoRA has
        p.requires_grad = name.startswith("out.")
    frozen = {k: v.clone() for k, v in model.state_dict().items() if not k.startswith("out.")}
    cfg = config(lr=0.1, epochs=3, batch_size=4, device="cpu", progress=False, eval_metric="val_loss")
    res = train(model, _toy_data(), cfg, placement=CPU, collate=PadCollator(), evaluate=evaluate, checkpoint_dir=tmp_path, trainable_only=True)
    assert (res.best_epoch, res.best_metric) == (1, 0.4)  # the lowest loss, not the highest
    for k, v in model.state_dict().items():  # the epoch-1 weights; the frozen ones never changed
        assert torch.equal(v, snapshots[1][k]) and (k.startswith("out.") or torch.equal(v, frozen[k]))
    from safetensors.torch import load_file

    saved = load_file(tmp_path / "best" / "model.safetensors")
    assert set(saved) == {k for k, p in model.named_parameters() if p.requires_grad} == {"out.weight", "out.bias"}
    in_memory = Toy()
    in_memory.load_state_dict(frozen, strict=False)
    for name, p in in_memory.named_parameters():
        p.requires_grad = name.startswith("out.")
    losses = iter([0.9, 0.4, 0.6])
    snapshots.clear()
    train(in_memory, _toy_data(), cfg, placement=CPU, collate=PadCollator(), evaluate=evaluate, trainable_only=True)
    assert torch.equal(in_memory.out.weight, snapshots[1]["out.weight"])


def test_without_validation_the_final_weights_are_saved(tmp_path):
    cfg = config(lr=0.1, epochs=1, batch_size=8, device="cpu", progress=False)
    res = train(Toy(), _toy_data(), cfg, placement=CPU, collate=PadCollator(), checkpoint_dir=tmp_path)
    assert res.checkpoint == str(tmp_path / "final" / "model.safetensors") and (tmp_path / "final" / "model.safetensors").exists()


def test_class_weights_balance_the_training_labels():
    from medfc.experiments.models.training import class_weights

    w = class_weights([0, 0, 0, 1], 3, "balanced")
    # n / (k * n_c): 4 / (3 * 3), 4 / (3 * 1); a class with no example gets 0, not infinity
    assert w.tolist() == pytest.approx([4 / 9, 4 / 3, 0.0])
    assert class_weights([0, 1], 2, "none") is None


def test_early_stopping_stops_after_patience_evaluations_without_improvement():
    scores = iter([0.5, 0.9, 0.8, 0.7, 0.95, 0.99])

    def evaluate(m):
        return {"macro_f1": next(scores)}

    res = train(Toy(), _toy_data(), config(lr=0.1, epochs=6, batch_size=8, device="cpu", progress=False, early_stopping_patience=2),
                placement=CPU, collate=PadCollator(), evaluate=evaluate)
    # best at epoch 1; epochs 2 and 3 are not better: stop after epoch 3, never seeing the later 0.95
    assert (res.best_epoch, res.epochs_run, res.stopped_early) == (1, 4, True)
    assert [h["macro_f1"] for h in res.history] == [0.5, 0.9, 0.8, 0.7]
    full = train(Toy(), _toy_data(), config(lr=0.1, epochs=2, batch_size=8, device="cpu", progress=False), placement=CPU, collate=PadCollator(),
                 evaluate=lambda m: {"macro_f1": 0.1})
    assert (full.epochs_run, full.stopped_early) == (2, False)


def test_the_weighted_loss_learns_an_imbalanced_separable_set():
    """28 / 4 / 4 examples told apart by one token each, a budget of 3 epochs: with the class-weighted
    cross-entropy (classifier._weighted_loss) every class is predicted on the held-out items; the plain
    loss under the same budget still misses a small class."""
    from medfc.experiments.models.encoder import _weighted_loss
    from medfc.experiments.models.training import class_weights

    def data(counts):
        return [{"input_ids": [5 + label, 1, 1], "attention_mask": [1, 1, 1], "labels": label}
                for label, n in enumerate(counts) for _ in range(n)]

    train_f, test_f = data([28, 4, 4]), data([1, 1, 1])

    def predicted(weighted):
        set_seed(0)
        model = Toy(n_labels=3)
        weights = class_weights([f["labels"] for f in train_f], 3, "balanced")
        cfg = config(lr=0.05, epochs=3, batch_size=4, device="cpu", progress=False, warmup_ratio=0.0, weight_decay=0.0,
                     length_grouping=False)
        train(model, train_f, cfg, placement=CPU, collate=PadCollator(), loss_fn=_weighted_loss(weights) if weighted else default_loss)
        out = predict(model, [{k: v for k, v in f.items() if k != "labels"} for f in test_f], collate=PadCollator(), forward_fn=_probs,
                      batch_size=3, placement=CPU)
        return [int(np.argmax(p)) for p in out]

    assert predicted(True) == [0, 1, 2]
    assert predicted(False) == [0, 0, 2]
