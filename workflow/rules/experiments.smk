# Experiments (training and inference): the HealthFC baselines (5-fold cross-validation, one job per
# lang × model × system × fold), the one discriminative path of CliniFact and every declared dataset
# (pairs_*: one job per dataset × model) and CliniFact's generative systems (zero-shot scoring and LoRA
# fine-tuning of causal LMs, one job per model), ensembles, and the inner cross-validation of a
# stacked ensemble's members (one job per member and run). Steps: medfc.experiments.steps (docs/experiments.md); options from medfc.plan (PLAN, built in common.smk).


rule healthfc_experiment:
    input:
        unpack(PLAN.inputs_of(HealthFCPlan.healthfc_experiment)),
        dataset=rules.healthfc_dataset.output.jsonl,
        folds=rules.healthfc_folds.output.folds,
    output:
        predictions=f"{EXP_DIR}/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}/predictions.jsonl",
        info=f"{EXP_DIR}/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}/info.json",
    log:
        f"{LOGS}/experiments/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}.log",
    benchmark:
        f"{BENCH_DIR}/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}.tsv"
    wildcard_constraints:
        model=PLAN.models.model_alias_pattern(ensembles=False),
    conda:
        "../envs/medfc.yaml"
    threads: PLAN.threads_of(HealthFCPlan.healthfc_experiment)
    resources:
        **PLAN.resources_of(HealthFCPlan.healthfc_experiment),
    params:
        step=versioned("experiments.steps:healthfc_experiment"),
        options=PLAN.options_of(HealthFCPlan.healthfc_experiment),
    script:
        STEP_SCRIPT


rule pairs_experiment:
    input:
        unpack(PLAN.inputs_of(ExperimentsPlan.pairs_experiment)),
    output:
        predictions=f"{EXP_DIR}/{{dataset}}/{{model}}/predictions.jsonl",
        info=f"{EXP_DIR}/{{dataset}}/{{model}}/info.json",
    log:
        f"{LOGS}/experiments/{{dataset}}/{{model}}.log",
    benchmark:
        f"{BENCH_DIR}/{{dataset}}/{{model}}.tsv"
    wildcard_constraints:
        dataset=PAIR_DATASETS,
        model=PLAN.models.model_alias_pattern(ensembles=False),
    conda:
        "../envs/medfc.yaml"
    threads: PLAN.threads_of(ExperimentsPlan.pairs_experiment)
    resources:
        **PLAN.resources_of(ExperimentsPlan.pairs_experiment),
    params:
        step=versioned("experiments.steps:pairs_experiment"),
        options=PLAN.options_of(ExperimentsPlan.pairs_experiment),
    script:
        STEP_SCRIPT


rule clinifact_zero_shot:
    input:
        unpack(PLAN.inputs_of(ExperimentsPlan.clinifact_zero_shot)),
    output:
        predictions=f"{EXP_DIR}/clinifact/zero_shot/{{model}}/predictions.jsonl",
        info=f"{EXP_DIR}/clinifact/zero_shot/{{model}}/info.json",
    log:
        f"{LOGS}/experiments/clinifact/zero_shot/{{model}}.log",
    benchmark:
        f"{BENCH_DIR}/clinifact/zero_shot/{{model}}.tsv"
    conda:
        "../envs/medfc.yaml"
    threads: PLAN.threads_of(ExperimentsPlan.clinifact_zero_shot)
    resources:
        **PLAN.resources_of(ExperimentsPlan.clinifact_zero_shot),
    params:
        step=versioned("experiments.steps:clinifact_zero_shot"),
        options=PLAN.options_of(ExperimentsPlan.clinifact_zero_shot),
    script:
        STEP_SCRIPT


rule clinifact_fine_tune:
    input:
        unpack(PLAN.inputs_of(ExperimentsPlan.clinifact_fine_tune)),
    output:
        predictions=f"{EXP_DIR}/clinifact/fine_tuned/{{model}}/predictions.jsonl",
        info=f"{EXP_DIR}/clinifact/fine_tuned/{{model}}/info.json",
    log:
        f"{LOGS}/experiments/clinifact/fine_tuned/{{model}}.log",
    benchmark:
        f"{BENCH_DIR}/clinifact/fine_tuned/{{model}}.tsv"
    wildcard_constraints:
        model=PLAN.models.model_alias_pattern(ensembles=False),
    conda:
        "../envs/medfc.yaml"
    threads: PLAN.threads_of(ExperimentsPlan.clinifact_fine_tune)
    resources:
        **PLAN.resources_of(ExperimentsPlan.clinifact_fine_tune),
    params:
        step=versioned("experiments.steps:clinifact_fine_tune"),
        options=PLAN.options_of(ExperimentsPlan.clinifact_fine_tune),
    script:
        STEP_SCRIPT


