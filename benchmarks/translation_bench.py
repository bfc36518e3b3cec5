"""Translation throughput and memory hit rate with the tiny Marian model (no hub, CPU or GPU).

    python benchmarks/translation_bench.py [--n 300] [--batch-size 32] [--device auto]

Prints: sentences/second batched (sorted by length) vs one at a time; the memory hit rate when one
new article is added to an already-translated set; the splitter measurements on the hard German set.
Figures from a random tiny model measure the plumbing (padding, batching, memory), not quality.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # repo root, for tests.helpers

from medfc.healthfc.sentences import HARD_CASES, HELDOUT_CASES, evaluate_splitter, split_sentences  # noqa: E402
from medfc.healthfc.marian import MarianTranslator  # noqa: E402
from medfc.healthfc.tm import TranslationMemory  # noqa: E402
from medfc.healthfc.translate import translate_with_memory  # noqa: E402
from tests.helpers.tiny_models import DE_SENTENCES, build_tiny_marian  # noqa: E402


def make_sentences(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct German sentences of varied length built from the tiny corpus."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        k = rng.choice([1, 1, 1, 2, 2, 3, 4])
        s = " ".join(rng.sample(DE_SENTENCES, k)) + f" ({len(out)})"
        out.append(s)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--max-length", type=int, default=32)
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_tiny_marian(Path(tmp) / "marian", max_length=args.max_length)
        sents = make_sentences(args.n)

        batched = MarianTranslator(model_dir, device=args.device, batch_size=args.batch_size,
                                   max_length=args.max_length, num_beams=1, progress=False)
        batched.load()
        batched.translate(sents[:8])  # warm-up
        t0 = time.perf_counter()
        batched.translate(sents)
        t_batched = time.perf_counter() - t0

        single = MarianTranslator(model_dir, device=args.device, batch_size=1,
                                  max_length=args.max_length, num_beams=1, progress=False)
        single.load()
        t0 = time.perf_counter()
        for s in sents:
            single.translate([s])
        t_single = time.perf_counter() - t0

        print(f"device: {batched.device}; sentences: {len(sents)}; max_length {args.max_length}; greedy")
        print(f"batched (batch {args.batch_size}, sorted by length): {len(sents) / t_batched:8.1f} sentences/s")
        print(f"one at a time:                          {len(sents) / t_single:8.1f} sentences/s")
        print(f"speed-up: {t_single / t_batched:.1f}x")

        # memory hit rate: translate the set, then the set plus one new article
        memory = TranslationMemory(Path(tmp) / "tm.jsonl")
        _, s1 = translate_with_memory(sents, lambda: batched, memory, None, "tiny")
        article = split_sentences(
            "Hilft Ingwer gegen Übelkeit? Die Studienlage ist widersprüchlich. Laut Prof. Meier "
            "sinkt das Risiko um ca. 40 %. Die Studie erschien am 3. Mai 2019. Neue Daten fehlen."
        ) + sents[:5]  # the article also repeats five already-known sentences
        _, s2 = translate_with_memory(sents + article, lambda: batched, TranslationMemory(Path(tmp) / "tm.jsonl"),
                                      None, "tiny")
        print(f"first run:  {s1}")
        print(f"+1 article: {s2}")
        print(f"memory hit rate after adding one article: {s2['n_memory_hits'] / s2['n_unique']:.3f} "
              f"({s2['n_model']} sentences sent to the model)")

    for title, cases in (("hard German dev set", HARD_CASES), ("held-out set", HELDOUT_CASES)):
        print(f"\nsplitters on the {title} (boundary P/R/F1, exact splits / cases):")
        for base in ("pysbd", "nltk-punkt"):
            for rules in (False, True):
                r = evaluate_splitter(lambda t, b=base, ru=rules: split_sentences(t, base=b, rules=ru), cases)
                print(f"  {base:10s} rules={str(rules):5s} P={r['precision']:.3f} R={r['recall']:.3f} "
                      f"F1={r['f1']:.3f} exact={r['exact']}/{r['cases']} "
                      f"false={r['false_splits']} missed={r['missed_splits']}")


if __name__ == "__main__":
    main()
