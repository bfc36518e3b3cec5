# HealthFC: crawl the portal (or its demo mirror) → parse articles and claims → sentences and English
# translations → release annotations aligned → the dataset → folds, Table 2, Figs. 1–3; the crawl
# against the release (healthfc_diff, crawl+release mode).
# Modes (healthfc.dataset.mode): crawl+release (default), crawl (no release file), release (no crawl).


rule healthfc_crawl:
    input:
        lambda w: PLAN.crawl_inputs(),
    output:
        pages="results/healthfc/crawl/pages.jsonl.gz",
        stats="results/healthfc/crawl/stats.json",
    params:
        step=versioned("healthfc.steps:crawl"),
        options={
            **config["healthfc"]["crawl"],
            "http_cache_dir": f"{CACHE}/healthfc/http",
            "jobdir": f"{CACHE}/healthfc/crawl-job",
        },
    log:
        "logs/healthfc/crawl.log",
    benchmark:
        "results/benchmarks/healthfc/crawl.tsv"
    resources:
        mem_mb=1024,
        runtime=720,
    conda:
        "../../envs/scrape.yaml"
    script:
        STEP_SCRIPT


rule healthfc_parse:
    input:
        pages=rules.healthfc_crawl.output.pages,
    output:
        articles="results/healthfc/parsed/articles.jsonl",
        claims="results/healthfc/parsed/claims.jsonl",
        articles_table="results/healthfc/parsed/articles.parquet",
        claims_table="results/healthfc/parsed/claims.parquet",
        report="results/healthfc/parsed/report.json",
    params:
        step=versioned("healthfc.steps:parse"),
        options={},
    log:
        "logs/healthfc/parse.log",
    benchmark:
        "results/benchmarks/healthfc/parse.tsv"
    resources:
        mem_mb=2048,
        runtime=30,
    conda:
        "../../envs/scrape.yaml"
    script:
        STEP_SCRIPT


rule healthfc_translate:
    input:
        unpack(lambda w: PLAN.translation_inputs()),
        articles=rules.healthfc_parse.output.articles,
        claims=rules.healthfc_parse.output.claims,
    output:
        sentences="results/healthfc/translated/sentences.jsonl",
        claims_en="results/healthfc/translated/claims_en.jsonl",
        report="results/healthfc/translated/report.json",
    params:
        step=versioned("healthfc.steps:translate"),
        # the working translation memory (<cache_dir>/healthfc/translation_memory.jsonl) is this rule's
        # alone: no other rule reads or writes it (the dataset takes its English from the outputs here)
        options={
            **{k: v for k, v in config["healthfc"]["translation"].items() if k not in ("memory_seeds", "corrections", "gpu")},
            "memory": f"{CACHE}/healthfc/translation_memory.jsonl",
            # the ctranslate2 backend's converted models (keyed by model, ctranslate2 version, quantization)
            "ct2_cache": f"{CACHE}/healthfc/ctranslate2",
            "splitter": config["healthfc"]["sentences"]["base"],
        },
    log:
        "logs/healthfc/translate.log",
    benchmark:
        "results/benchmarks/healthfc/translate.tsv"
    threads: 2
    resources:
        mem_mb=8192,
        runtime=600,
        gpu=lambda w: config["healthfc"]["translation"]["gpu"],
    conda:
        "../../envs/translate.yaml"
    script:
        STEP_SCRIPT


rule healthfc_release:
    input:
        unpack(lambda w: PLAN.healthfc_release_inputs()),
    output:
        rows="results/healthfc/release/rows.jsonl",
        report="results/healthfc/release/report.json",
    params:
        step=versioned("healthfc.steps:release"),
        options={**config["healthfc"]["release"], "cache_dir": CACHE},
    log:
        "logs/healthfc/release.log",
    benchmark:
        "results/benchmarks/healthfc/release.tsv"
    resources:
        mem_mb=1024,
        runtime=15,
    conda:
        "../../envs/data.yaml"
    script:
        STEP_SCRIPT


rule healthfc_align:
    input:
        claims=rules.healthfc_parse.output.claims,
        articles=rules.healthfc_parse.output.articles,
        rows=rules.healthfc_release.output.rows,
    output:
        alignment="results/healthfc/aligned/alignment.jsonl",
        report="results/healthfc/aligned/report.json",
    params:
        step=versioned("healthfc.steps:align"),
        options={**config["healthfc"]["align"], "splitter": config["healthfc"]["sentences"]["base"]},
    log:
        "logs/healthfc/align.log",
    benchmark:
        "results/benchmarks/healthfc/align.tsv"
    resources:
        mem_mb=2048,
        runtime=30,
    conda:
        "../../envs/translate.yaml"
    script:
        STEP_SCRIPT


