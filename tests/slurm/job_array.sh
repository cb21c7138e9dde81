#!/usr/bin/env bash
# CTest slurm.JobArray (label slurm): `attnscope slurm` against a real single-node Slurm. munged,
# slurmctld and slurmd run as this user from a temporary directory with a generated key and
# slurm.conf on free ports, and are all stopped on exit. Checks:
#   1. a 2-shard array on the CPU backend plus its merge job gives the case set (ids, statuses) of
#      a single-process run of the same sweep;
#   2. a shard cancelled with scancel is reported missing by the merge job, and
#      `attnscope run --resume DIR/merged` runs only the missing cases, giving the same case set;
#   3. a shard killed by scancel while it measures leaves a partial shard whose missing cases the
#      merge job lists, and the resume completes the plan.
# Exit 77 (skipped) with the reason when the Slurm or munge programs are not installed.
# Usage: job_array.sh ATTNSCOPE_BINARY   (KEEP_SLURM_TMP=1 keeps the temporary directory)
set -uo pipefail
ATTNSCOPE=$(realpath "${1:?usage: job_array.sh ATTNSCOPE_BINARY}")

absent=()
for p in munged munge slurmctld slurmd sbatch squeue scancel scontrol sinfo jq; do
  command -v "$p" >/dev/null || [[ -x /usr/sbin/$p ]] || absent+=("$p")
