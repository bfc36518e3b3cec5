# Figures of the experiments: CliniFact Fig. 3 (per class, per statistical test type, per disease class)
# with the paper's values beside ours. The datasets' own figures come from healthfc_stats and
# clinifact_stats. Step: medfc.tables.steps:clinifact_fig3; inputs and options from medfc.plan (PLAN).


rule clinifact_fig3:
    input:
        unpack(PLAN.inputs_of(TablesPlan.clinifact_fig3)),
    output:
        png=report(
            f"{FIGURES_DIR}/clinifact_fig3.png",
            caption="../report/clinifact_fig3.rst",
            category="Experiments",
            subcategory="CliniFact",
        ),
        pdf=f"{FIGURES_DIR}/clinifact_fig3.pdf",
        csv=f"{TABLES_DIR}/clinifact_fig3.csv",
        md=f"{TABLES_DIR}/clinifact_fig3.md",
        tex=f"{TABLES_DIR}/clinifact_fig3.tex",
    log:
        f"{LOGS}/figures/clinifact_fig3.log",
    benchmark:
        f"{TIMINGS}/figures/clinifact_fig3.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("tables.steps:clinifact_fig3"),
        options=PLAN.options_of(TablesPlan.clinifact_fig3),
    script:
        STEP_SCRIPT
