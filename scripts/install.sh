#!/usr/bin/env bash
# Install medfc into ./.venv (created if missing), CPU-only and offline-friendly.
#   bash scripts/install.sh            # the package, its test tools, and NLTK data for METEOR
# On a GPU box, install the CUDA build of torch 2.13.0 first; pip then keeps it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# torch first, pinned: an unpinned torch would pull a multi-GB CUDA build
.venv/bin/python -m pip install --quiet "torch==2.13.0"
.venv/bin/python -m pip install --quiet -e ".[test]"
if [ -f scripts/install_nltk_data.sh ]; then
  PYTHON=.venv/bin/python bash scripts/install_nltk_data.sh "${NLTK_DATA:-$PWD/.nltk_data}"
fi
echo "medfc installed in $(pwd)/.venv"
