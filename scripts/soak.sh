#!/usr/bin/env bash
# Soaks s3seal: real clients (rclone sync and check --download, restic
# backup/check --read-data/restore, aws CLI multipart up, copy and down, LFS
# produces and downloads) run concurrently in loops through s3seal in front
# of moto behind a fault proxy that fails a share of backend requests at
# random, in every shape a real store produces. Ends with a summary table
# (also in the file --summary names); exits non-zero when a client failed
# after its own retries, a read-back differed, or s3seal gc found leftovers.
#
#   bash scripts/soak.sh [--duration 10m] [--seed N] [--rate 0.1]
#                        [--no-stalls] [--backend-timeout 3s] [--summary FILE]
#
# The run is e2e's TestSoak (go test ./e2e/ runs its 90-second form). The
# seed is printed first: the same seed gives every operation the same
# faults in the same order (concurrent clients still interleave as they
# will). The stall shapes (requests never answered, uploads no longer
# read, bodies that stop) run with s3seal's backend timeouts set to
# --backend-timeout; --no-stalls leaves them out.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "soak.sh: $*" >&2; exit 2; }

duration=10m seed="" rate=0.1 stalls=1 timeout=3s summary=""
while (($#)); do
	case $1 in
	--duration) duration=${2:?--duration needs a value}; shift 2 ;;
	--seed) seed=${2:?--seed needs a value}; shift 2 ;;
	--rate) rate=${2:?--rate needs a value}; shift 2 ;;
	--no-stalls) stalls=0; shift ;;
	--backend-timeout) timeout=${2:?--backend-timeout needs a value}; shift 2 ;;
	--summary) summary=${2:?--summary needs a value}; shift 2 ;;
	-h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done
[[ -z $seed ]] && seed=$((RANDOM * 32768 + RANDOM))
[[ $seed =~ ^[0-9]+$ ]] || die "--seed $seed: want a number"
# The go test timeout: the duration, plus the clients' last round and the
# final gc (each client command is bounded at 10 minutes).
[[ $duration =~ ^([0-9]+[hms])+$ ]] || die "--duration $duration: want a duration such as 90s, 10m, 1h or 1h30m"
secs=0 rest=$duration
while [[ $rest =~ ^([0-9]+)([hms])(.*)$ ]]; do
	n=$((10#${BASH_REMATCH[1]}))
	case ${BASH_REMATCH[2]} in h) n=$((n * 3600)) ;; m) n=$((n * 60)) ;; esac
	secs=$((secs + n)) rest=${BASH_REMATCH[3]}
done
((secs > 0)) || die "--duration $duration: want more than 0s"
gotimeout=$((secs + 30 * 60))s
[[ -n $summary ]] || summary=$(mktemp -t s3seal-soak-summary.XXXXXX)

# shellcheck source=scripts/test-tools.sh
source scripts/test-tools.sh

echo "soak.sh: seed $seed, duration $duration, fault rate $rate, stalls $([[ $stalls == 1 ]] && echo "on (backend timeouts $timeout)" || echo off)"
echo "soak.sh: replay with: bash scripts/soak.sh --seed $seed --duration $duration --rate $rate$([[ $stalls == 1 ]] && echo " --backend-timeout $timeout" || echo " --no-stalls")"
log=${summary%.txt}.log
rc=0
S3SEAL_SOAK_DURATION=$duration S3SEAL_SOAK_SEED=$seed S3SEAL_SOAK_RATE=$rate S3SEAL_SOAK_STALLS=$stalls \
	S3SEAL_SOAK_BACKEND_TIMEOUT=$timeout S3SEAL_SOAK_SUMMARY=$summary \
	go test ./e2e/ -run '^TestSoak$' -count=1 -timeout "$gotimeout" -v >"$log" 2>&1 || rc=$?
grep -E '^\s+soak_test.go:[0-9]+: soak' "$log" || true
echo
if [[ -s $summary ]]; then
	cat "$summary"
	echo
	echo "soak.sh: summary in $summary, full log in $log"
else
	tail -50 "$log"
	echo "soak.sh: no summary was written; full log in $log"
fi
if ((rc != 0)); then
	grep -E -A3 'soak FAILURE|--- FAIL|s3seal gc:' "$log" | head -60 || true
	echo "soak.sh: FAILED (seed $seed)"
	exit 1
fi
echo "soak.sh: passed (seed $seed)"
