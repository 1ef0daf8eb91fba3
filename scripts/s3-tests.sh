#!/usr/bin/env bash
# Runs Ceph's S3 compatibility suite (s3-tests) against s3seal and prints
# the pass count per family. Not part of CI: the suite is not vendored and
# is fetched by whoever measures. Usage:
#
#   scripts/s3-tests.sh /path/to/s3-tests-checkout [embedded|moto|http://host:port] [pytest args...]
#   scripts/s3-tests.sh compare A.junit.xml B.junit.xml
#
# Needs python3 with boto3, and pytest, munch, gevent, isodate, requests,
# pytz, httplib2, lxml (Debian: apt-get install python3-pytest python3-munch
# python3-gevent python3-isodate python3-requests python3-tz python3-httplib2
# python3-lxml python3-yaml; Debian's dist-packages are added to the path
# after the interpreter's own, so a newer boto3 installed with pip wins).
# With "moto", moto_server is the backend; default: the embedded store.
# With a URL, no s3seal is started: the suite runs against that S3 endpoint,
# which must know the suite's users (s3tests.conf.SAMPLE), e.g. another
# gateway to compare with. The JUnit report is left in $S3TESTS_OUT
# (default /tmp/s3seal-s3tests). "compare" prints the tests that pass in
# report A and fail in B, by family, and their most common causes in B
# (scripts/s3-tests-compare.py). The summary ends with the passes among
# the AWS set: test_s3.py's tests marked neither fails_on_aws nor
# fails_on_rgw (589 at ceph/s3-tests 8f0ae7b), listed in $S3TESTS_OUT/aws-set.txt.
set -euo pipefail
compare=$(cd "$(dirname "$0")" && pwd)/s3-tests-compare.py
if [[ ${1:-} == compare ]]; then
	exec python3 "$compare" "${2:?JUnit report A}" "${3:?JUnit report B}"
