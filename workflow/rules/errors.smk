# The run's error browser: one self-contained page beside its index (<results_dir>/errors.html) listing every
# test claim (HealthFC) and test pair (CliniFact) with each row's prediction, probability and selected evidence,
# filters and a confusion matrix per row; it opens from the file system (data embedded, no network).
# Step: medfc.tables.errors:write_error_browser; inputs and options from medfc.plan (PLAN).


rule error_browser:
    input:
        unpack(PLAN.inputs_of(TablesPlan.error_browser)),
    output:
        html=report(
            f"{RESULTS}/errors.html", caption="../report/errors.rst", category="Experiments", subcategory="Errors"
        ),
    log:
        f"{LOGS}/tables/error_browser.log",
    benchmark:
        f"{TIMINGS}/tables/error_browser.tsv"
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        step=versioned("tables.errors:write_error_browser"),
        options=PLAN.options_of(TablesPlan.error_browser),
    script:
        STEP_SCRIPT
