"""Opus-MT translation speed, transformers vs CTranslate2, on a model of opus-mt-de-en's size.

    python benchmarks/translation_speed.py [--n 128] [--threads 2] [--num-beams 4] [--device cpu]
                                           [--ct2-types int8] [--batch-size 32] [--articles 750]

The speed of a Transformer does not depend on its weights, so the model is a randomly initialised
MarianMTModel with Helsinki-NLP/opus-mt-de-en's configuration (d_model 512, 6 + 6 layers, 8 heads,
FFN 2048, swish, static sinusoidal positions, scaled embeddings, shared embeddings, a vocabulary of
58101 with ``<pad>`` last, ``bad_words_ids`` and ``forced_eos_token_id`` as there) and a MarianTokenizer
whose SentencePiece models are trained here on the demo's German and English text (the vocabulary
file is filled up to 58101 entries, so the output projection has the real cost).

The sentences are the demo's real German texts (resources/demo/translation/memory.jsonl: every
sentence, title, teaser, question and explanation of its 25 articles), a seeded sample of ``--n``.
A random model would stop at an arbitrary place, so both backends decode a **fixed number of tokens**:
sentences are sorted by length and batched as the workflow batches them, and each batch decodes as
many tokens as the longest English reference translation in it (+ ``</s>``) — transformers with
``min_length = max_length``, CTranslate2 with ``min_decoding_length = max_decoding_length`` — as a
trained model runs until its longest sentence in the batch ends. (CTranslate2 drops finished sentences
from a batch as it goes, which this does not credit it with.) Tokenization and decoding are timed too.

CTranslate2 runs the model converted by the backend's own cache (medfc.healthfc.translators), int8 on
the CPU by default. Prints sentences per second for each, the ratio, and the time to translate the
whole portal (``--articles``, at the demo's texts per article). GPU: ``--device cuda`` times
transformers in fp16 and CTranslate2 in float16 (``--ct2-types float16``); on a CPU-only machine the
GPU estimate says it is not measured.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

MEMORY = ROOT / "resources/demo/translation/memory.jsonl"
DEMO_ARTICLES = 25  # the demo snapshot's articles (tests/unit/healthfc/test_translation_steps.py asserts it)

OPUS_MT_DE_EN = dict(  # Helsinki-NLP/opus-mt-de-en config.json
    vocab_size=58101, decoder_vocab_size=58101, d_model=512, encoder_layers=6, decoder_layers=6,
    encoder_attention_heads=8, decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048,
    activation_function="swish", max_position_embeddings=512, scale_embedding=True,
    static_position_embeddings=True, share_encoder_decoder_embeddings=True, normalize_before=False,
    pad_token_id=58100, eos_token_id=0, bos_token_id=0, decoder_start_token_id=58100, forced_eos_token_id=0,
    bad_words_ids=[[58100]], max_length=512, num_beams=4,
)


def demo_pairs() -> list[tuple[str, str]]:
    recs = [json.loads(line) for line in MEMORY.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(r["source"], r["target"]) for r in recs]


def _spm(texts: list[str], vocab_size: int) -> bytes:
    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(texts), model_writer=buf, vocab_size=vocab_size,
                                   model_type="unigram", character_coverage=1.0, hard_vocab_limit=False,
                                   bos_id=-1, eos_id=-1, unk_id=0, num_threads=2, minloglevel=2)
    return buf.getvalue()


def build_model(out: Path, pairs: list[tuple[str, str]], spm_vocab: int) -> Path:
    """A random opus-mt-de-en-sized MarianMTModel + a MarianTokenizer trained on the demo's text."""
    import sentencepiece as spm
    import torch
    from transformers import GenerationConfig, MarianConfig, MarianMTModel, MarianTokenizer

    out.mkdir(parents=True, exist_ok=True)
    src, tgt = _spm([s for s, _ in pairs], spm_vocab), _spm([t for _, t in pairs], spm_vocab)
    (out / "source.spm").write_bytes(src)
    (out / "target.spm").write_bytes(tgt)
    vocab: dict[str, int] = {"</s>": 0, "<unk>": 1}
    for model in (src, tgt):
        sp = spm.SentencePieceProcessor(model_proto=model)
        for i in range(sp.get_piece_size()):
            vocab.setdefault(sp.id_to_piece(i), len(vocab))
    vocab.pop("<pad>", None)
    fill = 0
    while len(vocab) < OPUS_MT_DE_EN["vocab_size"] - 1:  # opus-mt's vocabulary size, <pad> last
        vocab[f"<fill_{fill}>"] = len(vocab)
        fill += 1
    vocab["<pad>"] = len(vocab)
    (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    MarianTokenizer(source_spm=str(out / "source.spm"), target_spm=str(out / "target.spm"), vocab=str(out / "vocab.json"),
                    source_lang="de", target_lang="en", model_max_length=512).save_pretrained(out)
    gen_keys = ("bad_words_ids", "max_length", "num_beams", "forced_eos_token_id")
    config = MarianConfig(**{k: v for k, v in OPUS_MT_DE_EN.items() if k not in gen_keys})
    torch.manual_seed(0)
    model = MarianMTModel(config)
    model.generation_config = GenerationConfig(
        **{k: OPUS_MT_DE_EN[k] for k in gen_keys}, pad_token_id=58100, eos_token_id=0, bos_token_id=0,
        decoder_start_token_id=58100)
    model.save_pretrained(out)
    return out


def batches(sample: list[tuple[str, str]], tok, batch_size: int) -> list[tuple[list[str], int]]:
    """Sorted by source length (longest first), as the translators batch; each batch with its decoding
    length: the longest reference translation in it, in target tokens, + </s>."""
    order = sorted(sample, key=lambda p: len(p[0]), reverse=True)
    out = []
    for i in range(0, len(order), batch_size):
        chunk = order[i : i + batch_size]
        n = max(len(tok(text_target=t).input_ids) for _, t in chunk)  # includes </s>
        out.append(([s for s, _ in chunk], n))
    return out


def time_transformers(model_dir: Path, work: list[tuple[list[str], int]], device: str, num_beams: int) -> tuple[float, int]:
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_dir)
    if device.startswith("cuda"):
        model = model.half()
    model.to(device).eval()

    def run(texts: list[str], n: int) -> int:
        enc = tok(texts, return_tensors="pt", padding=True, truncation=True, max_length=512).to(device)
        with torch.inference_mode():
            gen = model.generate(**enc, num_beams=num_beams, min_length=n + 1, max_length=n + 1)
        tok.batch_decode(gen, skip_special_tokens=True)
        return int(gen.shape[1]) - 1

    run(work[-1][0][:4], 4)  # warm-up
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    start = time.perf_counter()
    steps = sum(run(texts, n) for texts, n in work)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - start, steps


