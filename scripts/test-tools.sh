# Sourced by test.sh and soak.sh: makes sure the programs the tests need
# are on the PATH. On Debian it installs what is missing of gcc (go test
# -race and the PKCS#11 build need cgo), rclone, s3cmd, restic, curl,
# kcat, jq, haproxy, SoftHSM2 and OpenSC's pkcs11-tool (softhsm2, opensc:
# the PKCS#11 tests' HSM), boto3 for python3 (python3-boto3), the
# confluent-kafka producer for Debian's /usr/bin/python3
# (python3-confluent-kafka: librdkafka from Python, the Kafka listener's
# tests) and aws (package awscli), which needs root;
# moto is not packaged by Debian, so without moto_server it stops and says
# how to install it. The caller defines die.

# haproxy lives in /usr/sbin, which is not on every user's PATH.
export PATH="$PATH:/usr/sbin"

# Debian packages the e2e tests need, by command name -> package name.
declare -A debs=([gcc]=gcc [rclone]=rclone [s3cmd]=s3cmd [restic]=restic [curl]=curl [kcat]=kcat [jq]=jq [haproxy]=haproxy [python3]=python3
	[softhsm2-util]=softhsm2 [pkcs11-tool]=opensc)
# The SoftHSM2 module the PKCS#11 tests (and docs/KMS.md) load.
softhsm_module=/usr/lib/softhsm/libsofthsm2.so
missing=()
for cmd in "${!debs[@]}"; do
	command -v "$cmd" >/dev/null 2>&1 || missing+=("${debs[$cmd]}")
done
# boto3, which the e2e tests' python3 scripts import.
has_boto3() { python3 -c 'import boto3' >/dev/null 2>&1; }
has_boto3 || missing+=(python3-boto3)
# confluent-kafka, which the Kafka listener's tests import from Debian's
# python3 (/usr/bin/python3, whatever python3 comes first on PATH).
has_confluent_kafka() { /usr/bin/python3 -c 'import confluent_kafka' >/dev/null 2>&1; }
has_confluent_kafka || missing+=(python3-confluent-kafka)
[[ -e $softhsm_module || " ${missing[*]} " == *" softhsm2 "* ]] || missing+=(softhsm2)
if ((${#missing[@]})); then
	[[ $(id -u) -eq 0 ]] || die "missing ${missing[*]}: run as root or install them (apt-get install -y ${missing[*]})"
	echo "$(basename "$0"): installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q || die "apt-get update failed"
	apt-get install -y -q --no-install-recommends "${missing[@]}" || die "apt-get install ${missing[*]} failed"
fi
[[ -x /usr/bin/rclone ]] || die "/usr/bin/rclone (Debian's rclone) missing after install"
command -v gcc >/dev/null 2>&1 || die "gcc missing after install: go test -race needs a C compiler (cgo)"
command -v softhsm2-util >/dev/null 2>&1 || die "softhsm2-util missing after installing Debian's softhsm2: the PKCS#11 tests make their tokens with it"
command -v pkcs11-tool >/dev/null 2>&1 || die "pkcs11-tool missing after installing Debian's opensc: the PKCS#11 tests make their keys with it"
[[ -e $softhsm_module ]] || die "$softhsm_module missing after installing Debian's softhsm2 (its libsofthsm2): the PKCS#11 tests load it"
has_boto3 || die "python3 ($(command -v python3)) cannot import boto3 after installing python3-boto3, which is for Debian's /usr/bin/python3: put /usr/bin first on PATH, or pip install boto3 for this python3"
has_confluent_kafka || die "/usr/bin/python3 cannot import confluent_kafka after installing Debian's python3-confluent-kafka: the Kafka listener's tests produce with it"

# aws and moto_server usually come with the machine (pyenv). When they are
# missing, install what Debian has: awscli gives aws; moto is looked for as a
# Debian package too (python3-moto), and otherwise the message says how to
# install it from PyPI.
need_deb() { # need_deb CMD PKG: install PKG for CMD when CMD is missing
	command -v "$1" >/dev/null 2>&1 && return 0
	[[ $(id -u) -eq 0 ]] || die "$1 not found on PATH: run as root to install Debian's $2 (apt-get install -y $2), or install it yourself"
	echo "$(basename "$0"): $1 missing: installing Debian's $2"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q || die "apt-get update failed"
	apt-get install -y -q --no-install-recommends "$2" || die "apt-get install $2 failed"
	command -v "$1" >/dev/null 2>&1 || die "$1 still not on PATH after installing $2"
}
need_deb aws awscli
if ! command -v moto_server >/dev/null 2>&1; then
	moto_pkg=""
	if [[ $(id -u) -eq 0 ]]; then
		apt-get update -q >/dev/null 2>&1 || true
		moto_pkg=$(apt-cache search --names-only '^python3-moto$' | awk '{print $1}')
	fi
	[[ -n $moto_pkg ]] || die "moto_server not found on PATH and Debian has no moto package here: install it from PyPI with pipx install 'moto[server]' (or pip install 'moto[server]'), then make sure moto_server is on PATH"
	need_deb moto_server "$moto_pkg"
fi
for cmd in go gcc aws moto_server s3cmd restic haproxy softhsm2-util pkcs11-tool; do
	command -v "$cmd" >/dev/null 2>&1 || die "$cmd not found on PATH"
done
