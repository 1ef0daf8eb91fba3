// Package checksum implements the S3 flexible checksums (CRC32, CRC32C,
// CRC64NVME, SHA1, SHA256) and Content-MD5: it reads what a request
// declared, hashes the plaintext and verifies the declared values.
package checksum
