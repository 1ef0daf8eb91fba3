#!/bin/sh
# Review i10b: rclone (1.60) copying a directory that holds a file named
# ".s3seal" to the embedded store: the small file lands first, then every
# multipart upload in the bucket fails with 400 InvalidArgument naming
# s3seal's internal key ".s3seal/uploads/<hash>/info".
# Needs: s3seal serve --listen 127.0.0.1:7392 --data-dir DIR
#   --access-key AKREV --secret-key SKREVsecret123
set -u
D=$(mktemp -d)
mkdir "$D/src" && echo hi > "$D/src/.s3seal" && head -c 12000000 /dev/urandom > "$D/src/big.bin"
cat > "$D/rclone.conf" <<EOC
[seal]
type = s3
provider = Other
access_key_id = AKREV
secret_access_key = SKREVsecret123
endpoint = http://127.0.0.1:7392
region = us-east-1
EOC
B=review-dot-$$
R="env -u AWS_CA_BUNDLE rclone --config $D/rclone.conf"
$R mkdir seal:$B
$R copy "$D/src" seal:$B --transfers 1 --order-by name,ascending --s3-upload-cutoff 5M --s3-chunk-size 5M --retries 1 --low-level-retries 1
echo "rclone copy rc=$? (expected 0); remote holds:"; $R ls seal:$B
