"""The papers' example tables' plan (HealthFC Tables 1 and 4, CliniFact Tables 5 and 7): what each reads, its
options and whether the run makes it. How much of a text a table shows is fixed here so that it fits its page."""

from __future__ import annotations

from medfc.experiments.healthfc.systems import EVIDENCE_SYSTEMS
from medfc.plan.jobs import Part, job, one_job
from medfc.tables.options import WrongClaimsOptions, ExampleClaimsOptions, ExamplePairsOptions

EXCERPT_WORDS = 60  # Table 1's article snippet, Tables 5 and 7's abstract excerpt
EVIDENCE_WORDS = 50  # Table 4: the claim, its gold evidence and its selected evidence, each
ERRORS_SHOWN = 3  # Table 4: the wrong claims shown
EXAMPLE_SPLIT = "test"  # the CliniFact split Table 7 takes its example from
EXAMPLE_SPLITS = ("test", "validation", "train")  # the splits Table 5 searches, in order, for a pair of each label
EXAMPLE_LANG = "en"  # Table 1's language (the paper's English)
_with_clinifact_pairs = one_job(lambda plan: plan.clinifact_data_planned())


class ExamplesPlan(Part):
    @job("light", one_job(lambda plan: plan.stage_enabled("healthfc")), options_class=ExampleClaimsOptions,
         inputs=lambda self: {"dataset": self.layout.healthfc_dataset})
    def healthfc_table1(self) -> dict[str, object]:
        return {"lang": EXAMPLE_LANG, "words": EXCERPT_WORDS}

    def error_runs(self) -> list[dict[str, object]]:
        """Every fold of every HealthFC row whose system selects evidence (the candidates of Table 4)."""
        return [dict(r) for r in self.healthfc.healthfc_runs(EVIDENCE_SYSTEMS)]

    def errors_inputs(self) -> dict[str, object]:
        dirs = [self.healthfc.healthfc_run_dir(r) for r in self.error_runs()]
        return {"scores": [f"{d}/scores.json" for d in dirs], "predictions": [f"{d}/predictions.jsonl" for d in dirs],
                "dataset": self.layout.healthfc_dataset}

    @job("light", one_job(lambda plan: plan.stage_enabled("experiments") and bool(plan.examples.error_runs())),
         options_class=WrongClaimsOptions, inputs=errors_inputs)
    def healthfc_table4(self) -> dict[str, object]:
        return {"entries": self.error_runs(), "shown": ERRORS_SHOWN, "words": EVIDENCE_WORDS, "scale": self.config["experiments"]["scale"]}

    def example_pairs_options(self) -> dict[str, object]:
        """Tables 5 and 7's: the split of Table 7's example, the words of an abstract's excerpt."""
        return {"split": EXAMPLE_SPLIT, "words": EXCERPT_WORDS}

    @job("light", _with_clinifact_pairs, options_class=ExamplePairsOptions,
         inputs=lambda self: {"pairs": [self.experiments.pairs_split_inputs("clinifact")[s] for s in EXAMPLE_SPLITS]})
    def clinifact_table5(self) -> dict[str, object]:
        return self.example_pairs_options()

    @job("light", _with_clinifact_pairs, options_class=ExamplePairsOptions,
         inputs=lambda self: {"pairs": self.experiments.pairs_split_inputs("clinifact")[EXAMPLE_SPLIT]})
    def clinifact_table7(self) -> dict[str, object]:
        return self.example_pairs_options()
