# HealthFC: crawl the portal (or its demo mirror) → parse articles and claims → sentences and English
# translations → release annotations aligned → the dataset → folds, Table 2, Figs. 1–3; the crawl
# against the release (healthfc_diff, crawl+release mode).
# Modes (healthfc.dataset.mode): crawl+release (default), crawl (no release file), release (no crawl).
# Steps: medfc.healthfc.steps; config-dependent inputs and options from medfc.plan (PLAN: medfc.plan.jobs).


rule healthfc_crawl:
    input:
        PLAN.inputs_of(DatasetsPlan.healthfc_crawl),
    output:
        pages=f"{RESULTS}/healthfc/crawl/pages.jsonl.gz",
        stats=f"{RESULTS}/healthfc/crawl/stats.json",
    log:
        f"{LOGS}/healthfc/crawl.log",
    benchmark:
        f"{TIMINGS}/healthfc/crawl.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=720,
    params:
        step=versioned("healthfc.steps:crawl"),
        options=PLAN.options_of(DatasetsPlan.healthfc_crawl),
    script:
        STEP_SCRIPT


rule healthfc_parse:
    input:
        pages=rules.healthfc_crawl.output.pages,
    output:
        articles=f"{RESULTS}/healthfc/parsed/articles.jsonl",
        claims=f"{RESULTS}/healthfc/parsed/claims.jsonl",
        articles_table=f"{RESULTS}/healthfc/parsed/articles.parquet",
        claims_table=f"{RESULTS}/healthfc/parsed/claims.parquet",
        report=f"{RESULTS}/healthfc/parsed/report.json",
    log:
        f"{LOGS}/healthfc/parse.log",
    benchmark:
        f"{TIMINGS}/healthfc/parse.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=2048,
        runtime=30,
    params:
        step=versioned("healthfc.steps:parse"),
        options=PLAN.options_of(DatasetsPlan.healthfc_parse),
    script:
        STEP_SCRIPT


rule healthfc_translate:
    input:
        unpack(PLAN.inputs_of(DatasetsPlan.healthfc_translate)),
        articles=rules.healthfc_parse.output.articles,
        claims=rules.healthfc_parse.output.claims,
    output:
        sentences=f"{RESULTS}/healthfc/translated/sentences.jsonl",
        claims_en=f"{RESULTS}/healthfc/translated/claims_en.jsonl",
        report=f"{RESULTS}/healthfc/translated/report.json",
    log:
        f"{LOGS}/healthfc/translate.log",
    benchmark:
        f"{TIMINGS}/healthfc/translate.tsv"
    conda:
        "../envs/medfc.yaml"
    threads: PLAN.threads_of(DatasetsPlan.healthfc_translate)
    resources:
        **PLAN.resources_of(DatasetsPlan.healthfc_translate),
    params:
        step=versioned("healthfc.steps:translate"),
        options=PLAN.options_of(DatasetsPlan.healthfc_translate),
    script:
        STEP_SCRIPT


rule healthfc_release:
    input:
        unpack(PLAN.inputs_of(DatasetsPlan.healthfc_release)),
    output:
        rows=f"{RESULTS}/healthfc/release/rows.jsonl",
        report=f"{RESULTS}/healthfc/release/report.json",
    log:
        f"{LOGS}/healthfc/release.log",
    benchmark:
        f"{TIMINGS}/healthfc/release.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=15,
    params:
        step=versioned("healthfc.steps:release"),
        options=PLAN.options_of(DatasetsPlan.healthfc_release),
    script:
        STEP_SCRIPT


rule healthfc_align:
    input:
        claims=rules.healthfc_parse.output.claims,
        articles=rules.healthfc_parse.output.articles,
        rows=rules.healthfc_release.output.rows,
    output:
        alignment=f"{RESULTS}/healthfc/aligned/alignment.jsonl",
        report=f"{RESULTS}/healthfc/aligned/report.json",
    log:
        f"{LOGS}/healthfc/align.log",
    benchmark:
        f"{TIMINGS}/healthfc/align.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=2048,
        runtime=30,
    params:
        step=versioned("healthfc.steps:align"),
        options=PLAN.options_of(DatasetsPlan.healthfc_align),
    script:
        STEP_SCRIPT


rule healthfc_dataset:
    input:
        unpack(PLAN.inputs_of(DatasetsPlan.healthfc_dataset)),
    output:
        jsonl=f"{RESULTS}/healthfc/dataset/healthfc.jsonl",
        parquet=f"{RESULTS}/healthfc/dataset/healthfc.parquet",
        card=report(
            f"{RESULTS}/healthfc/dataset/dataset_card.md", caption="../report/healthfc_card.rst", category="HealthFC"
        ),
        report=f"{RESULTS}/healthfc/dataset/report.json",
    log:
        f"{LOGS}/healthfc/dataset.log",
    benchmark:
        f"{TIMINGS}/healthfc/dataset.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=2048,
        runtime=30,
    params:
        step=versioned("healthfc.steps:dataset"),
        options=PLAN.options_of(DatasetsPlan.healthfc_dataset),
    script:
        STEP_SCRIPT


rule healthfc_folds:
    input:
        dataset=rules.healthfc_dataset.output.jsonl,
    output:
        folds=f"{RESULTS}/healthfc/folds/folds.csv",
        report=f"{RESULTS}/healthfc/folds/report.json",
    log:
        f"{LOGS}/healthfc/folds.log",
    benchmark:
        f"{TIMINGS}/healthfc/folds.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("healthfc.steps:folds"),
        options=PLAN.options_of(DatasetsPlan.healthfc_folds),
    script:
        STEP_SCRIPT


