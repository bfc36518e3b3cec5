# Provenance (medfc.common.provenance, docs/ARCHITECTURE.md): the software and the resolved config of the
# run's results in <results_dir>/provenance/software.yml (rerun when either changes: they are its params), and
# one line per run in runs.jsonl (written when a run starts, below). Every experiment's info.json points here.


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
        options={"software": SOFTWARE, "config": config},
    script:
        STEP_SCRIPT
