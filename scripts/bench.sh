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
set -euo pipefail
cd "$(dirname "$0")/.."
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
echo "crypto alone (MB/s):"
go test ./crypto -run '^$' -bench 'Benchmark(Writer|Reader)' -benchtime 1s "$@" | awk '/^Benchmark/ {for (i = 2; i <= NF; i++) if ($i == "MB/s") printf "  %-28s %s MB/s\n", $1, $(i-1)}'
