#!/bin/sh
# slurm-sweep.sh runs a `ptoasm sweep` as a Slurm array job on a one-node
# Slurm cluster it starts itself (munged, slurmctld and slurmd from Debian's
# slurm-wlm and munge packages), merges the shards with `ptoasm sweep merge`
# and checks that the merge is byte for byte what one process prints, as a
# table and as JSON. It is the test of docs/sweep.md's "Slurm array job";
# cmd/ptoasm's TestSlurmSweep runs it.
#
#   scripts/slurm-sweep.sh [SHARDS]         (as root; default 3 shards)
#
# PTOASM names the ptoasm command (default: ptoasm on PATH). Every daemon
# runs from a temporary directory on ports of its own, and is stopped on
# exit. Exit status: 0 the merge matched; 1 it did not (or a step failed);
# 77 Slurm could not be started here (missing packages, not root, a daemon
# that would not come up): the reason is on stderr.
set -eu
shards=${1:-3}
ptoasm=${PTOASM:-ptoasm}
# The sweep: 6 points, so 3 shards hold 2 each (and more shards leave some
# empty, which merge must also handle). A data run, goldens checked.
set -- gemm_db --set dma.gm_l1.bw=64,128 -D K=256,512,1024

skip() {
	echo "slurm-sweep: skipped: $*" >&2
	exit 77
}
for cmd in munged mungekey slurmctld slurmd sbatch sinfo; do
	command -v "$cmd" >/dev/null 2>&1 || skip "$cmd not found (apt-get install slurm-wlm munge)"
done
[ "$(id -u)" = 0 ] || skip "the daemons need root (slurmd starts jobs as their user)"

dir=$(mktemp -d /tmp/ptoasm-slurm.XXXXXX)
chmod 755 "$dir"
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	for p in $pids; do
		# Wait (bounded) for each daemon to go, so the directory can be removed.
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	done
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# munge: a fresh key and a socket of this cluster's own.
mkdir -m 700 "$dir/munge"
mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null 2>&1 || skip "mungekey could not create a key"
munged --force --foreground --key-file="$dir/munge/munge.key" --socket="$dir/munge/socket" \
	--pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
	--seed-file="$dir/munge/seed" >/dev/null 2>&1 &
pids="$pids $!"

# Ports of this run's own, so runs side by side (or a system Slurm) do not meet.
base=$((20000 + $$ % 20000))
host=$(hostname -s)
cpus=$(nproc)
mkdir "$dir/state" "$dir/spool" "$dir/out"
cat >"$dir/slurm.conf" <<EOF
ClusterName=ptoasmci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=ptoasm-ci NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=ci Nodes=ptoasm-ci Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF="$dir/slurm.conf"

i=0
until [ -S "$dir/munge/socket" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || skip "munged did not start: $(tail -n 3 "$dir/munge/munged.log" 2>/dev/null)"
	sleep 0.1
done
slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
pids="$pids $!"
slurmd -D -N ptoasm-ci -f "$SLURM_CONF" >"$dir/slurmd.out" 2>&1 &
pids="$pids $!"
i=0
until sinfo -h -n ptoasm-ci -o %t 2>/dev/null | grep -qx 'idle'; do
	i=$((i + 1))
	if [ $i -ge 300 ]; then
		echo "--- slurmctld.log" >&2
		tail -n 20 "$dir/slurmctld.log" >&2 2>/dev/null || true
		echo "--- slurmd.log" >&2
		tail -n 20 "$dir/slurmd.log" >&2 2>/dev/null || true
		skip "the Slurm node did not become idle in 30 s"
	fi
	sleep 0.1
done

# The array job: docs/sweep.md's script, with this sweep.
cat >"$dir/sweep.sh" <<EOF
#!/bin/sh
#SBATCH --job-name=ptoasm-sweep
#SBATCH --array=0-$((shards - 1))
#SBATCH --output=$dir/out/shard-%a.log
$ptoasm sweep $* --shard "\$SLURM_ARRAY_TASK_ID/$shards" --format json > "$dir/out/shard-\$SLURM_ARRAY_TASK_ID.json"
EOF
cd "$dir/out"
echo "slurm-sweep: sbatch --array=0-$((shards - 1)): ptoasm sweep $*" >&2
# --wait returns when every task has ended; a task whose points failed exits
# 1 with its JSON complete, so the merge below is the verdict.
sbatch --wait --quiet "$dir/sweep.sh" || true
for k in $(seq 0 $((shards - 1))); do
	if [ ! -s "shard-$k.json" ]; then
		echo "slurm-sweep: shard $k wrote no JSON; its log:" >&2
		cat "shard-$k.log" >&2 2>/dev/null || true
		exit 1
	fi
done

"$ptoasm" sweep merge shard-*.json >merged.txt || true
"$ptoasm" sweep merge --format json shard-*.json >merged.json || true
"$ptoasm" sweep "$@" >single.txt || true
"$ptoasm" sweep "$@" --format json >single.json || true
status=0
for f in txt json; do
	if cmp -s "single.$f" "merged.$f"; then
		echo "slurm-sweep: $shards shards merged ($f) = one process, byte for byte" >&2
	else
		echo "slurm-sweep: the merged $f differs from one process's:" >&2
		diff "single.$f" "merged.$f" >&2 || true
		status=1
	fi
done
[ -s single.txt ] || { echo "slurm-sweep: the single-process sweep printed nothing" >&2; status=1; }
cat merged.txt
exit $status