rule healthfc_inner_cv:
    input:
        unpack(PLAN.inputs_of(HealthFCPlan.healthfc_inner_cv)),
        dataset=rules.healthfc_dataset.output.jsonl,
        folds=rules.healthfc_folds.output.folds,
    output:
        predictions=f"{PLAN.experiments.inner_cv_dir}/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}/predictions.jsonl",
        info=f"{PLAN.experiments.inner_cv_dir}/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}/info.json",
    log:
        f"{LOGS}/experiments/inner_cv/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}.log",
    benchmark:
        f"{BENCH_DIR}/inner_cv/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}.tsv"
    wildcard_constraints:
        model=PLAN.models.model_alias_pattern(ensembles=False),
    conda:
        "../envs/medfc.yaml"
    threads: PLAN.threads_of(HealthFCPlan.healthfc_inner_cv)
    resources:
        **PLAN.resources_of(HealthFCPlan.healthfc_inner_cv),
    params:
        step=versioned("experiments.steps:healthfc_inner_cv"),
        options=PLAN.options_of(HealthFCPlan.healthfc_inner_cv),
    script:
        STEP_SCRIPT


rule pairs_inner_cv:
    input:
        unpack(PLAN.inputs_of(ExperimentsPlan.pairs_inner_cv)),
    output:
        predictions=f"{PLAN.experiments.inner_cv_dir}/{{dataset}}/{{model}}/predictions.jsonl",
        info=f"{PLAN.experiments.inner_cv_dir}/{{dataset}}/{{model}}/info.json",
    log:
        f"{LOGS}/experiments/inner_cv/{{dataset}}/{{model}}.log",
    benchmark:
        f"{BENCH_DIR}/inner_cv/{{dataset}}/{{model}}.tsv"
    wildcard_constraints:
        dataset=PAIR_DATASETS,
        model=PLAN.models.model_alias_pattern(ensembles=False),
    conda:
        "../envs/medfc.yaml"
    threads: PLAN.threads_of(ExperimentsPlan.pairs_inner_cv)
    resources:
        **PLAN.resources_of(ExperimentsPlan.pairs_inner_cv),
    params:
        step=versioned("experiments.steps:pairs_inner_cv"),
        options=PLAN.options_of(ExperimentsPlan.pairs_inner_cv),
    script:
        STEP_SCRIPT


rule healthfc_ensemble:
    input:
        unpack(PLAN.inputs_of(HealthFCPlan.healthfc_ensemble)),
    output:
        predictions=f"{EXP_DIR}/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}/predictions.jsonl",
        info=f"{EXP_DIR}/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}/info.json",
    log:
        f"{LOGS}/experiments/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}.log",
    benchmark:
        f"{BENCH_DIR}/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}.tsv"
    wildcard_constraints:
        model=PLAN.models.model_alias_pattern(ensembles=True),
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("experiments.steps:ensemble"),
        options=PLAN.options_of(HealthFCPlan.healthfc_ensemble),
    script:
        STEP_SCRIPT


rule pairs_ensemble:
    input:
        unpack(PLAN.inputs_of(ExperimentsPlan.pairs_ensemble)),
    output:
        predictions=f"{EXP_DIR}/{{dataset}}/{{model}}/predictions.jsonl",
        info=f"{EXP_DIR}/{{dataset}}/{{model}}/info.json",
    log:
        f"{LOGS}/experiments/{{dataset}}/{{model}}.log",
    benchmark:
        f"{BENCH_DIR}/{{dataset}}/{{model}}.tsv"
    wildcard_constraints:
        dataset=PAIR_DATASETS,
        model=PLAN.models.model_alias_pattern(ensembles=True),
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("experiments.steps:ensemble"),
        options=PLAN.options_of(ExperimentsPlan.pairs_ensemble),
    script:
        STEP_SCRIPT


rule healthfc_final:
    input:
        unpack(PLAN.inputs_of(HealthFCPlan.healthfc_final)),
        dataset=rules.healthfc_dataset.output.jsonl,
    output:
        model=directory(f"{RESULTS}/final/healthfc/{{lang}}/{{model}}/{{system}}"),
    log:
        f"{LOGS}/final/healthfc/{{lang}}/{{model}}/{{system}}.log",
    benchmark:
        f"{TIMINGS}/final/healthfc/{{lang}}/{{model}}/{{system}}.tsv"
    conda:
        "../envs/medfc.yaml"
    threads: PLAN.threads_of(HealthFCPlan.healthfc_final)
    resources:
        **PLAN.resources_of(HealthFCPlan.healthfc_final),
    params:
        step=versioned("experiments.steps:healthfc_final"),
        options=PLAN.options_of(HealthFCPlan.healthfc_final),
    script:
        STEP_SCRIPT


rule pairs_final:
    input:
        unpack(PLAN.inputs_of(ExperimentsPlan.pairs_final)),
    output:
        model=directory(f"{RESULTS}/final/{{dataset}}/{{model}}"),
    log:
        f"{LOGS}/final/{{dataset}}/{{model}}.log",
    benchmark:
        f"{TIMINGS}/final/{{dataset}}/{{model}}.tsv"
    wildcard_constraints:
        dataset=PAIR_DATASETS,
    conda:
        "../envs/medfc.yaml"
    threads: PLAN.threads_of(ExperimentsPlan.pairs_final)
    resources:
        **PLAN.resources_of(ExperimentsPlan.pairs_final),
    params:
        step=versioned("experiments.steps:pairs_final"),
        options=PLAN.options_of(ExperimentsPlan.pairs_final),
    script:
        STEP_SCRIPT