done
if ((${#absent[@]})); then
  echo "skipped: ${absent[*]} not installed (Debian packages slurm-wlm munge jq; scripts/setup-deps.sh)"
  exit 77
fi
PATH=$PATH:/usr/sbin

T=$(mktemp -d /tmp/attnscope-slurm.XXXXXX)
# munged needs the socket's directories searchable by all.
chmod 755 "$T"
mkdir -p "$T/munge" "$T/state" "$T/spool" "$T/log"
mkdir -m 755 "$T/msock"
chmod 700 "$T/munge"
pids=()

fail() {
  echo "FAIL: $*"
  for f in "$T"/log/* "$T"/munge/log; do [[ -f $f ]] && { echo "---- $f"; tail -n 30 "$f"; }; done
  exit 1
}

# Every job first (a job's slurmstepd outlives slurmd), then the daemons, newest first.
cleanup() {
  local rc=$?
  if [[ -f $T/slurm.conf ]] && kill -0 "${pids[1]:-0}" 2>/dev/null; then
    local jobs
    mapfile -t jobs < <(squeue -h -o %A 2>/dev/null | sort -u)
    ((${#jobs[@]})) && scancel --full "${jobs[@]}" 2>/dev/null
    for _ in $(seq 1 40); do [[ -z $(squeue -h -o %A 2>/dev/null) ]] && break; sleep 0.25; done
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2>/dev/null
    for _ in $(seq 1 40); do kill -0 "${pids[i]}" 2>/dev/null || break; sleep 0.25; done
    kill -9 "${pids[i]}" 2>/dev/null
    wait "${pids[i]}" 2>/dev/null
  done
  local left=()
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left+=("$p"); done
  ((${#left[@]})) && { echo "FAIL: daemons still running: ${left[*]}"; rc=1; }
  ((${#left[@]})) || echo "all daemons stopped (${#pids[@]})"
  if [[ ${KEEP_SLURM_TMP:-0} == 1 ]]; then echo "kept $T"; else rm -rf "$T"; fi
  exit $rc
}
trap cleanup EXIT

# A port nothing listens on (bash's /dev/tcp connect is refused).
free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % 40000))
    (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo $p; return; }
  done
  fail "no free TCP port found"
}

head -c 1024 /dev/urandom >"$T/munge/key"
chmod 600 "$T/munge/key"
# --force: munged refuses some temp-dir layouts (e.g. a group-writable parent) without it.
munged -F --force --key-file="$T/munge/key" --socket="$T/msock/sock" --pid-file="$T/munge/pid" \
  --log-file="$T/munge/log" --seed-file="$T/munge/seed" >"$T/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 40); do [[ -S $T/msock/sock ]] && break; sleep 0.25; done
munge -S "$T/msock/sock" -n | unmunge -S "$T/msock/sock" >/dev/null || fail "munged does not answer"

ctld_port=$(free_port)
slurmd_port=$(free_port)
while [[ $slurmd_port == "$ctld_port" ]]; do slurmd_port=$(free_port); done
user=$(id -un)
cat >"$T/slurm.conf" <<EOF
ClusterName=attnscope-test
SlurmctldHost=localhost
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$T/msock/sock
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
NodeName=localhost CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$T/slurm.conf
slurmctld -D -f "$SLURM_CONF" >"$T/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" >"$T/log/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 120); do
  [[ $(sinfo -h -n localhost -o %t 2>/dev/null) == idle ]] && break
  sleep 0.25
done
[[ $(sinfo -h -n localhost -o %t 2>/dev/null) == idle ]] || fail "the node did not come up idle: $(sinfo 2>&1)"
echo "slurm up: slurmctld :$ctld_port, slurmd :$slurmd_port"

# Waits until none of the given jobs is pending or running.
wait_jobs() {
  for _ in $(seq 1 240); do
    [[ -z $(squeue -h -o %i -j "$1" 2>/dev/null) ]] && return 0
    sleep 0.5
  done
  fail "jobs $1 still queued after 120 s: $(squeue 2>&1)"
}
case_set() { jq -c 'select(.record != "run") | [.case_id, .status]' "$1" | sort; }

# shellcheck disable=SC2054  # the commas are attnscope's list syntax
sweep=(--backend cpu --kernels cpu.reference,cpu.flash --batch 1 --heads 2 --head-dim 32 --seq 64,128
  --causal 0,1 --dtype fp32 --max-time-s 0.05 --warmup-ms 1)
"$ATTNSCOPE" run "${sweep[@]}" --quiet --out "$T/single" >/dev/null 2>&1 || fail "single-process run"
expected=$(case_set "$T/single/results.jsonl")
n_cases=$(wc -l <<<"$expected")
((n_cases == 8)) || fail "the single run has $n_cases cases, expected 8"

# 1. the whole array and its merge job
"$ATTNSCOPE" slurm "${sweep[@]}" --shards 2 --partition debug --time 5 --out "$T/a" >"$T/a.out" 2>&1 ||
  fail "attnscope slurm: $(cat "$T/a.out")"
cat "$T/a.out"
read -r _ array_id < <(grep '^array ' "$T/a/jobs.txt")
read -r _ merge_id < <(grep '^merge ' "$T/a/jobs.txt")
wait_jobs "$array_id,$merge_id"
for k in 1 2; do
  [[ -f $T/a/shard-$k/results.jsonl ]] || fail "shard $k wrote no results: $(cat "$T/a/logs/shard-$k.out")"
done
grep -q "merged 2 inputs: $n_cases cases" "$T/a/logs/merge.out" || fail "merge job: $(cat "$T/a/logs/merge.out")"
[[ $(case_set "$T/a/merged/results.jsonl") == "$expected" ]] ||
  fail "merged case set differs from the single run's: $(diff <(echo "$expected") <(case_set "$T/a/merged/results.jsonl"))"
echo "ok: 2-shard array + merge job == single run ($n_cases cases)"

# 2. shard 2 cancelled with scancel (held, so it is cancelled before it runs: the same every time)
"$ATTNSCOPE" slurm "${sweep[@]}" --shards 2 --sbatch-arg=--hold --out "$T/b" >"$T/b.out" 2>&1 ||
  fail "attnscope slurm: $(cat "$T/b.out")"
read -r _ array_id < <(grep '^array ' "$T/b/jobs.txt")
read -r _ merge_id < <(grep '^merge ' "$T/b/jobs.txt")
scancel "${array_id}_2" || fail "scancel ${array_id}_2"
scontrol release "$array_id" || fail "scontrol release $array_id"
wait_jobs "$array_id,$merge_id"
grep -q "missing shards: 2/2" "$T/b/logs/merge.out" || fail "merge did not report shard 2/2: $(cat "$T/b/logs/merge.out")"
shard1=$(case_set "$T/b/shard-1/results.jsonl" | wc -l)
missing=$((n_cases - shard1))
((shard1 > 0 && missing > 0)) || fail "shard 1 ran $shard1 of $n_cases cases"
grep -q "$missing planned cases have no result" "$T/b/logs/merge.out" ||
  fail "merge did not report $missing missing cases: $(cat "$T/b/logs/merge.out")"
[[ $(case_set "$T/b/merged/results.jsonl" | wc -l) == "$shard1" ]] || fail "merged holds other than shard 1's cases"
"$ATTNSCOPE" run --resume "$T/b/merged" >"$T/resume.out" 2>&1 || fail "resume: $(cat "$T/resume.out")"
grep -q "$shard1 already finished" "$T/resume.out" || fail "resume did not keep shard 1's $shard1 cases: $(cat "$T/resume.out")"
[[ $(case_set "$T/b/merged/results.jsonl") == "$expected" ]] ||
  fail "resumed case set differs from the single run's: $(diff <(echo "$expected") <(case_set "$T/b/merged/results.jsonl"))"
echo "ok: cancelled shard reported missing ($missing cases), resumed to the single run's case set"

# 3. shard 2 killed by scancel mid-shard (cases of ~0.3 s: it is cancelled after its first result)
# shellcheck disable=SC2054
slow=(--backend cpu --kernels cpu.reference,cpu.flash --batch 1 --heads 2 --head-dim 32 --seq 64,96,128,160
  --causal 0,1 --dtype fp32 --warmup-ms 1 --max-time-s 0.3 --noise 0.001)
"$ATTNSCOPE" slurm "${slow[@]}" --shards 2 --out "$T/c" >"$T/c.out" 2>&1 || fail "attnscope slurm: $(cat "$T/c.out")"
read -r _ array_id < <(grep '^array ' "$T/c/jobs.txt")
read -r _ merge_id < <(grep '^merge ' "$T/c/jobs.txt")
for _ in $(seq 1 600); do
  [[ -f $T/c/shard-2/results.jsonl ]] && (($(wc -l <"$T/c/shard-2/results.jsonl") >= 2)) && break
  sleep 0.05
done
scancel "${array_id}_2" || fail "scancel ${array_id}_2"
wait_jobs "$array_id,$merge_id"
planned=$(jq -r 'select(.record != "plan") | .case_id' "$T/c/plan.jsonl" | sort)
n_planned=$(wc -l <<<"$planned")
partial=$(case_set "$T/c/shard-2/results.jsonl" | wc -l)
shard1=$(case_set "$T/c/shard-1/results.jsonl" | wc -l)
missing=$((n_planned - shard1 - partial))
((partial >= 1 && missing >= 1)) || fail "shard 2 was not cut short: $partial results, $missing missing"
grep -q "$missing planned cases have no result" "$T/c/logs/merge.out" ||
  fail "merge did not report $missing missing cases: $(cat "$T/c/logs/merge.out")"
"$ATTNSCOPE" run --resume "$T/c/merged" >"$T/resume-c.out" 2>&1 || fail "resume: $(cat "$T/resume-c.out")"
grep -q "$((shard1 + partial)) already finished" "$T/resume-c.out" ||
  fail "resume did not keep the $((shard1 + partial)) finished cases: $(cat "$T/resume-c.out")"
[[ $(jq -r 'select(.record != "run") | .case_id' "$T/c/merged/results.jsonl" | sort) == "$planned" ]] ||
  fail "the resumed run does not hold each planned case once"
[[ -z $(jq -r 'select(.record != "run" and .status != "ok") | .case_id' "$T/c/merged/results.jsonl") ]] ||
  fail "cases not ok after the resume"
echo "ok: shard killed after $partial of its cases; merge listed $missing missing; the resume completed $n_planned"
