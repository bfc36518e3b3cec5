"""medfc: the library behind the medical fact-checking workflow.

Every step of the Snakemake workflow is a function of this package; the rules only wire
files and parameters to it. Nothing here knows that it runs under Snakemake.
"""

__version__ = "0.6.0"
