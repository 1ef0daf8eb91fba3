//go:build pkcs11 && cgo

package main

// A build with -tags pkcs11 (and cgo) links the PKCS#11 provider, for
// master keys in an HSM (pkcs11: URIs). The default build stays static
// and cgo-free; docs/DESIGN.md, "Master keys in a KMS", says why.
import _ "github.com/s3seal/s3seal/kms/pkcs11"
