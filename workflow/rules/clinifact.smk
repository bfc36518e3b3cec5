# CliniFact: studies (bulk zip or v2 search API) → claims → PubMed abstracts → labelled pairs
# → balanced 64/16/20 split → statistics and figures. The official release can replace the rebuilt
# pairs (config clinifact.pairs_source: release), or be compared with them (clinifact_diff, when
# clinifact.diff.release is set). Steps: medfc.clinifact.steps; see docs/clinifact.md.

CF = config["clinifact"]


rule clinifact_fetch_studies:
    input:
        **({"zip": CF["studies"]["bulk_zip"]} if CF["studies"]["source"] == "bulk_zip" and CF["studies"]["bulk_zip"] else {}),
    output:
        studies="results/clinifact/studies/studies.jsonl.gz",
        excluded="results/clinifact/studies/excluded.jsonl.gz",
        report="results/clinifact/studies/report.json",
    params:
        step=versioned("clinifact.steps:fetch_studies"),
        options=lambda w: {
            **{k: v for k, v in CF["studies"].items() if k != "bulk_zip"},
            "cache_dir": f"{CACHE}/clinifact",
            "user_agent": CF["user_agent"],
        },
    log:
        "logs/clinifact/fetch_studies.log",
    benchmark:
        "results/benchmarks/clinifact/fetch_studies.tsv"
    resources:
        mem_mb=2048,
        runtime=600,
    conda:
        "../../envs/scrape.yaml"
    script:
        STEP_SCRIPT


rule clinifact_build_claims:
    input:
        studies=rules.clinifact_fetch_studies.output.studies,
    output:
        claims="results/clinifact/claims/claims.jsonl.gz",
        labelled="results/clinifact/claims/labelled.jsonl.gz",
        report="results/clinifact/claims/report.json",
    params:
        step=versioned("clinifact.steps:build_claims"),
        options=lambda w: CF["claims"],
    log:
        "logs/clinifact/build_claims.log",
    benchmark:
        "results/benchmarks/clinifact/build_claims.tsv"
    threads: 2
    resources:
        mem_mb=4096,
        runtime=240,
    conda:
        "../../envs/train.yaml"
    script:
        STEP_SCRIPT


rule clinifact_fetch_abstracts:
    input:
        labelled=rules.clinifact_build_claims.output.labelled,
    output:
        abstracts="results/clinifact/abstracts/abstracts.jsonl.gz",
        report="results/clinifact/abstracts/report.json",
    params:
        step=versioned("clinifact.steps:fetch_abstracts"),
        options=lambda w: {
            **CF["pubmed"],
            "cache_dir": f"{CACHE}/clinifact/pubmed",
            "user_agent": CF["user_agent"],
        },
    log:
        "logs/clinifact/fetch_abstracts.log",
    benchmark:
        "results/benchmarks/clinifact/fetch_abstracts.tsv"
    resources:
        mem_mb=1024,
        runtime=240,
    conda:
        "../../envs/scrape.yaml"
    script:
        STEP_SCRIPT


rule clinifact_build_pairs:
    input:
        labelled=rules.clinifact_build_claims.output.labelled,
        abstracts=rules.clinifact_fetch_abstracts.output.abstracts,
    output:
        pairs="results/clinifact/pairs/all_pairs.csv",
        train="results/clinifact/pairs/train_set.csv",
        validation="results/clinifact/pairs/validation_set.csv",
        test="results/clinifact/pairs/test_set.csv",
        card=report("results/clinifact/pairs/dataset_card.md", caption="../report/clinifact_card.rst", category="CliniFact"),
        report="results/clinifact/pairs/report.json",
    params:
        step=versioned("clinifact.steps:build_pairs"),
        options=lambda w: CF["pairs"],
    log:
        "logs/clinifact/build_pairs.log",
    benchmark:
        "results/benchmarks/clinifact/build_pairs.tsv"
    resources:
        mem_mb=1024,
        runtime=30,
    conda:
        "../../envs/figures.yaml"
    script:
        STEP_SCRIPT


