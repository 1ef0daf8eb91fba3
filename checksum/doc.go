// Package checksum implements the S3 flexible checksums (CRC32, CRC32C,
// CRC64NVME, SHA1, SHA256, SHA512, MD5, XXHASH64, XXHASH3, XXHASH128) and
// Content-MD5: it reads what a request declared, hashes the plaintext,
// verifies the declared values and combines a multipart object's part
// checksums into the object's.
package checksum
