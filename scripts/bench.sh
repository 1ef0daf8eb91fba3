#!/usr/bin/env bash
# Benchmarks s3seal against the store underneath it, side by side in one
# run, and prints the cost of encryption as ratios (sealed time / direct
# time; 1.00 = free). Absolute numbers on a shared machine mean little;
# ratios from one run do. Usage: scripts/bench.sh [go test -bench flags...]
#
#   scripts/bench.sh multipart   instead: 8 concurrent 1 GiB multipart
#   uploads through the s3seal binary and straight to the store under it,
#   with s3seal's peak RSS growth (needs about 30 GB of free disk and
#   several minutes; S3SEAL_BENCH_UPLOADS and S3SEAL_BENCH_UPLOAD_MIB
#   change the load).
#
#   scripts/bench.sh cpu   instead: s3seal's CPU seconds per GiB of
#   plaintext (utime + stime from /proc) for a streamed single PUT, a
#   spooled one, a multipart PUT and a GET, driven by the SDK over HTTP,
#   beside the floor of each path: the sum of the one-core times of the
#   hashes and the cipher it must compute, measured in the same run
#   (BenchmarkCPUPerGiB in e2e; S3SEAL_BENCH_CPU_MIB, default 1024, is
#   the plaintext per path; store and data dir on /dev/shm).
#
#   scripts/bench.sh kms   instead: PUT and GET of 4 KiB and 128 MiB
#   through s3seal with a file key, with its key in a KMS (local-kms),
#   the same without the check of each key the KMS makes
#   (--kms-check-writes=false) and with KMS bucket keys, ratios to the
#   file key.
#
#   scripts/bench.sh compare [RUNS]   instead: real S3 client commands
#   (rclone >= 1.65) timed through four fronts of one store, versitygw
#   posix on tmpfs (/dev/shm): the store directly, a plain proxy (a
#   second versitygw in s3 mode), s3seal, and `rclone serve s3` over a
#   crypt remote (left out, with a note, when rclone cannot serve s3).
#   Each operation runs through every front in turn before the next
#   (noise hits all alike); the table gives each front's wall time over
#   direct's, min/median/max over RUNS runs (default 3), and the peak RSS
#   of each server. What came back is checked (md5 of GETs and ranges,
#   listing lengths, ciphertext in the store). Choices, for fairness:
#   - versitygw runs with --keep-alive (else it closes every connection
#     after one request) and --quiet; the proxy with --disable-checksum
#     and --disable-data-integrity-check: it sends the store
#     UNSIGNED-PAYLOAD and no checksum, as s3seal does (it still asks the
#     store for the bucket's versioning before each PUT).
#   - s3seal's --data-dir (its spool) is on the same tmpfs, so spooling
#     is not measured against a disk.
#   - crypt keeps names in the clear (filename_encryption off), as
#     s3seal does; serve s3 runs with its defaults (--vfs-cache-mode
#     off: uploads stream through), its own uploads in 16 MiB parts.
#   - the client: rclone with its defaults, plus --s3-no-check-bucket,
#     --retries 1 (a failure fails the run, not a slower time) and, on
#     uploads, --no-check-dest (no look before writing; every run
#     writes fresh keys). The times include rclone's own start (about
#     0.15 s a command), which weighs most on HEADs, ranges and listings.
#     PUT 128 MiB is one PutObject (--s3-upload-cutoff 200M), PUT 256 MiB
#     16 parts of 16 MiB, COPY 128 MiB is `rclone copyto` of that object
#     within the remote (a server-side CopyObject), GETs are `rclone cat` (a HEAD, a listing of the
#     directory, the GET), HEAD x5 is five `rclone lsjson --stat` (two
#     HEADs each), PUT 300 is `rclone copy` (a PutObject and a HEAD per
#     file, 4 at once), LISTs are `rclone lsf` of the directory (one
#     ListObjectsV2); cold: the first listing after the objects were
#     written (s3seal has them in its cache from their PUTs), warm: the
#     second, restarted: the first after every front (store included)
#     was restarted, its caches empty.
#   - MIXED 32 clients is no rclone command: rclone runs its transfers
#     one file after another per directory and checks before it writes,
#     so it cannot hold 32 requests of a mix in flight. It is
#     scripts/smallops.go, built once per session, the same binary
#     through every front: 32 concurrent aws-sdk-go-v2 clients with the
#     SDK's defaults (SigV4, its checksums), each 40 rounds of PUT 4 KiB,
#     GET (bytes checked), HEAD, LIST of its own at most 5 keys, and from
#     the fifth round DELETE of the key 4 rounds old: 6272 operations,
#     with as many idle connections as clients kept.
#   After the table, the rows whose goal is the plain proxy's cost
#   (issue 34), min median max: s3seal's time over the plain proxy's for
#   PUT 300 x 4 KiB (goal: 1.05 or less), s3seal's operations per second
#   over the plain proxy's in the mixed row (goal: 0.90 or more); then
#   each front's median operations per second in the mixed row.
#   S3SEAL_BENCH_OPS, a list of the operations' names (put128 put256
#   get128 range head copy128 put300 mixed32 list1000cold list1000warm
#   list300 list1000restart), runs only those rows (and of the lines
#   against the plain proxy, those of the rows run); a row that reads
#   what an earlier one wrote needs it too (get128, range, head and
#   copy128 put128's, list300 put300's). The 1000 objects the list1000
#   rows read are written before the first of them.
#   PUT 4 KiB x 32 clients is scripts/smallops.go with -only-put: 32
#   clients of 100 PUTs of 4 KiB each, nothing else (3200 PUTs).
#   S3SEAL_BENCH_AUDIT=1 adds the front s3seal-audit: the same s3seal
#   with --audit-log (its trail on the same tmpfs, buffered, no fsync:
#   the default), and after the table the cost of the trail: its time
#   over s3seal's for each row run (goal for the small PUTs: 1.03 or
#   less), and `s3seal audit verify` of the trail it wrote. Measure it
#   with S3SEAL_BENCH_OPS="put32" S3SEAL_BENCH_AUDIT=1 scripts/bench.sh
#   compare 5.
#   S3SEAL_BENCH_BASE, an s3seal binary (another build: the commit a
#   change starts from), adds it as the front s3seal-base beside s3seal,
#   so that a change is measured against its base in the same run.
#   RCLONE and VERSITYGW name the binaries; both are otherwise taken
#   from ${XDG_CACHE_HOME:-~/.cache}/s3seal-bench/bin or the PATH (rclone
#   1.65 or later), and versitygw is installed there with go install.
#
#   scripts/bench.sh copy [ROUNDS]   instead: server-side copies straight
#   to one store (versitygw posix, on disk under ${TMPDIR:-/var/tmp}) and
#   through s3seal in front of it: `rclone copyto` of a 1 GiB object put
#   in one PUT (a CopyObject of one sealed stream), and `aws s3 cp
#   s3://... s3://...` of a 1 GiB and a 10 GiB object the aws CLI
#   uploaded in its 8 MiB parts (its copy: UploadPartCopy of 8 MiB
#   ranges, each a whole part). The table gives the direct time, s3seal's
#   over it (min/median/max over ROUNDS rounds, default 3, one round for
#   10 GiB), and the bytes s3seal itself read and wrote during the copy
#   (rchar + wchar of /proc/PID/io: sockets and files alike; the goal is
#   under 16 MiB). S3SEAL_BENCH_COPY_GIB (default "1 10") sets the sizes
#   of the aws CLI rows; the largest needs about three times its size of
#   free disk (source, copy, and the store's parts while it assembles).
#
#   scripts/bench.sh lfs-kafka [ROUNDS]   instead: 100 MiB blobs into the
#   LFS module, alternating in each round: POSTed to /lfs/produce (curl
#   --data-binary), produced through the Kafka listener as a record marked
#   LFS_BLOB (kcat), and the same from an idempotent producer (kcat with
#   enable.idempotence: the path that names the blob from the producer's
#   ids and looks for it first). /lfs/produce goes to one s3seal, both
#   Kafka phases to a second one started with the same flags, so that each
#   process's peak RSS (VmHWM) is its own path's. Each s3seal has its store
#   embedded and its data dir (spool included) on tmpfs (/dev/shm) and runs
#   its in-process development Kafka; the Kafka listener takes requests of
#   up to 128 MiB (a 100 MiB record and its framing) and one at a time
#   (--lfs-kafka-max-inflight 1: the bench's producers send one request at
#   a time, and a bound for one is tight enough to catch a copy of a record
#   too many). The table gives each phase's MB/s (10^6 bytes) over ROUNDS
#   rounds (default 5), Kafka's over /lfs/produce's (the target is 0.80 or
#   more; the machine's noise is in it, nothing is asserted), and each
#   process's peak RSS beside its idle RSS. The bench fails if the Kafka
#   process's peak passes the documented bound: its idle RSS plus twice
#   --lfs-kafka-max-request times --lfs-kafka-max-inflight, plus 32 MiB for
#   the streaming part of the path (the copy and seal buffers of the
#   parts, the in-process store's). What was stored is checked: every
#   envelope's size and SHA-256, read back through the Kafka listener for
#   the Kafka phases, and one blob of each phase downloaded whole. Needs
#   go, curl, kcat, jq and python3, and about 2 GB of /dev/shm (5 rounds).
#   scripts/bench.sh restore [FILES]   instead: a tree of FILES small
#   files (default 15000, in directories of 5 under 30 top-level ones, 8
#   KiB each; S3SEAL_BENCH_RESTORE_KIB sets the size) uploaded with
#   `rclone copy` to s3seal on its embedded store (no --backend-endpoint;
#   data dir under ${TMPDIR:-/var/tmp}) and restored with `rclone copy`
#   back, checked byte for byte. rclone lists each directory once on each
#   side (a ListObjectsV2 with delimiter "/"), so the restore costs the
#   store one listing a directory beside the GETs. The table gives the
#   upload's and the restore's seconds and restore over upload (goal:
#   1.5 or less, issue 35). S3SEAL_BENCH_BASE, an s3seal binary (the
#   commit a change starts from), runs the same beside it, on a data dir
#   of its own. Then BenchmarkListPage (backend/embedded): the first and
#   the last page of 1000 of a bucket of 15,000 keys, and last over first
#   (1.00: a page costs the same wherever it is).
set -euo pipefail
cd "$(dirname "$0")/.."

