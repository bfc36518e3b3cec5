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
* the families of config/paper.yaml, each in its hub repository's file layout (below):
  :func:`build_tiny_deberta_v2` (DeBERTa-v3, SentencePiece), :func:`build_tiny_bert_family` (WordPiece),
  :func:`build_tiny_roberta` (byte-level BPE), :func:`build_tiny_xlm_roberta` (SentencePiece, fairseq ids),
  :func:`build_tiny_llama` (Llama 3 Instruct: byte-level BPE, chat template, no pad token)

Builders are cheap (well under a second each on one CPU core) and idempotent per directory; each model
is built once and then copied from a cache keyed by this module's source (tests/helpers/model_cache.py).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.helpers.model_cache import cached_builder

__all__ = [
    "DE_SENTENCES",
    "EN_SENTENCES",
    "LABEL_TOKENS",
    "build_tiny_bert",
    "build_tiny_bert_family",
    "build_tiny_causal_lm",
    "build_tiny_deberta_v2",
    "build_tiny_llama",
    "build_tiny_marian",
    "build_tiny_opus_marian",
    "build_tiny_roberta",
    "build_tiny_xlm_roberta",
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


def _train_spm(sentences: Sequence[str], vocab_size: int, **ids: Any) -> bytes:
    """A SentencePiece unigram model trained on ``sentences`` (the model file's bytes). ``ids``: the special
    pieces' ids and names, by default Marian's (<unk> 0, no <s> or </s>: Marian adds </s> itself from
    vocab.json); the DeBERTa-v3 and XLM-R builders pass their own layouts."""
    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(list(sentences)), model_writer=buf, vocab_size=vocab_size, model_type="unigram",
        character_coverage=1.0, hard_vocab_limit=False, num_threads=1, minloglevel=2,
        **(ids or {"bos_id": -1, "eos_id": -1, "unk_id": 0}),
    )
    return buf.getvalue()


def _spm_pieces(model_bytes: bytes) -> list[str]:
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_proto=model_bytes)
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())]


@cached_builder
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


@cached_builder
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


@cached_builder
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


@cached_builder
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


# ------------------------------------------------------------------------ the papers' model families
# Each builder below stands in for one family of config/paper.yaml's models and writes the files the hub
# repository of that family ships (not just what save_pretrained writes), so that loading goes through the
# same conversion a user's first run on a GPU box goes through:
#   DeBERTa-v3 (microsoft/deberta-v3-large): spm.model + tokenizer_config.json, no tokenizer.json
#   BERT (bert-large-uncased: tokenizer.json; dmis-lab/biobert-*, BiomedBERT: vocab.txt only)
#   RoBERTa (roberta-base): vocab.json + merges.txt + tokenizer.json (byte-level BPE)
#   XLM-R (xlm-roberta-large): sentencepiece.bpe.model + tokenizer.json (fairseq ids: <s> <pad> </s> <unk>)
#   Llama 3 Instruct: tokenizer.json (byte-level BPE, no pad token) + a chat template, BOS added by the tokenizer

# the sentences and every letter, digit and common punctuation mark, so that no demo text meets an unknown character
FAMILY_TEXTS: tuple[str, ...] = DE_SENTENCES + EN_SENTENCES + (
    " ".join("abcdefghijklmnopqrstuvwxyzäöüß"), " ".join("ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÜ"), " ".join("0123456789.,;:!?'\"()[]-–%/&+=<>*#§°µ"),
)


def _encoder_dims(hidden_size: int, layers: int) -> dict[str, int]:
    return {"hidden_size": hidden_size, "num_hidden_layers": layers, "num_attention_heads": 2, "intermediate_size": 2 * hidden_size}


def _save_encoder(model_cls, config, out: Path, seed: int) -> None:
    import torch

    torch.manual_seed(seed)
    model_cls(config).save_pretrained(out)


