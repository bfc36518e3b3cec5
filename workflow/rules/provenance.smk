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
        f"{TIMINGS}/provenance.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=512,
        runtime=5,
    params:
        step=versioned("common.provenance:write_software"),
        options=PLAN.options_of(RunPlan.provenance),
    script:
        STEP_SCRIPT


# the run's main.tex: one LaTeX document that inputs every table and includes every figure the run made
# (medfc.tables.document); `pdflatex main.tex` in the results folder shows the whole run
rule main_tex:
    input:
        tables=lambda w: [f"{t[:-4]}.tex" for t in tables_and_figures(planned())[0]],
        figures=lambda w: [f"{f[:-4]}.pdf" for f in tables_and_figures(planned())[1]],
    output:
        tex=f"{RESULTS}/main.tex",
    log:
        f"{LOGS}/main_tex.log",
    benchmark:
        f"{TIMINGS}/main_tex.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=512,
        runtime=5,
    params:
        step=versioned("tables.document:main_tex"),
        options=PLAN.options_of(RunPlan.main_tex),
    script:
        STEP_SCRIPT


# the run's index: what each folder holds, the error browser, the headline tables, every figure, which runs made them
# (medfc.common.run_index); made after every other planned job
rule index:
    input:
        lambda w: [f for f in planned() if f not in rules.index.output],
    output:
        md=f"{RESULTS}/index.md",
        html=report(f"{RESULTS}/index.html", caption="../report/index.rst", category="Overview"),
    log:
        f"{LOGS}/index.log",
    benchmark:
        f"{TIMINGS}/index.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=512,
        runtime=5,
    params:
        step=versioned("common.run_index:write_index"),
        options=PLAN.options_of(RunPlan.index),
    script:
        STEP_SCRIPT
