"""Builders for tiny, randomly initialised Hugging Face models, made offline inside tests.

Each builder writes a directory loadable with ``from_pretrained`` and returns its path. Weights are
random (seeded), so outputs are deterministic but meaningless — enough to exercise loading,
batching, training loops and caches without any model hub.

* :func:`build_tiny_marian` — MarianMTModel + MarianTokenizer (source.spm, target.spm, vocab.json)
* :func:`build_tiny_opus_marian` — the same with Opus-MT's vocabulary layout (``<pad>`` last), which
  CTranslate2's converter needs
* :func:`build_tiny_bert` — BertForSequenceClassification (or BertModel) + WordPiece BertTokenizerFast
* :func:`build_tiny_causal_lm` — GPT2LMHeadModel + fast tokenizer where "TRUE", "FALSE", "NONE" are
  single tokens

Builders are cheap (well under a second each on one CPU core) and idempotent per directory.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "DE_SENTENCES",
    "EN_SENTENCES",
    "LABEL_TOKENS",
    "build_tiny_bert",
    "build_tiny_causal_lm",
    "build_tiny_marian",
    "build_tiny_opus_marian",
]

DE_SENTENCES: tuple[str, ...] = (
    "Hilft Vitamin D gegen Erkältungen?",
    "Die Studienlage ist widersprüchlich.",
    "Es gibt keine verlässlichen Belege.",
    "Kaffee schützt möglicherweise vor Diabetes.",
    "Die Teilnehmenden bekamen ein Placebo.",
    "Das Risiko sinkt um ca. 40 Prozent.",
    "Ärztinnen und Ärzte raten davon ab.",
    "Die Wirkung ist nicht nachgewiesen.",
    "Homöopathie wirkt nicht besser als Placebo.",
    "Ingwer lindert wahrscheinlich Übelkeit.",
    "Die Untersuchung dauerte zwölf Wochen.",
    "Wir haben nach Studien gesucht.",
    "Zink verkürzt vielleicht die Dauer einer Erkältung.",
    "Bewegung senkt den Blutdruck.",
    "Die Qualität der Studien war niedrig.",
    "Mehr Forschung ist nötig.",
    "Kinder schlafen besser mit einem Ritual.",
    "Akupunktur hilft bei Kopfschmerzen ein bisschen.",
    "Omega-3-Fettsäuren schützen nicht das Herz.",
    "Rotwein ist nicht gesund.",
    "Die Forscher verglichen zwei Gruppen.",
    "Nebenwirkungen waren selten.",
    "Das Ergebnis war nicht signifikant.",
    "Frauen und Männer wurden befragt.",
)
EN_SENTENCES: tuple[str, ...] = (
    "Does vitamin D help against colds?",
    "The evidence is contradictory.",
    "There is no reliable evidence.",
    "Coffee may protect against diabetes.",
    "The participants received a placebo.",
    "The risk drops by about 40 percent.",
    "Doctors advise against it.",
    "The effect has not been proven.",
    "Homeopathy works no better than placebo.",
    "Ginger probably relieves nausea.",
    "The study lasted twelve weeks.",
    "We searched for studies.",
    "Zinc may shorten the duration of a cold.",
    "Exercise lowers blood pressure.",
    "The quality of the studies was low.",
    "More research is needed.",
    "Children sleep better with a ritual.",
    "Acupuncture helps a little with headaches.",
    "Omega-3 fatty acids do not protect the heart.",
    "Red wine is not healthy.",
    "The researchers compared two groups.",
    "Side effects were rare.",
    "The result was not significant.",
    "Women and men were surveyed.",
)


def _train_spm(sentences: Sequence[str], vocab_size: int) -> bytes:
    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(list(sentences)),
        model_writer=buf,
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=1.0,
        hard_vocab_limit=False,
        bos_id=-1,
        eos_id=-1,  # Marian adds </s> itself from vocab.json
        unk_id=0,
        num_threads=1,
        minloglevel=2,
    )
    return buf.getvalue()


def _spm_pieces(model_bytes: bytes) -> list[str]:
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_proto=model_bytes)
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())]


def build_tiny_marian(
    out_dir: str | os.PathLike,
    src_sentences: Sequence[str] = DE_SENTENCES,
    tgt_sentences: Sequence[str] = EN_SENTENCES,
    *,
    vocab_size: int = 120,
    d_model: int = 16,
    max_length: int = 24,
    seed: int = 0,
) -> Path:
    """A tiny DE→EN MarianMTModel with SentencePiece tokenizers trained on the given sentences."""
    return _build_marian(out_dir, src_sentences, tgt_sentences, vocab_size=vocab_size, d_model=d_model,
                         max_length=max_length, seed=seed, pad_last=False)


def build_tiny_opus_marian(
    out_dir: str | os.PathLike,
    src_sentences: Sequence[str] = DE_SENTENCES,
    tgt_sentences: Sequence[str] = EN_SENTENCES,
    *,
    vocab_size: int = 120,
    d_model: int = 16,
    max_length: int = 24,
    seed: int = 0,
    init_std: float = 0.02,
    eos_bias: float = 0.0,
) -> Path:
    """:func:`build_tiny_marian` with Opus-MT's vocabulary layout: ``</s>`` 0, ``<unk>`` 1, ``<pad>``
    the **last** id (opus-mt-de-en: 58100 of 58101), which is also the decoder start token.

    CTranslate2's Marian converter relies on that layout: it drops the last vocabulary entry and
    the last embedding row (the ``<pad>`` transformers adds), so a model with ``<pad>`` elsewhere
    (as :func:`build_tiny_marian` makes it, id 2) fails its vocabulary check. ``init_std`` is the
    weights' initial spread (transformers' ``init_std``): larger values make the random model's
    output depend more on its input; ``eos_bias`` is added to ``</s>``'s output bias
    (``final_logits_bias``), so that translations end at varied lengths rather than all at the
    length limit (``init_std=0.5, eos_bias=6.0``: of 200 demo sentences at ``max_length`` 32, about
    half stop early, at six different lengths).
    """
    return _build_marian(out_dir, src_sentences, tgt_sentences, vocab_size=vocab_size, d_model=d_model,
                         max_length=max_length, seed=seed, pad_last=True, init_std=init_std, eos_bias=eos_bias)


def _build_marian(
    out_dir: str | os.PathLike,
    src_sentences: Sequence[str],
    tgt_sentences: Sequence[str],
    *,
    vocab_size: int,
    d_model: int,
    max_length: int,
    seed: int,
    pad_last: bool,
    init_std: float = 0.02,
    eos_bias: float = 0.0,
) -> Path:
    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    out = Path(out_dir)
    if (out / "config.json").exists() and (out / "vocab.json").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    src_model = _train_spm(src_sentences, vocab_size)
    tgt_model = _train_spm(tgt_sentences, vocab_size)
    (out / "source.spm").write_bytes(src_model)
    (out / "target.spm").write_bytes(tgt_model)
    vocab: dict[str, int] = {"</s>": 0, "<unk>": 1} if pad_last else {"</s>": 0, "<unk>": 1, "<pad>": 2}
    for piece in _spm_pieces(src_model) + _spm_pieces(tgt_model):
        if piece not in vocab and piece != "<pad>":
            vocab[piece] = len(vocab)
    vocab.setdefault("<pad>", len(vocab))
    (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False, indent=1), encoding="utf-8")

    tok = MarianTokenizer(
        source_spm=str(out / "source.spm"), target_spm=str(out / "target.spm"), vocab=str(out / "vocab.json"),
        source_lang="de", target_lang="en", model_max_length=max_length * 4,
    )
    tok.save_pretrained(out)

    config = MarianConfig(
        vocab_size=len(vocab),
        decoder_vocab_size=len(vocab),
        d_model=d_model,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=2 * d_model,
        decoder_ffn_dim=2 * d_model,
        max_position_embeddings=128,
        pad_token_id=vocab["<pad>"],
        eos_token_id=vocab["</s>"],
        decoder_start_token_id=vocab["<pad>"],
        forced_eos_token_id=vocab["</s>"],
        share_encoder_decoder_embeddings=True,
        max_length=max_length,
        num_beams=1,
        init_std=init_std,
    )
    torch.manual_seed(seed)
    model = MarianMTModel(config)
    if eos_bias:
        with torch.no_grad():
            model.final_logits_bias[0, vocab["</s>"]] += eos_bias
    model.generation_config.max_length = max_length
    model.generation_config.num_beams = 1
    model.generation_config.bad_words_ids = [[vocab["<pad>"]]]
    model.save_pretrained(out)
    return out


def build_tiny_bert(
    out_dir: str | os.PathLike,
    texts: Sequence[str] = DE_SENTENCES + EN_SENTENCES,
    *,
    num_labels: int | None = 3,
    id2label: dict[int, str] | None = None,
    hidden_size: int = 16,
    vocab_size: int = 300,
    seed: int = 0,
) -> Path:
    """A tiny BERT (sequence classifier when ``num_labels``, else a plain encoder) with a WordPiece vocab.

    The fast tokenizer is built from ``vocab=`` (a dict), not ``vocab_file=``, which in transformers 5
    yields an all-[UNK] tokenizer; it is saved with ``save_pretrained`` so ``AutoTokenizer`` loads it.
    """
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizerFast

    out = Path(out_dir)
    if (out / "config.json").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    wp = BertWordPieceTokenizer(lowercase=True, strip_accents=False)
    wp.train_from_iterator(list(texts), vocab_size=vocab_size, min_frequency=1, show_progress=False)
    vocab = wp.get_vocab()
    tok = BertTokenizerFast(vocab=vocab, do_lower_case=True, strip_accents=False, model_max_length=128)
    tok.save_pretrained(out)

    config = BertConfig(
        vocab_size=len(vocab), hidden_size=hidden_size, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=2 * hidden_size, max_position_embeddings=128, pad_token_id=vocab["[PAD]"],
    )
    torch.manual_seed(seed)
    if num_labels:
        config.num_labels = num_labels
        if id2label:
            config.id2label = dict(id2label)
            config.label2id = {v: k for k, v in id2label.items()}
        model = BertForSequenceClassification(config)
    else:
        model = BertModel(config)
    model.save_pretrained(out)
    return out


LABEL_TOKENS = ("TRUE", "FALSE", "NONE")


def build_tiny_causal_lm(
    out_dir: str | os.PathLike,
    texts: Sequence[str] = EN_SENTENCES,
    *,
    n_embd: int = 16,
    vocab_size: int = 300,
    label_tokens: Sequence[str] = LABEL_TOKENS,
    seed: int = 0,
    n_positions: int = 128,
) -> Path:
    """A tiny GPT-2 causal LM whose tokenizer encodes each of ``label_tokens`` as one token.

    ``n_positions`` is the longest input it takes (raise it for long chat prompts).

    ``tok.convert_tokens_to_ids("TRUE")`` and ``tok.encode("TRUE", add_special_tokens=False)``
    both give a single id; the tokenizer has ``eos``/``pad`` = ``<|endoftext|>``.
    """
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    out = Path(out_dir)
    if (out / "config.json").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        list(texts) + [" ".join(label_tokens)], vocab_size=vocab_size, min_frequency=1,
        special_tokens=["<|endoftext|>"], show_progress=False,
    )
    bpe.add_tokens(list(label_tokens))
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>", bos_token="<|endoftext|>",
        unk_token="<|endoftext|>", pad_token="<|endoftext|>", model_max_length=n_positions,
    )
    tok.save_pretrained(out)

    config = GPT2Config(
        vocab_size=len(tok), n_embd=n_embd, n_layer=1, n_head=2, n_positions=n_positions,
        bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.eos_token_id,
    )
    torch.manual_seed(seed)
    GPT2LMHeadModel(config).save_pretrained(out)
    return out