rule healthfc_dataset:
    input:
        unpack(healthfc_dataset_inputs),
    output:
        jsonl="results/healthfc/dataset/healthfc.jsonl",
        parquet="results/healthfc/dataset/healthfc.parquet",
        card=report("results/healthfc/dataset/dataset_card.md", caption="../report/healthfc_card.rst", category="HealthFC"),
        report="results/healthfc/dataset/report.json",
    params:
        step=versioned("healthfc.steps:dataset"),
        options={"mode": PLAN.healthfc_mode, "splitter": config["healthfc"]["sentences"]["base"]},
    log:
        "logs/healthfc/dataset.log",
    benchmark:
        "results/benchmarks/healthfc/dataset.tsv"
    resources:
        mem_mb=2048,
        runtime=30,
    conda:
        "../../envs/translate.yaml"
    script:
        STEP_SCRIPT


rule healthfc_folds:
    input:
        dataset=rules.healthfc_dataset.output.jsonl,
    output:
        folds="results/healthfc/folds/folds.csv",
        report="results/healthfc/folds/report.json",
    params:
        step=versioned("healthfc.steps:folds"),
        options=config["healthfc"]["folds"],
    log:
        "logs/healthfc/folds.log",
    benchmark:
        "results/benchmarks/healthfc/folds.tsv"
    resources:
        mem_mb=1024,
        runtime=10,
    conda:
        "../../envs/data.yaml"
    script:
        STEP_SCRIPT



rule healthfc_retrieve:
    input:
        unpack(lambda w: PLAN.healthfc_retrieve_inputs(w.source)),
        dataset=rules.healthfc_dataset.output.jsonl,
    output:
        evidence="results/healthfc/evidence/{source}.jsonl",
        report="results/healthfc/evidence/{source}.report.json",
    wildcard_constraints:
        source="web|pubmed|wikipedia",
    params:
        step=versioned("healthfc.steps:retrieve"),
        options=lambda w: PLAN.healthfc_retrieve_options(w.source),
    log:
        "logs/healthfc/retrieve/{source}.log",
    benchmark:
        "results/benchmarks/healthfc/retrieve/{source}.tsv"
    resources:
        mem_mb=1024,
        runtime=lambda w: config["healthfc"]["retrieval"]["runtime"],
    conda:
        "../../envs/data.yaml"
    script:
        STEP_SCRIPT

rule healthfc_stats:
    input:
        dataset=rules.healthfc_dataset.output.jsonl,
    output:
        table2=report("results/healthfc/stats/table2.csv", caption="../report/healthfc_table2.rst", category="HealthFC"),
        table2_md="results/healthfc/stats/table2.md",
        table2_tex="results/healthfc/stats/table2.tex",
        fig1=report("results/healthfc/stats/fig1_claims_per_year.png", caption="../report/healthfc_fig1.rst", category="HealthFC"),
        fig1_pdf="results/healthfc/stats/fig1_claims_per_year.pdf",
        fig1_data="results/healthfc/stats/fig1_claims_per_year.csv",
        fig2=report("results/healthfc/stats/fig2_top_topics.png", caption="../report/healthfc_fig2.rst", category="HealthFC"),
        fig2_pdf="results/healthfc/stats/fig2_top_topics.pdf",
        fig2_data="results/healthfc/stats/fig2_top_topics.csv",
        fig3=report("results/healthfc/stats/fig3_level_by_verdict.png", caption="../report/healthfc_fig3.rst", category="HealthFC"),
        fig3_pdf="results/healthfc/stats/fig3_level_by_verdict.pdf",
        fig3_data="results/healthfc/stats/fig3_level_by_verdict.csv",
        summary="results/healthfc/stats/summary.json",
    params:
        step=versioned("healthfc.steps:stats"),
        options={"top_topics": config["healthfc"]["dataset"]["top_topics"]},
    log:
        "logs/healthfc/stats.log",
    benchmark:
        "results/benchmarks/healthfc/stats.tsv"
    resources:
        mem_mb=2048,
        runtime=15,
    conda:
        "../../envs/figures.yaml"
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
        markdown=report("results/healthfc/diff/diff.md", caption="../report/healthfc_diff.rst", category="HealthFC"),
        rows=report("results/healthfc/diff/diff_rows.csv", caption="../report/healthfc_diff_rows.rst", category="HealthFC"),
        counts="results/healthfc/diff/diff_counts.csv",
    params:
        step=versioned("healthfc.steps:diff"),
        options={**config["healthfc"]["diff"], "min_claim_score": config["healthfc"]["align"]["min_claim_score"]},
    log:
        "logs/healthfc/diff.log",
    benchmark:
        "results/benchmarks/healthfc/diff.tsv"
    resources:
        mem_mb=1024,
        runtime=15,
    conda:
        "../../envs/data.yaml"
    script:
        STEP_SCRIPT
