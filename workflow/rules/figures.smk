# Figures of the experiments: CliniFact Fig. 3 (per class, per statistical test type, per disease class).
# All logic is in medfc.experiments.steps:tables; helpers are in common.smk.


rule clinifact_fig3:
    input:
        unpack(clinifact_fig3_inputs),
    output:
        png=report(f"{FIGURES_DIR}/clinifact_fig3.png", caption="../report/clinifact_fig3.rst", category="Experiments", subcategory="CliniFact"),
        pdf=f"{FIGURES_DIR}/clinifact_fig3.pdf",
        csv=f"{TABLES_DIR}/clinifact_fig3.csv",
        md=f"{TABLES_DIR}/clinifact_fig3.md",
        tex=f"{TABLES_DIR}/clinifact_fig3.tex",
    params:
        step="experiments.steps:tables",
        options=lambda w: {
            "table": "clinifact_fig3",
            "entries": clinifact_table_entries(),
            "excluded_branches": list(config["clinifact"]["stats"]["excluded_branches"]),
        },
    log:
        "logs/figures/clinifact_fig3.log",
    benchmark:
        "results/benchmarks/figures/clinifact_fig3.tsv"
    resources:
        mem_mb=1024,
        runtime=10,
    conda:
        "../../envs/figures.yaml"
    script:
        STEP_SCRIPT
