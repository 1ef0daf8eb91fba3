export AWS_ACCESS_KEY_ID=kms-test AWS_SECRET_ACCESS_KEY=kms-test AWS_DEFAULT_REGION=eu-west-2 AWS_EC2_METADATA_DISABLED=true AWS_MAX_ATTEMPTS=1
kms() { env -u AWS_CA_BUNDLE aws --endpoint-url http://127.0.0.1:8110 kms "$@"; }
moto() { env -u AWS_CA_BUNDLE AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=y AWS_DEFAULT_REGION=us-east-1 aws --endpoint-url http://127.0.0.1:5055 "$@"; }
s3as() { local who=$1; shift; local port=${PORT:-9010}; env -u AWS_CA_BUNDLE AWS_ACCESS_KEY_ID=$who AWS_SECRET_ACCESS_KEY=$who-secret AWS_DEFAULT_REGION=us-east-1 aws --endpoint-url http://127.0.0.1:$port "$@"; }
mode() { curl -s "http://127.0.0.1:8111/__mode?m=$1&op=$2&other=$3"; }
