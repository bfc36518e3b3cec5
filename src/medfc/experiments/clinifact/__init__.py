"""The CliniFact systems beside the discriminative one (which is :mod:`medfc.experiments.pairs`): the registry of
CliniFact systems (:mod:`~medfc.experiments.clinifact.systems`, a light module the plan and the tables read), the
prompt and the scoring of its answer options (:mod:`~medfc.experiments.clinifact.prompts`), and the generative runners
that share them, zero-shot (:mod:`~medfc.experiments.clinifact.zero_shot`) and LoRA fine-tuned
(:mod:`~medfc.experiments.clinifact.fine_tune`); no runner imports another."""
