#!/usr/bin/env bash
# Bring up a one-node SLURM test cluster on this machine, for tests/workflow/test_slurm.py.
#
#   munged -> MariaDB -> slurmdbd (accounting, so that `sacct` works) -> slurmctld -> slurmd
#   one node (this host), partition `debug` (default), one fake GPU (gres/gpu without a device file),
#   cluster `medfc`, account `medfc`, user root (and $SUDO_USER, if any) in that account.
#
# Run as root (CI: `.ci/run` runs it before pytest). Idempotent: a second run only starts what is not
# running, and restarts daemons whose config changed. Debian packages are installed if missing.
# It never overwrites a slurm.conf/slurmdbd.conf/gres.conf that it did not write itself (it checks for
# the marker line below), so it is safe to run by accident on a machine with a real SLURM.
#
# Settings (environment):
#   MEDFC_SLURM_LOGDIR   where this script and the daemons log   (default /var/log/slurm)
#   MEDFC_SLURM_CPUS     CPUs the node announces                  (default: nproc)
#   MEDFC_SLURM_GPUS     fake GPUs the node announces             (default 1)
#   MEDFC_SLURM_NO_INSTALL=1  fail instead of running apt-get when a package is missing
#
# Stop everything with scripts/slurm/stop_cluster.sh.
set -euo pipefail

MARKER="# managed-by: medfc scripts/slurm/start_cluster.sh"
LOGDIR=${MEDFC_SLURM_LOGDIR:-/var/log/slurm}
LOG="$LOGDIR/medfc-start_cluster.log"
ETC=/etc/slurm
STATE=/var/lib/slurm
RUNDIR=/run/medfc-slurm # records which daemons this script started (stop_cluster.sh reads it)
CLUSTER=medfc
ACCOUNT=medfc
PARTITION=debug
DB=slurm_acct_db
DBUSER=slurm

mkdir -p "$LOGDIR" "$RUNDIR"
exec > >(tee -a "$LOG") 2>&1
T0=$(date +%s)
log() { printf '[start_cluster %s +%ss] %s\n' "$(date +%H:%M:%S)" "$(($(date +%s) - T0))" "$*"; }
die() {
    log "ERROR: $*"
    log "logs: $LOG and $LOGDIR/{slurmctld,slurmd,slurmdbd}.log"
    exit 1
}
log "log file: $LOG"

[[ $(id -u) -eq 0 ]] || die "must run as root (it installs packages and starts system daemons)"
[[ $(uname -s) == Linux ]] || die "Linux only"

