#!/bin/sh
# Review i10b: aws CLI repro of "DeleteBucket of a versioned bucket aborts
# the uploads, then answers BucketNotEmpty". Needs moto_server on
# 127.0.0.1:5077 and s3seal serve --listen 127.0.0.1:7391
#   --backend-endpoint http://127.0.0.1:5077 --backend-path-style ...
#   --access-key AKREV --secret-key SKREVsecret123
set -u
unset AWS_CA_BUNDLE
export AWS_ACCESS_KEY_ID=AKREV AWS_SECRET_ACCESS_KEY=SKREVsecret123 AWS_DEFAULT_REGION=us-east-1
S="aws --endpoint-url http://127.0.0.1:7391 s3api"
B=review-vdel-$$
$S create-bucket --bucket $B >/dev/null
$S put-bucket-versioning --bucket $B --versioning-configuration Status=Enabled
echo old > /tmp/review-p1
$S put-object --bucket $B --key old --body /tmp/review-p1 >/dev/null
$S delete-object --bucket $B --key old >/dev/null           # delete marker, version kept
U=$($S create-multipart-upload --bucket $B --key inprog --query UploadId --output text)
$S upload-part --bucket $B --key inprog --upload-id "$U" --part-number 1 --body /tmp/review-p1 >/dev/null
echo "uploads before: $($S list-multipart-uploads --bucket $B --query 'Uploads[].Key' --output text)"
$S delete-bucket --bucket $B; echo "delete-bucket rc=$? (expected BucketNotEmpty, nothing touched)"
echo "uploads after:  $($S list-multipart-uploads --bucket $B --query 'Uploads[].Key' --output text)  (expected: inprog)"
