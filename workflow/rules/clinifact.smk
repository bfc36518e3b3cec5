# CliniFact: studies (bulk zip or v2 search API) → claims → PubMed abstracts → labelled pairs
# → balanced 64/16/20 split → statistics and figures. The official release can replace the rebuilt
# pairs (config clinifact.pairs_source: release), or be compared with them (clinifact_diff, when
# clinifact.diff.release is set). Steps: medfc.clinifact.steps; see docs/clinifact.md. Config-dependent inputs
# and options from medfc.plan (PLAN, each rule's function: medfc.plan.datasets.DatasetsPlan).


rule clinifact_fetch_studies:
    input:
        unpack(PLAN.inputs_of(DatasetsPlan.clinifact_fetch_studies)),
    output:
        studies=f"{RESULTS}/clinifact/studies/studies.jsonl.gz",
        excluded=f"{RESULTS}/clinifact/studies/excluded.jsonl.gz",
        report=f"{RESULTS}/clinifact/studies/report.json",
    log:
        f"{LOGS}/clinifact/fetch_studies.log",
    benchmark:
        f"{TIMINGS}/clinifact/fetch_studies.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=2048,
        runtime=600,
    params:
        step=versioned("clinifact.steps:fetch_studies"),
        options=PLAN.options_of(DatasetsPlan.clinifact_fetch_studies),
    script:
        STEP_SCRIPT


rule clinifact_build_claims:
    input:
        studies=rules.clinifact_fetch_studies.output.studies,
    output:
        claims=f"{RESULTS}/clinifact/claims/claims.jsonl.gz",
        labelled=f"{RESULTS}/clinifact/claims/labelled.jsonl.gz",
        report=f"{RESULTS}/clinifact/claims/report.json",
    log:
        f"{LOGS}/clinifact/build_claims.log",
    benchmark:
        f"{TIMINGS}/clinifact/build_claims.tsv"
    conda:
        "../envs/medfc.yaml"
    threads: 2
    resources:
        mem_mb=4096,
        runtime=240,
    params:
        step=versioned("clinifact.steps:build_claims"),
        options=PLAN.options_of(DatasetsPlan.clinifact_build_claims),
    script:
        STEP_SCRIPT


rule clinifact_fetch_abstracts:
    input:
        labelled=rules.clinifact_build_claims.output.labelled,
    output:
        abstracts=f"{RESULTS}/clinifact/abstracts/abstracts.jsonl.gz",
        report=f"{RESULTS}/clinifact/abstracts/report.json",
    log:
        f"{LOGS}/clinifact/fetch_abstracts.log",
    benchmark:
        f"{TIMINGS}/clinifact/fetch_abstracts.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=240,
    params:
        step=versioned("clinifact.steps:fetch_abstracts"),
        options=PLAN.options_of(DatasetsPlan.clinifact_fetch_abstracts),
    script:
        STEP_SCRIPT


rule clinifact_build_pairs:
    input:
        labelled=rules.clinifact_build_claims.output.labelled,
        abstracts=rules.clinifact_fetch_abstracts.output.abstracts,
    output:
        pairs=f"{RESULTS}/clinifact/pairs/all_pairs.csv",
        train=f"{RESULTS}/clinifact/pairs/train_set.csv",
        validation=f"{RESULTS}/clinifact/pairs/validation_set.csv",
        test=f"{RESULTS}/clinifact/pairs/test_set.csv",
        train_parquet=f"{RESULTS}/clinifact/pairs/train_set.parquet",
        validation_parquet=f"{RESULTS}/clinifact/pairs/validation_set.parquet",
        test_parquet=f"{RESULTS}/clinifact/pairs/test_set.parquet",
        instruction_train=f"{RESULTS}/clinifact/pairs/instruction/train_set.jsonl",
        instruction_validation=f"{RESULTS}/clinifact/pairs/instruction/validation_set.jsonl",
        instruction_test=f"{RESULTS}/clinifact/pairs/instruction/test_set.jsonl",
        card=report(
            f"{RESULTS}/clinifact/pairs/dataset_card.md", caption="../report/clinifact_card.rst", category="CliniFact"
        ),
        report=f"{RESULTS}/clinifact/pairs/report.json",
    log:
        f"{LOGS}/clinifact/build_pairs.log",
    benchmark:
        f"{TIMINGS}/clinifact/build_pairs.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=30,
    params:
        step=versioned("clinifact.steps:build_pairs"),
        options=PLAN.options_of(DatasetsPlan.clinifact_build_pairs),
    script:
        STEP_SCRIPT


