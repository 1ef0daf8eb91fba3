package embedded

// sseHeader reports whether the embedded store keeps a request
// header of server-side encryption with the object (and so reports it on
// GET and HEAD). It has no KMS: it keeps SSE-S3 and SSE-KMS requests as a
// development stand-in for a store that does (docs/DESIGN.md).
func sseHeader(k string) bool {
	switch k {
	case "X-Amz-Server-Side-Encryption", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id",
		"X-Amz-Server-Side-Encryption-Bucket-Key-Enabled":
		return true
	}
	return false
}
