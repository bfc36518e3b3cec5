#!/usr/bin/env bash
# Start / stop the services that two workflow tests use, so that pytest itself never installs
# packages or starts daemons:
#   tests/workflow/test_slurm.py          a real one-node SLURM cluster (munge, MariaDB + slurmdbd,
#                                         slurmctld, slurmd; partition `debug`, account `medfc`)
#   tests/workflow/test_report_browser.py headless Chromium (Debian package `chromium`)
#   the LaTeX tests                       pdflatex (Debian's texlive-latex-base, -recommended, -extra)
#
#   sudo bash scripts/ci/services.sh start     # install what is missing, start the cluster
#   sudo bash scripts/ci/services.sh stop      # stop the daemons start left running
#   bash scripts/ci/services.sh status         # what the tests will find (no root needed)
#
# Without them, those two test modules skip and say why. .ci/run calls `start` before the tests and
# `stop` on exit, and sets MEDFC_REQUIRE_SERVICES=1 so that a skip there fails the run instead.
set -euo pipefail
cd "$(dirname "$0")/../.."

apt_install() { # apt_install PACKAGE...: install, refreshing the package lists once if needed
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >/dev/null \
        || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >/dev/null; }
}

status() {
    local ok=0
    if command -v chromium >/dev/null 2>&1; then echo "chromium: $(command -v chromium)"; else echo "chromium: missing"; ok=1; fi
    if command -v pdflatex >/dev/null 2>&1; then echo "pdflatex: $(command -v pdflatex)"; else echo "pdflatex: missing"; ok=1; fi
    if sinfo -h >/dev/null 2>&1 && sacct -n -X -S now >/dev/null 2>&1; then
        echo "slurm: up (partitions: $(sinfo -h -o %R | tr '\n' ' '))"
    else
        echo "slurm: down"; ok=1
    fi
    return $ok
}

case "${1:-}" in
start)
    [[ $(id -u) -eq 0 ]] || { echo "services.sh start: must run as root (apt-get, daemons)" >&2; exit 1; }
    command -v chromium >/dev/null 2>&1 || apt_install chromium
    command -v pdflatex >/dev/null 2>&1 || apt_install texlive-latex-base texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended
    bash scripts/slurm/start_cluster.sh
    status
    ;;
stop)
    [[ $(id -u) -eq 0 ]] || { echo "services.sh stop: must run as root" >&2; exit 1; }
    bash scripts/slurm/stop_cluster.sh
    ;;
status)
    status
    ;;
*)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
