#!/usr/bin/env bash
# Install medfc into ./.venv (created if missing); needs no root.
#   bash scripts/install.sh                     # torch 2.13.0, the package, its test tools, NLTK data for METEOR
#   MEDFC_TORCH=cpu bash scripts/install.sh     # choose torch's build, see below
#   MEDFC_SLURM=1 bash scripts/install.sh       # also the SLURM executor plugin (profiles/slurm)
#
# MEDFC_SLURM: 1 installs snakemake-executor-plugin-slurm (the package's `slurm` extra), 0 does not; unset, it is
# installed where `sbatch` is on PATH (a cluster's login node). A laptop goes without: Snakemake loads every
# installed executor plugin at each start, and this one imports pandas and asks the cluster for its settings.
#
# MEDFC_TORCH picks the index pip installs torch==2.13.0 from:
#   default  (unset) pip's configured indexes: on Linux x86-64 the public PyPI serves the CUDA build
#            (with its nvidia-* packages, several GB); a machine whose pip config offers a local
#            wheel (find-links) gets that one;
#   cpu      https://download.pytorch.org/whl/cpu, the CPU-only build (about 200 MB);
#   cu126, cu128, cu130, ...  https://download.pytorch.org/whl/<that>, the build for that CUDA version;
#   any URL  used as the index as is.
# Everything is written inside the checkout (.venv, .tools, .nltk_data), pip's cache in the home folder, and
# WordNet's sources (when no system copy exists) in ${XDG_DATA_HOME:-~/.local/share}/medfc; see
# scripts/install_nltk_data.sh.
# Environment: PYTHON (the interpreter for the venv, default python3), MEDFC_TORCH, NLTK_DATA (the NLTK
# data folder, default ./.nltk_data), and those of scripts/install_nltk_data.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

torch_choice="${MEDFC_TORCH:-default}"
case "$torch_choice" in
    default) torch_index=() ;;
    cpu | cu[0-9]*) torch_index=(--index-url "https://download.pytorch.org/whl/$torch_choice") ;;
    http://* | https://* | file://*) torch_index=(--index-url "$torch_choice") ;;
    *)
        echo "error: MEDFC_TORCH=$torch_choice; use default, cpu, cuXYZ (e.g. cu128) or an index URL" >&2
        exit 2
        ;;
esac

extras="test"
case "${MEDFC_SLURM:-}" in
    1) extras="test,slurm" ;;
    0) ;;
    "") if command -v sbatch >/dev/null 2>&1; then extras="test,slurm"; fi ;;
    *)
        echo "error: MEDFC_SLURM=$MEDFC_SLURM; use 1 (install the SLURM executor plugin) or 0" >&2
        exit 2
        ;;
esac

[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# torch first, pinned and from the chosen index; the package's own torch==2.13.0 then keeps it
echo "Installing torch==2.13.0 (MEDFC_TORCH=$torch_choice) ..."
.venv/bin/python -m pip install --quiet "${torch_index[@]}" "torch==2.13.0"
[ "$extras" = "test" ] || echo "Installing the SLURM executor plugin (profiles/slurm; MEDFC_SLURM=0 leaves it out) ..."
.venv/bin/python -m pip install --quiet -e ".[$extras]"
# cffconvert (the suite runs `cffconvert --validate` on CITATION.cff: tests/unit/common/test_citation.py) in a venv
# of its own, .tools/cffconvert: cffconvert 2.0.0 requires jsonschema<4, the workflow jsonschema 4
[ -x .tools/cffconvert/bin/python ] || "$PY" -m venv .tools/cffconvert
.tools/cffconvert/bin/python -m pip install --quiet "cffconvert==2.0.0"
if [ -f scripts/install_nltk_data.sh ]; then
  nltk_dir="${NLTK_DATA:-}"
  nltk_dir="${nltk_dir%%:*}"  # its first entry, as the scorers read it
  PYTHON=.venv/bin/python bash scripts/install_nltk_data.sh "${nltk_dir:-$PWD/.nltk_data}"
fi
echo "medfc installed in $(pwd)/.venv"
