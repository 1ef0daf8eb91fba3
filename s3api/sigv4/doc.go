// Package sigv4 verifies AWS Signature Version 4 on incoming S3 requests
// (Authorization header and presigned URLs) and returns a body reader that
// decodes aws-chunked framing and verifies the payload as it streams.
package sigv4