# the pairs as a folder datasets.load_dataset reads by config: README.md (the card with its configs) and each
# split's BigBio view (medfc.clinifact.views)
rule clinifact_export:
    input:
        train_parquet=rules.clinifact_build_pairs.output.train_parquet,
        validation_parquet=rules.clinifact_build_pairs.output.validation_parquet,
        test_parquet=rules.clinifact_build_pairs.output.test_parquet,
        card=rules.clinifact_build_pairs.output.card,
    output:
        readme=f"{RESULTS}/clinifact/pairs/README.md",
        bigbio_train=f"{RESULTS}/clinifact/pairs/bigbio_te/train_set.parquet",
        bigbio_validation=f"{RESULTS}/clinifact/pairs/bigbio_te/validation_set.parquet",
        bigbio_test=f"{RESULTS}/clinifact/pairs/bigbio_te/test_set.parquet",
    log:
        f"{LOGS}/clinifact/export.log",
    benchmark:
        f"{TIMINGS}/clinifact/export.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("clinifact.steps:export_views"),
        options=PLAN.options_of(DatasetsPlan.clinifact_export),
    script:
        STEP_SCRIPT


rule clinifact_import_release:
    input:
        unpack(PLAN.inputs_of(DatasetsPlan.clinifact_import_release)),
    output:
        train=f"{RESULTS}/clinifact/release/train_set.csv",
        validation=f"{RESULTS}/clinifact/release/validation_set.csv",
        test=f"{RESULTS}/clinifact/release/test_set.csv",
        report=f"{RESULTS}/clinifact/release/report.json",
    log:
        f"{LOGS}/clinifact/import_release.log",
    benchmark:
        f"{TIMINGS}/clinifact/import_release.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=30,
    params:
        step=versioned("clinifact.steps:import_release"),
        options=PLAN.options_of(DatasetsPlan.clinifact_import_release),
    script:
        STEP_SCRIPT


rule clinifact_stats:
    input:
        unpack(PLAN.inputs_of(DatasetsPlan.clinifact_stats)),
        train=f"{CF_PAIRS}/train_set.csv",
        validation=f"{CF_PAIRS}/validation_set.csv",
        test=f"{CF_PAIRS}/test_set.csv",
        studies=rules.clinifact_fetch_studies.output.studies,
    output:
        table_labels=report(
            f"{RESULTS}/clinifact/stats/table6_labels.csv",
            caption="../report/clinifact_table6.rst",
            category="CliniFact",
        ),
        table_words=report(
            f"{RESULTS}/clinifact/stats/table4_words.csv",
            caption="../report/clinifact_table4.rst",
            category="CliniFact",
        ),
        table_labels_md=f"{RESULTS}/clinifact/stats/table6_labels.md",
        table_labels_tex=f"{RESULTS}/clinifact/stats/table6_labels.tex",
        table_words_md=f"{RESULTS}/clinifact/stats/table4_words.md",
        table_words_tex=f"{RESULTS}/clinifact/stats/table4_words.tex",
        table_classes=f"{RESULTS}/clinifact/stats/fig2_disease_classes.csv",
        table_classes_md=f"{RESULTS}/clinifact/stats/fig2_disease_classes.md",
        table_classes_tex=f"{RESULTS}/clinifact/stats/fig2_disease_classes.tex",
        fig_classes_pdf=f"{RESULTS}/clinifact/stats/fig2_disease_classes.pdf",
        fig_classes=report(
            f"{RESULTS}/clinifact/stats/fig2_disease_classes.png",
            caption="../report/clinifact_fig2.rst",
            category="CliniFact",
        ),
        table_years=f"{RESULTS}/clinifact/stats/figS1_years.csv",
        table_years_md=f"{RESULTS}/clinifact/stats/figS1_years.md",
        table_years_tex=f"{RESULTS}/clinifact/stats/figS1_years.tex",
        fig_years_pdf=f"{RESULTS}/clinifact/stats/figS1_years.pdf",
        fig_years=report(
            f"{RESULTS}/clinifact/stats/figS1_years.png", caption="../report/clinifact_figS1.rst", category="CliniFact"
        ),
        report=f"{RESULTS}/clinifact/stats/report.json",
    log:
        f"{LOGS}/clinifact/stats.log",
    benchmark:
        f"{TIMINGS}/clinifact/stats.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=30,
    params:
        step=versioned("clinifact.steps:clinifact_stats"),
        options=PLAN.options_of(DatasetsPlan.clinifact_stats),
    script:
        STEP_SCRIPT


rule clinifact_diff:
    input:
        unpack(PLAN.inputs_of(DatasetsPlan.clinifact_diff)),
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
        markdown=report(
            f"{RESULTS}/clinifact/diff/diff.md", caption="../report/clinifact_diff.rst", category="CliniFact"
        ),
        rows=report(
            f"{RESULTS}/clinifact/diff/diff_rows.csv",
            caption="../report/clinifact_diff_rows.rst",
            category="CliniFact",
        ),
        counts=f"{RESULTS}/clinifact/diff/diff_counts.csv",
        report=f"{RESULTS}/clinifact/diff/report.json",
    log:
        f"{LOGS}/clinifact/diff.log",
    benchmark:
        f"{TIMINGS}/clinifact/diff.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=2048,
        runtime=30,
    params:
        step=versioned("clinifact.steps:diff"),
        options=PLAN.options_of(DatasetsPlan.clinifact_diff),
    script:
        STEP_SCRIPT
