"""A research prototype: frozen-encoder features on the CliniFact release, beside and
stacked with the workflow's TF-IDF and gradient boosting, in 5-fold CV over train + validation and on the
official test split.

    python benchmarks/frozen_features_bench.py --clinifact DIR [--encoders offline:minilm offline:mpnet]
        [--evidence head256 tail256 chunks128] [--features full ...] [--folds 5] [--seed 0] [--resamples 10000]

Embeddings come from the on-disk store of ``benchmarks/frozen_embeddings.py`` (computed there first, or
here on demand): the claim and the evidence (``title. abstract``) each get one L2-normalised, mean-pooled
vector; ``head<N>`` / ``tail<N>`` truncate the evidence to its first / last N tokens, ``chunks<N>``
averages the vectors of its sentence chunks of at most N tokens (every token read). Feature sets of a
pair (u = claim, v = evidence): ``uv`` [u, v]; ``full`` [u, v, |u-v|, u*v]; ``full+cos`` adds u·v.

Models (each row: outer 5-fold CV over the 1,576 train + validation pairs, folds as
benchmarks/clinifact_cv.py draws them, then fit on all of them and scored once on the test split):

* ``emb[...]``: standardised features into class-balanced multinomial logistic regression, C from
  ``--C-grid`` chosen by an inner 5-fold CV of the training part (macro-F1), never on the held-out part;
* ``tfidf``, ``gbm``: the workflow's models (config/cpu.yaml's sections); gbm's ~100 hand features are
  computed once with the IDF of the train + validation abstracts (the workflow fits it on the training
  examples of each fit: identical for the test row, within a hair for the CV rows);
* ``avg(a+b+...)``: equal-weight probability averages, as the workflow's ensembles;
* ``stack(...)``: multinomial logistic regression over the members' log-probabilities, fit on their
  inner out-of-fold predictions of the training part (members refit on the whole part for the held-out);
* ``gbm+emb``: gradient boosting over the hand features plus u·v and the embedding model's inner
  out-of-fold probabilities.

Printed per row: CV macro-F1 mean ± std over the folds and pooled, test macro-F1 with its 95% percentile
bootstrap interval, test accuracy, and the seconds of fitting (embedding time is printed per encoder from
the store's timing table, with the load average it ran under). Member probabilities are cached in
``--work`` so a rerun refits nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from clinifact_cv import load_config, model_options  # noqa: E402
from frozen_embeddings import DEFAULT_STORE, EmbeddingStore, FrozenEncoder, Recipe, chunks, evidence_text  # noqa: E402

from medfc.experiments.pairs import load_pairs, pair_example  # noqa: E402
from medfc.experiments.healthfc.systems import CLINIFACT_LABELS  # noqa: E402
from medfc.scoring.classification import bootstrap_intervals, macro_f1  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LABELS = list(CLINIFACT_LABELS)


# ------------------------------------------------------------------------------------ embeddings
def evidence_vectors(encoder_name: str, variant: str, texts: list[str], store: EmbeddingStore) -> np.ndarray:
    kind, n = variant.rstrip("0123456789"), int(variant[len(variant.rstrip("0123456789")):])
    if kind in ("head", "tail"):
        return FrozenEncoder(Recipe(encoder_name, n, kind), store).encode(texts, desc=variant)
    if kind == "chunks":
        enc = FrozenEncoder(Recipe(encoder_name, n), store)
        unique = list(dict.fromkeys(texts))
        pieces = {t: chunks(t, enc.tokenizer, n) for t in unique}
        flat = [c for t in unique for c in pieces[t]]
        vecs = dict(zip(flat, enc.encode(flat, desc=variant)))
        mean = {t: np.mean([vecs[c] for c in pieces[t]], axis=0) for t in unique}
        out = np.stack([mean[t] for t in texts])
        return out / np.linalg.norm(out, axis=1, keepdims=True)
    raise SystemExit(f"unknown evidence variant {variant!r}")


def feature_matrix(u: np.ndarray, v: np.ndarray, kind: str) -> np.ndarray:
    cos = (u * v).sum(1, keepdims=True)
    parts = {"u": [u], "v": [v], "uv": [u, v], "full": [u, v, np.abs(u - v), u * v], "full+cos": [u, v, np.abs(u - v), u * v, cos],
             "diffprod": [np.abs(u - v), u * v, cos]}[kind]
    return np.hstack(parts).astype(np.float32)


# ------------------------------------------------------------------------------------ classifiers
def lr_probs(Xtr, ytr, Xte, C: float, seed: int = 0) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    sc = StandardScaler().fit(Xtr)
    m = LogisticRegression(C=C, class_weight="balanced", max_iter=3000, random_state=seed).fit(sc.transform(Xtr), ytr)
    out = np.zeros((len(Xte), len(LABELS)))
    out[:, m.classes_] = m.predict_proba(sc.transform(Xte))
    return out


def f1(y, probs) -> float:
    return macro_f1([LABELS[i] for i in y], [LABELS[i] for i in probs.argmax(1)], LABELS)


def inner_cv(fit_predict, X, y, folds: int, seed: int) -> np.ndarray:
    """Out-of-fold probabilities of ``fit_predict(train_idx, test_idx)`` over ``folds`` stratified folds."""
    from sklearn.model_selection import StratifiedKFold

    oof = np.zeros((len(y), len(LABELS)))
    for tr, te in StratifiedKFold(folds, shuffle=True, random_state=seed).split(np.zeros(len(y)), y):
        oof[te] = fit_predict(tr, te)
    return oof


def choose_C(X, y, grid, folds, seed) -> tuple[float, np.ndarray]:
    """The C of the best inner-CV macro-F1 (ties: the smaller C) and its out-of-fold probabilities."""
    best = None
    for C in grid:
        oof = inner_cv(lambda tr, te: lr_probs(X[tr], y[tr], X[te], C, seed), X, y, folds, seed)
        score = f1(y, oof)
        if best is None or score > best[0] + 1e-12:
            best = (score, C, oof)
    return best[1], best[2]


def gbm_probs(options, Xtr, ytr, Xte) -> np.ndarray:
    from medfc.experiments.models.gbm import _fit

    out = np.zeros((len(Xte), len(LABELS)))
    models = _fit(options, Xtr, ytr)
    for m in models:
        out[:, m.classes_] += m.predict_proba(Xte) / len(models)
    return out


def stack_probs(train_members: list[np.ndarray], ytr, test_members: list[np.ndarray], C: float = 1.0) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression

    def z(ms):
        return np.hstack([np.log(np.clip(m, 1e-4, 1)) for m in ms])

    m = LogisticRegression(C=C, class_weight="balanced", max_iter=3000).fit(z(train_members), ytr)
    out = np.zeros((len(test_members[0]), len(LABELS)))
    out[:, m.classes_] = m.predict_proba(z(test_members))
    return out


# -------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clinifact", required=True)
    ap.add_argument("--configfile", nargs="*", default=[str(ROOT / "config/cpu.yaml")])
    ap.add_argument("--encoders", nargs="*", default=["offline:minilm"])
    ap.add_argument("--evidence", nargs="+", default=["head256"])
    ap.add_argument("--features", nargs="+", default=["full"])
    ap.add_argument("--C-grid", nargs="+", type=float, default=[0.003, 0.01, 0.03, 0.1, 0.3])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--store", default=str(DEFAULT_STORE))
    ap.add_argument("--work", default=str(ROOT / "cache" / "frozen_bench"))
    ap.add_argument("--stack", nargs="*", default=None, help="embedding rows (as printed) to average / stack with tfidf and gbm; default: all")
    ap.add_argument("--json", default=None, help="write every row as JSON here")
    args = ap.parse_args(argv)

    from sklearn.model_selection import StratifiedKFold, train_test_split

    t_start = time.perf_counter()
    d = Path(args.clinifact)
    split = {s: load_pairs(d / f"{s}_set.csv") for s in ("train", "validation", "test")}
    pool, test = split["train"] + split["validation"], split["test"]
    y = np.array([LABELS.index(p.label) for p in pool])
    yt = np.array([LABELS.index(p.label) for p in test])
    allp = pool + test
    n_pool = len(pool)
    outer = list(StratifiedKFold(args.folds, shuffle=True, random_state=args.seed).split(np.zeros(len(y)), y))
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    store = EmbeddingStore(args.store)
    config = load_config(args.configfile)
    rows: dict[str, dict] = {}
    probs: dict[str, dict] = {}  # row → {"oof": pooled outer OOF, "test": test probs, "inner": [per-fold inner OOF on rest], "full_inner": inner OOF on pool}

    def cached(name: str, compute):
        key = hashlib.sha256(json.dumps([name, args.folds, args.seed, str(d.resolve()), config["experiments"].get("tfidf"),
                                         config["experiments"].get("gbm")], sort_keys=True, default=str).encode()).hexdigest()[:16]
        path = work / f"{name.replace('/', '_')}-{key}.npz"
        if path.exists():
            z = np.load(path)
            out = {k: z[k] for k in z.files if not k.startswith("inner_")}
            if any(k.startswith("inner_") for k in z.files):
                out["inner"] = [z[f"inner_{k}"] for k in range(args.folds)]
            return out | {"seconds": float(z["seconds"])}
        t0 = time.perf_counter()
        out = compute()
        out["seconds"] = time.perf_counter() - t0
        flat = {k: v for k, v in out.items() if k != "inner"} | {f"inner_{k}": v for k, v in enumerate(out.get("inner", []))}
        np.savez(path, **flat)
        return out

    # ---- members of the workflow: tfidf (library fit) and gbm (hand features, IDF of train + validation)
    def tfidf_member():
        from medfc.experiments.models.kinds import fit_model

        opts = model_options(config, "tfidf")
        ex = [pair_example(p) for p in allp]

        def fp(tr_idx, te_idx):
            tr, va = train_test_split(tr_idx, test_size=0.2, stratify=y[tr_idx], random_state=args.seed)
            return fit_model(opts, LABELS, [ex[i] for i in tr], [ex[i] for i in va], desc="tfidf").probs([ex[i] for i in te_idx])

        return run_member(fp)

    def run_member(fp, fp_inner=None):
        """Outer OOF and test probabilities with ``fp``; the inner OOF (stacking's training data) with
        ``fp_inner`` (default ``fp``; gbm's uses one seed instead of three, to save time)."""
        fp_inner = fp_inner or fp
        oof, inner = np.zeros((n_pool, len(LABELS))), []
        for k, (rest, held) in enumerate(outer):
            oof[held] = fp(rest, held)
            inner.append(inner_cv(lambda tr, te: fp_inner(rest[tr], rest[te]), None, y[rest], args.folds, args.seed))
            print(f"  member fold {k} done", flush=True)
        all_idx = np.arange(n_pool)
        test_p = fp(all_idx, np.arange(n_pool, len(allp)))
        full_inner = inner_cv(lambda tr, te: fp_inner(all_idx[tr], all_idx[te]), None, y, args.folds, args.seed)
        return {"oof": oof, "test": test_p, "inner": inner, "full_inner": full_inner}

    print("tfidf member ...", flush=True)
    probs["tfidf"] = cached("tfidf", tfidf_member)

    def hand_features():
        from medfc.experiments.models.features import features, fit_idf
        from tqdm import tqdm

        idf = fit_idf(p.abstract for p in pool)
        rows_ = [features(p.claim, p.title or "", p.abstract, idf) for p in tqdm(allp, desc="gbm features")]
        keys = list(rows_[0])
        return {"X": np.array([[r[k] for k in keys] for r in rows_]), "oof": np.zeros(1), "test": np.zeros(1)}

    H = cached("handfeatures", hand_features)["X"]
    gbm_opts = model_options(config, "gbm")
    yall = np.concatenate([y, yt])

    gbm_one = gbm_opts.replace(seeds=(gbm_opts.seeds[0],))

    def gbm_fp(tr_idx, te_idx, opts=gbm_opts):
        return gbm_probs(opts, H[tr_idx], yall[tr_idx], H[te_idx])

    print("gbm member ...", flush=True)
    probs["gbm"] = cached("gbm", lambda: run_member(gbm_fp, lambda tr, te: gbm_fp(tr, te, gbm_one)))

    # ---- embedding models
    ev_texts = [evidence_text(p) for p in allp]
    claims = [p.claim for p in allp]
    emb_rows = []
    for enc_name in args.encoders:
        u = FrozenEncoder(Recipe(enc_name, 128), store).encode(claims, desc="claims")
        for variant in args.evidence:
            v = evidence_vectors(enc_name, variant, ev_texts, store)
            for kind in args.features:
                name = f"emb[{enc_name.split(':')[-1]},{variant},{kind}]"
                X = feature_matrix(u, v, kind)

                def emb_member(X=X):
                    oof, inner, chosen = np.zeros((n_pool, len(LABELS))), [], []
                    for k, (rest, held) in enumerate(outer):
                        C, inner_oof = choose_C(X[rest], y[rest], args.C_grid, args.folds, args.seed)
                        oof[held] = lr_probs(X[rest], y[rest], X[held], C, args.seed)
                        inner.append(inner_oof)
                        chosen.append(C)
                    C, full_inner = choose_C(X[:n_pool], y, args.C_grid, args.folds, args.seed)
                    chosen.append(C)
                    return {"oof": oof, "test": lr_probs(X[:n_pool], y, X[n_pool:], C, args.seed), "inner": inner,
                            "full_inner": full_inner, "C": np.array(chosen)}

                print(f"{name} ...", flush=True)
                probs[name] = cached(f"{name}-C{'_'.join(map(str, args.C_grid))}", emb_member)
                emb_rows.append(name)
                probs[name]["_cos"] = (u * v).sum(1, keepdims=True)

    # ---- ensembles, stacks, gbm + embedding features
    def add_avg(members):
        probs[f"avg({'+'.join(members)})"] = {"oof": sum(probs[m]["oof"] for m in members), "test": sum(probs[m]["test"] for m in members),
                                              "seconds": 0.0}

    def add_stack(members):
        oof = np.zeros((n_pool, len(LABELS)))
        for k, (rest, held) in enumerate(outer):
            oof[held] = stack_probs([probs[m]["inner"][k] for m in members], y[rest], [probs[m]["oof"][held] for m in members])
        test_p = stack_probs([probs[m]["full_inner"] for m in members], y, [probs[m]["test"] for m in members])
        probs[f"stack({'+'.join(members)})"] = {"oof": oof, "test": test_p, "seconds": 0.0}

    def add_gbm_emb(e):
        """gbm over hand features + u·v + the embedding model's out-of-fold probabilities."""
        cos = probs[e]["_cos"]
        oof = np.zeros((n_pool, len(LABELS)))
        t0 = time.perf_counter()
        for k, (rest, held) in enumerate(outer):
            Xtr = np.hstack([H[rest], cos[rest], probs[e]["inner"][k]])
            Xte = np.hstack([H[held], cos[held], probs[e]["oof"][held]])
            oof[held] = gbm_probs(gbm_opts, Xtr, y[rest], Xte)
        Xtr = np.hstack([H[:n_pool], cos[:n_pool], probs[e]["full_inner"]])
        Xte = np.hstack([H[n_pool:], cos[n_pool:], probs[e]["test"]])
        probs[f"gbm+{e}"] = {"oof": oof, "test": gbm_probs(gbm_opts, Xtr, y, Xte), "seconds": time.perf_counter() - t0}
        return f"gbm+{e}"

    add_avg(["tfidf", "gbm"])
    add_stack(["tfidf", "gbm"])
    for e in (emb_rows if args.stack is None else args.stack):
        add_avg(["gbm", e])
        add_avg(["tfidf", "gbm", e])
        add_stack(["gbm", e])
        add_stack(["tfidf", "gbm", e])
        ge = add_gbm_emb(e)
        add_avg(["tfidf", ge])

    # ---- report
    print(f"\nCliniFact, {args.folds}-fold CV over train + validation ({n_pool} pairs), test split ({len(test)} pairs); macro-F1 %")
    print(f"{'row':<58} {'CV mean ± std':>14} {'pooled':>7} {'test':>6} {'95% CI':>12} {'acc':>5} {'fit s':>7}")
    for name, pr in probs.items():
        folds_f1 = [100 * f1(y[held], pr["oof"][held]) for _, held in outer]
        pred = [LABELS[i] for i in pr["test"].argmax(1)]
        ci = bootstrap_intervals([LABELS[i] for i in yt], pred, LABELS, n_resamples=args.resamples, seed=args.seed)["macro_f1"]
        row = {"cv_mean": float(np.mean(folds_f1)), "cv_std": float(np.std(folds_f1, ddof=1)), "cv_pooled": 100 * f1(y, pr["oof"]),
               "test": 100 * f1(yt, pr["test"]), "ci": [100 * ci["low"], 100 * ci["high"]],
               "acc": 100 * float((pr["test"].argmax(1) == yt).mean()), "seconds": float(pr.get("seconds", 0.0))}
        if "C" in pr:
            row["C"] = [float(c) for c in pr["C"]]
        rows[name] = row
        print(f"{name:<58} {row['cv_mean']:>7.1f} ± {row['cv_std']:<4.1f} {row['cv_pooled']:>7.1f} {row['test']:>6.1f} "
              f"{row['ci'][0]:>5.1f}–{row['ci'][1]:<5.1f} {row['acc']:>5.1f} {row['seconds']:>7.0f}" + (f"  C={row['C']}" if "C" in row else ""))
    print("\nembedding throughput (store timing table; load1 = the 1-minute load average while encoding, 2 cores):")
    for (recipe,) in store.db.execute("SELECT DISTINCT recipe FROM timing ORDER BY recipe"):
        t = store.throughput(recipe)
        print(f"  {recipe:<40} {t['texts']:>6} texts {t['seconds']:>7.0f} s  {t['texts_per_s']:>6.2f} texts/s  {t['tokens_per_s']:>6.0f} tokens/s  load1 {t['load1']:.1f}")
    print(f"\nwall {time.perf_counter() - t_start:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
