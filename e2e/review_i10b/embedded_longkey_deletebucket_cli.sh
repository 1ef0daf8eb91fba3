#!/bin/sh
# Review i10b: a PUT of a 231-byte key (short segments) on the embedded
# store fails 503 (gofakes3's metadata file name > 255 bytes) and leaves
# its directory chain behind: the bucket then lists empty but DeleteBucket
# answers BucketNotEmpty. Needs: s3seal serve --listen 127.0.0.1:7392
#   --data-dir DIR --access-key AKREV --secret-key SKREVsecret123
set -u
unset AWS_CA_BUNDLE
export AWS_ACCESS_KEY_ID=AKREV AWS_SECRET_ACCESS_KEY=SKREVsecret123 AWS_DEFAULT_REGION=us-east-1
S="aws --endpoint-url http://127.0.0.1:7392 s3api"
B=review-lk-$$
$S create-bucket --bucket $B >/dev/null
K=$(python3 -c "print('abcdefghi/'*23+'z')")
$S put-object --bucket $B --key "$K" --body /etc/hostname; echo "put rc=$? (expected 0, or a 400 naming a limit)"
echo "listing: $($S list-objects-v2 --bucket $B --query 'KeyCount' --output text) keys"
$S delete-bucket --bucket $B; echo "delete-bucket rc=$? (expected 0: the bucket lists empty)"
