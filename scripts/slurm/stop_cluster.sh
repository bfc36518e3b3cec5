#!/usr/bin/env bash
# Stop the one-node SLURM test cluster that scripts/slurm/start_cluster.sh started:
# cancels the remaining jobs, stops slurmd, slurmctld, slurmdbd, and stops MariaDB and munged only if
# start_cluster.sh was the one that started them (recorded under /run/medfc-slurm).
# Configs, the accounting database and the logs stay (a later start_cluster.sh reuses them).
# Set MEDFC_SLURM_STOP_ALL=1 to also stop MariaDB and munged when they were already running before.
set -uo pipefail

LOGDIR=${MEDFC_SLURM_LOGDIR:-/var/log/slurm}
LOG="$LOGDIR/medfc-stop_cluster.log"
RUNDIR=/run/medfc-slurm
mkdir -p "$LOGDIR"
exec > >(tee -a "$LOG") 2>&1
log() { printf '[stop_cluster %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
log "log file: $LOG"
[[ $(id -u) -eq 0 ]] || { log "ERROR: must run as root"; exit 1; }

if [[ -e /etc/slurm/slurm.conf ]] && ! grep -q '^# managed-by: medfc scripts/slurm/start_cluster.sh$' /etc/slurm/slurm.conf; then
    log "ERROR: /etc/slurm/slurm.conf was not written by start_cluster.sh; not touching this SLURM"
    exit 1
fi

stop_pidfile() { # stop_pidfile PIDFILE NAME
    local p i
    p=$(cat "$1" 2>/dev/null) && [[ -n $p ]] && kill -0 "$p" 2>/dev/null || { log "$2 not running"; return 0; }
    log "stopping $2 (pid $p)"
    kill "$p" 2>/dev/null
    for ((i = 0; i < 120; i++)); do kill -0 "$p" 2>/dev/null || { rm -f "$1"; return 0; }; sleep 0.25; done
    log "$2 did not stop in 30s; killing"
    kill -9 "$p" 2>/dev/null
    rm -f "$1"
}

ours() { [[ ${MEDFC_SLURM_STOP_ALL:-0} == 1 || -e $RUNDIR/$1 ]]; }

if scontrol ping >/dev/null 2>&1; then
    n=$(squeue -h -o %i 2>/dev/null | wc -l)
    if ((n > 0)); then
        log "cancelling $n job(s)"
        scancel --full --user=root 2>/dev/null
        scancel --full 2>/dev/null
        sleep 1
    fi
fi

stop_pidfile /run/slurmd.pid slurmd
stop_pidfile /run/slurmctld.pid slurmctld
stop_pidfile /run/slurmdbd.pid slurmdbd
rm -f "$RUNDIR/slurmd" "$RUNDIR/slurmctld" "$RUNDIR/slurmdbd"

if ours mariadb; then
    if mariadb-admin ping >/dev/null 2>&1; then
        log "stopping mariadb"
        mariadb-admin shutdown 2>/dev/null || /etc/init.d/mariadb stop >/dev/null 2>&1
    fi
    rm -f "$RUNDIR/mariadb"
else
    log "mariadb was not started by start_cluster.sh; leaving it running"
fi

if ours munged; then
    p=$(cat /run/munge/munged.pid 2>/dev/null)
    if [[ -n ${p:-} ]] && kill -0 "$p" 2>/dev/null; then
        stop_pidfile /run/munge/munged.pid munged
    fi
    rm -f "$RUNDIR/munged"
else
    log "munged was not started by start_cluster.sh; leaving it running"
fi
log "stopped"
