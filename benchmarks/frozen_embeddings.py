"""Frozen-encoder embeddings for the research prototypes' feature models: one forward pass per text, cached on disk
per (model, recipe, text), so every system, fold and rerun shares them. A prototype for the integrator
(not imported by the library).

* :class:`EmbeddingStore` — an SQLite file of float32 vectors keyed by (recipe key, SHA-256 of the text);
  each batch is one committed transaction, so a kill at any moment loses at most the batch in flight and
  never leaves a half-written vector; only texts missing from the store reach the model.
* :class:`FrozenEncoder` — mean pooling over the tokens under the attention mask (what the models'
  ``1_Pooling/config.json`` says: ``pooling_mode_mean_tokens``), then L2 normalisation (their
  ``modules.json`` ends in ``Normalize``); texts sorted by length into batches (little padding); ``head``
  (the first ``max_length`` tokens) or ``tail`` truncation (the last ones: an abstract's results and
  conclusions).
* :func:`chunks` — an abstract cut at sentence boundaries into pieces of at most ``max_tokens`` tokens, for
  chunk-and-average embeddings of texts longer than the window.

    python benchmarks/frozen_embeddings.py --clinifact DIR --model offline:mpnet --what claims abstracts:head256
"""

from __future__ import annotations

import argparse
import hashlib
import sqlite3
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_STORE = ROOT / "cache" / "embeddings" / "frozen.sqlite"


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingStore:
    """float32 vectors by (recipe, text); safe against kills (SQLite transactions, WAL journal)."""

    def __init__(self, path: str | Path = DEFAULT_STORE):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), timeout=60)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS emb (recipe TEXT, key TEXT, dim INTEGER, vec BLOB, PRIMARY KEY (recipe, key))")
        self.db.execute("CREATE TABLE IF NOT EXISTS timing (recipe TEXT, texts INTEGER, tokens INTEGER, seconds REAL, load1 REAL, at REAL)")
        self.db.commit()

    def get(self, recipe: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors of ``texts`` (by text) for a recipe; missing texts are absent."""
        keys = {text_key(t): t for t in texts}
        out: dict[str, np.ndarray] = {}
        items = list(keys)
        for i in range(0, len(items), 500):
            part = items[i : i + 500]
            rows = self.db.execute(f"SELECT key, vec FROM emb WHERE recipe = ? AND key IN ({','.join('?' * len(part))})", [recipe, *part])
            for key, blob in rows:
                out[keys[key]] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put(self, recipe: str, texts: Sequence[str], vecs: np.ndarray, tokens: int, seconds: float) -> None:
        import os

        with self.db:  # one transaction: the batch is stored whole or not at all
            self.db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?, ?, ?)",
                                [(recipe, text_key(t), v.shape[0], np.asarray(v, dtype=np.float32).tobytes()) for t, v in zip(texts, vecs)])
            self.db.execute("INSERT INTO timing VALUES (?, ?, ?, ?, ?, ?)", (recipe, len(texts), tokens, seconds, os.getloadavg()[0], time.time()))

    def throughput(self, recipe: str) -> dict[str, float]:
        texts, tokens, seconds, load = self.db.execute(
            "SELECT SUM(texts), SUM(tokens), SUM(seconds), AVG(load1) FROM timing WHERE recipe = ?", [recipe]).fetchone()
        if not texts:
            return {}
        return {"texts": texts, "tokens": tokens, "seconds": seconds, "texts_per_s": texts / seconds, "tokens_per_s": tokens / seconds, "load1": load}


@dataclass(frozen=True)
class Recipe:
    model: str  # offline:minilm, offline:mpnet, a path or hub name
    max_length: int
    side: str = "head"  # head | tail

    @property
    def key(self) -> str:
        return f"{self.model}|mean|L{self.max_length}|{self.side}"


class FrozenEncoder:
    def __init__(self, recipe: Recipe, store: EmbeddingStore, batch_size: int = 16, threads: int = 2):
        import torch
        from transformers import AutoModel, AutoTokenizer

        from medfc.experiments.models.aliases import resolve_model

        torch.set_num_threads(threads)
        self.torch, self.recipe, self.store, self.batch_size = torch, recipe, store, batch_size
        path = resolve_model(recipe.model)
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.tokenizer.truncation_side = "left" if recipe.side == "tail" else "right"
        self.model = AutoModel.from_pretrained(path).eval()

    def n_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self.tokenizer(list(texts), truncation=True, max_length=self.recipe.max_length)["input_ids"]]

    def encode(self, texts: Sequence[str], desc: str = "embed") -> np.ndarray:
        """One L2-normalised row per text (duplicates and cached texts encoded zero times)."""
        from tqdm import tqdm

        torch = self.torch
        unique = list(dict.fromkeys(texts))
        have = self.store.get(self.recipe.key, unique)
        missing = [t for t in unique if t not in have]
        if missing:
            lengths = self.n_tokens(missing)
            order = sorted(range(len(missing)), key=lambda i: -lengths[i])  # longest first: a slow start, then faster
            bar = tqdm(total=len(missing), desc=f"{desc} ({self.recipe.key})", unit="text")
            for start in range(0, len(order), self.batch_size):
                batch = [missing[i] for i in order[start : start + self.batch_size]]
                t0 = time.perf_counter()
                enc = self.tokenizer(batch, padding=True, truncation=True, max_length=self.recipe.max_length, return_tensors="pt")
                with torch.inference_mode():
                    hidden = self.model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                vecs = torch.nn.functional.normalize(pooled, dim=-1).numpy()
                self.store.put(self.recipe.key, batch, vecs, int(enc["attention_mask"].sum()), time.perf_counter() - t0)
                have.update(zip(batch, vecs))
                bar.update(len(batch))
            bar.close()
        return np.stack([have[t] for t in texts]) if texts else np.zeros((0, 0), np.float32)


def chunks(text: str, tokenizer, max_tokens: int = 128) -> list[str]:
    """``text`` cut at sentence boundaries (medfc's abstract splitter) into pieces of at most ``max_tokens``
    tokens (a longer sentence is a piece of its own, truncated when encoded)."""
    from medfc.experiments.models.features import sentences

    sents = [s for _, s in sentences(text)] or [text]
    sizes = [len(ids) - 2 for ids in tokenizer(sents)["input_ids"]]
    out, buf, size = [], [], 0
    for s, n in zip(sents, sizes):
        if buf and size + n > max_tokens - 2:
            out.append(" ".join(buf))
            buf, size = [], 0
        buf.append(s)
        size += n
    if buf:
        out.append(" ".join(buf))
    return out


# ------------------------------------------------------------------- the feature model over Examples
@dataclass(frozen=True)
class FrozenOptions:
    """What an integrated ``frozen`` model would read from its config section."""

    encoder: str = "offline:minilm"
    claim_length: int = 128
    evidence_length: int = 256
    evidence_side: str = "head"  # head | tail
    features: str = "full"  # [u, v, |u-v|, u*v]; without a second text: [u]
    C_grid: tuple[float, ...] = (0.003, 0.01, 0.03, 0.1, 0.3)
    cv_folds: int = 5
    seed: int = 0


def pair_features(u: np.ndarray, v: np.ndarray | None, kind: str = "full") -> np.ndarray:
    if v is None:
        return u
    parts = {"uv": [u, v], "full": [u, v, np.abs(u - v), u * v], "full+cos": [u, v, np.abs(u - v), u * v, (u * v).sum(1, keepdims=True)]}[kind]
    return np.hstack(parts).astype(np.float32)


class FittedFrozen:
    """Standardised pair features into class-balanced logistic regression (``probs`` like the other models)."""

    def __init__(self, options: FrozenOptions, labels: Sequence[str], claim_enc: FrozenEncoder, evidence_enc: FrozenEncoder):
        self.options, self.labels, self.claim_enc, self.evidence_enc = options, list(labels), claim_enc, evidence_enc
        self.scaler = self.model = None
        self.C: float | None = None
        self.cv_scores: dict[float, float] = {}

    def matrix(self, examples) -> np.ndarray:
        u = self.claim_enc.encode([ex.text_a for ex in examples], desc="claims")
        seconds = [ex.text_b for ex in examples]
        if all(t is None for t in seconds):
            return u
        texts = [f"{ex.prefix_b}. {ex.text_b}" if ex.prefix_b else (ex.text_b or "") for ex in examples]
        return pair_features(u, self.evidence_enc.encode(texts, desc="evidence"), self.options.features)

    def probs(self, examples, desc: str = "predict") -> np.ndarray:
        X = self.scaler.transform(self.matrix(examples))
        out = np.zeros((len(examples), len(self.labels)), dtype=np.float32)
        out[:, self.model.classes_] = self.model.predict_proba(X)
        return out


def fit_frozen(options: FrozenOptions, labels: Sequence[str], train_examples, store: EmbeddingStore) -> FittedFrozen:
    """C by an inner stratified CV of the training examples (macro-F1; ties to the smaller C), then refit on all."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import StandardScaler

    claim_enc = FrozenEncoder(Recipe(options.encoder, options.claim_length), store)
    same = (options.evidence_length, options.evidence_side) == (options.claim_length, "head")
    evidence_enc = claim_enc if same else FrozenEncoder(Recipe(options.encoder, options.evidence_length, options.evidence_side), store)
    fitted = FittedFrozen(options, labels, claim_enc, evidence_enc)
    X = fitted.matrix(train_examples)
    y = np.array([fitted.labels.index(ex.label) for ex in train_examples])

    def lr(C):
        return LogisticRegression(C=C, class_weight="balanced", max_iter=3000, random_state=options.seed)

    folds = min(options.cv_folds, int(np.bincount(y).min())) if len(options.C_grid) > 1 else 0
    best_C, best = options.C_grid[0], -1.0
    if folds >= 2:
        for C in options.C_grid:
            pred = np.zeros(len(y), dtype=int)
            for tr, te in StratifiedKFold(folds, shuffle=True, random_state=options.seed).split(X, y):
                sc = StandardScaler().fit(X[tr])
                pred[te] = lr(C).fit(sc.transform(X[tr]), y[tr]).predict(sc.transform(X[te]))
            fitted.cv_scores[C] = f1_score(y, pred, average="macro", labels=range(len(fitted.labels)), zero_division=0)
            if fitted.cv_scores[C] > best + 1e-12:
                best_C, best = C, fitted.cv_scores[C]
    fitted.C = best_C
    fitted.scaler = StandardScaler().fit(X)
    fitted.model = lr(best_C).fit(fitted.scaler.transform(X), y)
    return fitted


# ---------------------------------------------------------------------------------- CliniFact texts
def clinifact_texts(d: Path) -> dict[str, list]:
    from medfc.experiments.pairs import load_pairs

    return {s: load_pairs(d / f"{s}_set.csv") for s in ("train", "validation", "test")}


def evidence_text(p) -> str:
    return f"{p.title}. {p.abstract}" if p.title else p.abstract


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clinifact", required=True)
    ap.add_argument("--model", default="offline:minilm")
    ap.add_argument("--what", nargs="+", default=["claims", "abstracts:head256"],
                    help="claims | abstracts:head<N> | abstracts:tail<N> | chunks<N> (sentence chunks of <= N tokens, each encoded)")
    ap.add_argument("--store", default=str(DEFAULT_STORE))
    ap.add_argument("--batch-size", type=int, default=16)
    args = ap.parse_args(argv)
    store = EmbeddingStore(args.store)
    pairs = [p for ps in clinifact_texts(Path(args.clinifact)).values() for p in ps]
    for what in args.what:
        if what == "claims":
            recipe, texts = Recipe(args.model, 128), [p.claim for p in pairs]
        elif what.startswith("abstracts:"):
            spec = what.split(":", 1)[1]
            recipe, texts = Recipe(args.model, int(spec[4:]), spec[:4]), [evidence_text(p) for p in pairs]
        elif what.startswith("chunks"):
            n = int(what[6:])
            enc = FrozenEncoder(Recipe(args.model, n), store, args.batch_size)
            texts = [c for t in dict.fromkeys(evidence_text(p) for p in pairs) for c in chunks(t, enc.tokenizer, n)]
            recipe = enc.recipe
        else:
            raise SystemExit(f"unknown --what {what!r}")
        enc = FrozenEncoder(recipe, store, args.batch_size)
        enc.encode(texts, desc=what)
        print(what, recipe.key, store.throughput(recipe.key), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