fi
suite=$(cd "${1:?path to an s3-tests checkout}" && pwd)
mode=${2:-embedded}
[[ $mode == embedded || $mode == moto || $mode == http://* ]] ||
	{ echo "mode: embedded, moto or http://host:port, not $mode" >&2 && exit 2; }
shift $(($# < 2 ? $# : 2))
cd "$(dirname "$0")/.."
out=${S3TESTS_OUT:-/tmp/s3seal-s3tests}
rm -rf "$out" && mkdir -p "$out"
. scripts/serve-lib.sh

if [[ $mode == http://* ]]; then
	hostport=${mode#http://} && hostport=${hostport%%/*}
	host=${hostport%:*} port=${hostport##*:}
	[[ $port != "$hostport" ]] || port=80
else
	host=127.0.0.1
	# The suite's three users (main, alt, tenant) and its IAM user, with
	# the canonical ids, display names and e-mail addresses of
	# s3tests.conf.SAMPLE (ACL answers name them), an account each (the
	# suite's users are distinct AWS accounts), and access to every
	# bucket: within the lists, each owns the buckets it creates and is
	# decided by their ACLs as on S3. All are marked admin: admin is what
	# lets a credential change what the store enforces (CORS, lifecycle,
	# Object Lock, website) and bypass GOVERNANCE retention, which the
	# suite's teardown does on every DeleteObjects; it makes no credential
	# the owner of another's bucket. Unsigned requests are served
	# (--allow-anonymous): the suite checks what public ACLs grant them.
	# Each may name any KMS key (kms_keys): the suite names two.
	export S3SEAL_ALLOW_ANONYMOUS=true
	start_s3seal "$out" "$mode" '{"credentials": [
	  {"access_key": "0555b35654ad1656d804", "secret_key": "h7GhxuBLTrlhVUyxSPUKUV8r/2EI4ngqJxD7iBdBYLhwluN30JaT3Q==", "read": ["*"], "write": ["*"], "admin": true, "kms_keys": ["*"],
	   "account": "100000000001", "canonical_id": "testid", "display_name": "M. Tester", "email": "tester@ceph.com"},
	  {"access_key": "NOPQRSTUVWXYZABCDEFG", "secret_key": "nopqrstuvwxyzabcdefghijklmnabcdefghijklm", "read": ["*"], "write": ["*"], "admin": true, "kms_keys": ["*"],
	   "account": "100000000002", "canonical_id": "56789abcdef0123456789abcdef0123456789abcdef0123456789abcdef01234", "display_name": "john.doe", "email": "john.doe@example.com"},
	  {"access_key": "HIJKLMNOPQRSTUVWXYZA", "secret_key": "opqrstuvwxyzabcdefghijklmnopqrstuvwxyzab", "read": ["*"], "write": ["*"], "admin": true, "kms_keys": ["*"],
	   "account": "100000000003", "canonical_id": "testx$9876543210abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "display_name": "testx$tenanteduser", "email": "tenanteduser@example.com"},
	  {"access_key": "ABCDEFGHIJKLMNOPQRST", "secret_key": "abcdefghijklmnopqrstuvwxyzabcdefghijklmn", "read": ["*"], "write": ["*"], "admin": true, "kms_keys": ["*"],
	   "account": "100000000004", "canonical_id": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "display_name": "youruseridhere", "email": "s3@example.com"}
	]}'
fi

sed -e "s/^port = .*/port = $port/" -e "s/^host = .*/host = $host/" \
	-e 's/^bucket prefix = .*/bucket prefix = s3seal-{random}-/' \
	"$suite/s3tests.conf.SAMPLE" >"$out/s3tests.conf"
# The suite's SSE-KMS tests name two keys (kms_keyid, kms_keyid2).
if [[ -n ${kms_arn1:-} ]]; then
	sed -i "/^\[s3 main\]/a kms_keyid = $kms_arn1\nkms_keyid2 = $kms_arn2" "$out/s3tests.conf"
fi
# S3TESTS_ISOLATE=1 gives every test its own bucket prefix: the suite
# empties a test's buckets in setup and teardown with ListObjectVersions and
# one bucket it cannot empty (versions unsupported, objects locked) would
# otherwise fail the setup of every later test. Buckets are left behind.
plugin=()
if [[ ${S3TESTS_ISOLATE:-} == 1 ]]; then
	cat >"$out/s3tests_isolate.py" <<-'EOF'
	import s3tests.functional as f
	def pytest_runtest_setup(item):
	    if f.prefix is not None:
	        f.prefix = f.choose_bucket_prefix(f.prefix.split("-")[0] + "-{random}-")
	EOF
	plugin=(-p s3tests_isolate)
fi
cd "$suite"
PYTHONPATH="$out" S3TEST_CONF="$out/s3tests.conf" env -u AWS_CA_BUNDLE python3 -c '
import sys
sys.path.append("/usr/lib/python3/dist-packages")
import pytest
sys.exit(pytest.main(sys.argv[1:]))' -q -p no:cacheprovider "${plugin[@]}" --junitxml="$out/junit.xml" \
	s3tests/functional/test_s3.py s3tests/functional/test_headers.py "$@" >"$out/pytest.log" 2>&1 || true
tail -1 "$out/pytest.log"
# The AWS set: the tests of test_s3.py that AWS itself passes (marked
# neither fails_on_aws nor fails_on_rgw), the measure issue 22 sets.
PYTHONPATH="$out" S3TEST_CONF="$out/s3tests.conf" env -u AWS_CA_BUNDLE python3 -c '
import sys
sys.path.append("/usr/lib/python3/dist-packages")
import pytest
sys.exit(pytest.main(sys.argv[1:]))' -q -p no:cacheprovider --collect-only -m 'not fails_on_aws and not fails_on_rgw' \
	s3tests/functional/test_s3.py 2>/dev/null | sed -n 's/^s3tests\/functional\/test_s3.py:://p' >"$out/aws-set.txt" || true
python3 "$compare" "$out/junit.xml" "--aws-set=$out/aws-set.txt"
