"""A local ``transformers`` causal LM behind :class:`~medfc.llm.base.LLMClient`: chat greedy at temperature 0 in
length-sorted batches (a prompt too long for the model is a failed :class:`Completion`, never an exception)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import torch

from medfc.common.tokens import token_ids
from medfc.common.device import resolve_device, resolve_precision
from medfc.llm.base import Completion, GenerationParams, Ledger, LLMClient, Message

log = logging.getLogger(__name__)


def load_dtype(precision: str, device: torch.device) -> torch.dtype:
    amp, _ = resolve_precision(precision, device)
    return amp if (amp is not None and device.type == "cuda") else torch.float32


class TransformersLM(LLMClient):
    backend = "transformers"

    def __init__(self, model_path: str, *, device: str = "auto", precision: str = "auto", batch_size: int = 8,
                 ledger: Ledger | None = None) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        super().__init__(str(model_path), ledger)
        device_ = resolve_device(device)
        model = AutoModelForCausalLM.from_pretrained(model_path, dtype=load_dtype(precision, device_)).to(device_)
        self._attach(model, AutoTokenizer.from_pretrained(model_path), batch_size)
        log.info("loaded %s on %s (%s)", model_path, self.device, str(self.dtype).replace("torch.", ""))

    @classmethod
    def from_loaded(cls, name: str, model, tokenizer, *, batch_size: int = 8, ledger: Ledger | None = None) -> "TransformersLM":
        """A client around a model already in memory (e.g. a causal LM with LoRA adapters just trained):
        the same chat and option scoring as a loaded one; inputs go to the device of its embeddings."""
        self = cls.__new__(cls)
        LLMClient.__init__(self, str(name), ledger)
        self._attach(model, tokenizer, batch_size)
        return self

    def _attach(self, model, tokenizer, batch_size: int) -> None:
        self.tokenizer = tokenizer
        self.model = model.eval()
        emb = model.get_input_embeddings().weight
        self.device, self.dtype = emb.device, emb.dtype
        self.batch_size = max(1, int(batch_size))
        cfg = self.model.config
        self.max_positions = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
        eos = self.tokenizer.eos_token_id
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else (eos if eos is not None else 0)

    def _padded(self, seqs: list[list[int]], left: bool) -> tuple[torch.Tensor, torch.Tensor, int]:
        """(ids, attention mask) of a batch padded to its longest sequence, on the model's device, and that width."""
        width = max(len(x) for x in seqs)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for r, x in enumerate(seqs):
            at = slice(width - len(x), width) if left else slice(0, len(x))
            ids[r, at] = torch.tensor(x, dtype=torch.long)
            mask[r, at] = 1
        return ids.to(self.device), mask.to(self.device), width

    # -- chat ----------------------------------------------------------------------------------
    def render(self, conversation: Sequence[Message]) -> str:
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(list(conversation), tokenize=False, add_generation_prompt=True)
        return "".join(f"{m['role']}: {m['content']}\n" for m in conversation) + "assistant:"

    def _chat(self, conversations: list[list[Message]], params: GenerationParams) -> list[Completion]:
        # a chat template already writes the BOS token where the model wants it
        encoded = [list(token_ids(self.tokenizer, self.render(c))) for c in conversations]
        out: list[Completion | None] = [None] * len(encoded)
        limit = self.max_positions
        for i, x in enumerate(encoded):  # a prompt the model cannot take is a failed call, not a crash
            if limit and len(x) + int(params.max_tokens) > limit:
                out[i] = Completion("", len(x), 0, error=f"prompt of {len(x)} tokens + {params.max_tokens} new exceeds the model's {limit} positions")
        order = sorted((i for i in range(len(encoded)) if out[i] is None), key=lambda i: -len(encoded[i]))
        eos = self.tokenizer.eos_token_id
        gen_kwargs = {"max_new_tokens": int(params.max_tokens), "pad_token_id": self.pad_id}
        if params.temperature > 0:
            gen_kwargs.update(do_sample=True, temperature=float(params.temperature))
        else:
            gen_kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                chunk = order[start:start + self.batch_size]
                ids, mask, width = self._padded([encoded[i] for i in chunk], left=True)
                gen = self.model.generate(input_ids=ids, attention_mask=mask, **gen_kwargs)
                new = gen[:, width:].cpu().tolist()
                for r, i in enumerate(chunk):
                    toks = new[r]
                    finish = "length"
                    if eos is not None and eos in toks:
                        toks = toks[: toks.index(eos) + 1]
                        finish = "stop"
                    text = self.tokenizer.decode(toks, skip_special_tokens=True)
                    out[i] = Completion(text=text, prompt_tokens=len(encoded[i]), completion_tokens=len(toks), finish_reason=finish)
        return [o for o in out if o is not None]

    # -- option scoring --------------------------------------------------------------------------
    def _ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=True)["input_ids"])

    def option_ids(self, prompt: str, option: str) -> list[int]:
        """The option's tokens as they follow the prompt (``prompt + " " + option`` minus the prompt)."""
        base = self._ids(prompt)
        full = self._ids(prompt + " " + option)
        if full[: len(base)] == base and len(full) > len(base):
            return full[len(base):]
        return list(token_ids(self.tokenizer, " " + option))

    def score_options(self, prompts: Sequence[str], options: Sequence[str], batch_size: int = 4) -> np.ndarray:
        seqs: list[tuple[int, int, list[int], int]] = []  # (prompt idx, option idx or -1, ids, n option tokens)
        out = np.full((len(prompts), len(options)), -np.inf)
        single: dict[int, list[int]] = {}
        for pi, prompt in enumerate(prompts):
            base = self._ids(prompt)
            opt_ids = [self.option_ids(prompt, o) for o in options]
            if all(len(x) == 1 for x in opt_ids):
                seqs.append((pi, -1, base, 0))
                single[pi] = [x[0] for x in opt_ids]
            else:
                for oi, x in enumerate(opt_ids):
                    seqs.append((pi, oi, base + x, len(x)))
        order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i][2]))
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                chunk = [seqs[i] for i in order[start:start + batch_size]]
                ids, mask, _ = self._padded([s[2] for s in chunk], left=False)
                logits = self.model(input_ids=ids, attention_mask=mask).logits.float()
                logp = torch.log_softmax(logits, dim=-1).cpu()
                for r, (pi, oi, x, k) in enumerate(chunk):
                    if oi == -1:
                        out[pi] = logp[r, len(x) - 1, single[pi]].numpy()
                    else:
                        positions = range(len(x) - k - 1, len(x) - 1)
                        out[pi, oi] = float(sum(logp[r, t, x[t + 1]] for t in positions))
        return out
