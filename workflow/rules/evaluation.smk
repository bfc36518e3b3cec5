# Evaluation: one scores JSON per prediction file, then the papers' tables with their numbers alongside
# (HealthFC Tables 3 and 5, CliniFact Table 8) and significance tests between systems.
# All logic is in medfc.experiments.steps (score, tables) over medfc.scoring; helpers are in common.smk.


rule healthfc_score:
    input:
        predictions=rules.healthfc_experiment.output.predictions,
        dataset=rules.healthfc_dataset.output.jsonl,
    output:
        scores=f"{EXP_DIR}/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}/scores.json",
        report=f"{EXP_DIR}/healthfc/{{lang}}/{{model}}/{{system}}/fold{{fold}}/scores.skipped.json",
    params:
        step="experiments.steps:score",
        options=lambda w: scoring_options("healthfc", w),
    log:
        "logs/evaluation/healthfc/{lang}/{model}/{system}/fold{fold}.log",
    benchmark:
        "results/benchmarks/evaluation/healthfc/{lang}/{model}/{system}/fold{fold}.tsv"
    resources:
        mem_mb=2048,
        runtime=30,
    conda:
        "../../envs/train.yaml"
    script:
        STEP_SCRIPT


rule clinifact_score:
    input:
        predictions=rules.clinifact_experiment.output.predictions,
    output:
        scores=f"{EXP_DIR}/clinifact/{{model}}/scores.json",
        report=f"{EXP_DIR}/clinifact/{{model}}/scores.skipped.json",
    params:
        step="experiments.steps:score",
        options=lambda w: scoring_options("clinifact", w),
    log:
        "logs/evaluation/clinifact/{model}.log",
    benchmark:
        "results/benchmarks/evaluation/clinifact/{model}.tsv"
    resources:
        mem_mb=1024,
        runtime=10,
    conda:
        "../../envs/train.yaml"
    script:
        STEP_SCRIPT


rule clinifact_zero_shot_score:
    input:
        predictions=rules.clinifact_zero_shot.output.predictions,
    output:
        scores=f"{EXP_DIR}/clinifact/zero_shot/{{model}}/scores.json",
        report=f"{EXP_DIR}/clinifact/zero_shot/{{model}}/scores.skipped.json",
    params:
        step="experiments.steps:score",
        options=lambda w: scoring_options("clinifact_zero_shot", w),
    log:
        "logs/evaluation/clinifact/zero_shot/{model}.log",
    benchmark:
        "results/benchmarks/evaluation/clinifact/zero_shot/{model}.tsv"
    resources:
        mem_mb=1024,
        runtime=10,
    conda:
        "../../envs/train.yaml"
    script:
        STEP_SCRIPT


rule healthfc_table3:
    input:
        scores=lambda w: healthfc_table_inputs(HFC_TABLE3_SYSTEMS),
    output:
        csv=report(f"{TABLES_DIR}/healthfc_table3.csv", caption="../report/healthfc_table3.rst", category="Experiments", subcategory="HealthFC"),
        md=f"{TABLES_DIR}/healthfc_table3.md",
        tex=f"{TABLES_DIR}/healthfc_table3.tex",
    params:
        step="experiments.steps:tables",
        options=lambda w: {"table": "healthfc_table3", "entries": healthfc_table_entries(HFC_TABLE3_SYSTEMS)},
    log:
        "logs/evaluation/healthfc_table3.log",
    benchmark:
        "results/benchmarks/evaluation/healthfc_table3.tsv"
    resources:
        mem_mb=1024,
        runtime=10,
    conda:
        "../../envs/figures.yaml"
    script:
        STEP_SCRIPT


rule healthfc_table5:
    input:
        scores=lambda w: healthfc_table_inputs(HFC_TABLE5_SYSTEMS),
    output:
        csv=report(f"{TABLES_DIR}/healthfc_table5.csv", caption="../report/healthfc_table5.rst", category="Experiments", subcategory="HealthFC"),
        md=f"{TABLES_DIR}/healthfc_table5.md",
        tex=f"{TABLES_DIR}/healthfc_table5.tex",
    params:
        step="experiments.steps:tables",
        options=lambda w: {"table": "healthfc_table5", "entries": healthfc_table_entries(HFC_TABLE5_SYSTEMS)},
    log:
        "logs/evaluation/healthfc_table5.log",
    benchmark:
        "results/benchmarks/evaluation/healthfc_table5.tsv"
    resources:
        mem_mb=1024,
        runtime=10,
    conda:
        "../../envs/figures.yaml"
    script:
        STEP_SCRIPT


rule healthfc_significance:
    input:
        predictions=lambda w: healthfc_table_inputs(healthfc_compared_systems()[1], "predictions"),
    output:
        csv=report(f"{TABLES_DIR}/healthfc_significance.csv", caption="../report/healthfc_significance.rst", category="Experiments", subcategory="HealthFC"),
        md=f"{TABLES_DIR}/healthfc_significance.md",
        tex=f"{TABLES_DIR}/healthfc_significance.tex",
    params:
        step="experiments.steps:tables",
        options=lambda w: {
            "table": "healthfc_significance",
            "entries": healthfc_table_entries(healthfc_compared_systems()[1]),
            "comparisons": healthfc_compared_systems()[0],
            "abstain": config["scoring"]["abstain"],
            **config["scoring"]["bootstrap"],
        },
    log:
        "logs/evaluation/healthfc_significance.log",
    benchmark:
        "results/benchmarks/evaluation/healthfc_significance.tsv"
    resources:
        mem_mb=1024,
        runtime=10,
    conda:
        "../../envs/figures.yaml"
    script:
        STEP_SCRIPT


rule clinifact_table8:
    input:
        scores=lambda w: [f"{r['dir']}/scores.json" for r in clinifact_runs()],
    output:
        csv=report(f"{TABLES_DIR}/clinifact_table8.csv", caption="../report/clinifact_table8.rst", category="Experiments", subcategory="CliniFact"),
        md=f"{TABLES_DIR}/clinifact_table8.md",
        tex=f"{TABLES_DIR}/clinifact_table8.tex",
    params:
        step="experiments.steps:tables",
        options=lambda w: {"table": "clinifact_table8", "entries": clinifact_table_entries()},
    log:
        "logs/evaluation/clinifact_table8.log",
    benchmark:
        "results/benchmarks/evaluation/clinifact_table8.tsv"
    resources:
        mem_mb=1024,
        runtime=10,
    conda:
        "../../envs/figures.yaml"
    script:
        STEP_SCRIPT


rule clinifact_significance:
    input:
        predictions=lambda w: [f"{r['dir']}/predictions.jsonl" for r in clinifact_runs()],
    output:
        csv=report(f"{TABLES_DIR}/clinifact_significance.csv", caption="../report/clinifact_significance.rst", category="Experiments", subcategory="CliniFact"),
        md=f"{TABLES_DIR}/clinifact_significance.md",
        tex=f"{TABLES_DIR}/clinifact_significance.tex",
    params:
        step="experiments.steps:tables",
        options=lambda w: {"table": "clinifact_significance", "entries": clinifact_table_entries()},
    log:
        "logs/evaluation/clinifact_significance.log",
    benchmark:
        "results/benchmarks/evaluation/clinifact_significance.tsv"
    resources:
        mem_mb=1024,
        runtime=10,
    conda:
        "../../envs/figures.yaml"
    script:
        STEP_SCRIPT
