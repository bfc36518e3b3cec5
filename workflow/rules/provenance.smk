# Provenance (medfc.common.provenance, docs/ARCHITECTURE.md): the software of the run's results in
# <results_dir>/provenance/software.yml (rerun when it changes: it is the params), and one line per run in
# runs.jsonl with its command and resolved config (written when a run starts: common.smk's onstart). Every
# experiment's info.json points here.


rule provenance:
    output:
        software=report(
            f"{PLAN.layout.provenance}/software.yml",
            caption="../report/provenance.rst",
            category="Provenance",
        ),
    log:
        f"{LOGS}/provenance.log",
    benchmark:
        f"{RESULTS}/benchmarks/provenance.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=512,
        runtime=5,
    params:
        step=versioned("common.provenance:write_software"),
        options=lambda w: PLAN.options("provenance", w),
    script:
        STEP_SCRIPT
