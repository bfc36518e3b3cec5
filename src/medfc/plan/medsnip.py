"""The MedSNIP stage's plan (docs/medsnip.md): each rule's options from the ``medsnip`` config section, the prompts
each rule reads (their hashes go in its params, so a prompt edit reruns exactly those rules) and its resources.
The modules that name the prompts are imported only when asked (they load the LLM layer, HTTP clients, pandas)."""

from __future__ import annotations

from collections.abc import Mapping

from medfc.common.llm_backends import runs_locally
from medfc.medsnip.options import (ANSWER_SOURCES, GIVEN_ATOM_MODES, HUMAN_MODES, LLM_MODES, MODES, DecomposeOptions,
                                   FetchOptions, PrepareOptions, ScoreOptions, StructureOptions, TableOptions,
                                   TauOptions, VerifyOptions, answer_source, enabled_sources, verifier_kind)
from medfc.plan.jobs import Config, JobPlan, Part, job
from medfc.plan.models import layered

MEDSNIP_TITLES = {name: s.title for name, s in ANSWER_SOURCES.items()}  # each answer source's table title
STATEMENT_PROMPTS = ["medsnip/healthfc_statement", "llm/json_repair"]
MEDSNIP_WILDCARDS = {"dataset": "|".join(MEDSNIP_TITLES), "mode": "|".join(MODES), "verifier": r"[A-Za-z0-9][A-Za-z0-9_.+-]*"}


def _medsnip(plan: JobPlan) -> list[str]:
    return plan.medsnip.medsnip_datasets() if plan.stage_enabled("medsnip") else []


def _datasets(plan: JobPlan) -> list[dict[str, str]]:
    return [{"dataset": d} for d in _medsnip(plan)]


def _decompositions(plan: JobPlan) -> list[dict[str, str]]:
    return [{"dataset": d, "mode": m} for d in _medsnip(plan) for m in plan.medsnip.medsnip_modes(d)]


def _verifications(plan: JobPlan) -> list[dict[str, str]]:
    return [{**job, "verifier": v["name"]} for job in _decompositions(plan) for v in plan.config["medsnip"]["verifiers"]]


def _model_resources(plan: JobPlan, rule: str, wildcards: Mapping[str, str]) -> dict[str, int]:
    """A job running a local model asks for the configured threads, GPUs and memory; a server job for one thread."""
    llm = plan.job_options(rule, wildcards).llm  # every MedSNIP step's options name their LLM (None: it runs none)
    ms = plan.config["medsnip"]
    local = llm is not None and runs_locally(llm.backend)
    own = {k: ms[k] for k in ("threads", "gpu", "mem_mb")} if local else {"threads": 1, "gpu": 0, "mem_mb": 2048}
    return {**own, "runtime": ms["runtime"]}


def _role_local(config: Config, overrides: Mapping[str, object] | None) -> bool:
    """Whether a role's LLM (``medsnip.llm`` updated with the role's keys) runs in the job's process."""
    return runs_locally({**config["medsnip"]["llm"], **(overrides or {})}["backend"])


def _prepare_local(config: Config) -> bool:
    ms = config["medsnip"]
    rewriting = any(answer_source(d).rewrites_claims(ms["datasets"][d]) for d in enabled_sources(ms["datasets"]))
    return rewriting and _role_local(config, ms["rewriter"])


