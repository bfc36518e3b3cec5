# Tables: one job per table of the papers (HealthFC Tables 3 and 5, CliniFact Table 8) and per
# significance test between systems, each as CSV + Markdown + LaTeX with the papers' numbers
# (resources/papers/numbers.yaml) beside ours. Steps: medfc.tables.steps:<table>; inputs and options from medfc.plan (PLAN).


rule table:
    input:
        unpack(PLAN.inputs_of(TablesPlan.table)),
    output:
        csv=f"{TABLES_DIR}/{{table}}.csv",
        md=f"{TABLES_DIR}/{{table}}.md",
        tex=f"{TABLES_DIR}/{{table}}.tex",
        # the report shows this one (a CSV it only links): the same rows, the papers' numbers beside ours
        html=report(
            f"{TABLES_DIR}/{{table}}.html",
            caption="../report/tables.rst",
            category="Experiments",
            subcategory=lambda w: "HealthFC" if w.table.startswith("healthfc") else "CliniFact",
        ),
    log:
        f"{LOGS}/tables/{{table}}.log",
    benchmark:
        f"{TIMINGS}/tables/{{table}}.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=lambda w: versioned(f"tables.steps:{w.table}"),
        options=PLAN.options_of(TablesPlan.table),
    script:
        STEP_SCRIPT


# a declared dataset's table (datasets.<name>): its discriminative rows on its test split
rule dataset_table:
    input:
        unpack(PLAN.inputs_of(TablesPlan.dataset_table)),
    output:
        csv=f"{TABLES_DIR}/{{dataset}}_table.csv",
        md=f"{TABLES_DIR}/{{dataset}}_table.md",
        tex=f"{TABLES_DIR}/{{dataset}}_table.tex",
        html=report(
            f"{TABLES_DIR}/{{dataset}}_table.html",
            caption="../report/tables.rst",
            category="Experiments",
            subcategory="Datasets",
        ),
    log:
        f"{LOGS}/tables/{{dataset}}_table.log",
    benchmark:
        f"{TIMINGS}/tables/{{dataset}}_table.tsv"
    wildcard_constraints:
        dataset=DATASET_NAMES,
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("tables.steps:dataset_table"),
        options=PLAN.options_of(TablesPlan.dataset_table),
    script:
        STEP_SCRIPT
