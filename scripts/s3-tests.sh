#!/usr/bin/env bash
# Runs Ceph's S3 compatibility suite (s3-tests) against s3seal and prints
# the pass count per family. Not part of CI: the suite is not vendored and
# is fetched by whoever measures. Usage:
#
#   scripts/s3-tests.sh /path/to/s3-tests-checkout [embedded|moto] [pytest args...]
#
# Needs python3 with boto3, and pytest, munch, gevent, isodate, requests,
# pytz, httplib2, lxml (Debian: apt-get install python3-pytest python3-munch
# python3-gevent python3-isodate python3-requests python3-tz python3-httplib2
# python3-lxml python3-yaml; Debian's dist-packages are added to the path
# after the interpreter's own, so a newer boto3 installed with pip wins).
# With "moto", moto_server is the backend; default: the embedded store.
# The JUnit report is left in $S3TESTS_OUT (default /tmp/s3seal-s3tests).
set -euo pipefail
suite=$(cd "${1:?path to an s3-tests checkout}" && pwd)
mode=${2:-embedded}
shift $(($# < 2 ? $# : 2))
cd "$(dirname "$0")/.."
out=${S3TESTS_OUT:-/tmp/s3seal-s3tests}
rm -rf "$out" && mkdir -p "$out"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }

go build -o "$out/s3seal" ./cmd/s3seal
# The suite's three users (main, alt, tenant) and its IAM user, with
# access to every bucket; main is marked admin for bucket configuration.
cat >"$out/creds.json" <<'EOF'
{"credentials": [
  {"access_key": "0555b35654ad1656d804", "secret_key": "h7GhxuBLTrlhVUyxSPUKUV8r/2EI4ngqJxD7iBdBYLhwluN30JaT3Q==", "read": ["*"], "write": ["*"]},
  {"access_key": "NOPQRSTUVWXYZABCDEFG", "secret_key": "nopqrstuvwxyzabcdefghijklmnabcdefghijklm", "read": ["*"], "write": ["*"]},
  {"access_key": "HIJKLMNOPQRSTUVWXYZA", "secret_key": "opqrstuvwxyzabcdefghijklmnopqrstuvwxyzab", "read": ["*"], "write": ["*"]},
  {"access_key": "ABCDEFGHIJKLMNOPQRST", "secret_key": "abcdefghijklmnopqrstuvwxyzabcdefghijklmn", "read": ["*"], "write": ["*"]}
]}
EOF
chmod 600 "$out/creds.json"
port=$(free_port)
args=(serve --listen "127.0.0.1:$port" --credentials-file "$out/creds.json" --data-dir "$out/data")
if [[ $mode == moto ]]; then
	mport=$(free_port)
	moto_server -H 127.0.0.1 -p "$mport" >"$out/moto.log" 2>&1 &
	pids+=($!)
	wait_port "$mport"
	head -c 32 /dev/urandom | base64 >"$out/key" && chmod 600 "$out/key"
	args+=(--backend-endpoint "http://127.0.0.1:$mport" --backend-path-style --key-file "$out/key")
	export S3SEAL_BACKEND_ACCESS_KEY=moto S3SEAL_BACKEND_SECRET_KEY=moto
fi
"$out/s3seal" "${args[@]}" >"$out/s3seal.log" 2>&1 &
pids+=($!)
wait_port "$port"

sed -e "s/^port = .*/port = $port/" -e 's/^host = .*/host = 127.0.0.1/' \
	-e 's/^bucket prefix = .*/bucket prefix = s3seal-{random}-/' \
	"$suite/s3tests.conf.SAMPLE" >"$out/s3tests.conf"
cd "$suite"
S3TEST_CONF="$out/s3tests.conf" env -u AWS_CA_BUNDLE python3 -c '
import sys
sys.path.append("/usr/lib/python3/dist-packages")
import pytest
sys.exit(pytest.main(sys.argv[1:]))' -q -p no:cacheprovider --junitxml="$out/junit.xml" \
	s3tests/functional/test_s3.py s3tests/functional/test_headers.py "$@" >"$out/pytest.log" 2>&1 || true
tail -1 "$out/pytest.log"
python3 - "$out/junit.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET, re, collections
fam = [("object_lock", "lock"), ("versioning|version", "versioning"), ("post_object", "browser POST"),
       ("tagging|tags", "tagging"), ("policy", "bucket policy"), ("cors", "cors"), ("lifecycle", "lifecycle"),
       ("acl|grant|ownership", "acl"), ("checksum", "checksum"), ("multipart|_mp_|upload_part", "multipart"),
       ("encoding", "encoding"), ("if_|condition|_match", "conditional"), ("attributes", "attributes")]
count = collections.defaultdict(lambda: [0, 0])
for tc in ET.parse(sys.argv[1]).iter("testcase"):
    name = tc.get("name")
    f = next((label for pat, label in fam if re.search(pat, name)), "other")
    # A teardown error (the suite cleans its buckets with ListObjectVersions)
    # does not undo what the test itself asserted.
    bad = [c for c in tc if c.tag in ("failure", "skipped") or
           (c.tag == "error" and not (c.get("message") or "").startswith("failed on teardown"))]
    ok = not bad
    count[f][0 if ok else 1] += 1
print("family            pass  fail")
for f in sorted(count):
    print(f"{f:16} {count[f][0]:5} {count[f][1]:5}")
print(f"{'all':16} {sum(c[0] for c in count.values()):5} {sum(c[1] for c in count.values()):5}")
EOF