@cached_builder
def build_tiny_deberta_v2(
    out_dir: str | os.PathLike,
    texts: Sequence[str] = FAMILY_TEXTS,
    *,
    vocab_size: int = 400,
    hidden_size: int = 32,
    layers: int = 2,
    max_positions: int = 512,
    seed: int = 0,
) -> Path:
    """A tiny DeBERTa-v3 (``model_type`` deberta-v2: relative attention, no absolute positions, no token
    types) with a SentencePiece unigram model trained on ``texts``, laid out as microsoft/deberta-v3-large
    ships it: ``spm.model`` and a two-key ``tokenizer_config.json``, no ``tokenizer.json``, so
    ``AutoTokenizer`` converts the SentencePiece model (which needs ``sentencepiece`` and ``protobuf``).
    Ids as DeBERTa-v3's: [PAD] 0, [CLS] 1, [SEP] 2, [UNK] 3, then [MASK] and the pieces."""
    from transformers import DebertaV2Config, DebertaV2Model

    out = Path(out_dir)
    if (out / "config.json").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    model = _train_spm(texts, vocab_size, pad_id=0, bos_id=1, eos_id=2, unk_id=3, pad_piece="[PAD]", bos_piece="[CLS]",
                       eos_piece="[SEP]", unk_piece="[UNK]", user_defined_symbols=["[MASK]"])
    (out / "spm.model").write_bytes(model)
    (out / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False, "vocab_type": "spm"}), encoding="utf-8")
    n_pieces = len(_spm_pieces(model))
    config = DebertaV2Config(
        vocab_size=n_pieces, **_encoder_dims(hidden_size, layers), max_position_embeddings=max_positions,
        relative_attention=True, position_buckets=32, norm_rel_ebd="layer_norm", share_att_key=True,
        pos_att_type=["p2c", "c2p"], position_biased_input=False, type_vocab_size=0, max_relative_positions=-1, pad_token_id=0,
    )
    _save_encoder(DebertaV2Model, config, out, seed)
    return out


@cached_builder
def build_tiny_bert_family(
    out_dir: str | os.PathLike,
    texts: Sequence[str] = FAMILY_TEXTS,
    *,
    vocab_txt_only: bool = False,
    lowercase: bool = True,
    vocab_size: int = 400,
    hidden_size: int = 32,
    layers: int = 2,
    max_positions: int = 512,
    seed: int = 0,
) -> Path:
    """A tiny BertModel with a WordPiece vocabulary trained on ``texts``: saved as bert-large-uncased ships
    it (``tokenizer.json`` and ``vocab.txt``), or with ``vocab_txt_only`` as BioBERT and BiomedBERT do (a
    ``vocab.txt`` and the model's config, nothing else: ``AutoTokenizer`` builds the tokenizer from it)."""
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    out = Path(out_dir)
    if (out / "config.json").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    wp = BertWordPieceTokenizer(lowercase=lowercase, strip_accents=False)
    wp.train_from_iterator(list(texts), vocab_size=vocab_size, min_frequency=1, show_progress=False)
    vocab = wp.get_vocab()
    if vocab_txt_only:
        ordered = sorted(vocab, key=vocab.__getitem__)
        (out / "vocab.txt").write_text("".join(t + "\n" for t in ordered), encoding="utf-8")
    else:
        BertTokenizerFast(vocab=vocab, do_lower_case=lowercase, strip_accents=False, model_max_length=max_positions).save_pretrained(out)
    config = BertConfig(vocab_size=len(vocab), **_encoder_dims(hidden_size, layers), max_position_embeddings=max_positions,
                        pad_token_id=vocab["[PAD]"])
    _save_encoder(BertModel, config, out, seed)
    return out