def time_ctranslate2(model_dir: Path, cache: Path, work: list[tuple[list[str], int]], device: str, compute_type: str,
                     num_beams: int, threads: int) -> tuple[float, int, float]:
    import ctranslate2
    from transformers import AutoTokenizer

    from medfc.healthfc.translators import ensure_converted

    start = time.perf_counter()
    converted = ensure_converted(str(model_dir), cache, compute_type, local_files_only=True)
    convert_s = time.perf_counter() - start
    tok = AutoTokenizer.from_pretrained(converted.path / "tokenizer")
    kind, _, index = device.partition(":")
    translator = ctranslate2.Translator(str(converted.path / "model"), device=kind, device_index=int(index or 0),
                                        compute_type=compute_type, intra_threads=threads if kind == "cpu" else 0)

    def run(texts: list[str], n: int) -> int:
        ids = tok(texts, truncation=True, max_length=512).input_ids
        res = translator.translate_batch([tok.convert_ids_to_tokens(x) for x in ids], beam_size=num_beams,
                                         min_decoding_length=n, max_decoding_length=n, max_input_length=0)
        for r in res:
            tok.decode(tok.convert_tokens_to_ids(r.hypotheses[0]), skip_special_tokens=True)
        return max(len(r.hypotheses[0]) for r in res)

    run(work[-1][0][:4], 4)  # warm-up
    start = time.perf_counter()
    steps = sum(run(texts, n) for texts, n in work)
    return time.perf_counter() - start, steps, convert_s


