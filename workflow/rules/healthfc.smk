# HealthFC: crawl the portal (or its demo mirror) → parse articles and claims.


rule healthfc_crawl:
    input:
        crawl_inputs,
    output:
        pages="results/healthfc/crawl/pages.jsonl.gz",
        stats="results/healthfc/crawl/stats.json",
    params:
        step="healthfc.steps:crawl",
        options=lambda w: {
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
        step="healthfc.steps:parse",
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