# the dataset as a folder datasets.load_dataset reads by config (medfc.healthfc.views): each fold's rows in the
# source and BigBio views, one job per fold, then README.md, the card with its configs
rule healthfc_export:
    input:
        parquet=rules.healthfc_dataset.output.parquet,
        folds=rules.healthfc_folds.output.folds,
        card=rules.healthfc_dataset.output.card,
    output:
        readme=f"{RESULTS}/healthfc/dataset/README.md",
        source=[
            f"{RESULTS}/healthfc/dataset/views/source/fold_{k}.parquet"
            for k in range(config["healthfc"]["folds"]["n_splits"])
        ],
        bigbio=[
            f"{RESULTS}/healthfc/dataset/views/bigbio_te/fold_{k}.parquet"
            for k in range(config["healthfc"]["folds"]["n_splits"])
        ],
    log:
        f"{LOGS}/healthfc/export.log",
    benchmark:
        f"{TIMINGS}/healthfc/export.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("healthfc.steps:export"),
        options=PLAN.options_of(DatasetsPlan.healthfc_export),
    script:
        STEP_SCRIPT


rule healthfc_retrieve:
    input:
        unpack(PLAN.inputs_of(HealthFCPlan.healthfc_retrieve)),
        dataset=rules.healthfc_dataset.output.jsonl,
    output:
        evidence=f"{RESULTS}/healthfc/evidence/{{source}}.jsonl",
        report=f"{RESULTS}/healthfc/evidence/{{source}}.report.json",
    log:
        f"{LOGS}/healthfc/retrieve/{{source}}.log",
    benchmark:
        f"{TIMINGS}/healthfc/retrieve/{{source}}.tsv"
    wildcard_constraints:
        source=HEALTHFC_WILDCARDS["source"],
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=lambda w: config["healthfc"]["retrieval"]["runtime"],
    params:
        step=versioned("healthfc.steps:retrieve"),
        options=PLAN.options_of(HealthFCPlan.healthfc_retrieve),
    script:
        STEP_SCRIPT


rule healthfc_stats:
    input:
        unpack(PLAN.inputs_of(DatasetsPlan.healthfc_stats)),
        dataset=rules.healthfc_dataset.output.jsonl,
    output:
        table2=report(
            f"{RESULTS}/healthfc/stats/table2.csv", caption="../report/healthfc_table2.rst", category="HealthFC"
        ),
        table2_md=f"{RESULTS}/healthfc/stats/table2.md",
        table2_tex=f"{RESULTS}/healthfc/stats/table2.tex",
        fig1=report(
            f"{RESULTS}/healthfc/stats/fig1_claims_per_year.png",
            caption="../report/healthfc_fig1.rst",
            category="HealthFC",
        ),
        fig1_pdf=f"{RESULTS}/healthfc/stats/fig1_claims_per_year.pdf",
        fig1_data=f"{RESULTS}/healthfc/stats/fig1_claims_per_year.csv",
        fig2=report(
            f"{RESULTS}/healthfc/stats/fig2_top_topics.png", caption="../report/healthfc_fig2.rst", category="HealthFC"
        ),
        fig2_pdf=f"{RESULTS}/healthfc/stats/fig2_top_topics.pdf",
        fig2_data=f"{RESULTS}/healthfc/stats/fig2_top_topics.csv",
        fig3=report(
            f"{RESULTS}/healthfc/stats/fig3_level_by_verdict.png",
            caption="../report/healthfc_fig3.rst",
            category="HealthFC",
        ),
        fig3_pdf=f"{RESULTS}/healthfc/stats/fig3_level_by_verdict.pdf",
        fig3_data=f"{RESULTS}/healthfc/stats/fig3_level_by_verdict.csv",
        summary=f"{RESULTS}/healthfc/stats/summary.json",
    log:
        f"{LOGS}/healthfc/stats.log",
    benchmark:
        f"{TIMINGS}/healthfc/stats.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=2048,
        runtime=15,
    params:
        step=versioned("healthfc.steps:stats"),
        options=PLAN.options_of(DatasetsPlan.healthfc_stats),
    script:
        STEP_SCRIPT


rule healthfc_diff:
    input:
        claims=rules.healthfc_parse.output.claims,
        articles=rules.healthfc_parse.output.articles,
        parse_report=rules.healthfc_parse.output.report,
        rows=rules.healthfc_release.output.rows,
        release_report=rules.healthfc_release.output.report,
    output:
        markdown=report(f"{RESULTS}/healthfc/diff/diff.md", caption="../report/healthfc_diff.rst", category="HealthFC"),
        rows=report(
            f"{RESULTS}/healthfc/diff/diff_rows.csv", caption="../report/healthfc_diff_rows.rst", category="HealthFC"
        ),
        counts=f"{RESULTS}/healthfc/diff/diff_counts.csv",
    log:
        f"{LOGS}/healthfc/diff.log",
    benchmark:
        f"{TIMINGS}/healthfc/diff.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=15,
    params:
        step=versioned("healthfc.steps:diff"),
        options=PLAN.options_of(DatasetsPlan.healthfc_diff),
    script:
        STEP_SCRIPT
