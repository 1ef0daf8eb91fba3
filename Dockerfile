# syntax=docker/dockerfile:1
# s3seal image: a static binary on distroless, running as uid 65532.
#
#   docker build -t s3seal \
#     --build-arg VERSION="$(git describe --tags --always)" \
#     --build-arg COMMIT="$(git rev-parse HEAD)" .
#   docker run -p 7070:7070 -v s3seal-data:/data \
#     -v "$PWD/secrets:/run/s3seal:ro" \
#     -e S3SEAL_BACKEND_ENDPOINT=https://... -e S3SEAL_BACKEND_ACCESS_KEY=... \
#     -e S3SEAL_BACKEND_SECRET_KEY_FILE=/run/s3seal/backend_secret_key \
#     -e S3SEAL_KEYS_FILE=/run/s3seal/keys.json \
#     -e S3SEAL_CREDENTIALS_FILE=/run/s3seal/credentials.json s3seal
#
# Secrets come as files (owned by uid 65532, mode 0400: s3seal refuses a
# secret file its group or others may read) or as S3SEAL_* variables, never
# as flags on the command line. deploy/ has a compose and a Kubernetes
# example; deploy/README.md explains them.

# The Go version of go.mod's "go" line (scripts/lint-deploy.sh checks that
# they agree).
ARG GO_VERSION=1.26.8
# The runtime image: static by default; glibc for a PKCS11=1 build.
ARG BASE=gcr.io/distroless/static-debian12:nonroot

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# -buildvcs=false: .git is not in the build context (.dockerignore), so the
# version and commit s3seal reports (s3seal version, the first log line,
# s3seal_build_info) come in as build arguments; without them it reports
# "(devel)".
ARG VERSION=""
ARG COMMIT=""
# PKCS11=1 links the PKCS#11 provider (master keys in an HSM), which needs
# cgo: give BASE=gcr.io/distroless/base-debian12:nonroot too (glibc), and
# mount the HSM vendor's module. The default image stays static.
ARG PKCS11=""
RUN if [ -n "${PKCS11}" ]; then export CGO_ENABLED=1 TAGS=pkcs11; else export CGO_ENABLED=0 TAGS=""; fi \
 && go build -trimpath -buildvcs=false -tags "${TAGS}" \
      -ldflags="-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/s3seal ./cmd/s3seal \
 && mkdir -p /out/data

# Only for its statically linked busybox, which the HEALTHCHECK runs as wget
# (distroless has no HTTP client, and s3seal has no health-check command).
FROM busybox:1.37-musl AS busybox

FROM ${BASE}
COPY --from=busybox /bin/busybox /usr/local/bin/wget
COPY --from=build /out/s3seal /usr/local/bin/s3seal
# The data dir (spool files; the embedded store and development key only
# when no backend is given) belongs to the user the image runs as, and so
# does a fresh named volume mounted on it.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
# 7070: the S3 API, /healthz, /readyz, /metrics. 7071: the Kafka LFS API
# (only with --lfs).
ENV S3SEAL_LISTEN=0.0.0.0:7070 \
    S3SEAL_LFS_LISTEN=0.0.0.0:7071 \
    S3SEAL_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 7070 7071
# Liveness only (/healthz does not touch the backend); compose and
# Kubernetes probe /readyz for readiness. Over TLS, or on another port,
# override it.
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/wget", "-q", "-O", "/dev/null", "http://127.0.0.1:7070/healthz"]
ENTRYPOINT ["/usr/local/bin/s3seal"]
CMD ["serve"]