rule clinifact_import_release:
    input:
        unpack(lambda w: PLAN.clinifact_release_inputs()),
    output:
        train="results/clinifact/release/train_set.csv",
        validation="results/clinifact/release/validation_set.csv",
        test="results/clinifact/release/test_set.csv",
        report="results/clinifact/release/report.json",
    params:
        step=versioned("clinifact.steps:import_release"),
        options=lambda w: {**CF["release"], "cache_dir": f"{CACHE}/clinifact"},
    log:
        "logs/clinifact/import_release.log",
    benchmark:
        "results/benchmarks/clinifact/import_release.tsv"
    resources:
        mem_mb=1024,
        runtime=30,
    conda:
        "../../envs/scrape.yaml"
    script:
        STEP_SCRIPT


rule clinifact_stats:
    input:
        train=f"{CF_PAIRS}/train_set.csv",
        validation=f"{CF_PAIRS}/validation_set.csv",
        test=f"{CF_PAIRS}/test_set.csv",
        studies=rules.clinifact_fetch_studies.output.studies,
    output:
        table_labels=report("results/clinifact/stats/table6_labels.csv", caption="../report/clinifact_table6.rst", category="CliniFact"),
        table_words=report("results/clinifact/stats/table4_words.csv", caption="../report/clinifact_table4.rst", category="CliniFact"),
        table_classes="results/clinifact/stats/fig2_disease_classes.csv",
        fig_classes=report("results/clinifact/stats/fig2_disease_classes.png", caption="../report/clinifact_fig2.rst", category="CliniFact"),
        table_years="results/clinifact/stats/figS1_years.csv",
        fig_years=report("results/clinifact/stats/figS1_years.png", caption="../report/clinifact_figS1.rst", category="CliniFact"),
        report="results/clinifact/stats/report.json",
    params:
        step=versioned("clinifact.steps:clinifact_stats"),
        options=CF["stats"],
    log:
        "logs/clinifact/stats.log",
    benchmark:
        "results/benchmarks/clinifact/stats.tsv"
    resources:
        mem_mb=1024,
        runtime=30,
    conda:
        "../../envs/figures.yaml"
    script:
        STEP_SCRIPT


rule clinifact_diff:
    input:
        unpack(lambda w: PLAN.clinifact_diff_inputs()),
        pairs=rules.clinifact_build_pairs.output.pairs,
        train=rules.clinifact_build_pairs.output.train,
        validation=rules.clinifact_build_pairs.output.validation,
        test=rules.clinifact_build_pairs.output.test,
        studies=rules.clinifact_fetch_studies.output.studies,
        excluded=rules.clinifact_fetch_studies.output.excluded,
        studies_report=rules.clinifact_fetch_studies.output.report,
        claims_report=rules.clinifact_build_claims.output.report,
        abstracts_report=rules.clinifact_fetch_abstracts.output.report,
        pairs_report=rules.clinifact_build_pairs.output.report,
    output:
        markdown=report("results/clinifact/diff/diff.md", caption="../report/clinifact_diff.rst", category="CliniFact"),
        rows=report("results/clinifact/diff/diff_rows.csv", caption="../report/clinifact_diff_rows.rst", category="CliniFact"),
        counts="results/clinifact/diff/diff_counts.csv",
        report="results/clinifact/diff/report.json",
    params:
        step=versioned("clinifact.steps:diff"),
        options=lambda w: {**CF["diff"], "cache_dir": f"{CACHE}/clinifact"},
    log:
        "logs/clinifact/diff.log",
    benchmark:
        "results/benchmarks/clinifact/diff.tsv"
    resources:
        mem_mb=2048,
        runtime=30,
    conda:
        "../../envs/data.yaml"
    script:
        STEP_SCRIPT