def _hours(n_texts: float, per_s: float) -> str:
    s = n_texts / per_s
    return f"{s / 3600:.1f} h" if s >= 3600 else f"{s / 60:.0f} min"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=128, help="demo texts to translate (a seeded sample)")
    ap.add_argument("--batch-size", type=int, default=32, help="as healthfc.translation.batch_size")
    ap.add_argument("--num-beams", type=int, default=4, help="as healthfc.translation.num_beams (4)")
    ap.add_argument("--threads", type=int, default=2, help="CPU threads for both backends")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda (transformers fp16, CTranslate2 --ct2-types)")
    ap.add_argument("--ct2-types", default=None, help="CTranslate2 compute types, comma-separated (default: int8 on "
                    "the CPU, float16 on CUDA)")
    ap.add_argument("--spm-vocab", type=int, default=8000, help="SentencePiece pieces per side (a limit: the demo's "
                    "text yields fewer)")
    ap.add_argument("--articles", type=int, default=750, help="articles on the portal, for the estimate")
    ap.add_argument("--gpu-per-s", type=float, default=None, help="sentences/s measured on a GPU (this script with "
                    "--device cuda), for the GPU estimate")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    pairs = demo_pairs()
    sample = random.Random(args.seed).sample(pairs, min(args.n, len(pairs)))
    types = (args.ct2_types or ("float16" if args.device.startswith("cuda") else "int8")).split(",")
    per_article = len(pairs) / DEMO_ARTICLES
    portal = per_article * args.articles

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        model_dir = build_model(Path(tmp) / "opus-mt-de-en-random", pairs, args.spm_vocab)
        build_s = time.perf_counter() - start
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(model_dir)
        work = batches(sample, tok, args.batch_size)
        src_len = [len(tok(s).input_ids) for s, _ in sample]
        tgt_len = [len(tok(text_target=t).input_ids) for _, t in sample]
        words = [len(s.split()) for s, _ in sample]
        en_words = [len(t.split()) for _, t in sample]
        print(f"model: random MarianMTModel with opus-mt-de-en's config (vocab 58101, 512/6+6/8/2048), "
              f"built in {build_s:.0f} s; SentencePiece on the demo's text: "
              f"{sum(src_len) / sum(words):.2f} tokens per German word, {sum(tgt_len) / sum(en_words):.2f} per English "
              f"word (</s> included)")
        print(f"sentences: {len(sample)} of the demo's {len(pairs)} German texts; source tokens mean "
              f"{statistics.mean(src_len):.1f} (max {max(src_len)}), reference target tokens mean "
              f"{statistics.mean(tgt_len):.1f}; {len(work)} batches of <= {args.batch_size}, decoding "
              f"{sum(n * len(t) for t, n in work) / len(sample):.1f} tokens per sentence (the batch's longest reference)")
        print(f"device: {args.device}; threads: {args.threads}; beams: {args.num_beams}; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (others' jobs share them)")

        t_hf, steps_hf = time_transformers(model_dir, work, args.device, args.num_beams)
        hf_rate = len(sample) / t_hf
        label = "transformers" + (" (fp16)" if args.device.startswith("cuda") else " (float32)")
        print(f"{label:28s} {hf_rate:7.2f} sentences/s  ({t_hf:.1f} s, {steps_hf} decoder steps)")
        rates = {}
        try:
            import ctranslate2  # noqa: F401
        except ImportError:
            types = []
            print("ctranslate2: not installed here (benchmarks/gpu_check.sh --translate carries its wheel): transformers only")
        for ct in types:
            t_ct, steps_ct, convert_s = time_ctranslate2(model_dir, Path(tmp) / "ct2", work, args.device, ct,
                                                         args.num_beams, args.threads)
            rates[ct] = len(sample) / t_ct
            print(f"{'ctranslate2 (' + ct + ')':28s} {rates[ct]:7.2f} sentences/s  ({t_ct:.1f} s, {steps_ct} decoder "
                  f"steps; converted in {convert_s:.0f} s)  x{rates[ct] / hf_rate:.2f} transformers")

    best = types[0] if types else None
    if best:
        print(f"\nratio ctranslate2 ({best}) / transformers: {rates[best] / hf_rate:.2f}x (goal: >= 3x)")
    print(f"portal: {args.articles} articles x {per_article:.1f} texts per article (the demo: {len(pairs)} unique "
          f"texts in {DEMO_ARTICLES} articles, their sentences, titles, teasers and claims) = {portal:,.0f} texts")
    where = "this machine" if not args.device.startswith("cuda") else args.device
    print(f"  on {where} ({args.threads} threads): transformers {_hours(portal, hf_rate)}"
          + (f", ctranslate2 ({best}) {_hours(portal, rates[best])}" if best else ""))
    if args.gpu_per_s:
        print(f"  on a GPU: {_hours(portal, args.gpu_per_s)} (at the given {args.gpu_per_s:.1f} sentences/s)")
    elif not args.device.startswith("cuda"):
        print("  on a GPU: not measured (no GPU lent to this run; run this script with --device cuda there)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