@cached_builder
def build_tiny_roberta(
    out_dir: str | os.PathLike,
    texts: Sequence[str] = FAMILY_TEXTS,
    *,
    vocab_size: int = 500,
    hidden_size: int = 32,
    layers: int = 2,
    max_positions: int = 512,
    seed: int = 0,
) -> Path:
    """A tiny RoBERTa with a byte-level BPE (``tokenizers``' ByteLevelBPETokenizer) trained on ``texts``:
    ``vocab.json``, ``merges.txt`` and ``tokenizer.json`` as roberta-base ships them; ids <s> 0, <pad> 1,
    </s> 2, <unk> 3, <mask> 4; one token type and ``max_positions + 2`` positions (RoBERTa's offset)."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizer

    out = Path(out_dir)
    if (out / "config.json").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(list(texts), vocab_size=vocab_size, min_frequency=1, show_progress=False,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe.save_model(str(out))  # vocab.json, merges.txt
    config = RobertaConfig(vocab_size=bpe.get_vocab_size(), **_encoder_dims(hidden_size, layers), max_position_embeddings=max_positions + 2,
                           type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    config.save_pretrained(out)
    RobertaTokenizer.from_pretrained(str(out), model_max_length=max_positions).save_pretrained(out)
    _save_encoder(RobertaModel, config, out, seed)
    return out


@cached_builder
def build_tiny_xlm_roberta(
    out_dir: str | os.PathLike,
    texts: Sequence[str] = FAMILY_TEXTS,
    *,
    vocab_size: int = 400,
    hidden_size: int = 32,
    layers: int = 2,
    max_positions: int = 512,
    seed: int = 0,
) -> Path:
    """A tiny XLM-RoBERTa with a SentencePiece unigram model trained on ``texts``, in XLM-R's fairseq id
    layout (<s> 0, <pad> 1, </s> 2, <unk> 3, the pieces, <mask> last): ``sentencepiece.bpe.model`` and
    ``tokenizer.json`` as xlm-roberta-large ships them; one token type, ``max_positions + 2`` positions."""
    from transformers import XLMRobertaConfig, XLMRobertaModel, XLMRobertaTokenizer

    import sentencepiece as spm

    out = Path(out_dir)
    if (out / "config.json").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    model = _train_spm(texts, vocab_size, unk_id=0, bos_id=1, eos_id=2, pad_id=-1)
    (out / "sentencepiece.bpe.model").write_bytes(model)
    sp = spm.SentencePieceProcessor(model_proto=model)
    pieces = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(3, sp.get_piece_size())]
    vocab = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), *pieces, ("<mask>", 0.0)]
    XLMRobertaTokenizer(vocab=vocab, model_max_length=max_positions).save_pretrained(out)
    config = XLMRobertaConfig(vocab_size=len(vocab), **_encoder_dims(hidden_size, layers), max_position_embeddings=max_positions + 2,
                              type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    _save_encoder(XLMRobertaModel, config, out, seed)
    return out


# Llama 3 Instruct's chat template (its structure: header ids, <|eot_id|> after each turn, BOS first)
LLAMA3_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
)
LLAMA3_SPECIAL = ("<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>")


@cached_builder
def build_tiny_llama(
    out_dir: str | os.PathLike,
    texts: Sequence[str] = FAMILY_TEXTS,
    *,
    vocab_size: int = 600,
    hidden_size: int = 32,
    layers: int = 2,
    max_positions: int = 4096,
    seed: int = 0,
) -> Path:
    """A tiny LlamaForCausalLM (grouped-query attention: 2 heads, 1 key/value head; rotary positions) with
    Llama 3 Instruct's tokenizer layout: a byte-level BPE ``tokenizer.json`` trained on ``texts`` whose
    post-processor adds ``<|begin_of_text|>``, eos ``<|eot_id|>``, **no pad token**, and a chat template.
    TRUE / FALSE / NONE are not single tokens (options are scored over several tokens)."""
    import torch
    from tokenizers import ByteLevelBPETokenizer, processors
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out = Path(out_dir)
    if (out / "config.json").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer(add_prefix_space=False)
    bpe.train_from_iterator(list(texts), vocab_size=vocab_size, min_frequency=1, show_progress=False, special_tokens=list(LLAMA3_SPECIAL))
    backend = bpe._tokenizer
    bos = backend.token_to_id("<|begin_of_text|>")
    backend.post_processor = processors.TemplateProcessing(
        single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B:1", special_tokens=[("<|begin_of_text|>", bos)])
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<|begin_of_text|>", eos_token="<|eot_id|>",
                                  model_max_length=max_positions, chat_template=LLAMA3_CHAT_TEMPLATE)
    tok.save_pretrained(out)
    eot = backend.token_to_id("<|eot_id|>")
    config = LlamaConfig(vocab_size=backend.get_vocab_size(), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                         num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=max_positions,
                         rope_theta=500000.0, bos_token_id=bos, eos_token_id=eot, tie_word_embeddings=False)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = [eot, backend.token_to_id("<|end_of_text|>")]
    model.save_pretrained(out)
    return out
