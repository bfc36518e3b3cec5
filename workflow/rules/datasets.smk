# The claim-verification datasets the config declares (datasets.<name>): each imported from its data files (a
# local path, a URL, a Hugging Face repository at a commit; downloaded once into the cache, every file checked
# against its SHA-256 pin) into its three splits, its report and a dataset card. Step: medfc.datasets.steps; see
# docs/datasets.md. It downloads, so a cluster run keeps it where Snakemake runs (medfc.plan.cluster).

# the declared names only: MedSNIP's rules have a {dataset} wildcard of their own
DATASET_NAMES = "|".join(PLAN.datasets.dataset_names()) or "(?!)"


rule dataset_import:
    input:
        unpack(PLAN.inputs_of(DatasetsPlan.dataset_import)),
    output:
        train=f"{RESULTS}/datasets/{{dataset}}/train.jsonl",
        validation=f"{RESULTS}/datasets/{{dataset}}/validation.jsonl",
        test=f"{RESULTS}/datasets/{{dataset}}/test.jsonl",
        report=f"{RESULTS}/datasets/{{dataset}}/report.json",
        readme=f"{RESULTS}/datasets/{{dataset}}/card/README.md",
        source_train=f"{RESULTS}/datasets/{{dataset}}/card/source/train.parquet",
        source_validation=f"{RESULTS}/datasets/{{dataset}}/card/source/validation.parquet",
        source_test=f"{RESULTS}/datasets/{{dataset}}/card/source/test.parquet",
        bigbio_train=f"{RESULTS}/datasets/{{dataset}}/card/bigbio_te/train.parquet",
        bigbio_validation=f"{RESULTS}/datasets/{{dataset}}/card/bigbio_te/validation.parquet",
        bigbio_test=f"{RESULTS}/datasets/{{dataset}}/card/bigbio_te/test.parquet",
    log:
        f"{LOGS}/datasets/{{dataset}}/import.log",
    benchmark:
        f"{TIMINGS}/datasets/{{dataset}}/import.tsv"
    wildcard_constraints:
        dataset=DATASET_NAMES,
    conda:
        "../envs/medfc.yaml"
    resources:
        mem_mb=2048,
        runtime=60,
    params:
        step=versioned("datasets.steps:import_dataset"),
        options=PLAN.options_of(DatasetsPlan.dataset_import),
    script:
        STEP_SCRIPT
