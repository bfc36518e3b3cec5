# Experiments (training and inference): the HealthFC baselines (5-fold cross-validation, one job per
# lang × model × system × fold) and the CliniFact baselines (discriminative fine-tuning, zero-shot
# scoring and LoRA fine-tuning of causal LMs, one job per model), ensembles, and the inner cross-validation of a
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
        model=PLAN.model_alias_pattern(ensembles=False),
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


rule clinifact_experiment:
    input:
        unpack(lambda w: PLAN.inputs("clinifact_experiment", w)),
    output:
        predictions=f"{EXP_DIR}/clinifact/{{model}}/predictions.jsonl",
        info=f"{EXP_DIR}/clinifact/{{model}}/info.json",
    log:
        f"{LOGS}/experiments/clinifact/{{model}}.log",
    benchmark:
        f"{BENCH_DIR}/clinifact/{{model}}.tsv"
    wildcard_constraints:
        model=PLAN.model_alias_pattern(ensembles=False),
    conda:
        "../envs/medfc.yaml"
    threads: lambda w: PLAN.job_resources("clinifact_experiment", w)["threads"]
    resources:
        mem_mb=lambda w: PLAN.job_resources("clinifact_experiment", w)["mem_mb"],
        runtime=lambda w: PLAN.job_resources("clinifact_experiment", w)["runtime"],
        gpu=lambda w: PLAN.job_resources("clinifact_experiment", w)["gpu"],
    params:
        step=versioned("experiments.steps:clinifact_experiment"),
        options=lambda w: PLAN.options("clinifact_experiment", w),
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
        model=PLAN.model_alias_pattern(ensembles=False),
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
        predictions=f"{PLAN.inner_cv_dir}/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}/predictions.jsonl",
        info=f"{PLAN.inner_cv_dir}/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}/info.json",
    log:
        f"{LOGS}/experiments/inner_cv/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}.log",
    benchmark:
        f"{BENCH_DIR}/inner_cv/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}.tsv"
    wildcard_constraints:
        model=PLAN.model_alias_pattern(ensembles=False),
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


rule clinifact_inner_cv:
    input:
        unpack(lambda w: PLAN.inputs("clinifact_inner_cv", w)),
    output:
        predictions=f"{PLAN.inner_cv_dir}/clinifact/{{model}}/predictions.jsonl",
        info=f"{PLAN.inner_cv_dir}/clinifact/{{model}}/info.json",
    log:
        f"{LOGS}/experiments/inner_cv/clinifact/{{model}}.log",
    benchmark:
        f"{BENCH_DIR}/inner_cv/clinifact/{{model}}.tsv"
    wildcard_constraints:
        model=PLAN.model_alias_pattern(ensembles=False),
    conda:
        "../envs/medfc.yaml"
    threads: lambda w: PLAN.job_resources("clinifact_inner_cv", w)["threads"]
    resources:
        mem_mb=lambda w: PLAN.job_resources("clinifact_inner_cv", w)["mem_mb"],
        runtime=lambda w: PLAN.job_resources("clinifact_inner_cv", w)["runtime"],
        gpu=lambda w: PLAN.job_resources("clinifact_inner_cv", w)["gpu"],
    params:
        step=versioned("experiments.steps:clinifact_inner_cv"),
        options=lambda w: PLAN.options("clinifact_inner_cv", w),
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
        model=PLAN.model_alias_pattern(ensembles=True),
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


rule clinifact_ensemble:
    input:
        unpack(lambda w: PLAN.inputs("clinifact_ensemble", w)),
    output:
        predictions=f"{EXP_DIR}/clinifact/{{model}}/predictions.jsonl",
        info=f"{EXP_DIR}/clinifact/{{model}}/info.json",
    log:
        f"{LOGS}/experiments/clinifact/{{model}}.log",
    benchmark:
        f"{BENCH_DIR}/clinifact/{{model}}.tsv"
    wildcard_constraints:
        model=PLAN.model_alias_pattern(ensembles=True),
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("experiments.steps:ensemble"),
        options=lambda w: PLAN.options("clinifact_ensemble", w),
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


rule clinifact_final:
    input:
        unpack(lambda w: PLAN.inputs("clinifact_final", w)),
    output:
        model=directory(f"{RESULTS}/final/clinifact/{{model}}"),
    log:
        f"{LOGS}/final/clinifact/{{model}}.log",
    benchmark:
        f"{TIMINGS}/final/clinifact/{{model}}.tsv"
    conda:
        "../envs/medfc.yaml"
    threads: lambda w: PLAN.job_resources("clinifact_final", w)["threads"]
    resources:
        mem_mb=lambda w: PLAN.job_resources("clinifact_final", w)["mem_mb"],
        runtime=lambda w: PLAN.job_resources("clinifact_final", w)["runtime"],
        gpu=lambda w: PLAN.job_resources("clinifact_final", w)["gpu"],
    params:
        step=versioned("experiments.steps:clinifact_final"),
        options=lambda w: PLAN.options("clinifact_final", w),
    script:
        STEP_SCRIPT
