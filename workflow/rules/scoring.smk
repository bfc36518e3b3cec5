# Scoring: one scores JSON per prediction file of the experiments stage (HealthFC: veracity, evidence
# selection, FEVER strict, AVeriTeC, MedSNIP FF1; CliniFact: accuracy and macro / per-class P/R/F1).
# Steps: medfc.scoring.steps (docs/scoring.md); options from medfc.plan (PLAN).


rule healthfc_score:
    input:
        predictions=rules.healthfc_experiment.output.predictions,
        dataset=rules.healthfc_dataset.output.jsonl,
    output:
        scores=f"{EXP_DIR}/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}/scores.json",
        report=f"{EXP_DIR}/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}/scores.skipped.json",
    log:
        f"{LOGS}/scoring/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}.log",
    benchmark:
        f"{TIMINGS}/scoring/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=2048,
        runtime=30,
    params:
        step=versioned("scoring.steps:healthfc"),
        options=PLAN.options_of(HealthFCPlan.healthfc_score),
    script:
        STEP_SCRIPT


rule pairs_score:
    input:
        predictions=rules.pairs_experiment.output.predictions,
    output:
        scores=f"{EXP_DIR}/{{dataset}}/{{model}}/scores.json",
        report=f"{EXP_DIR}/{{dataset}}/{{model}}/scores.skipped.json",
    log:
        f"{LOGS}/scoring/{{dataset}}/{{model}}.log",
    benchmark:
        f"{TIMINGS}/scoring/{{dataset}}/{{model}}.tsv"
    wildcard_constraints:
        dataset=PAIR_DATASETS,
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("scoring.steps:pairs"),
        options=PLAN.options_of(ExperimentsPlan.pairs_score),
    script:
        STEP_SCRIPT


rule clinifact_zero_shot_score:
    input:
        predictions=rules.clinifact_zero_shot.output.predictions,
    output:
        scores=f"{EXP_DIR}/clinifact/zero_shot/{{model}}/scores.json",
        report=f"{EXP_DIR}/clinifact/zero_shot/{{model}}/scores.skipped.json",
    log:
        f"{LOGS}/scoring/clinifact/zero_shot/{{model}}.log",
    benchmark:
        f"{TIMINGS}/scoring/clinifact/zero_shot/{{model}}.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("scoring.steps:pairs"),
        options=PLAN.options_of(ExperimentsPlan.clinifact_zero_shot_score),
    script:
        STEP_SCRIPT


rule clinifact_fine_tune_score:
    input:
        predictions=rules.clinifact_fine_tune.output.predictions,
    output:
        scores=f"{EXP_DIR}/clinifact/fine_tuned/{{model}}/scores.json",
        report=f"{EXP_DIR}/clinifact/fine_tuned/{{model}}/scores.skipped.json",
    log:
        f"{LOGS}/scoring/clinifact/fine_tuned/{{model}}.log",
    benchmark:
        f"{TIMINGS}/scoring/clinifact/fine_tuned/{{model}}.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("scoring.steps:pairs"),
        options=PLAN.options_of(ExperimentsPlan.clinifact_fine_tune_score),
    script:
        STEP_SCRIPT
