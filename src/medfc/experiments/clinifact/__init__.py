"""The CliniFact systems beside the discriminative one (:mod:`medfc.experiments.pairs`): their registry, the prompt and
its option scoring, and the zero-shot and LoRA fine-tuned runners (no runner imports another)."""
