# HealthFC (draft): release file → alignment to the crawl → dataset (DE + EN) → folds, Table 2, Figs. 1–3.
# Modes (healthfc.dataset.mode): "crawl+release" (default), "crawl" (no release file), "release" (no crawl).
# All logic is in medfc.healthfc (release, align, dataset, folds, stats, figures); see docs/healthfc.md.

HD = config["healthfc"]
HD_MODE = HD["dataset"]["mode"]
HD_RELEASE = HD["release"]["source"]


def healthfc_release_inputs(wildcards):
    """A local release file is an input (editing it reruns); a URL is downloaded into the cache."""
    src = HD_RELEASE
    if not src:
        raise ValueError("config: healthfc.release.source must be set for dataset modes that use the release")
    return {} if src.startswith(("http://", "https://")) else {"release": src}


def healthfc_dataset_inputs(wildcards):
    inputs = {}
    if HD_MODE in ("crawl+release", "crawl"):
        inputs["claims"] = rules.healthfc_parse.output.claims
        inputs["articles"] = rules.healthfc_parse.output.articles
        # Integration: when the translation stage's rule is included, pass its outputs so the dataset
        # reuses its sentence ids and translations (name the rule as it is in its .smk), e.g.
        #   inputs["sentences"] = rules.healthfc_translate.output.sentences
        #   inputs["claims_en"] = rules.healthfc_translate.output.claims_en
    if HD_MODE in ("crawl+release", "release"):
        inputs["rows"] = rules.healthfc_release.output.rows
    if HD_MODE == "crawl+release":
        inputs["alignment"] = rules.healthfc_align.output.alignment
        inputs["align_report"] = rules.healthfc_align.output.report
    return inputs


def healthfc_translation_options():
    """Only the translation settings the dataset's English side depends on (memory seeds are inputs too)."""
    tr = config.get("translation", {})
    return {
        "model": tr.get("model"),
        "model_name": tr.get("model_name") or tr.get("model"),
        "memory": f"{CACHE}/translation_memory.jsonl",
        "seeds": list(tr.get("memory_seeds", [])),
        "corrections": tr.get("corrections"),
        "device": tr.get("device", "auto"),
        "batch_size": tr.get("batch_size", 32),
    }


rule healthfc_release:
    input:
        unpack(healthfc_release_inputs),
    output:
        rows="results/healthfc/release/rows.jsonl",
        report="results/healthfc/release/report.json",
    params:
        step="healthfc.dataset_steps:release",
        options=lambda w: {"source": HD_RELEASE, "cache_dir": CACHE},
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
        step="healthfc.dataset_steps:align",
        options=lambda w: HD["align"],
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
        step="healthfc.dataset_steps:build_dataset",
        options=lambda w: {"translation": healthfc_translation_options()},
    log:
        "logs/healthfc/dataset.log",
    benchmark:
        "results/benchmarks/healthfc/dataset.tsv"
    threads: 2
    resources:
        mem_mb=8192,
        runtime=240,
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
        step="healthfc.dataset_steps:folds",
        options=lambda w: HD["folds"],
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
        step="healthfc.dataset_steps:stats",
        options=lambda w: {"top_topics": HD["dataset"]["top_topics"]},
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