# --------------------------------------------------------------------------- packages
need=()
for pair in munged:munge slurmctld:slurmctld slurmd:slurmd slurmdbd:slurmdbd sbatch:slurm-client \
    mariadbd:mariadb-server mariadb:mariadb-client; do
    bin=${pair%%:*}
    pkg=${pair#*:}
    command -v "$bin" >/dev/null 2>&1 || [[ -x /usr/sbin/$bin ]] || need+=("$pkg")
done
# the MySQL accounting plugin comes with slurmdbd; keep the generic gres plugins explicit
dpkg -s slurm-wlm-basic-plugins >/dev/null 2>&1 || need+=(slurm-wlm-basic-plugins)
if ((${#need[@]})); then
    [[ ${MEDFC_SLURM_NO_INSTALL:-0} == 1 ]] && die "missing packages: ${need[*]} (MEDFC_SLURM_NO_INSTALL=1)"
    log "installing: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # policy-rc.d 101: the package scripts must not start daemons with the default config
    policy=/usr/sbin/policy-rc.d
    had_policy=0
    [[ -e $policy ]] && had_policy=1
    if [[ $had_policy == 0 ]]; then printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"; fi
    if ! apt-get install -y --no-install-recommends "${need[@]}" >>"$LOG" 2>&1; then
        apt-get update >>"$LOG" 2>&1
        apt-get install -y --no-install-recommends "${need[@]}" >>"$LOG" 2>&1 ||
            { [[ $had_policy == 1 ]] || rm -f "$policy"; die "apt-get install ${need[*]} failed"; }
    fi
    [[ $had_policy == 1 ]] || rm -f "$policy"
    log "installed"
fi

# --------------------------------------------------------------------------- config
HOST=$(hostname -s)
CPUS=${MEDFC_SLURM_CPUS:-$(nproc)}
GPUS=${MEDFC_SLURM_GPUS:-1}
TOTAL_MB=$(free -m | awk '/^Mem:/ {print $2}')
MEM=$((TOTAL_MB - (TOTAL_MB / 20 > 512 ? TOTAL_MB / 20 : 512))) # leave 5 % (>= 512 MB) to the OS
((MEM > 256)) || MEM=256

CHANGED=() # names of config files that changed -> their daemons restart

# install_conf FILE MODE OWNER: moves $FILE.new over FILE if different; refuses foreign files
install_conf() {
    local f=$1 mode=$2 owner=$3
    if [[ -e $f ]] && ! grep -qxF "$MARKER" "$f"; then
        rm -f "$f.new"
        die "$f exists and was not written by this script; refusing to overwrite (move it away first)"
    fi
    if [[ -e $f ]] && cmp -s "$f.new" "$f"; then
        rm -f "$f.new"
    else
        mv "$f.new" "$f"
        CHANGED+=("$(basename "$f")")
        log "wrote $f"
    fi
    chmod "$mode" "$f"
    chown "$owner" "$f"
}

mkdir -p "$ETC"
cat >"$ETC/slurm.conf.new" <<EOF
$MARKER
# One-node test cluster. See docs/slurm.md.
ClusterName=$CLUSTER
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=$STATE/slurmctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$LOGDIR/slurmctld.log
SlurmdLogFile=$LOGDIR/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MpiDefault=none
MailProg=/bin/true
# no cgroups: works in containers and VMs without a delegated cgroup tree
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=10
# cons_tres is what makes --gpus / --gpus-per-task / --cpus-per-gpu work
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# jobs without --mem get 1 GB per CPU instead of the whole node (so they can run side by side)
DefMemPerCPU=1024
SchedulerType=sched/backfill
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageTRES=gres/gpu
AccountingStorageEnforce=associations
# keep --comment (snakemake-executor-plugin-slurm writes rule_<rule>[_wildcards_<values>] there)
AccountingStoreFlags=job_comment
JobCompType=jobcomp/none
# finished jobs stay visible to squeue for 5 minutes (sacct keeps them for good)
MinJobAge=300
ReturnToService=2
KillWait=5
InactiveLimit=0
# trust the numbers below rather than the hardware probe (the node must not drain on a mismatch)
SlurmdParameters=config_overrides
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM Gres=gpu:$GPUS State=UNKNOWN
PartitionName=$PARTITION Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
install_conf "$ETC/slurm.conf" 644 root:root

# A fake GPU. SLURM 22.05 rejects a count-only gpu gres ("gres/gpu count reported lower than
# configured (0 < 1)", node INVALID), so it is bound to /dev/null. Jobs asking for --gpus=N /
# --gres=gpu:N are accepted and scheduled; they see CUDA_VISIBLE_DEVICES=0 and no real device.
cat >"$ETC/gres.conf.new" <<EOF
$MARKER
AutoDetect=off
NodeName=$HOST Name=gpu File=/dev/null Count=$GPUS
EOF
install_conf "$ETC/gres.conf" 644 root:root

# cgroup.conf is read by some plugins even when cgroups are not used; keep it harmless
cat >"$ETC/cgroup.conf.new" <<EOF
$MARKER
CgroupPlugin=autodetect
EOF
install_conf "$ETC/cgroup.conf" 644 root:root

if [[ -e $ETC/slurmdbd.conf ]] && grep -qxF "$MARKER" "$ETC/slurmdbd.conf"; then
    DBPASS=$(sed -n 's/^StoragePass=//p' "$ETC/slurmdbd.conf")
fi
DBPASS=${DBPASS:-$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')}
umask 077
cat >"$ETC/slurmdbd.conf.new" <<EOF
$MARKER
AuthType=auth/munge
DbdHost=localhost
SlurmUser=slurm
PidFile=/run/slurmdbd.pid
LogFile=$LOGDIR/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=$DBUSER
StoragePass=$DBPASS
StorageLoc=$DB
EOF
umask 022
install_conf "$ETC/slurmdbd.conf" 600 slurm:slurm

changed() { # changed FILE...: true if any of the files changed in this run
    local c f
    for f in "$@"; do for c in "${CHANGED[@]+"${CHANGED[@]}"}"; do [[ $c == "$f" ]] && return 0; done; done
    return 1
}

install -d -o slurm -g slurm "$STATE/slurmctld" "$LOGDIR"
install -d "$STATE/slurmd"
touch "$LOGDIR/slurmctld.log" "$LOGDIR/slurmdbd.log" "$LOGDIR/slurmd.log"
chown slurm:slurm "$LOGDIR/slurmctld.log" "$LOGDIR/slurmdbd.log"

log "$(dpkg-query -W -f '${Package} ${Version}' slurmctld), $(dpkg-query -W -f '${Package} ${Version}' mariadb-server)"

# --------------------------------------------------------------------------- daemons
pid_alive() { local p; p=$(cat "$1" 2>/dev/null) && [[ -n $p ]] && kill -0 "$p" 2>/dev/null; }

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
    local t=$1 what=$2
    shift 2
    local i
    for ((i = 0; i < t * 4; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.25
    done
    die "timed out after ${t}s waiting for $what"
}

stop_pidfile() { # stop_pidfile PIDFILE NAME
    local p i
    p=$(cat "$1" 2>/dev/null) && [[ -n $p ]] && kill -0 "$p" 2>/dev/null || return 0
    log "stopping $2 (config changed)"
    kill "$p" 2>/dev/null || true
    for ((i = 0; i < 80; i++)); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.25; done
    kill -9 "$p" 2>/dev/null || true
}

started() { touch "$RUNDIR/$1"; }

# munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    if [[ ! -s /etc/munge/munge.key ]]; then
        log "creating munge key"
        mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null ||
            dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
    fi
    chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
    install -d -o munge -g munge -m 755 /run/munge
    install -d -o munge -g munge -m 700 /var/log/munge /var/lib/munge
    log "starting munged"
    runuser -u munge -- /usr/sbin/munged
    started munged
    wait_for 10 munged bash -c 'munge -n | unmunge'
fi
log "munged ok"

# MariaDB
if ! mariadb-admin ping >/dev/null 2>&1; then
    log "starting mariadb"
    install -d -o mysql -g mysql /run/mysqld
    if [[ ! -d /var/lib/mysql/mysql ]]; then
        mariadb-install-db --user=mysql --datadir=/var/lib/mysql >>"$LOG" 2>&1
    fi
    if [[ -x /etc/init.d/mariadb ]]; then
        # setsid: the server must outlive the shell (and session) that started it
        setsid /etc/init.d/mariadb start >>"$LOG" 2>&1 || true
    fi
    if ! mariadb-admin ping >/dev/null 2>&1; then
        (setsid mariadbd-safe --user=mysql >>"$LOGDIR/mariadb.log" 2>&1 &)
    fi
    started mariadb
    wait_for 60 mariadb mariadb-admin ping
fi
log "mariadb ok"
mariadb <<EOF
CREATE DATABASE IF NOT EXISTS $DB;
CREATE USER IF NOT EXISTS '$DBUSER'@'localhost' IDENTIFIED BY '$DBPASS';
ALTER USER '$DBUSER'@'localhost' IDENTIFIED BY '$DBPASS';
GRANT ALL ON $DB.* TO '$DBUSER'@'localhost';
FLUSH PRIVILEGES;
EOF

# slurmdbd
changed slurmdbd.conf && stop_pidfile /run/slurmdbd.pid slurmdbd
if ! pid_alive /run/slurmdbd.pid; then
    log "starting slurmdbd"
    /usr/sbin/slurmdbd
    started slurmdbd
fi
wait_for 60 "slurmdbd (sacctmgr)" sacctmgr -n list cluster
log "slurmdbd ok"

# cluster, account, users: before slurmctld starts, so that it registers with its cluster
sacctmgr -n list cluster format=cluster | grep -qw "$CLUSTER" ||
    { log "sacctmgr add cluster $CLUSTER"; sacctmgr -i add cluster "$CLUSTER" >>"$LOG"; }
sacctmgr -n list account format=account | grep -qw "$ACCOUNT" ||
    {
        log "sacctmgr add account $ACCOUNT"
        sacctmgr -i add account "$ACCOUNT" cluster="$CLUSTER" description="medfc test" organization=medfc >>"$LOG"
    }
for u in root ${SUDO_USER:-}; do
    sacctmgr -n list assoc where user="$u" account="$ACCOUNT" cluster="$CLUSTER" format=user | grep -qw "$u" ||
        {
            log "sacctmgr add user $u account=$ACCOUNT"
            sacctmgr -i add user "$u" account="$ACCOUNT" defaultaccount="$ACCOUNT" cluster="$CLUSTER" >>"$LOG"
        }
done

# slurmctld
changed slurm.conf gres.conf cgroup.conf && stop_pidfile /run/slurmctld.pid slurmctld
if ! pid_alive /run/slurmctld.pid; then
    log "starting slurmctld"
    /usr/sbin/slurmctld
    started slurmctld
fi
wait_for 60 slurmctld scontrol ping
log "slurmctld ok"

# slurmd
changed slurm.conf gres.conf cgroup.conf && stop_pidfile /run/slurmd.pid slurmd
if ! pid_alive /run/slurmd.pid; then
    log "starting slurmd"
    /usr/sbin/slurmd
    started slurmd
fi

node_state() { sinfo -h -n "$HOST" -o %T 2>/dev/null | head -1; }
node_usable() { [[ $(node_state) =~ ^(idle|mixed|allocated|completing)$ ]]; }
for ((i = 0; i < 120; i++)); do
    node_usable && break
    st=$(node_state)
    if [[ $st =~ drain|down|fail ]] && ((i % 8 == 7)); then
        log "node $HOST is $st ($(scontrol show node "$HOST" | sed -n 's/.*Reason=//p')); resuming"
        scontrol update nodename="$HOST" state=resume >>"$LOG" 2>&1 || true
    fi
    sleep 0.25
done
node_usable || die "node $HOST not usable: $(sinfo -N -l 2>&1 | tail -n +2)"
log "node $HOST is $(node_state): CPUs=$CPUS RealMemory=$MEM gres=gpu:$GPUS"

# --------------------------------------------------------------------------- smoke test
log "smoke test: sbatch --wait --wrap true; and the same with --gpus=1"
out=$(timeout 60 sbatch --parsable --wait -p "$PARTITION" -A "$ACCOUNT" -o /dev/null --wrap true 2>&1) ||
    die "sbatch --wrap true failed: $out"
gout=$(timeout 60 sbatch --parsable --wait -p "$PARTITION" -A "$ACCOUNT" --gpus=1 -o /dev/null --wrap true 2>&1) ||
    die "sbatch --gpus=1 --wrap true failed: $gout"
# the accounting record can lag a second behind the job's end
wait_for 30 "sacct to record job $out" bash -c "sacct -X -n -P -j ${out%%;*} -o State | grep -q COMPLETED"
log "jobs ${out%%;*} and ${gout%%;*} completed; sacct sees them"
log "cluster up in $(($(date +%s) - T0))s: partition=$PARTITION account=$ACCOUNT cluster=$CLUSTER"
log "logs: $LOG, $LOGDIR/slurmctld.log, $LOGDIR/slurmd.log, $LOGDIR/slurmdbd.log"
