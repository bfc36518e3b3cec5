# MedSNIP (docs/medsnip.md): answers (HealthFC's supported and refuted claims, MedSNIP-Bench records, MedHallu's
# ground-truth and hallucinated answers) →
# units (atoms, atomize-then-group, snippet-direct; the bench's own) → verdicts (one job per verifier ×
# mode) → scores → the atoms-vs-snippets table. Steps: medfc.medsnip.steps; options, prompts and resources from medfc.plan (PLAN).
# Each LLM rule's params hold the hashes of the prompts it reads; results are cached per unit under
# <cache_dir>/medsnip/units, so adding a verifier asks only the new verifier.


# A dataset's file on the Hugging Face Hub (MedHallu's, when its path is null) at the pinned commit, downloaded once
# into the cache where Snakemake runs and checked against its pinned SHA-256 before its rows are read.
rule medsnip_fetch:
    output:
        rows=f"{MEDSNIP_DIR}/{{dataset}}/source/rows.jsonl",
        report=f"{MEDSNIP_DIR}/{{dataset}}/source/report.json",
    log:
        f"{LOGS}/medsnip/{{dataset}}/fetch.log",
    benchmark:
        f"{TIMINGS}/medsnip/{{dataset}}/fetch.tsv"
    wildcard_constraints:
        dataset=MEDSNIP_WILDCARDS["dataset"],
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=2048,
        runtime=30,
    params:
        step=versioned("medsnip.steps:fetch"),
        options=PLAN.options_of(MedsnipPlan.medsnip_fetch),
    script:
        STEP_SCRIPT


rule medsnip_prepare:
    input:
        unpack(PLAN.inputs_of(MedsnipPlan.medsnip_prepare)),
    output:
        answers=f"{MEDSNIP_DIR}/{{dataset}}/answers.jsonl",
        info=f"{MEDSNIP_DIR}/{{dataset}}/answers.info.json",
        report=f"{MEDSNIP_DIR}/{{dataset}}/answers.report.json",
    log:
        f"{LOGS}/medsnip/{{dataset}}/prepare.log",
    benchmark:
        f"{TIMINGS}/medsnip/{{dataset}}/prepare.tsv"
    wildcard_constraints:
        dataset=MEDSNIP_WILDCARDS["dataset"],
    conda:
        "../envs/medfc.yaml"
    threads: PLAN.threads_of(MedsnipPlan.medsnip_prepare)
    resources:
        **PLAN.resources_of(MedsnipPlan.medsnip_prepare),
    params:
        step=lambda w: versioned("medsnip.steps:prepare", answer_source(w.dataset).loader),
        options=PLAN.options_of(MedsnipPlan.medsnip_prepare),
        prompts=PLAN.prompts_of(MedsnipPlan.medsnip_prepare),
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
        f"{TIMINGS}/medsnip/{{dataset}}/decompose_{{mode}}.tsv"
    wildcard_constraints:
        dataset=MEDSNIP_WILDCARDS["dataset"],
        mode=MEDSNIP_WILDCARDS["mode"],
    conda:
        "../envs/medfc.yaml"
    threads: PLAN.threads_of(MedsnipPlan.medsnip_decompose)
    resources:
        **PLAN.resources_of(MedsnipPlan.medsnip_decompose),
    params:
        step=versioned("medsnip.steps:decompose"),
        options=PLAN.options_of(MedsnipPlan.medsnip_decompose),
        prompts=PLAN.prompts_of(MedsnipPlan.medsnip_decompose),
    script:
        STEP_SCRIPT


rule medsnip_verify:
    input:
        unpack(PLAN.inputs_of(MedsnipPlan.medsnip_verify)),
    output:
        verdicts=f"{MEDSNIP_DIR}/{{dataset}}/verdicts/{{verifier}}/{{mode}}.jsonl",
        info=f"{MEDSNIP_DIR}/{{dataset}}/verdicts/{{verifier}}/{{mode}}.info.json",
        report=f"{MEDSNIP_DIR}/{{dataset}}/verdicts/{{verifier}}/{{mode}}.report.json",
    log:
        f"{LOGS}/medsnip/{{dataset}}/verify_{{verifier}}_{{mode}}.log",
    benchmark:
        f"{TIMINGS}/medsnip/{{dataset}}/verify_{{verifier}}_{{mode}}.tsv"
    wildcard_constraints:
        dataset=MEDSNIP_WILDCARDS["dataset"],
        mode=MEDSNIP_WILDCARDS["mode"],
        verifier=MEDSNIP_WILDCARDS["verifier"],
    conda:
        "../envs/medfc.yaml"
    threads: PLAN.threads_of(MedsnipPlan.medsnip_verify)
    resources:
        **PLAN.resources_of(MedsnipPlan.medsnip_verify),
    params:
        step=versioned("medsnip.steps:verify"),
        options=PLAN.options_of(MedsnipPlan.medsnip_verify),
        prompts=PLAN.prompts_of(MedsnipPlan.medsnip_verify),
    script:
        STEP_SCRIPT


