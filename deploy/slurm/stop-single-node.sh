#!/usr/bin/env bash
# stop-single-node.sh - stop what start-single-node.sh started: cancel jobs, then slurmd + slurmctld,
# then munged. Stops by PID (from the pid files), never by process name.
# Packages, config, state and logs stay, so start-single-node.sh can bring it back.
set -uo pipefail
RUNDIR=/run/slurm-ci
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
t0=$(date +%s.%N)
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }
alive() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null) && [[ $s != Z* ]]; }  # zombie = gone
pid_of() {  # PIDFILE COMM -> pid if the file names a live process with that comm
  local p; [ -s "$1" ] && p=$(cat "$1") && alive "$p" &&
    [ "$(cat /proc/"$p"/comm 2>/dev/null)" = "$2" ] && echo "$p"; }
stop_pids() {  # send TERM, wait up to 15 s, then KILL
  local p i
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null
  for i in $(seq 1 150); do
    local any=0; for p in "$@"; do alive "$p" && any=1; done
    [ $any = 0 ] && return 0; sleep 0.1
  done
  for p in "$@"; do alive "$p" && kill -KILL "$p" 2>/dev/null; done
}

ctld=$(pid_of $RUNDIR/slurmctld.pid slurmctld || true)
slurmd=$(pid_of $RUNDIR/slurmd.pid slurmd || true)
munged=$(pid_of /run/munge/munged.pid munged || true)

# 1. cancel running/pending jobs so no slurmstepd is left behind
if [ -n "$ctld" ]; then
  jobs=$(squeue -h -o %A 2>/dev/null | sort -u)
  if [ -n "$jobs" ]; then
    scancel $jobs 2>/dev/null
    for i in $(seq 1 100); do [ -z "$(squeue -h -o %A 2>/dev/null)" ] && break; sleep 0.1; done
  fi
fi
# 2. slurmd + slurmctld together, 3. munged last (they use it while shutting down)
stop_pids $slurmd $ctld
stop_pids $munged
rm -f $RUNDIR/slurmctld.pid $RUNDIR/slurmd.pid
echo "[$(elapsed)s] slurm stopped (slurmd=${slurmd:-none} slurmctld=${ctld:-none} munged=${munged:-none})"