class MedsnipPlan(Part):
    @property
    def ms(self) -> dict[str, object]:
        return self.config["medsnip"]

    def medsnip_cache(self, value: str | None, sub: str) -> str:
        """A cache directory of the stage: null → <cache_dir>/<sub>; "" (off) and paths as they are."""
        return f"{self.config['cache_dir']}/{sub}" if value is None else value

    def medsnip_datasets(self) -> list[str]:
        return enabled_sources(self.ms["datasets"])

    def medsnip_modes(self, dataset: str) -> list[str]:
        """The configured decompositions, plus the dataset's own human units where it ships them."""
        human = HUMAN_MODES if answer_source(dataset).human_units and self.ms["datasets"][dataset]["human_units"] else []
        return list(self.ms["modes"]) + list(human)

    def medsnip_verifier(self, name: str) -> dict[str, object]:
        for v in self.ms["verifiers"]:
            if v["name"] == name:
                return v
        raise ValueError(f"config: no verifier {name!r} in medsnip.verifiers")

    def medsnip_llm(self, overrides: Mapping[str, object] | None) -> dict[str, object]:
        """medsnip.llm with a role's overrides, its HTTP cache resolved."""
        llm = layered(self.ms["llm"], overrides)
        llm["http_cache_dir"] = self.medsnip_cache(llm["http_cache_dir"], "medsnip/http")
        return llm

    def _medsnip_common(self) -> dict[str, object]:
        return {"prompt_dir": self.ms["prompt_dir"], "unit_cache_dir": self.medsnip_cache(self.ms["unit_cache_dir"], "medsnip/units")}

    def medsnip_rewrites(self, dataset: str) -> bool:
        return answer_source(dataset).rewrites_claims(self.ms["datasets"][dataset])

    def medsnip_roles(self) -> list[tuple[str, Mapping[str, object] | None]]:
        """(config key, its overrides of ``medsnip.llm``) of each role that calls an LLM."""
        roles = [("medsnip.decomposer", self.ms["decomposer"])]
        if any(self.medsnip_rewrites(d) for d in self.medsnip_datasets()):
            roles.append(("medsnip.rewriter", self.ms["rewriter"]))
        return roles + [(f"medsnip.verifiers[{i}].llm", v.get("llm")) for i, v in enumerate(self.ms["verifiers"])]

    def medsnip_fetched(self, dataset: str) -> bool:
        """Whether a dataset's answers come from its file on the Hugging Face Hub."""
        return answer_source(dataset).hub and self.ms["datasets"][dataset]["path"] is None

    def medsnip_prepare_inputs(self, dataset: str) -> dict[str, str]:
        """What a dataset's answers are read from: the HealthFC dataset, its Hub file's rows or its section's file."""
        if answer_source(dataset).healthfc_dataset:
            return {"source": self.layout.healthfc_dataset}
        if self.medsnip_fetched(dataset):
            return {"source": f"{self.layout.medsnip}/{dataset}/source/rows.jsonl"}
        return {"source": self.ms["datasets"][dataset]["path"]}

    def medsnip_retrieval(self) -> dict[str, object]:
        r = self.ms["retrieval"]
        return {**r, "search_cache_dir": self.medsnip_cache(r["search_cache_dir"], "medsnip/search"),
                "pubmed": {**r["pubmed"], "cache_dir": self.medsnip_cache(r["pubmed"]["cache_dir"], "clinifact/pubmed")},
                "web": {**r["web"], "http_cache_dir": self.medsnip_cache(r["web"]["http_cache_dir"], "medsnip/web")}}

    def medsnip_structure_inputs(self) -> dict[str, list[str]]:
        """Table 3's: every dataset's answers, then its units of every mode."""
        datasets = self.medsnip_datasets()
        return {"answers": [f"{self.layout.medsnip}/{d}/answers.jsonl" for d in datasets],
                "units": [f"{self.layout.medsnip}/{d}/units/{m}.jsonl" for d in datasets for m in self.medsnip_modes(d)]}

    def medsnip_prompts(self, names: list[str]) -> dict[str, str]:
        """{prompt name: sha256 of its file}: in a rule's params, so editing a prompt reruns its rules."""
        from medfc.llm.prompts import prompt_hashes

        return prompt_hashes(names, self.ms["prompt_dir"])

    def medsnip_prepare_prompts(self, dataset: str) -> dict[str, str]:
        return self.medsnip_prompts(STATEMENT_PROMPTS if self.medsnip_rewrites(dataset) else [])

    def medsnip_decompose_prompts(self, mode: str) -> dict[str, str]:
        from medfc.medsnip.decompose import prompt_names

        return self.medsnip_prompts(prompt_names(mode))

    def medsnip_verify_prompts(self, verifier: str) -> dict[str, str]:
        return self.medsnip_prompts(list(verifier_kind(self.medsnip_verifier(verifier)["kind"]).prompts))

    def medsnip_verify_inputs(self, dataset: str, mode: str, verifier: str) -> dict[str, str]:
        """A verifier's inputs: the units and answers, and a local BM25 index's passages."""
        inputs = {"units": f"{self.layout.medsnip}/{dataset}/units/{mode}.jsonl", "answers": f"{self.layout.medsnip}/{dataset}/answers.jsonl"}
        r = self.ms["retrieval"]
        if verifier_kind(self.medsnip_verifier(verifier)["kind"]).retrieves and "bm25" in r["sources"]:
            inputs["passages"] = r["bm25"]["passages"]
        return inputs

    def _medsnip_verdicts(self, dataset: str, suffix: str) -> list[str]:
        return [f"{self.layout.medsnip}/{dataset}/verdicts/{v['name']}/{m}{suffix}" for v in self.ms["verifiers"]
                for m in self.medsnip_modes(dataset)]

    def medsnip_score_inputs(self, dataset: str) -> dict[str, object]:
        return {"answers": f"{self.layout.medsnip}/{dataset}/answers.jsonl", "verdicts": self._medsnip_verdicts(dataset, ".jsonl"),
                "verifications": self._medsnip_verdicts(dataset, ".info.json"),
                "decompositions": [f"{self.layout.medsnip}/{dataset}/units/{m}.info.json" for m in self.medsnip_modes(dataset)]}

    @job("network", lambda plan: [{"dataset": d} for d in _medsnip(plan) if plan.medsnip.medsnip_fetched(d)],
         options_class=FetchOptions)
    def medsnip_fetch(self, dataset: str) -> dict[str, object]:
        return {"dataset": dataset, **self.ms["datasets"][dataset]["hf"], "cache_dir": self.config["cache_dir"]}

    @job("model", _datasets, options_class=PrepareOptions, inputs=medsnip_prepare_inputs, prompts=medsnip_prepare_prompts,
         resources=_model_resources, local_model=_prepare_local)
    def medsnip_prepare(self, dataset: str) -> dict[str, object]:
        ds = self.ms["datasets"][dataset]
        rewrite = self.medsnip_rewrites(dataset)
        return {"source": dataset, "splits": ds.get("splits", []), "rewrite_claims": rewrite, "limit": ds["limit"],
                "llm": self.medsnip_llm(self.ms["rewriter"]) if rewrite else None, **self._medsnip_common()}

    @job("model", _decompositions, options_class=DecomposeOptions, prompts=medsnip_decompose_prompts, resources=_model_resources,
         local_model=lambda config: _role_local(config, config["medsnip"]["decomposer"]))
    def medsnip_decompose(self, dataset: str, mode: str) -> dict[str, object]:
        given = answer_source(dataset).given_atoms and mode in GIVEN_ATOM_MODES
        return {"mode": mode, "atoms_from": self.ms["atoms_from"] if given else "extract",
                "fallback_whole_text": self.ms["fallback_whole_text"],
                "llm": self.medsnip_llm(self.ms["decomposer"]) if mode in LLM_MODES else None, **self._medsnip_common()}

    @job("model", _verifications, options_class=VerifyOptions, inputs=medsnip_verify_inputs, prompts=medsnip_verify_prompts,
         resources=_model_resources,
         local_model=lambda config: any(_role_local(config, v["llm"]) for v in config["medsnip"]["verifiers"]))
    def medsnip_verify(self, verifier: str) -> dict[str, object]:
        v = self.medsnip_verifier(verifier)
        return {"verifier": v["kind"], "name": v["name"], "unparsed": v["unparsed"], "llm": self.medsnip_llm(v["llm"]),
                "retrieval": self.medsnip_retrieval() if verifier_kind(v["kind"]).retrieves else None, **self._medsnip_common()}

    @job("light", _datasets, options_class=ScoreOptions, inputs=medsnip_score_inputs)
    def medsnip_score(self, dataset: str) -> dict[str, object]:
        ds = self.ms["datasets"][dataset]
        level, baseline = (ds["level"], ds["baseline_mode"]) if answer_source(dataset).own_level else ("answer", "atoms")
        return {"level": level, "baseline_mode": baseline, **self.ms["score"]}

    @job("light", _datasets, options_class=TableOptions, inputs=Part.papers_inputs)
    def medsnip_table(self, dataset: str) -> dict[str, object]:
        return {"title": answer_source(dataset).title, "dataset": dataset}

    @job("light", lambda plan: [{}] if _medsnip(plan) else [], options_class=StructureOptions, inputs=medsnip_structure_inputs)
    def medsnip_structure(self) -> dict[str, object]:
        datasets = self.medsnip_datasets()
        return {"datasets": datasets, "titles": {d: answer_source(d).title for d in datasets},
                "units": [{"dataset": d, "mode": m} for d in datasets for m in self.medsnip_modes(d)]}

    @job("light", _datasets, options_class=TauOptions,
         inputs=lambda self, dataset: {"answers": f"{self.layout.medsnip}/{dataset}/answers.jsonl",
                                       "verdicts": self._medsnip_verdicts(dataset, ".jsonl")})
    def medsnip_tau(self, dataset: str) -> dict[str, object]:
        return {"title": answer_source(dataset).title, "taus": self.ms["tau_sweep"], "score": self.medsnip_score(dataset)}

    @job("light", _datasets, options_class=TableOptions)
    def medsnip_calls(self, dataset: str) -> dict[str, object]:
        return self.medsnip_table(dataset)