rule medsnip_score:
    input:
        unpack(PLAN.inputs_of(MedsnipPlan.medsnip_score)),
    output:
        scores=f"{MEDSNIP_DIR}/{{dataset}}/scores.json",
        report=f"{MEDSNIP_DIR}/{{dataset}}/scores.report.json",
    log:
        f"{LOGS}/medsnip/{{dataset}}/score.log",
    benchmark:
        f"{TIMINGS}/medsnip/{{dataset}}/score.tsv"
    wildcard_constraints:
        dataset=MEDSNIP_WILDCARDS["dataset"],
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=2048,
        runtime=30,
    params:
        step=versioned("medsnip.steps:score"),
        options=PLAN.options_of(MedsnipPlan.medsnip_score),
    script:
        STEP_SCRIPT


rule medsnip_table:
    input:
        unpack(PLAN.inputs_of(MedsnipPlan.medsnip_table)),
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
        f"{TIMINGS}/medsnip/{{dataset}}/table.tsv"
    wildcard_constraints:
        dataset=MEDSNIP_WILDCARDS["dataset"],
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("medsnip.steps:table"),
        options=PLAN.options_of(MedsnipPlan.medsnip_table),
    script:
        STEP_SCRIPT


# MedSNIP Table 3: the structure of each dataset's answers and units (words, sentences, units per answer,
# atoms per snippet), one row per dataset.
rule medsnip_structure:
    input:
        unpack(PLAN.inputs_of(MedsnipPlan.medsnip_structure)),
    output:
        csv=f"{MEDSNIP_DIR}/table3_structure.csv",
        md=f"{MEDSNIP_DIR}/table3_structure.md",
        tex=f"{MEDSNIP_DIR}/table3_structure.tex",
        html=report(
            f"{MEDSNIP_DIR}/table3_structure.html",
            caption="../report/medsnip_table3.rst",
            category="MedSNIP",
            subcategory="All datasets",
        ),
    log:
        f"{LOGS}/medsnip/structure.log",
    benchmark:
        f"{TIMINGS}/medsnip/structure.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("medsnip.steps:structure"),
        options=PLAN.options_of(MedsnipPlan.medsnip_structure),
    script:
        STEP_SCRIPT


# MedSNIP Table 6: the retrieval verifier's abstention threshold swept against coverage and FF1, from the
# verdicts already made (no LLM call).
rule medsnip_tau:
    input:
        unpack(PLAN.inputs_of(MedsnipPlan.medsnip_tau)),
    output:
        csv=f"{MEDSNIP_DIR}/{{dataset}}/table6_tau.csv",
        md=f"{MEDSNIP_DIR}/{{dataset}}/table6_tau.md",
        tex=f"{MEDSNIP_DIR}/{{dataset}}/table6_tau.tex",
        html=report(
            f"{MEDSNIP_DIR}/{{dataset}}/table6_tau.html",
            caption="../report/medsnip_table6.rst",
            category="MedSNIP",
            subcategory=lambda w: MEDSNIP_TITLES[w.dataset],
        ),
    log:
        f"{LOGS}/medsnip/{{dataset}}/tau.log",
    benchmark:
        f"{TIMINGS}/medsnip/{{dataset}}/tau.tsv"
    wildcard_constraints:
        dataset=MEDSNIP_WILDCARDS["dataset"],
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("medsnip.steps:tau"),
        options=PLAN.options_of(MedsnipPlan.medsnip_tau),
    script:
        STEP_SCRIPT


# MedSNIP Fig. 21: verifier calls against FF1, one point per verifier and mode.
rule medsnip_calls:
    input:
        scores=f"{MEDSNIP_DIR}/{{dataset}}/scores.json",
    output:
        png=report(
            f"{MEDSNIP_DIR}/{{dataset}}/fig21_calls.png",
            caption="../report/medsnip_fig21.rst",
            category="MedSNIP",
            subcategory=lambda w: MEDSNIP_TITLES[w.dataset],
        ),
        pdf=f"{MEDSNIP_DIR}/{{dataset}}/fig21_calls.pdf",
        csv=f"{MEDSNIP_DIR}/{{dataset}}/fig21_calls.csv",
    log:
        f"{LOGS}/medsnip/{{dataset}}/calls.log",
    benchmark:
        f"{TIMINGS}/medsnip/{{dataset}}/calls.tsv"
    wildcard_constraints:
        dataset=MEDSNIP_WILDCARDS["dataset"],
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("medsnip.steps:calls"),
        options=PLAN.options_of(MedsnipPlan.medsnip_calls),
    script:
        STEP_SCRIPT
