# MedSNIP (docs/medsnip.md): answers (HealthFC's supported and refuted claims, MedSNIP-Bench records) →
# units (atoms, atomize-then-group, snippet-direct; the bench's own) → verdicts (one job per verifier ×
# mode) → scores → the atoms-vs-snippets table. Steps: medfc.medsnip.steps; options, prompts and resources from medfc.plan (PLAN).
# Each LLM rule's params hold the hashes of the prompts it reads; results are cached per unit under
# <cache_dir>/medsnip/units, so adding a verifier asks only the new verifier.


rule medsnip_prepare:
    input:
        source=medsnip_source,
    output:
        answers=f"{MEDSNIP_DIR}/{{dataset}}/answers.jsonl",
        info=f"{MEDSNIP_DIR}/{{dataset}}/answers.info.json",
        report=f"{MEDSNIP_DIR}/{{dataset}}/answers.report.json",
    log:
        f"{LOGS}/medsnip/{{dataset}}/prepare.log",
    benchmark:
        f"{RESULTS}/benchmarks/medsnip/{{dataset}}/prepare.tsv"
    wildcard_constraints:
        dataset=MEDSNIP_WILDCARDS["dataset"],
    conda:
        "../envs/medfc.yaml"
    threads: lambda w: PLAN.medsnip_resources(PLAN.medsnip_prepare_options(w.dataset))["threads"]
    resources:
        gpu=lambda w: PLAN.medsnip_resources(PLAN.medsnip_prepare_options(w.dataset))["gpu"],
        mem_mb=lambda w: PLAN.medsnip_resources(PLAN.medsnip_prepare_options(w.dataset))["mem_mb"],
        runtime=lambda w: config["medsnip"]["runtime"],
    params:
        step=versioned("medsnip.steps:prepare"),
        options=lambda w: PLAN.medsnip_prepare_options(w.dataset),
        prompts=lambda w: PLAN.medsnip_prepare_prompts(w.dataset),
    script:
        STEP_SCRIPT


rule medsnip_decompose:
    input:
        answers=f"{MEDSNIP_DIR}/{{dataset}}/answers.jsonl",
    output:
        units=f"{MEDSNIP_DIR}/{{dataset}}/units/{{mode}}.jsonl",
        info=f"{MEDSNIP_DIR}/{{dataset}}/units/{{mode}}.info.json",
        report=f"{MEDSNIP_DIR}/{{dataset}}/units/{{mode}}.report.json",
    log:
        f"{LOGS}/medsnip/{{dataset}}/decompose_{{mode}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/medsnip/{{dataset}}/decompose_{{mode}}.tsv"
    wildcard_constraints:
        dataset=MEDSNIP_WILDCARDS["dataset"],
        mode=MEDSNIP_WILDCARDS["mode"],
    conda:
        "../envs/medfc.yaml"
    threads: lambda w: PLAN.medsnip_resources(PLAN.medsnip_decompose_options(w.dataset, w.mode))["threads"]
    resources:
        gpu=lambda w: PLAN.medsnip_resources(PLAN.medsnip_decompose_options(w.dataset, w.mode))["gpu"],
        mem_mb=lambda w: PLAN.medsnip_resources(PLAN.medsnip_decompose_options(w.dataset, w.mode))["mem_mb"],
        runtime=lambda w: config["medsnip"]["runtime"],
    params:
        step=versioned("medsnip.steps:decompose"),
        options=lambda w: PLAN.medsnip_decompose_options(w.dataset, w.mode),
        prompts=lambda w: PLAN.medsnip_decompose_prompts(w.mode),
    script:
        STEP_SCRIPT


rule medsnip_verify:
    input:
        unpack(lambda w: PLAN.medsnip_verify_inputs(w.dataset, w.mode, w.verifier)),
    output:
        verdicts=f"{MEDSNIP_DIR}/{{dataset}}/verdicts/{{verifier}}/{{mode}}.jsonl",
        info=f"{MEDSNIP_DIR}/{{dataset}}/verdicts/{{verifier}}/{{mode}}.info.json",
        report=f"{MEDSNIP_DIR}/{{dataset}}/verdicts/{{verifier}}/{{mode}}.report.json",
    log:
        f"{LOGS}/medsnip/{{dataset}}/verify_{{verifier}}_{{mode}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/medsnip/{{dataset}}/verify_{{verifier}}_{{mode}}.tsv"
    wildcard_constraints:
        dataset=MEDSNIP_WILDCARDS["dataset"],
        mode=MEDSNIP_WILDCARDS["mode"],
        verifier=MEDSNIP_WILDCARDS["verifier"],
    conda:
        "../envs/medfc.yaml"
    threads: lambda w: PLAN.medsnip_resources(PLAN.medsnip_verify_options(w.verifier))["threads"]
    resources:
        gpu=lambda w: PLAN.medsnip_resources(PLAN.medsnip_verify_options(w.verifier))["gpu"],
        mem_mb=lambda w: PLAN.medsnip_resources(PLAN.medsnip_verify_options(w.verifier))["mem_mb"],
        runtime=lambda w: config["medsnip"]["runtime"],
    params:
        step=versioned("medsnip.steps:verify"),
        options=lambda w: PLAN.medsnip_verify_options(w.verifier),
        prompts=lambda w: PLAN.medsnip_verify_prompts(w.verifier),
    script:
        STEP_SCRIPT


rule medsnip_score:
    input:
        unpack(lambda w: PLAN.medsnip_score_inputs(w.dataset)),
    output:
        scores=f"{MEDSNIP_DIR}/{{dataset}}/scores.json",
        report=f"{MEDSNIP_DIR}/{{dataset}}/scores.report.json",
    log:
        f"{LOGS}/medsnip/{{dataset}}/score.log",
    benchmark:
        f"{RESULTS}/benchmarks/medsnip/{{dataset}}/score.tsv"
    wildcard_constraints:
        dataset=MEDSNIP_WILDCARDS["dataset"],
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=2048,
        runtime=30,
    params:
        step=versioned("medsnip.steps:score"),
        options=lambda w: PLAN.medsnip_score_options(w.dataset),
    script:
        STEP_SCRIPT


rule medsnip_table:
    input:
        scores=f"{MEDSNIP_DIR}/{{dataset}}/scores.json",
    output:
        csv=report(
            f"{MEDSNIP_DIR}/{{dataset}}/table.csv",
            caption="../report/medsnip_table.rst",
            category="MedSNIP",
            subcategory=lambda w: MEDSNIP_TITLES[w.dataset],
        ),
        md=f"{MEDSNIP_DIR}/{{dataset}}/table.md",
        tex=f"{MEDSNIP_DIR}/{{dataset}}/table.tex",
    log:
        f"{LOGS}/medsnip/{{dataset}}/table.log",
    benchmark:
        f"{RESULTS}/benchmarks/medsnip/{{dataset}}/table.tsv"
    wildcard_constraints:
        dataset=MEDSNIP_WILDCARDS["dataset"],
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("medsnip.steps:table"),
        options=lambda w: {"title": MEDSNIP_TITLES[w.dataset]},
    script:
        STEP_SCRIPT
