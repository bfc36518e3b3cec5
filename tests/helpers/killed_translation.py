"""A translation of a few thousand sentences that kills itself with SIGKILL at a chosen point, for the
translation memory's resume test (tests/unit/healthfc/test_tm_durability.py).

The translator is :class:`ReverseTranslator`: a backend on the local models' own batching loop
(``medfc.healthfc.translators.LengthSortedBatches``: sorted by length, batches of ``batch_size``, the
memory written after each) whose "model" reverses and upper-cases each text — deterministic, per
sentence, and fast, so the test is about the memory, not the model. The memory is the real one
(``TranslationMemory`` with its append path).

    python -m tests.helpers.killed_translation STORE TEXTS OUT --kill {none,batch,write} --at N

``--kill batch``: SIGKILL while batch N (0-based) is being translated (batches 0..N-1 finished);
``--kill write``: SIGKILL in the middle of the memory's N-th append (0-based), after half of its bytes
(a torn last line). ``OUT`` receives ``{"translations": [...], "stats": {...}}`` when the run ends.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal

from medfc.healthfc.translators import LengthSortedBatches

WORDS = ("Übelkeit", "Ärzte", "Studien", "zeigen", "keinen", "Nutzen", "für", "Patientinnen", "mit", "Rückenschmerzen",
         "Vitamin", "D", "senkt", "das", "Risiko", "größer", "möglicherweise", "Wirkung", "Grüntee", "schützt", "nicht")


def sentences(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct German-looking sentences of 3 to 24 words (umlauts included), seeded."""
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 24))]
        out.append(" ".join(words) + f" ({i}).")
    return out


class ReverseTranslator(LengthSortedBatches):
    """A backend on the shared batching loop: each text reversed and upper-cased."""

    name = "reverse-de-en"
    origin = "model"

    def __init__(self, batch_size: int = 64, kill_batch: int | None = None):
        self.batch_size = batch_size
        self.progress = False
        self.n_batches = 0
        self.n_sentences = 0
        self.kill_batch = kill_batch

    def load(self) -> None:
        pass

    def _translate_batch(self, texts: list[str]) -> list[str]:
        if self.kill_batch is not None and self.n_batches == self.kill_batch:
            os.kill(os.getpid(), signal.SIGKILL)
        return [t[::-1].upper() for t in texts]


def _kill_in_append(n: int) -> None:
    """SIGKILL in the middle of the memory's ``n``-th append (its one ``os.write``): half its bytes written,
    the rest never. Nothing else in this process calls ``os.write``."""
    real_write = os.write
    calls = {"n": 0}

    def write(fd: int, data) -> int:
        if calls["n"] == n:
            real_write(fd, bytes(data)[: len(data) // 2])
            os.kill(os.getpid(), signal.SIGKILL)
        calls["n"] += 1
        return real_write(fd, data)

    os.write = write


def main() -> None:
    from medfc.healthfc.tm import TranslationMemory
    from medfc.healthfc.translate import translate_with_memory

    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("texts")
    parser.add_argument("out")
    parser.add_argument("--kill", choices=("none", "batch", "write"), default="none")
    parser.add_argument("--at", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    texts = json.loads(open(args.texts, encoding="utf-8").read())
    if args.kill == "write":
        _kill_in_append(args.at)
    kill_batch = args.at if args.kill == "batch" else None
    memory = TranslationMemory(args.store)
    out, stats = translate_with_memory(texts, lambda: ReverseTranslator(args.batch_size, kill_batch), memory, None,
                                       ReverseTranslator.name)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump({"translations": out, "stats": stats, "skipped_lines": memory.skipped_lines}, fh, ensure_ascii=False)


if __name__ == "__main__":
    main()
