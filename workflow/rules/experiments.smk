# Experiments (training and inference): the HealthFC baselines (5-fold cross-validation, one job per
# lang × model × system × fold), the one discriminative path of CliniFact and every declared dataset
# (pairs_*: one job per dataset × model) and CliniFact's generative systems (zero-shot scoring and LoRA
# fine-tuning of causal LMs, one job per model), ensembles, and the inner cross-validation of a
# stacked ensemble's members (one job per member and run). Steps: medfc.experiments.steps (docs/experiments.md); options from medfc.plan (PLAN, built in common.smk).


rule healthfc_experiment:
    input:
        unpack(lambda w: PLAN.inputs("healthfc_experiment", w)),
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
    threads: lambda w: PLAN.job_resources("healthfc_experiment", w)["threads"]
    resources:
        mem_mb=lambda w: PLAN.job_resources("healthfc_experiment", w)["mem_mb"],
        runtime=lambda w: PLAN.job_resources("healthfc_experiment", w)["runtime"],
        gpu=lambda w: PLAN.job_resources("healthfc_experiment", w)["gpu"],
    params:
        step=versioned("experiments.steps:healthfc_experiment"),
        options=lambda w: PLAN.options("healthfc_experiment", w),
    script:
        STEP_SCRIPT


rule pairs_experiment:
    input:
        unpack(lambda w: PLAN.inputs("pairs_experiment", w)),
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
    threads: lambda w: PLAN.job_resources("pairs_experiment", w)["threads"]
    resources:
        mem_mb=lambda w: PLAN.job_resources("pairs_experiment", w)["mem_mb"],
        runtime=lambda w: PLAN.job_resources("pairs_experiment", w)["runtime"],
        gpu=lambda w: PLAN.job_resources("pairs_experiment", w)["gpu"],
    params:
        step=versioned("experiments.steps:pairs_experiment"),
        options=lambda w: PLAN.options("pairs_experiment", w),
    script:
        STEP_SCRIPT


rule clinifact_zero_shot:
    input:
        unpack(lambda w: PLAN.inputs("clinifact_zero_shot", w)),
    output:
        predictions=f"{EXP_DIR}/clinifact/zero_shot/{{model}}/predictions.jsonl",
        info=f"{EXP_DIR}/clinifact/zero_shot/{{model}}/info.json",
    log:
        f"{LOGS}/experiments/clinifact/zero_shot/{{model}}.log",
    benchmark:
        f"{BENCH_DIR}/clinifact/zero_shot/{{model}}.tsv"
    conda:
        "../envs/medfc.yaml"
    threads: lambda w: PLAN.job_resources("clinifact_zero_shot", w)["threads"]
    resources:
        mem_mb=lambda w: PLAN.job_resources("clinifact_zero_shot", w)["mem_mb"],
        runtime=lambda w: PLAN.job_resources("clinifact_zero_shot", w)["runtime"],
        gpu=lambda w: PLAN.job_resources("clinifact_zero_shot", w)["gpu"],
    params:
        step=versioned("experiments.steps:clinifact_zero_shot"),
        options=lambda w: PLAN.options("clinifact_zero_shot", w),
    script:
        STEP_SCRIPT


rule clinifact_fine_tune:
    input:
        unpack(lambda w: PLAN.inputs("clinifact_fine_tune", w)),
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
    threads: lambda w: PLAN.job_resources("clinifact_fine_tune", w)["threads"]
    resources:
        mem_mb=lambda w: PLAN.job_resources("clinifact_fine_tune", w)["mem_mb"],
        runtime=lambda w: PLAN.job_resources("clinifact_fine_tune", w)["runtime"],
        gpu=lambda w: PLAN.job_resources("clinifact_fine_tune", w)["gpu"],
    params:
        step=versioned("experiments.steps:clinifact_fine_tune"),
        options=lambda w: PLAN.options("clinifact_fine_tune", w),
    script:
        STEP_SCRIPT


rule healthfc_inner_cv:
    input:
        unpack(lambda w: PLAN.inputs("healthfc_inner_cv", w)),
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
    threads: lambda w: PLAN.job_resources("healthfc_inner_cv", w)["threads"]
    resources:
        mem_mb=lambda w: PLAN.job_resources("healthfc_inner_cv", w)["mem_mb"],
        runtime=lambda w: PLAN.job_resources("healthfc_inner_cv", w)["runtime"],
        gpu=lambda w: PLAN.job_resources("healthfc_inner_cv", w)["gpu"],
    params:
        step=versioned("experiments.steps:healthfc_inner_cv"),
        options=lambda w: PLAN.options("healthfc_inner_cv", w),
    script:
        STEP_SCRIPT


rule pairs_inner_cv:
    input:
        unpack(lambda w: PLAN.inputs("pairs_inner_cv", w)),
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
    threads: lambda w: PLAN.job_resources("pairs_inner_cv", w)["threads"]
    resources:
        mem_mb=lambda w: PLAN.job_resources("pairs_inner_cv", w)["mem_mb"],
        runtime=lambda w: PLAN.job_resources("pairs_inner_cv", w)["runtime"],
        gpu=lambda w: PLAN.job_resources("pairs_inner_cv", w)["gpu"],
    params:
        step=versioned("experiments.steps:pairs_inner_cv"),
        options=lambda w: PLAN.options("pairs_inner_cv", w),
    script:
        STEP_SCRIPT


rule healthfc_ensemble:
    input:
        unpack(lambda w: PLAN.inputs("healthfc_ensemble", w)),
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
        options=lambda w: PLAN.options("healthfc_ensemble", w),
    script:
        STEP_SCRIPT


rule pairs_ensemble:
    input:
        unpack(lambda w: PLAN.inputs("pairs_ensemble", w)),
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
        options=lambda w: PLAN.options("pairs_ensemble", w),
    script:
        STEP_SCRIPT


rule healthfc_final:
    input:
        unpack(lambda w: PLAN.inputs("healthfc_final", w)),
        dataset=rules.healthfc_dataset.output.jsonl,
    output:
        model=directory(f"{RESULTS}/final/healthfc/{{lang}}/{{model}}/{{system}}"),
    log:
        f"{LOGS}/final/healthfc/{{lang}}/{{model}}/{{system}}.log",
    benchmark:
        f"{TIMINGS}/final/healthfc/{{lang}}/{{model}}/{{system}}.tsv"
    conda:
        "../envs/medfc.yaml"
    threads: lambda w: PLAN.job_resources("healthfc_final", w)["threads"]
    resources:
        mem_mb=lambda w: PLAN.job_resources("healthfc_final", w)["mem_mb"],
        runtime=lambda w: PLAN.job_resources("healthfc_final", w)["runtime"],
        gpu=lambda w: PLAN.job_resources("healthfc_final", w)["gpu"],
    params:
        step=versioned("experiments.steps:healthfc_final"),
        options=lambda w: PLAN.options("healthfc_final", w),
    script:
        STEP_SCRIPT


rule pairs_final:
    input:
        unpack(lambda w: PLAN.inputs("pairs_final", w)),
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
    threads: lambda w: PLAN.job_resources("pairs_final", w)["threads"]
    resources:
        mem_mb=lambda w: PLAN.job_resources("pairs_final", w)["mem_mb"],
        runtime=lambda w: PLAN.job_resources("pairs_final", w)["runtime"],
        gpu=lambda w: PLAN.job_resources("pairs_final", w)["gpu"],
    params:
        step=versioned("experiments.steps:pairs_final"),
        options=lambda w: PLAN.options("pairs_final", w),
    script:
        STEP_SCRIPT
