// Package pkcs11 is the key service of master keys held in a PKCS#11
// token (an HSM, or SoftHSM for tests): a kms.Provider of scheme "pkcs11"
// that s3seal links only when built with -tags pkcs11 and cgo, since the
// module is a C library. Without the tag the package is this comment
// alone, and kms.Open says how to build s3seal with it.
//
// # Naming a key
//
// A master key URI follows RFC 7512, values percent-decoded:
//
//	pkcs11:token=<label>;object=<label>?module-path=<path>&pin-source=file:<path>
//
// token names the token by its label; manufacturer=, model=, serial= and
// slot-id= narrow the choice when labels repeat. object is the master
// key's label (CKA_LABEL), and may be left out: the provider then has no
// default key and each request names one. type=secret-key may be given.
// id= is refused: the provider picks a key's version by CKA_ID itself.
// The query names the module (module-path, a file; module-name is
// refused) and where the user PIN is read (pin-source: file:<path>,
// file:///<path> or an absolute path). The file must be a regular file
// its group and others have no permission on (chmod 600), as s3seal asks
// of every file that holds a secret; a trailing newline is dropped.
// pin-value= is refused: a PIN in the URI would sit in configuration,
// process listings and logs.
//
// Key names, in requests and in external ids ("pkcs11:<label>"), are
// object labels on that token: 1 to 248 bytes of printable ASCII without
// spaces, so that the external id is valid.
//
// # The master key and its versions
//
// A master key is an AES-256 secret key object (CKO_SECRET_KEY,
// CKK_AES, CKA_VALUE_LEN 32) on the token. Several objects may share a
// label with different CKA_IDs: they are the versions of that master key.
// CKA_IDs compare as big-endian unsigned numbers (leading zero bytes
// dropped, then the shorter is the smaller); two versions that compare
// equal are refused. New keys are sealed under the greatest; a sealed key
// is opened under the version it names. Rotating a key is making a new
// object with the same label and a greater CKA_ID; s3seal needs no
// restart, since it looks a label's versions up again after at most two
// seconds. Destroy a version only once nothing sealed under it is kept
// (rewrap first): what it sealed opens under no other.
//
// The version new keys are sealed under must be usable for encryption
// and decryption (CKA_ENCRYPT and CKA_DECRYPT true; else the key is
// reported disabled) and must never leave the token in the clear:
// CKA_SENSITIVE true, CKA_EXTRACTABLE false and CKA_PRIVATE true (a
// public object can be used without the PIN, and SoftHSM stores a public
// object's value unencrypted). s3seal refuses to seal under any other
// key. A version whose CKA_DECRYPT is false is disabled: what it sealed
// does not open until it is set true again.
//
// With OpenSC's pkcs11-tool (0.23; it makes a generated key
// non-extractable unless told --extractable), on SoftHSM:
//
//	softhsm2-util --init-token --free --label s3seal --pin <PIN> --so-pin <SO-PIN>
//	pkcs11-tool --module /usr/lib/softhsm/libsofthsm2.so --token-label s3seal \
//	    --login --pin <PIN> --keygen --key-type AES:32 \
//	    --label tenant-a --id 01 --sensitive --private
//
// and, to rotate it, the same with --id 02.
//
// # The sealed form
//
// GenerateKey draws a 32-byte key from crypto/rand and seals it in the
// token with CKM_AES_GCM (a 12-byte IV from crypto/rand, a 128-bit tag)
// under the key's newest version. The sealed form is
//
//	0x01 || u8(n) || CKA_ID (n bytes, 1 to 255) || IV (12) || ciphertext (32) || tag (16)
//
// 62+n bytes. The GCM additional data binds the header, the key's label
// and the encryption context:
//
//	0x01 || u8(n) || CKA_ID
//	|| u32(len(label)) || label
//	|| u32(number of pairs)
//	|| for each pair, keys in byte order: u32(len(key)) || key || u32(len(value)) || value
//
// every u32 big-endian. A sealed key opens only under the label, version
// and context it was made for: another context, another label (even one
// with a version of the same CKA_ID) or a changed byte is an invalid
// ciphertext. Version reports the CKA_ID in hex.
//
// Rewrap opens the sealed key and seals it under the newest version in
// one session. The 32-byte key passes through s3seal's memory for that
// moment and is cleared: SoftHSM 2.6 refuses CKM_AES_GCM in C_UnwrapKey
// and C_WrapKey (CKR_MECHANISM_INVALID), which would have kept it in the
// token. (The C buffers the module library fills are freed by the
// binding without being cleared.)
//
// # Errors
//
// The provider answers with kms.ProviderError kinds. A label with no AES
// key on the token is NotFound. A sealed key that is malformed, names a
// version the label does not have, or fails GCM is Invalid; SoftHSM
// answers a GCM tag mismatch with CKR_GENERAL_ERROR, which in C_Decrypt is
// taken as Invalid too. A version whose CKA_ENCRYPT or CKA_DECRYPT forbids
// the call (or CKR_KEY_FUNCTION_NOT_PERMITTED) is Disabled. A wrong,
// locked or expired PIN is Denied; once the token refuses the PIN the
// provider makes no further login with it, so that requests do not lock
// the token. A token not present, a session or device failure, and a call
// cut short by its context are Unavailable. Anything else is Failed.
//
// # Sessions
//
// A module is loaded and initialised (C_Initialize, with OS locking) once
// per process and path, and never finalised. Each provider keeps up to 8
// read-only sessions, each used by one call at a time, and logs the user
// in when a session is found logged out (a login is the process's, shared
// by all its sessions of the token, and ends with the last of them). A PKCS#11 call cannot be
// interrupted: a call runs in its own goroutine, and a context that ends
// first returns at once while the session goes back to the pool when the
// call finishes (its result, if secret, is cleared).
package pkcs11
