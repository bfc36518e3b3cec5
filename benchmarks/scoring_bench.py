"""Scorer speed: AVeriTeC scoring of 500 claims × 10 predicted evidence strings, and a 10,000-resample
paired bootstrap over 1,000 claims. Prints figures; asserts nothing.

    python benchmarks/scoring_bench.py [--claims 500] [--gold 5] [--resamples 10000] [--bootstrap-claims 1000]

Needs the NLTK data (scripts/install_nltk_data.sh) for the METEOR part; synthetic text, fixed seeds.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

WORDS = (
    "the a patient patients trial study studies vaccine drug dose doses reduced increased risk of in with "
    "adults children women men heart blood pressure diabetes cancer evidence showed no significant effect "
    "placebo group weeks months years randomised controlled review meta-analysis found claim said reported "
    "doctor doctors hospital cases deaths infection infections treatment treatments side effects mild severe"
).split()


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(8, 24))) + "."


def bench_averitec(n_claims: int, n_pred: int, n_gold: int) -> None:
    from medfc.scoring.averitec import AVERITEC_LABELS, ClaimPrediction, score_claims
    from medfc.scoring.meteor import Meteor

    rng = random.Random(0)
    claims = [
        ClaimPrediction(
            id=str(i),
            label=rng.choice(AVERITEC_LABELS),
            pred_label=rng.choice(AVERITEC_LABELS),
            evidence=[_sentence(rng) for _ in range(n_pred)],
            gold_evidence=[_sentence(rng) for _ in range(n_gold)],
            justification=_sentence(rng),
            gold_justification=_sentence(rng),
        )
        for i in range(n_claims)
    ]
    t0 = time.perf_counter()
    meteor = Meteor()
    t1 = time.perf_counter()
    scores = score_claims(claims, metric=meteor)
    t2 = time.perf_counter()
    pairs = n_claims * (n_pred * n_gold + 1)
    print(f"averitec: {n_claims} claims x {n_pred} predicted x {n_gold} gold evidence strings "
          f"({pairs} METEOR pairs incl. justifications)")
    print(f"  NLTK data check + WordNet load: {t1 - t0:.2f} s")
    print(f"  scoring: {t2 - t1:.2f} s ({(t2 - t1) / pairs * 1e3:.3f} ms per pair); "
          f"evidence score {scores['evidence_score']:.4f}, AVeriTeC@0.25 {scores['averitec']['0.25']:.4f}")


def bench_bootstrap(n_claims: int, n_resamples: int) -> None:
    from medfc.scoring.medsnip import paired_bootstrap

    rng = np.random.default_rng(0)
    gold = rng.random(n_claims) < 0.3
    a = np.where(rng.random(n_claims) < 0.8, gold, ~gold)
    b = np.where(rng.random(n_claims) < 0.85, gold, ~gold)
    lab = lambda x: ["FALSE" if v else "TRUE" for v in x]  # noqa: E731
    t0 = time.perf_counter()
    r = paired_bootstrap(lab(gold), lab(a), lab(b), n_resamples=n_resamples, seed=0)
    t1 = time.perf_counter()
    print(f"bootstrap: {n_resamples} resamples x {n_claims} claims (FF1, paired): {t1 - t0:.2f} s; "
          f"diff {r['diff']:+.4f} CI [{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--claims", type=int, default=500)
    p.add_argument("--pred", type=int, default=10)
    p.add_argument("--gold", type=int, default=5)
    p.add_argument("--resamples", type=int, default=10_000)
    p.add_argument("--bootstrap-claims", type=int, default=1_000)
    args = p.parse_args()
    bench_bootstrap(args.bootstrap_claims, args.resamples)
    bench_averitec(args.claims, args.pred, args.gold)


if __name__ == "__main__":
    main()