# ---------------------------------------------------------------------------
# compare mode: real S3 clients through four fronts of one store.
# ---------------------------------------------------------------------------

die() { echo "bench.sh: $*" >&2; exit 1; }

# The one credential pair everything here signs with (loopback only).
AK=bench SK=bench-secret-key-0123456789
FRONTS=(direct proxy s3seal crypt)
declare -A LABEL=([direct]=direct [proxy]=plain-proxy [s3seal]=s3seal [base]=s3seal-base [audit]=s3seal-audit [crypt]=rclone-crypt)
declare -A PID=() PORT=()

# rclone_ok BIN: BIN runs and is rclone 1.65 or later.
rclone_ok() {
	local maj min
	read -r maj min < <("$1" version 2>/dev/null | sed -n '1s/^rclone v\([0-9]*\)\.\([0-9]*\).*/\1 \2/p') || return 1
	[[ -n $maj ]] && ((maj > 1 || (maj == 1 && min >= 65)))
}

# find_rclone: RCLONE, else the cached or PATH rclone if it is 1.65 or
# later (Debian's is older: `GOBIN=~/.cache/s3seal-bench/bin go install
# github.com/rclone/rclone@v1.76.0` puts one in the cache).
find_rclone() {
	local cache=${XDG_CACHE_HOME:-$HOME/.cache}/s3seal-bench/bin c
	if [[ -n ${RCLONE:-} ]]; then
		rclone_ok "$RCLONE" || die "RCLONE=$RCLONE is not rclone >= 1.65: $("$RCLONE" version 2>&1 | head -1)"
		return
	fi
	for c in "$cache/rclone" "$(command -v rclone || true)"; do
		if [[ -x $c ]] && rclone_ok "$c"; then RCLONE=$c && return; fi
	done
	die "the client is rclone >= 1.65, and none was found (PATH has: $(rclone version 2>&1 | head -1)); set RCLONE=/path/to/rclone, or GOBIN=$cache go install github.com/rclone/rclone@v1.76.0"
}

