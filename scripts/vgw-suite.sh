#!/usr/bin/env bash
# Runs versitygw's integration suite (`versitygw test full-flow`) against
# s3seal and prints its tally. Not part of CI: the suite is not vendored and
# is fetched by whoever measures. Usage:
#
#   scripts/vgw-suite.sh VERSITYGW [embedded|moto|http://host:port]
#   scripts/vgw-suite.sh compare A.log B.log
#
# VERSITYGW is a versitygw binary or a checkout of its source (built here
# with `go build ./cmd/versitygw`). With "moto", moto_server is the backend;
# default: the embedded store. With a URL, no s3seal is started: the suite
# runs against that endpoint, which must know the user vgwadmin/vgwsecret123
# (e.g. versitygw itself, to compare with). The log is left in
# $VGW_OUT/suite.log (default /tmp/s3seal-vgw). "compare" lists the tests
# that pass in log A and fail in log B, with B's first line of failure.
#
# The suite stops at the first panic of its own harness (it dereferences
# optional answer fields without a nil check), so one missing field in an
# answer ends the run early: RAN in the tally then falls short of the
# suite's size. Tests that exec a local ./versitygw fail on every gateway.
set -euo pipefail
if [[ ${1:-} == compare ]]; then
	a=${2:?log A} b=${3:?log B}
	# A test's teardown may print without a newline, so PASS can follow
	# other text on its line.
	passes() { grep -ao 'PASS [A-Za-z0-9_]*' "$1" | sed 's/^PASS //' | sort -u; }
	comm -23 <(passes "$a") <(passes "$b") |
		while read -r t; do
			line=$(grep -ao -m1 "FAIL $t:.*" "$b" | head -1 || true)
			[[ -n $line ]] || line="FAIL $t: (not run)"
			echo "${line#FAIL }" | cut -c1-240
		done
	exit 0
fi
vgw=${1:?versitygw binary or source checkout}
mode=${2:-embedded}
[[ $mode == embedded || $mode == moto || $mode == http://* ]] ||
	{ echo "mode: embedded, moto or http://host:port, not $mode" >&2 && exit 2; }
cd "$(dirname "$0")/.."
out=${VGW_OUT:-/tmp/s3seal-vgw}
rm -rf "$out" && mkdir -p "$out"
if [[ -d $vgw ]]; then
	(cd "$vgw" && go build -o "$out/versitygw" ./cmd/versitygw)
	vgw=$out/versitygw
fi
. scripts/serve-lib.sh

if [[ $mode == http://* ]]; then
	url=$mode
else
	# One admin credential: the suite's user owns the buckets it creates,
	# so may change their configuration and bypass GOVERNANCE retention.
	start_s3seal "$out" "$mode" '{"credentials": [
	  {"access_key": "vgwadmin", "secret_key": "vgwsecret123", "read": ["*"], "write": ["*"], "admin": true}
	]}'
	url=http://127.0.0.1:$port
fi
# The suite runs where no ./versitygw is, so the tests that drive
# versitygw's own admin commands fail fast instead of hanging.
mkdir "$out/run"
(cd "$out/run" && env -u AWS_CA_BUNDLE "$vgw" test -a vgwadmin -s vgwsecret123 -e "$url" \
	full-flow --vs -p >../suite.log 2>&1) || true
sed -i 's/\x1b\[[0-9;]*m//g' "$out/suite.log" # colours off
grep -a '^RAN:' "$out/suite.log" || { tail -20 "$out/suite.log"; echo "suite ended early (see $out/suite.log)" >&2; exit 1; }
