# syntax=docker/dockerfile:1
# Build: docker build -t s3seal .
# Run:   docker run -p 7070:7070 -e S3SEAL_KEY=... -e S3SEAL_ACCESS_KEY=... \
#          -e S3SEAL_SECRET_KEY=... -e S3SEAL_BACKEND_ENDPOINT=... s3seal
# Outside loopback s3seal needs a master key and client credentials: the
# development defaults only apply to 127.0.0.1.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/s3seal ./cmd/s3seal && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/s3seal /usr/local/bin/s3seal
# The data dir (spool files, and the embedded store if used) belongs to the
# non-root user the image runs as.
COPY --from=build --chown=65532:65532 /out/data /data
USER nonroot:nonroot
ENV S3SEAL_LISTEN=0.0.0.0:7070 \
    S3SEAL_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 7070
ENTRYPOINT ["/usr/local/bin/s3seal"]
CMD ["serve"]
