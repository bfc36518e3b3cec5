"""A HealthFC-sized release file for timing `config/cpu.yaml`'s HealthFC half without the real release.

750 rows in the official 12-column format, built from the demo release's rows: the real release's label
counts (SUPPORTED 204 / NOT ENOUGH INFO 423 / REFUTED 123 by verdict), gold evidence and explanations
drawn as demo sentences up to the paper's lengths (76.6 and 40.0 words on average), one URL and claim per
row. Only the wall times it gives mean anything (evidence is reused across rows, so scores do not):

    python benchmarks/healthfc_sized_release.py /tmp/healthfc750.csv
    snakemake --cores 2 --configfile config/cpu.yaml --config 'healthfc={"release": {"source": "/tmp/healthfc750.csv"}}'
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

import pandas as pd

DEMO = Path(__file__).resolve().parents[1] / "resources/demo/healthfc_release/Datensatz.csv"
LABEL_COUNTS = {0: 204, 1: 423, 2: 123}  # release codes: 0 SUPPORTED, 1 NOT ENOUGH INFO, 2 REFUTED
EVIDENCE_WORDS, EXPLANATION_WORDS = 76.6, 40.0


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", str(text)) if s]


def sized_release(demo: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    rng = random.Random(seed)
    pools = {col: [s for t in demo[col] for s in _sentences(t)]
             for col in ("en_top_sentences", "de_top_sentences", "en_explanation", "de_explanation")}

    def fill(col: str, mean_words: float) -> str:
        target, out = max(8.0, rng.gauss(mean_words, mean_words / 3)), []
        while sum(len(s.split()) for s in out) < target:
            out.append(rng.choice(pools[col]))
        return " ".join(out)

    rows = []
    for label, n in LABEL_COUNTS.items():
        same = demo[demo.label == label].to_dict("records")
        for _ in range(n):
            i = len(rows)
            row = dict(rng.choice(same))
            row.update(en_claim=f"{row['en_claim'].rstrip('?')} (variant {i})?", de_claim=f"{row['de_claim'].rstrip('?')} (Variante {i})?",
                       en_top_sentences=fill("en_top_sentences", EVIDENCE_WORDS), de_top_sentences=fill("de_top_sentences", EVIDENCE_WORDS),
                       en_explanation=fill("en_explanation", EXPLANATION_WORDS), de_explanation=fill("de_explanation", EXPLANATION_WORDS),
                       url=f"{row['url'].rstrip('/')}-v{i}/")
            rows.append(row)
    return pd.DataFrame(rows, columns=demo.columns).sample(frac=1, random_state=seed)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="where to write the CSV")
    ap.add_argument("--demo", default=str(DEMO), help="the release file whose rows are reused (default: the demo's)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    df = sized_release(pd.read_csv(args.demo), args.seed)
    df.to_csv(args.out, index=False)
    words = {c: round(float(df[c].str.split().str.len().mean()), 1) for c in ("en_claim", "en_top_sentences", "en_explanation")}
    print(f"{args.out}: {len(df)} rows, labels {df.label.value_counts().sort_index().to_dict()}, mean words {words}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