# find_versitygw: VERSITYGW, else the cached or PATH one, else go install it.
find_versitygw() {
	local cache=${XDG_CACHE_HOME:-$HOME/.cache}/s3seal-bench/bin c
	if [[ -n ${VERSITYGW:-} ]]; then
		[[ -x $VERSITYGW ]] || die "VERSITYGW=$VERSITYGW is not an executable"
		return
	fi
	for c in "$cache/versitygw" "$(command -v versitygw || true)"; do
		if [[ -x $c ]]; then VERSITYGW=$c && return; fi
	done
	echo "installing versitygw into $cache ..." >&2
	mkdir -p "$cache"
	GOBIN=$cache go install github.com/versity/versitygw/cmd/versitygw@latest ||
		die "go install github.com/versity/versitygw/cmd/versitygw@latest failed; set VERSITYGW=/path/to/versitygw"
	VERSITYGW=$cache/versitygw
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start NAME CMD...: runs CMD in the background on port PORT[NAME] (logs in
# $tmp/NAME.log) and waits until the port answers.
start() {
	local name=$1
	shift
	"$@" >"$tmp/$name.log" 2>&1 &
	PID[$name]=$!
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/${PORT[$name]}") 2>/dev/null && return 0
		kill -0 "${PID[$name]}" 2>/dev/null || break
		sleep 0.1
	done
	tail -20 "$tmp/$name.log" >&2
	die "$name did not start listening on 127.0.0.1:${PORT[$name]} (command: $*)"
}

cleanup() {
	local st=$? p
	if ((st != 0)) && [[ -d ${tmp:-} ]]; then
		for p in "$tmp"/*.log; do [[ -s $p ]] && { echo "--- last lines of $p:"; tail -5 "$p"; } >&2; done
	fi
	for p in "${PID[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PID[@]}"; do wait "$p" 2>/dev/null || true; done
	[[ -n ${tmp:-} ]] && rm -rf "$tmp"
}

# s3_remote NAME PORT [KEY=VALUE...]: an rclone s3 remote NAME on
# 127.0.0.1:PORT, configured through the environment.
s3_remote() {
	local n=${1^^} port=$2 kv
	shift 2
	export "RCLONE_CONFIG_${n}_TYPE=s3" "RCLONE_CONFIG_${n}_PROVIDER=Other" \
		"RCLONE_CONFIG_${n}_ENDPOINT=http://127.0.0.1:$port" "RCLONE_CONFIG_${n}_FORCE_PATH_STYLE=true" \
		"RCLONE_CONFIG_${n}_REGION=us-east-1" "RCLONE_CONFIG_${n}_ACCESS_KEY_ID=$AK" \
		"RCLONE_CONFIG_${n}_SECRET_ACCESS_KEY=$SK"
	for kv in "$@"; do export "RCLONE_CONFIG_${n}_$kv"; done
}

# start_front NAME: starts one front (the store is "direct") on PORT[NAME].
start_front() {
	case $1 in
	direct)
		# --keep-alive on both versitygw: without it they close every
		# connection after one request, which no production store does.
		start direct env ROOT_ACCESS_KEY=$AK ROOT_SECRET_KEY=$SK \
			"$VERSITYGW" --port "127.0.0.1:${PORT[direct]}" --quiet --keep-alive posix "$tmp/store" ;;
	proxy)
		# The plain proxy adds no checksum and signs UNSIGNED-PAYLOAD, as
		# s3seal does towards its store.
		start proxy env ROOT_ACCESS_KEY=$AK ROOT_SECRET_KEY=$SK VGW_S3_ACCESS_KEY=$AK VGW_S3_SECRET_KEY=$SK \
			"$VERSITYGW" --port "127.0.0.1:${PORT[proxy]}" --quiet --keep-alive \
			s3 --endpoint "http://127.0.0.1:${PORT[direct]}" --use-path-style --disable-checksum --disable-data-integrity-check ;;
	s3seal | base | audit)
		local bin=$tmp/s3seal extra=()
		[[ $1 == base ]] && bin=$S3SEAL_BENCH_BASE
		[[ $1 == audit ]] && extra=(--audit-log "$tmp/audit-data/audit.log" --audit-key-file "$tmp/audit.key")
		start "$1" env S3SEAL_BACKEND_ACCESS_KEY=$AK S3SEAL_BACKEND_SECRET_KEY=$SK S3SEAL_SECRET_KEY=$SK \
			"$bin" serve --listen "127.0.0.1:${PORT[$1]}" --data-dir "$tmp/$1-data" \
			--backend-endpoint "http://127.0.0.1:${PORT[direct]}" --backend-path-style \
			--key-file "$tmp/master.key" --access-key "$AK" --shutdown-delay 0s "${extra[@]}" ;;
	crypt)
		start crypt "$RCLONE" serve s3 --addr "127.0.0.1:${PORT[crypt]}" --auth-key "$AK,$SK" sealed: ;;
	esac
}

# restart_front NAME: stops a front and starts it again (empty caches),
# keeping the peak RSS of the process that stopped.
restart_front() {
	note_rss "$1"
	kill "${PID[$1]}" 2>/dev/null || true
	wait "${PID[$1]}" 2>/dev/null || true
	start_front "$1"
}

# note_rss NAME: the front's peak RSS so far (VmHWM), kept across restarts.
declare -A HWM=()
note_rss() {
	local kb
	kb=$(awk '/^VmHWM/ {print $2}' "/proc/${PID[$1]}/status" 2>/dev/null || echo 0)
	((kb > ${HWM[$1]:-0})) && HWM[$1]=$kb
	return 0
}

# start_fronts: the store (versitygw posix on tmpfs) and the fronts before it.
start_fronts() {
	local f
	for f in "${FRONTS[@]}"; do PORT[$f]=$(free_port); done
	mkdir -p "$tmp/store" "$tmp/s3seal-data" "$tmp/base-data" "$tmp/audit-data"
	head -c 32 /dev/urandom | base64 >"$tmp/master.key"
	head -c 32 /dev/urandom | base64 >"$tmp/audit.key"
	chmod 600 "$tmp/master.key" "$tmp/audit.key"
	start_front direct
	start_front proxy
	start_front s3seal
	[[ -z ${S3SEAL_BENCH_BASE:-} ]] || start_front base
	[[ ${S3SEAL_BENCH_AUDIT:-} != 1 ]] || start_front audit
	if [[ $("$RCLONE" serve s3 --help 2>/dev/null) == *--auth-key* ]]; then
		# crypt over the store's root, names in the clear as s3seal keeps
		# them; its own uploads use 16 MiB parts like the client's.
		s3_remote store "${PORT[direct]}" CHUNK_SIZE=16M
		export RCLONE_CONFIG_SEALED_TYPE=crypt RCLONE_CONFIG_SEALED_REMOTE=store: \
			RCLONE_CONFIG_SEALED_FILENAME_ENCRYPTION=off RCLONE_CONFIG_SEALED_DIRECTORY_NAME_ENCRYPTION=false
		RCLONE_CONFIG_SEALED_PASSWORD=$("$RCLONE" obscure bench-crypt-password)
		export RCLONE_CONFIG_SEALED_PASSWORD
		start_front crypt
	else
		echo "note: $RCLONE has no 'serve s3 --auth-key': the rclone-crypt front is left out" >&2
		local rest=()
		for f in "${FRONTS[@]}"; do [[ $f == crypt ]] || rest+=("$f"); done
		FRONTS=("${rest[@]}")
	fi
	for f in "${FRONTS[@]}"; do
		s3_remote "c$f" "${PORT[$f]}"
		"$RCLONE" mkdir "c$f:bench-$f" || die "creating bucket bench-$f through $f failed"
	done
}

# The operations, in the order they run, and their labels in the table.
OPS=(put128 put256 get128 range head copy128 put300 put32 mixed32 list1000cold list1000warm list300 list1000restart)
declare -A OPLABEL=([put128]="PUT 128 MiB" [put256]="PUT 256 MiB 16M parts" [get128]="GET 128 MiB"
	[range]="GET 1 MiB range x5" [head]="HEAD x5" [copy128]="COPY 128 MiB" [put300]="PUT 300 x 4 KiB" [put32]="PUT 4 KiB x 32 clients" [mixed32]="MIXED 32 clients" [list1000cold]="LIST 1000 cold"
	[list1000warm]="LIST 1000 warm" [list300]="LIST 300" [list1000restart]="LIST 1000 restarted")
RANGES=(123 7340032 33554431 67108864 133169152) # offsets of the 1 MiB ranges in the 128 MiB object

# rc ARGS...: the client, with flags every command gets: no bucket check,
# and a failure fails the command rather than its retry hiding in a time.
rc() { "$RCLONE" --s3-no-check-bucket --retries 1 "$@"; }

# op_NAME FRONT REMOTE: one operation through one front (REMOTE is
# cFRONT:bench-FRONT/rRUN); timed by timed(), checked after.
op_put128() { rc copyto --no-check-dest --s3-upload-cutoff 200M "$in/f128" "$2/put128"; }
op_put256() { rc copyto --no-check-dest --s3-upload-cutoff 16M --s3-chunk-size 16M "$in/f256" "$2/put256"; }
op_get128() { rc cat "$2/put128" >"$tmp/got"; }
op_range() { local o; for o in "${RANGES[@]}"; do rc cat --offset "$o" --count 1048576 "$2/put128"; done >"$tmp/got"; }
op_head() { local i; for i in 1 2 3 4 5; do rc lsjson --stat "$2/put128"; done >/dev/null; }
op_copy128() { rc copyto "$2/put128" "$2/copy128" && rc lsjson --stat "$2/copy128" >"$tmp/got"; }
op_put300() { rc copy --no-check-dest "$in/s300" "$2/s300"; }
op_mixed32() {
	"$tmp/smallops" -endpoint "http://127.0.0.1:${PORT[$1]}" -bucket "bench-$1" -prefix "r$run/mixed" \
		-clients 32 -iter 40 -access-key "$AK" -secret-key "$SK" >"$tmp/got"
}
op_put32() {
	"$tmp/smallops" -endpoint "http://127.0.0.1:${PORT[$1]}" -bucket "bench-$1" -prefix "r$run/put" \
		-clients 32 -iter 100 -only-put -access-key "$AK" -secret-key "$SK" >"$tmp/got"
}
op_list1000cold() { rc lsf "$2/s1000/" >"$tmp/got"; }
op_list1000warm() { rc lsf "$2/s1000/" >"$tmp/got"; }
op_list300() { rc lsf "$2/s300/" >"$tmp/got"; }
op_list1000restart() { rc lsf "$2/s1000/" >"$tmp/got"; }

# check OP FRONT: what came back is what went in.
check() {
	local got
	case $1 in
	get128) got=$(md5sum <"$tmp/got") && [[ $got == "$md5_128" ]] ;;
	range) got=$(md5sum <"$tmp/got") && [[ $got == "$md5_ranges" ]] ;;
	list1000*) [[ $(wc -l <"$tmp/got") == 1000 ]] ;;
	list300) [[ $(wc -l <"$tmp/got") == 300 ]] ;;
	copy128) grep -Eq '"Size": ?134217728\b' "$tmp/got" ;;
	mixed32) [[ $(cut -d' ' -f1 "$tmp/got") == "$MIXED_OPS" ]] ;;
	put32) [[ $(cut -d' ' -f1 "$tmp/got") == 3200 ]] ;;
	esac || die "run $run: $1 through ${LABEL[$2]} came back wrong"
}

# cpu_ticks NAME: the CPU time (utime + stime, clock ticks) the front's
# process has used so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/${PID[$1]}/stat" 2>/dev/null || echo 0; }

# timed OP FRONT: runs op_OP through FRONT, appends "OP FRONT start end
# cpu" (seconds, and the front's CPU ticks during it) to $tmp/times, and
# checks what came back.
timed() {
	local t0 t1 c0 c1 remote="c$2:bench-$2/r$run"
	c0=$(cpu_ticks "$2")
	t0=$EPOCHREALTIME
	"op_$1" "$2" "$remote" || die "run $run: $1 through ${LABEL[$2]} failed"
	t1=$EPOCHREALTIME
	c1=$(cpu_ticks "$2")
	echo "$1 $2 $t0 $t1 $((c1 - c0))" >>"$tmp/times"
	check "$1" "$2"
}

# make_inputs: the files the client uploads, on tmpfs, and their sums.
make_inputs() {
	local i o
	mkdir -p "$in/s300" "$in/s1000"
	head -c 128M /dev/urandom >"$in/f128"
	head -c 256M /dev/urandom >"$in/f256"
	for i in $(seq -w 1000); do head -c 4096 /dev/urandom >"$in/s1000/f$i"; done
	for i in $(seq -w 300); do cp "$in/s1000/f0$i" "$in/s300/f$i"; done
	md5_128=$(md5sum <"$in/f128")
	md5_ranges=$(for o in "${RANGES[@]}"; do tail -c +$((o + 1)) "$in/f128" | head -c 1048576; done | md5sum)
}

# table RUNS: per operation the direct time in seconds and each front's
# time over direct's in the same run; min, median and max over the runs.
table() {
	local f heads=() labels=()
	for f in "${FRONTS[@]}"; do heads+=("${LABEL[$f]}"); done
	for f in "${OPS[@]}"; do labels+=("${OPLABEL[$f]}"); done
	awk -v runs="$1" -v fronts="${FRONTS[*]}" -v heads="${heads[*]}" -v ops="${OPS[*]}" \
		-v labels="$(IFS=';' && echo "${labels[*]}")" '
	function stats(a, c,   i, j, x, m) {
		for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
		m = (c % 2) ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
		return c == 1 ? sprintf("%.2f", a[1]) : sprintf("%.2f %.2f %.2f", a[1], m, a[c])
	}
	{ k = $1 SUBSEP $2; t[k, ++n[k]] = $4 - $3 }
	END {
		nf = split(fronts, f, " "); split(heads, h, " "); no = split(ops, o, " "); split(labels, l, ";")
		w = runs > 1 ? 18 : 12
		printf "%-22s %-*s", "operation", w, "direct s"; for (j = 2; j <= nf; j++) printf " %-*s", j < nf ? w : 0, h[j]; printf "\n"
		for (i = 1; i <= no; i++) {
			c = n[o[i], "direct"]
			for (r = 1; r <= c; r++) d[r] = t[o[i], "direct", r]
			printf "%-22s %-*s", l[i], w, stats(d, c)
			for (j = 2; j <= nf; j++) {
				for (r = 1; r <= c; r++) q[r] = t[o[i], f[j], r] / t[o[i], "direct", r]
				printf " %-*s", j < nf ? w : 0, stats(q, c)
			}
			printf "\n"
		}
	}' "$tmp/times"
}

# MIXED_OPS is the number of operations op_mixed32 makes: 32 clients of
# 40 rounds, 4 operations each and a DELETE from the fifth round on.
MIXED_OPS=$((32 * (40 * 4 + 40 - 4)))

# against_proxy: s3seal's time over the plain proxy's for PUT 300 x 4 KiB,
# its operations per second over the plain proxy's in the mixed row (min
# median max), and each front's median operations per second there.
against_proxy() {
	awk -v fronts="${FRONTS[*]}" -v heads="$(for f in "${FRONTS[@]}"; do printf '%s ' "${LABEL[$f]}"; done)" -v ops="$MIXED_OPS" '
	function sort(a, c,   i, j, x) { for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x } }
	function med(a, c) { return (c % 2) ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2 }
	{ k = $1 SUBSEP $2; t[k, ++n[k]] = $4 - $3 }
	END {
		nf = split(fronts, f, " "); split(heads, h, " ")
		if (!n["put300", "s3seal"] && !n["mixed32", "s3seal"]) exit
		print "against the plain proxy (issue 34), min median max:"
		if (c = n["put300", "s3seal"]) {
			for (r = 1; r <= c; r++) q[r] = t["put300", "s3seal", r] / t["put300", "proxy", r]
			sort(q, c)
			printf "  %-58s %.2f %.2f %.2f\n", "PUT 300 x 4 KiB, s3seal time / plain proxy time (goal <= 1.05)", q[1], med(q, c), q[c]
		}
		if (!n["mixed32", "s3seal"]) exit
		c = n["mixed32", "s3seal"]
		for (r = 1; r <= c; r++) q[r] = t["mixed32", "proxy", r] / t["mixed32", "s3seal", r]
		sort(q, c)
		printf "  %-58s %.2f %.2f %.2f\n", "MIXED 32 clients, s3seal ops/s / plain proxy ops/s (goal >= 0.90)", q[1], med(q, c), q[c]
		printf "  MIXED 32 clients, operations per second (median):"
		for (j = 1; j <= nf; j++) {
			c = n["mixed32", f[j]]
			for (r = 1; r <= c; r++) q[r] = ops / t["mixed32", f[j], r]
			sort(q, c)
			printf " %s %.0f,", h[j], med(q, c)
		}
		printf "\n"
	}' "$tmp/times"
}

# against_s3seal: with the s3seal-audit front, its time and its CPU time
# (its process's utime + stime during the row) over s3seal's, for each
# row run (min median max), then `s3seal audit verify` of the trail it
# wrote (each restart continued it). On a busy machine the wall time is
# mostly the other processes' noise; the CPU time is the process's own.
against_s3seal() {
	[[ " ${FRONTS[*]} " == *" audit "* ]] || return 0
	echo "the audit trail's cost: s3seal --audit-log over s3seal, min median max (goal for PUT 4 KiB x 32 clients: <= 1.03):"
	awk -v ops="${OPS[*]}" -v labels="$(for o in "${OPS[@]}"; do printf '%s;' "${OPLABEL[$o]}"; done)" '
	function sort(a, c,   i, j, x) { for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x } }
	function med(a, c) { return (c % 2) ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2 }
	{ k = $1 SUBSEP $2; t[k, ++n[k]] = $4 - $3; cpu[k, n[k]] = $5 }
	END {
		no = split(ops, o, " "); split(labels, l, ";")
		for (i = 1; i <= no; i++) {
			c = n[o[i], "audit"]
			for (r = 1; r <= c; r++) q[r] = t[o[i], "audit", r] / t[o[i], "s3seal", r]
			sort(q, c)
			printf "  %-26s wall time %.3f %.3f %.3f", l[i], q[1], med(q, c), q[c]
			m = 0
			for (r = 1; r <= c; r++) if (cpu[o[i], "s3seal", r] > 0) q[++m] = cpu[o[i], "audit", r] / cpu[o[i], "s3seal", r]
			sort(q, m)
			if (m) printf ", CPU time %.3f %.3f %.3f", q[1], med(q, m), q[m]
			printf "\n"
		}
	}' "$tmp/times"
	"$tmp/s3seal" audit verify --audit-key-file "$tmp/audit.key" "$tmp/audit-data/audit.log" ||
		die "the trail s3seal-audit wrote does not verify"
}

# check_sealed: the store holds the 128 MiB object as it was sent
# directly, and as something else through s3seal and rclone crypt.
check_sealed() {
	local f got
	for f in "${FRONTS[@]}"; do
		[[ $f == proxy ]] && continue
		got=$(cat "$tmp/store/bench-$f/r$run/put128"* | md5sum)
		if [[ $f == direct ]]; then [[ $got == "$md5_128" ]]; else [[ $got != "$md5_128" ]]; fi ||
			die "the store's copy of put128 through ${LABEL[$f]} is not what was expected"
	done
}

# peak_rss: VmHWM of each server process over the whole session.
peak_rss() {
	local f line="peak RSS (VmHWM):"
	for f in "${FRONTS[@]}"; do
		note_rss "$f"
		line+=" ${LABEL[$f]/#direct/store (versitygw posix)} $((${HWM[$f]:-0} / 1024)) MiB,"
	done
	echo "${line%,}"
}

# select_ops: OPS cut to the names in S3SEAL_BENCH_OPS, when it is set.
select_ops() {
	local want=() keep=() o
	read -ra want <<<"${S3SEAL_BENCH_OPS:-}"
	((${#want[@]})) || return 0
	for o in "${want[@]}"; do
		[[ " ${OPS[*]} " == *" $o "* ]] || die "S3SEAL_BENCH_OPS: $o is not one of: ${OPS[*]}"
	done
	for o in "${OPS[@]}"; do [[ " ${want[*]} " == *" $o "* ]] && keep+=("$o"); done
	for o in get128:put128 range:put128 head:put128 copy128:put128 list300:put300; do
		[[ " ${keep[*]} " != *" ${o%:*} "* || " ${keep[*]} " == *" ${o#*:} "* ]] ||
			die "S3SEAL_BENCH_OPS: ${o%:*} reads what ${o#*:} writes; name both"
	done
	OPS=("${keep[@]}")
}

compare() {
	local runs=${1:-3} f op written
	[[ $runs =~ ^[1-9][0-9]*$ && $# -le 1 ]] || die "usage: scripts/bench.sh compare [RUNS]   (RUNS: a positive number, default 3)"
	select_ops
	unset AWS_CA_BUNDLE # set on some machines, it breaks clients talking plain HTTP
	export LC_ALL=C     # a dot in $EPOCHREALTIME
	command -v go >/dev/null || die "needs go (to build s3seal)"
	if [[ -n ${S3SEAL_BENCH_BASE:-} ]]; then
		[[ -x $S3SEAL_BENCH_BASE ]] || die "S3SEAL_BENCH_BASE=$S3SEAL_BENCH_BASE is not an executable"
		FRONTS=(direct proxy s3seal base crypt)
	fi
	if [[ ${S3SEAL_BENCH_AUDIT:-} == 1 ]]; then
		local fs=()
		for f in "${FRONTS[@]}"; do
			fs+=("$f")
			[[ $f == s3seal ]] && fs+=(audit)
		done
		FRONTS=("${fs[@]}")
	fi
	command -v python3 >/dev/null || die "needs python3 (to find free ports)"
	find_rclone
	find_versitygw
	tmp=$(mktemp -d /dev/shm/s3seal-bench-XXXX) || die "cannot create a directory in /dev/shm (tmpfs)"
	trap cleanup EXIT
	in=$tmp/in
	export RCLONE_CONFIG=$tmp/rclone.conf # empty: every remote comes from RCLONE_CONFIG_* variables
	: >"$RCLONE_CONFIG"
	go build -o "$tmp/s3seal" ./cmd/s3seal || die "building s3seal failed"
	go build -o "$tmp/smallops" scripts/smallops.go || die "building scripts/smallops.go failed"
	make_inputs
	start_fronts
	echo "s3seal at $(git describe --always --dirty 2>/dev/null || echo '?'), $("$RCLONE" version | head -1) ($RCLONE), versitygw $VERSITYGW, $(nproc) CPUs, $runs run(s)"
	for run in $(seq "$runs"); do
		# Untimed, through every front: one small PUT. A front started
		# afresh (every one is, before the last listing of a run) pays for
		# its first requests: s3seal sends its first body with Content-MD5
		# beside the CRC32C until the store has confirmed the checksum
		# once, a pass over the body that only a process's first PUT pays.
		for f in "${FRONTS[@]}"; do
			rc copyto --no-check-dest "$in/s1000/f0001" "c$f:bench-$f/warm" || die "warming ${LABEL[$f]} failed"
		done
		written=
		for op in "${OPS[@]}"; do
			if [[ $op == list1000* && -z $written ]]; then # untimed: the objects the listings find
				written=1
				for f in "${FRONTS[@]}"; do
					rc copy --no-check-dest --transfers 16 "$in/s1000" "c$f:bench-$f/r$run/s1000" || die "writing 1000 objects through ${LABEL[$f]} failed"
				done
			fi
			if [[ $op == list1000restart ]]; then # every front starts again, caches empty
				for f in "${FRONTS[@]}"; do restart_front "$f"; done
			fi
			for f in "${FRONTS[@]}"; do timed "$op" "$f"; done
		done
		((run > 1)) || [[ " ${OPS[*]} " != *" put128 "* ]] || check_sealed
		rm -rf "$tmp/store/"bench-*/"r$run" # tmpfs is memory; no front reads a finished run's keys again
		echo "run $run of $runs done" >&2
	done
	echo
	echo "wall time of each client command through each front over the same command direct (1.00 = as fast as direct)"
	echo "direct s: the direct times in seconds$( ((runs == 1)) || echo "; min median max over $runs runs")"
	table "$runs"
	against_proxy
	against_s3seal
	peak_rss
}

# ---------------------------------------------------------------------------
# lfs-kafka mode: 100 MiB blobs through /lfs/produce and the Kafka listener.
# ---------------------------------------------------------------------------

BLOB_MIB=100
KMAXREQ=$((128 << 20)) # --lfs-kafka-max-request: a 100 MiB record and its framing
KINFLIGHT=1            # --lfs-kafka-max-inflight: the producers send one request at a time
PART_SLACK_MIB=32      # the streaming part of the path (copy and seal buffers, the in-process store's)
LFS_PHASES=(http kafka idem)
declare -A PHASE_LABEL=([http]="/lfs/produce (curl)" [kafka]="Kafka listener (kcat)" [idem]="Kafka, idempotent (kcat)")
declare -A PHASE_PROC=([http]=lfs-http [kafka]=lfs-kafka [idem]=lfs-kafka)
declare -A KPORT=()

# wait_port NAME PORT: waits until PORT answers while NAME runs.
wait_port() {
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null && return 0
		kill -0 "${PID[$1]}" 2>/dev/null || break
		sleep 0.1
	done
	tail -20 "$tmp/$1.log" >&2
	die "$1 did not start listening on 127.0.0.1:$2"
}

# start_lfs NAME: an s3seal with the LFS module and its Kafka listener,
# its store embedded in $tmp/NAME-data; PORT[NAME] is the LFS HTTP API,
# KPORT[NAME] the Kafka listener.
start_lfs() {
	local n=$1 s3 dev
	PORT[$n]=$(free_port) KPORT[$n]=$(free_port) s3=$(free_port) dev=$(free_port)
	mkdir -p "$tmp/$n-data"
	start "$n" env S3SEAL_SECRET_KEY=$SK "$tmp/s3seal" serve --listen "127.0.0.1:$s3" --data-dir "$tmp/$n-data" \
		--key-file "$tmp/master.key" --access-key "$AK" --shutdown-delay 0s \
		--lfs --lfs-listen "127.0.0.1:${PORT[$n]}" --lfs-dev-kafka "127.0.0.1:$dev" \
		--lfs-kafka-listen "127.0.0.1:${KPORT[$n]}" --lfs-kafka-max-request "$KMAXREQ" --lfs-kafka-max-inflight "$KINFLIGHT"
	wait_port "$n" "${KPORT[$n]}"
}

# lfs_send PHASE PROC TOPIC FILE OUT: FILE as one blob into PROC's LFS
# module by PHASE's path; /lfs/produce's envelope goes to OUT.
lfs_send() {
	local kafka=(kcat -P -b "127.0.0.1:${KPORT[$2]}" -t "$3" -H LFS_BLOB= -X message.max.bytes="$KMAXREQ")
	case $1 in
	http) curl -sS --fail-with-body -o "$5" -X POST "http://127.0.0.1:${PORT[$2]}/lfs/produce" \
		-H "X-Kafka-Topic: $3" -H 'Content-Type: application/octet-stream' --data-binary "@$4" ;;
	kafka) "${kafka[@]}" "$4" ;;
	idem) "${kafka[@]}" -X enable.idempotence=true "$4" ;;
	esac
}

