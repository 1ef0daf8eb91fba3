# Sourced by the compatibility-suite scripts (s3-tests.sh, vgw-suite.sh):
# starts a freshly built s3seal for a suite, on the embedded store or in
# front of moto_server, and stops what it started when the script exits.
#
#   start_s3seal OUT MODE CREDS_JSON   (MODE: embedded or moto)
#
# builds ./cmd/s3seal into OUT, writes CREDS_JSON as OUT/creds.json, keeps
# the logs in OUT, and sets port to where s3seal listens, and kms_arn1
# and kms_arn2 to two keys of the KMS s3seal terminates SSE-KMS with.
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }

start_s3seal() {
	local out=$1 mode=$2 creds=$3 mport
	go build -o "$out/s3seal" ./cmd/s3seal
	printf '%s\n' "$creds" >"$out/creds.json"
	chmod 600 "$out/creds.json"
	port=$(free_port)
	local args=(serve --listen "127.0.0.1:$port" --credentials-file "$out/creds.json" --data-dir "$out/data")
	if [[ $mode == moto ]]; then
		mport=$(free_port)
		moto_server -H 127.0.0.1 -p "$mport" >"$out/moto.log" 2>&1 &
		pids+=($!)
		wait_port "$mport"
		head -c 32 /dev/urandom | base64 >"$out/key" && chmod 600 "$out/key"
		args+=(--backend-endpoint "http://127.0.0.1:$mport" --backend-path-style --key-file "$out/key")
		export S3SEAL_BACKEND_ACCESS_KEY=moto S3SEAL_BACKEND_SECRET_KEY=moto
	fi
	# SSE-KMS is terminated in s3seal, its keys in moto's KMS (the store's
	# own moto, or one of its own on the embedded store): kms_arn1 and
	# kms_arn2 name two keys, and no key is SSE-KMS's default.
	local kport=${mport:-}
	if [[ -z $kport ]]; then
		kport=$(free_port)
		moto_server -H 127.0.0.1 -p "$kport" >"$out/moto-kms.log" 2>&1 &
		pids+=($!)
		wait_port "$kport"
	fi
	export AWS_ENDPOINT_URL_KMS="http://127.0.0.1:$kport" AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=kms AWS_SECRET_ACCESS_KEY=kms
	kms_arn1=$(env -u AWS_CA_BUNDLE aws --endpoint-url "$AWS_ENDPOINT_URL_KMS" --region us-east-1 kms create-key --query KeyMetadata.Arn --output text)
	kms_arn2=$(env -u AWS_CA_BUNDLE aws --endpoint-url "$AWS_ENDPOINT_URL_KMS" --region us-east-1 kms create-key --query KeyMetadata.Arn --output text)
	args+=(--kms-key aws-kms://)
	"$out/s3seal" "${args[@]}" >"$out/s3seal.log" 2>&1 &
	pids+=($!)
	wait_port "$port"
}
