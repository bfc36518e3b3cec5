"""The one script every rule runs: hands the rule's named files and options to a library step.

A rule sets ``params: step="module:function", options={...}``; this script calls
``medfc.<module>.<function>(inputs, outputs, options)`` with the rule's named inputs and outputs,
logging into the rule's log. All logic lives in the library.
"""

from medfc.cli import run_step

snakemake = globals()["snakemake"]  # injected by Snakemake

run_step(
    snakemake.params.step,
    {k: str(v) if isinstance(v, str) else [str(x) for x in v] for k, v in snakemake.input.items()},
    {k: str(v) if isinstance(v, str) else [str(x) for x in v] for k, v in snakemake.output.items()},
    dict(snakemake.params.get("options", {}) or {}),
    log=snakemake.log[0] if snakemake.log else None,
    threads=snakemake.threads,
)
