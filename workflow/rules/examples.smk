# The papers' example tables, chosen from the run's own data by a fixed rule that each caption states:
# HealthFC Table 1 (a supported and a refuted claim with their article's snippet) and Table 4 (the wrong
# claims of the row of best veracity F1), CliniFact Table 5 (a pair of each label) and Table 7 (the prompt of
# the generative models). Each as CSV + Markdown + LaTeX + HTML. Steps: medfc.tables.steps; inputs
# and options from medfc.plan (PLAN).


rule healthfc_table1:
    input:
        unpack(PLAN.inputs_of(ExamplesPlan.healthfc_table1)),
    output:
        csv=f"{TABLES_DIR}/healthfc_table1.csv",
        md=f"{TABLES_DIR}/healthfc_table1.md",
        tex=f"{TABLES_DIR}/healthfc_table1.tex",
        html=report(
            f"{TABLES_DIR}/healthfc_table1.html",
            caption="../report/healthfc_table1.rst",
            category="Examples",
            subcategory="HealthFC",
        ),
    log:
        f"{LOGS}/tables/healthfc_table1.log",
    benchmark:
        f"{TIMINGS}/tables/healthfc_table1.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("tables.steps:healthfc_table1"),
        options=PLAN.options_of(ExamplesPlan.healthfc_table1),
    script:
        STEP_SCRIPT


rule healthfc_table4:
    input:
        unpack(PLAN.inputs_of(ExamplesPlan.healthfc_table4)),
    output:
        csv=f"{TABLES_DIR}/healthfc_table4.csv",
        md=f"{TABLES_DIR}/healthfc_table4.md",
        tex=f"{TABLES_DIR}/healthfc_table4.tex",
        html=report(
            f"{TABLES_DIR}/healthfc_table4.html",
            caption="../report/healthfc_table4.rst",
            category="Examples",
            subcategory="HealthFC",
        ),
    log:
        f"{LOGS}/tables/healthfc_table4.log",
    benchmark:
        f"{TIMINGS}/tables/healthfc_table4.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("tables.steps:healthfc_table4"),
        options=PLAN.options_of(ExamplesPlan.healthfc_table4),
    script:
        STEP_SCRIPT


rule clinifact_table5:
    input:
        unpack(PLAN.inputs_of(ExamplesPlan.clinifact_table5)),
    output:
        csv=f"{TABLES_DIR}/clinifact_table5.csv",
        md=f"{TABLES_DIR}/clinifact_table5.md",
        tex=f"{TABLES_DIR}/clinifact_table5.tex",
        html=report(
            f"{TABLES_DIR}/clinifact_table5.html",
            caption="../report/clinifact_table5.rst",
            category="Examples",
            subcategory="CliniFact",
        ),
    log:
        f"{LOGS}/tables/clinifact_table5.log",
    benchmark:
        f"{TIMINGS}/tables/clinifact_table5.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("tables.steps:clinifact_table5"),
        options=PLAN.options_of(ExamplesPlan.clinifact_table5),
    script:
        STEP_SCRIPT


rule clinifact_table7:
    input:
        unpack(PLAN.inputs_of(ExamplesPlan.clinifact_table7)),
    output:
        csv=f"{TABLES_DIR}/clinifact_table7.csv",
        md=f"{TABLES_DIR}/clinifact_table7.md",
        tex=f"{TABLES_DIR}/clinifact_table7.tex",
        html=report(
            f"{TABLES_DIR}/clinifact_table7.html",
            caption="../report/clinifact_table7.rst",
            category="Examples",
            subcategory="CliniFact",
        ),
    log:
        f"{LOGS}/tables/clinifact_table7.log",
    benchmark:
        f"{TIMINGS}/tables/clinifact_table7.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("tables.steps:clinifact_table7"),
        options=PLAN.options_of(ExamplesPlan.clinifact_table7),
    script:
        STEP_SCRIPT