# hwm NAME: the process's peak RSS so far, in KiB.
hwm() { awk '/^VmHWM/ {print $2}' "/proc/${PID[$1]}/status"; }

# check_envelopes PHASE FILE: FILE holds ROUNDS envelopes, one a line,
# each of the blob's size and SHA-256.
check_envelopes() {
	local got want
	got=$(jq -r '"\(.size) \(.sha256)"' "$2" | sort | uniq -c | sed 's/^ *//') || die "${PHASE_LABEL[$1]}: the envelopes are not JSON"
	want="$rounds $((BLOB_MIB << 20)) $blob_sha"
	[[ $got == "$want" ]] || die "${PHASE_LABEL[$1]}: envelopes (count size sha256) are '$got', not '$want'"
}

# check_download PHASE PROC ENVELOPE: the blob comes back whole through
# PROC's /lfs/download (stream mode, checked against the envelope).
check_download() {
	jq '{bucket, key, mode: "stream", integrity: {sha256, size}}' <<<"$3" |
		curl -sS --fail-with-body -X POST "http://127.0.0.1:${PORT[$2]}/lfs/download" \
			-H 'Content-Type: application/json' --data-binary @- -o "$tmp/back" ||
		die "${PHASE_LABEL[$1]}: downloading a blob failed: $(head -c 300 "$tmp/back" 2>/dev/null)"
	cmp -s "$tmp/blob" "$tmp/back" || die "${PHASE_LABEL[$1]}: a blob came back different"
	rm -f "$tmp/back"
}

