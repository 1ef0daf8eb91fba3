#!/bin/bash
# usage: start.sh NAME PORT [extra args]
name=$1; port=$2; shift 2
cd /tmp/lab
mkdir -p data-$name
AWS_ENDPOINT_URL_KMS=${KMSURL:-http://127.0.0.1:8111} AWS_REGION=eu-west-2 AWS_ACCESS_KEY_ID=kms-test AWS_SECRET_ACCESS_KEY=kms-test \
nohup /tmp/s3seal-r serve --listen 127.0.0.1:$port --data-dir /tmp/lab/data-$name --credentials-file /tmp/lab/creds.json \
  --kms-key aws-kms://$(cat keyC) --backend-endpoint http://127.0.0.1:5055 --backend-path-style --backend-access-key x --backend-secret-key y "$@" > s3seal-$name.log 2>&1 &
echo $! > s3seal-$name.pid
sleep 1.5