lfs_kafka() {
	local p r t0 t1 idle_http idle_kafka peak_http peak_kafka bound c
	rounds=${1:-5}
	[[ $rounds =~ ^[1-9][0-9]*$ && $# -le 1 ]] || die "usage: scripts/bench.sh lfs-kafka [ROUNDS]   (ROUNDS: a positive number, default 5)"
	unset AWS_CA_BUNDLE # set on some machines, it breaks clients talking plain HTTP
	export LC_ALL=C     # a dot in $EPOCHREALTIME
	for c in go curl kcat jq python3; do command -v "$c" >/dev/null || die "needs $c"; done
	tmp=$(mktemp -d /dev/shm/s3seal-bench-XXXX) || die "cannot create a directory in /dev/shm (tmpfs)"
	trap cleanup EXIT
	go build -o "$tmp/s3seal" ./cmd/s3seal || die "building s3seal failed"
	head -c 32 /dev/urandom | base64 >"$tmp/master.key"
	chmod 600 "$tmp/master.key"
	head -c "${BLOB_MIB}M" /dev/urandom >"$tmp/blob"
	head -c 1M /dev/urandom >"$tmp/warm"
	blob_sha=$(sha256sum <"$tmp/blob") && blob_sha=${blob_sha%% *}
	start_lfs lfs-http
	start_lfs lfs-kafka
	# Untimed: a small blob by each path through each process, so that the
	# first request's costs (connections, the store's first checks, topic
	# creation) are in neither phase, and the idle RSS is taken after them.
	for p in lfs-http lfs-kafka; do
		lfs_send http "$p" warm "$tmp/warm" /dev/null || die "warming $p through /lfs/produce failed"
		lfs_send kafka "$p" warm "$tmp/warm" || die "warming $p through the Kafka listener failed"
	done
	idle_http=$(hwm lfs-http) idle_kafka=$(hwm lfs-kafka)
	echo "s3seal at $(git describe --always --dirty 2>/dev/null || echo '?'), $(kcat -V 2>&1 | sed -n 's/^Version \([^ ]*\) .*librdkafka \([^ ]*\) .*/kcat \1 (librdkafka \2)/p'), $(nproc) CPUs, $rounds round(s) of ${BLOB_MIB} MiB per phase"
	: >"$tmp/times"
	for r in $(seq "$rounds"); do
		for p in "${LFS_PHASES[@]}"; do
			t0=$EPOCHREALTIME
			lfs_send "$p" "${PHASE_PROC[$p]}" "bench-$p" "$tmp/blob" "$tmp/env-$p-$r.json" ||
				die "round $r: ${PHASE_LABEL[$p]} failed"
			t1=$EPOCHREALTIME
			echo "$p $r $t0 $t1" >>"$tmp/times"
		done
		echo "round $r of $rounds done" >&2
	done
	peak_http=$(hwm lfs-http) peak_kafka=$(hwm lfs-kafka)

	# What was stored: /lfs/produce's answers, and the records the Kafka
	# phases left, read back through the listener; one blob of each whole.
	jq -c . "$tmp"/env-http-*.json >"$tmp/env-http" || die "${PHASE_LABEL[http]}: the answers are not JSON"
	check_envelopes http "$tmp/env-http"
	check_download http lfs-http "$(tail -1 "$tmp/env-http")"
	for p in kafka idem; do
		kcat -C -b "127.0.0.1:${KPORT[lfs-kafka]}" -t "bench-$p" -o beginning -e -q -f '%s\n' >"$tmp/env-$p" ||
			die "${PHASE_LABEL[$p]}: reading the records back failed"
		check_envelopes "$p" "$tmp/env-$p"
		check_download "$p" lfs-kafka "$(tail -1 "$tmp/env-$p")"
	done

	echo
	echo "${BLOB_MIB} MiB blobs, seconds per round and MB/s over all rounds; Kafka over /lfs/produce (the target is 0.80 or more):"
	awk -v phases="${LFS_PHASES[*]}" -v mib="$BLOB_MIB" \
		-v lh="${PHASE_LABEL[http]}" -v lk="${PHASE_LABEL[kafka]}" -v li="${PHASE_LABEL[idem]}" '
	{ t[$1, $2] = $4 - $3; tot[$1] += $4 - $3; if ($2 > n) n = $2 }
	END {
		np = split(phases, ph, " "); lab["http"] = lh; lab["kafka"] = lk; lab["idem"] = li
		printf "  %-26s", "round"; for (r = 1; r <= n; r++) printf " %6d", r; printf " %9s %8s\n", "MB/s", "ratio"
		for (i = 1; i <= np; i++) {
			p = ph[i]; printf "  %-26s", lab[p]
			for (r = 1; r <= n; r++) printf " %6.2f", t[p, r]
			mbs = n * mib * 1048576 / 1e6 / tot[p]
			if (i == 1) { base = mbs; printf " %9.1f %8s\n", mbs, "" } else printf " %9.1f %8.2f\n", mbs, mbs / base
		}
	}' "$tmp/times"
	echo
	bound=$((idle_kafka / 1024 + 2 * KMAXREQ * KINFLIGHT / 1048576 + PART_SLACK_MIB))
	echo "peak RSS (VmHWM), MiB:"
	printf '  %-26s peak %5d, idle %5d\n' "${PHASE_LABEL[http]}" $((peak_http / 1024)) $((idle_http / 1024))
	printf '  %-26s peak %5d, idle %5d, bound %d (idle + 2 x max-request %d MiB x inflight %d + %d)\n' \
		"Kafka listener, both" $((peak_kafka / 1024)) $((idle_kafka / 1024)) "$bound" $((KMAXREQ >> 20)) "$KINFLIGHT" "$PART_SLACK_MIB"
	if ((peak_kafka / 1024 > bound)); then
		echo "bench.sh: FAILED: the Kafka listener's peak RSS, $((peak_kafka / 1024)) MiB, is past its documented bound of $bound MiB" >&2
		exit 1
	fi
}

# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# copy mode: server-side copies through s3seal against the store's own.
# ---------------------------------------------------------------------------

# copy_io: s3seal's rchar + wchar so far.
copy_io() { awk '/^(rchar|wchar):/ {n += $2} END {printf "%d\n", n}' "/proc/${PID[s3seal]}/io"; }

# copy_timed LABEL FRONT CMD...: runs CMD, appends "LABEL FRONT seconds
# io-bytes" to $tmp/times.
copy_timed() {
	local label=$1 front=$2 t0 t1 io0 io1
	shift 2
	io0=$(copy_io)
	t0=$EPOCHREALTIME
	"$@" >/dev/null || die "$label through $front failed"
	t1=$EPOCHREALTIME
	io1=$(copy_io)
	echo "$label|$front|$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')|$((io1 - io0))" >>"$tmp/times"
}

copy_bench() {
	local rounds=${1:-3} gib f r n key
	[[ $rounds =~ ^[1-9][0-9]*$ && $# -le 1 ]] || die "usage: scripts/bench.sh copy [ROUNDS]"
	unset AWS_CA_BUNDLE # set on some machines, it breaks clients talking plain HTTP
	export LC_ALL=C
	command -v aws >/dev/null || die "needs the aws CLI"
	command -v go >/dev/null || die "needs go (to build s3seal)"
	find_rclone
	find_versitygw
	tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/s3seal-copybench-XXXX") || die "cannot create a directory under ${TMPDIR:-/var/tmp}"
	trap cleanup EXIT
	export RCLONE_CONFIG=$tmp/rclone.conf
	: >"$RCLONE_CONFIG"
	go build -o "$tmp/s3seal" ./cmd/s3seal || die "building s3seal failed"
	FRONTS=(direct s3seal)
	for f in "${FRONTS[@]}"; do PORT[$f]=$(free_port); done
	mkdir -p "$tmp/store" "$tmp/s3seal-data"
	head -c 32 /dev/urandom | base64 >"$tmp/master.key"
	chmod 600 "$tmp/master.key"
	start_front direct
	start_front s3seal
	printf '[default]\nregion = us-east-1\ns3 =\n    addressing_style = path\n' >"$tmp/aws.conf"
	export AWS_CONFIG_FILE=$tmp/aws.conf AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_ACCESS_KEY_ID=$AK AWS_SECRET_ACCESS_KEY=$SK AWS_EC2_METADATA_DISABLED=true
	awsf() { local f=$1; shift; aws --endpoint-url "http://127.0.0.1:${PORT[$f]}" "$@"; }
	head -c 1G /dev/urandom >"$tmp/f1g"
	for f in "${FRONTS[@]}"; do
		s3_remote "c$f" "${PORT[$f]}"
		awsf "$f" s3 mb "s3://copy-$f" >/dev/null || die "creating a bucket through $f failed"
		rc copyto --no-check-dest --s3-upload-cutoff 5G "$tmp/f1g" "c$f:copy-$f/one" || die "the 1 GiB PUT through $f failed"
		awsf "$f" s3 cp --no-progress "$tmp/f1g" "s3://copy-$f/mp1" >/dev/null || die "the 1 GiB upload through $f failed"
	done
	echo "s3seal at $(git describe --always --dirty 2>/dev/null || echo '?'), $("$RCLONE" version | head -1), $(aws --version 2>&1 | cut -d' ' -f1), versitygw posix on $(df --output=fstype "$tmp" | tail -1), $(nproc) CPUs"
	for r in $(seq "$rounds"); do
		for f in "${FRONTS[@]}"; do
			copy_timed "rclone copyto 1 GiB (CopyObject)" "$f" rc copyto "c$f:copy-$f/one" "c$f:copy-$f/one-$r"
			copy_timed "aws s3 cp 1 GiB (UploadPartCopy)" "$f" awsf "$f" s3 cp --no-progress "s3://copy-$f/mp1" "s3://copy-$f/mp1-$r"
			rc deletefile "c$f:copy-$f/one-$r" && awsf "$f" s3 rm "s3://copy-$f/mp1-$r" >/dev/null
		done
	done
	# What came back: the 1 GiB copy reads back as the file. Then the
	# 1 GiB objects go, to leave the disk to the large ones.
	rc copyto "cs3seal:copy-s3seal/one" "$tmp/back" && cmp -s "$tmp/back" "$tmp/f1g" || die "the copy through s3seal reads back wrong"
	rm -f "$tmp/back" "$tmp/f1g"
	for f in "${FRONTS[@]}"; do
		rc deletefile "c$f:copy-$f/one" && awsf "$f" s3 rm "s3://copy-$f/mp1" >/dev/null
	done
	for gib in ${S3SEAL_BENCH_COPY_GIB:-1 10}; do
		((gib > 1)) || continue
		for f in "${FRONTS[@]}"; do
			n=$((gib << 30))
			key="s3://copy-$f/mp$gib"
			head -c "$n" /dev/urandom | awsf "$f" s3 cp --no-progress --expected-size "$n" - "$key" >/dev/null ||
				die "the $gib GiB upload through $f failed"
			copy_timed "aws s3 cp $gib GiB (UploadPartCopy)" "$f" awsf "$f" s3 cp --no-progress "$key" "$key-copy"
			[[ $(awsf "$f" s3api head-object --bucket "copy-$f" --key "mp$gib-copy" --query ContentLength) == "$n" ]] ||
				die "the $gib GiB copy through $f has another size"
			awsf "$f" s3 rm "$key" >/dev/null && awsf "$f" s3 rm "$key-copy" >/dev/null
		done
	done
	echo
	echo "server-side copies: s3seal's time over the store's own (1.00 = as fast), and what s3seal itself read and wrote"
	awk -F'|' '
	function stats(a, c,   i, j, x) {
		for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
		return c == 1 ? sprintf("%.2f", a[1]) : sprintf("%.2f %.2f %.2f", a[1], (c % 2) ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2, a[c])
	}
	$2 == "direct" { d[$1, ++nd[$1]] = $3; if (!($1 in seen)) { seen[$1] = 1; order[++no] = $1 } }
	$2 == "s3seal" { s[$1, ++ns[$1]] = $3; io[$1] = io[$1] > $4 ? io[$1] : $4 }
	END {
		printf "%-36s %-16s %-16s %s\n", "copy", "direct s", "s3seal/direct", "s3seal I/O (max)"
		for (i = 1; i <= no; i++) {
			k = order[i]; c = nd[k]
			for (r = 1; r <= c; r++) { x[r] = d[k, r]; q[r] = s[k, r] / d[k, r] }
			printf "%-36s %-16s %-16s %.1f MiB\n", k, stats(x, c), stats(q, c), io[k] / 1048576
		}
	}' "$tmp/times"
}

# ---------------------------------------------------------------------------
# restore mode: a tree of small files up to s3seal on its embedded store
# and back, with rclone.
# ---------------------------------------------------------------------------

# restore_front NAME BIN: starts BIN on its embedded store as front NAME.
restore_front() {
	PORT[$1]=$(free_port)
	mkdir -p "$tmp/$1-data"
	start "$1" env S3SEAL_SECRET_KEY=$SK "$2" serve --listen "127.0.0.1:${PORT[$1]}" --data-dir "$tmp/$1-data" \
		--key-file "$tmp/master.key" --access-key "$AK" --shutdown-delay 0s
	s3_remote "c$1" "${PORT[$1]}"
	"$RCLONE" mkdir "c$1:restore" || die "creating the bucket through $1 failed"
}

restore_bench() {
	local files=${1:-15000} kib=${S3SEAL_BENCH_RESTORE_KIB:-8} f i d t0 t1 t2
	[[ $files =~ ^[1-9][0-9]*$ && $# -le 1 ]] || die "usage: scripts/bench.sh restore [FILES]"
	unset AWS_CA_BUNDLE # set on some machines, it breaks clients talking plain HTTP
	command -v go >/dev/null || die "needs go (to build s3seal)"
	find_rclone
	tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/s3seal-restorebench-XXXX") || die "cannot create a directory under ${TMPDIR:-/var/tmp}"
	trap cleanup EXIT
	export RCLONE_CONFIG=$tmp/rclone.conf
	: >"$RCLONE_CONFIG"
	go build -o "$tmp/s3seal" ./cmd/s3seal || die "building s3seal failed"
	head -c 32 /dev/urandom | base64 >"$tmp/master.key"
	chmod 600 "$tmp/master.key"
	# The tree: 30 top-level directories, directories of 5 files under them.
	python3 - "$tmp/tree" "$files" "$kib" <<-'PY' || die "making the tree failed"
		import os, sys
		root, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) * 1024
		for i in range(n):
		    d = os.path.join(root, "t%02d" % (i % 30), "d%04d" % (i // 150))
		    os.makedirs(d, exist_ok=True)
		    with open(os.path.join(d, "f%05d.bin" % i), "wb") as f:
		        f.write(os.urandom(size))
	PY
	FRONTS=(s3seal)
	[[ -z ${S3SEAL_BENCH_BASE:-} ]] || FRONTS+=(base)
	restore_front s3seal "$tmp/s3seal"
	[[ -z ${S3SEAL_BENCH_BASE:-} ]] || restore_front base "$S3SEAL_BENCH_BASE"
	echo "s3seal at $(git describe --always --dirty 2>/dev/null || echo '?'), $("$RCLONE" version | head -1), $files files of $kib KiB in $(find "$tmp/tree" -mindepth 1 -type d | wc -l) directories, data dir on $(df --output=fstype "$tmp" | tail -1), $(nproc) CPUs"
	printf '%-14s %10s %10s %16s\n' front "upload s" "restore s" "restore/upload"
	for f in "${FRONTS[@]}"; do
		t0=$EPOCHREALTIME
		rc copy "$tmp/tree" "c$f:restore/tree" || die "the upload through ${LABEL[$f]} failed"
		t1=$EPOCHREALTIME
		rc copy "c$f:restore/tree" "$tmp/back-$f" || die "the restore through ${LABEL[$f]} failed"
		t2=$EPOCHREALTIME
		diff -r "$tmp/tree" "$tmp/back-$f" >/dev/null || die "the restore through ${LABEL[$f]} differs from the tree"
		rm -rf "$tmp/back-$f"
		awk -v f="${LABEL[$f]}" -v a="$t0" -v b="$t1" -v c="$t2" \
			'BEGIN {printf "%-14s %10.1f %10.1f %16.2f\n", f, b - a, c - b, (c - b) / (b - a)}'
	done
	echo "goal (issue 35): restore/upload 1.5 or less"
	echo
	echo "one listing page of 1000 in a bucket of 15,000 keys on the embedded store (BenchmarkListPage, median of 5 runs):"
	go test ./backend/embedded -run '^$' -bench 'BenchmarkListPage' -benchtime 20x -count 5 >"$tmp/listpage" ||
		die "BenchmarkListPage failed: $(tail -5 "$tmp/listpage")"
	awk '
	/^BenchmarkListPage\// { split($1, p, "/"); sub(/-[0-9]+$/, "", p[2]); v[p[2], ++n[p[2]]] = $3 }
	function median(k,   i, j, t, c, a) {
		c = n[k]; for (i = 1; i <= c; i++) a[i] = v[k, i]
		for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return a[int((c + 1) / 2)]
	}
	END { printf "  first page %.1f ms, last page %.1f ms, last/first %.2f\n", median("first") / 1e6, median("last") / 1e6, median("last") / median("first") }' "$tmp/listpage"
}

if [[ ${1:-} == restore ]]; then
	shift
	restore_bench "$@"
	exit
fi
if [[ ${1:-} == copy ]]; then
	shift
	copy_bench "$@"
	exit
fi
if [[ ${1:-} == lfs-kafka ]]; then
	shift
	lfs_kafka "$@"
	exit
fi
if [[ ${1:-} == compare ]]; then
	shift
	compare "$@"
	exit
fi
if [[ ${1:-} == kms ]]; then
	# PUT and GET of 4 KiB and 128 MiB with a file key, a KMS key and the
	# KMS with bucket keys (e2e/bench_kms_test.go), ratios to the file key.
	shift
	out=$(mktemp)
	trap 'rm -f "$out"' EXIT
	go test ./e2e -run '^$' -bench 'BenchmarkKMS$' -count 5 -timeout 60m "$@" | tee "$out"
	echo
	echo "ratio to the file key (median of 5 runs, ns/op; 1.00 = as fast):"
	awk '
	/^BenchmarkKMS\// {
	  split($1, p, "/"); op = p[2]; mode = p[3]; sub(/-[0-9]+$/, "", mode)
	  n[op, mode]++; v[op, mode, n[op, mode]] = $3; ops[op] = 1
	}
	function median(op, mode,   i, j, t, c, a) {
	  c = n[op, mode]; for (i = 1; i <= c; i++) a[i] = v[op, mode, i]
	  for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	  return a[int((c + 1) / 2)]
	}
	END {
	  printf "  %-12s %8s %15s %16s\n", "", "kms", "kms-unchecked", "kms+bucket-key"
	  for (op in ops) printf "  %-12s %8.2f %15.2f %16.2f\n", op, median(op, "kms") / median(op, "file"), median(op, "kms-unchecked") / median(op, "file"), median(op, "kms-bucket-key") / median(op, "file")
	}' "$out" | sort
	exit
fi
if [[ ${1:-} == cpu ]]; then
	shift
	exec go test ./e2e -run '^$' -bench 'BenchmarkCPUPerGiB' -benchtime 1x -timeout 30m "$@"
fi
if [[ ${1:-} == multipart ]]; then
	shift
	exec go test ./e2e -run '^$' -bench 'BenchmarkMultipartUploads' -benchtime 1x -timeout 60m "$@"
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test ./sealstore -run '^$' -bench 'Benchmark(Put|Get)$' -count 5 "$@" | tee "$out"
echo
echo "ratio sealed/direct (median of 5 runs, ns/op):"
awk '
/^Benchmark(Put|Get)\// {
  split($1, p, "/"); op = p[1]; sub(/^Benchmark/, "", op); size = p[2]; mode = p[3]; sub(/-[0-9]+$/, "", mode)
  key = op " " size; n[key, mode]++; v[key, mode, n[key, mode]] = $3; keys[key] = 1
}
function median(key, mode,   i, j, t, c, a) {
  c = n[key, mode]; for (i = 1; i <= c; i++) a[i] = v[key, mode, i]
  for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
  return a[int((c + 1) / 2)]
}
END {
  for (k in keys) printf "  %-16s %6.2f\n", k, median(k, "sealed") / median(k, "direct")
}' "$out" | sort
echo
mbs() { awk '/^Benchmark/ {for (i = 2; i <= NF; i++) if ($i == "MB/s") printf "  %-28s %s MB/s\n", $1, $(i-1)}'; }
echo "crypto alone (MB/s):"
go test ./crypto -run '^$' -bench 'Benchmark(Writer|Reader)' -benchtime 1s "$@" | mbs
echo
echo "one stream sealed into a discarding spool, beside MD5 alone, its bound (MB/s):"
go test ./sealstore -run '^$' -bench 'Benchmark(SealBody|MD5)$' -benchtime 10x -count 3 "$@" | tee "$out" | mbs
awk '/^BenchmarkSealBody/ {s += $(NF-1); ns++} /^BenchmarkMD5/ {m += $(NF-1); nm++}
END { if (ns && nm) printf "  sealing at %.0f %% of the MD5 rate (means of %d runs)\n", 100 * (s / ns) / (m / nm), ns }' "$out"
echo
echo "checksum hashers (MB/s):"
go test ./checksum -run '^$' -bench 'BenchmarkHasher' -benchtime 1s "$@" | mbs
