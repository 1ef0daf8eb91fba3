// Package crypto implements the s3seal encryption format, version 1, as
// specified in docs/FORMAT.md.
//
// An object (or one part of a multipart upload) is a stream of plaintext
// sealed into segments of [SegmentSize] bytes with AES-256-GCM under a
// per-object data key ([DataKey]). The data key is wrapped under a master
// key from a [Keyring] into an [Envelope], which travels in the backend
// object's user metadata ([Envelope.Metadata], [ParseMetadata]).
//
// The pieces, in the order a request uses them:
//
//   - sizes: [Segments], [CiphertextSize], [PlaintextSize] and [CipherRange]
//     map plaintext sizes and ranges to ciphertext sizes and ranges; they
//     are pure functions, exact inverses of each other;
//   - keys: [Keyring] (master keys by id, one primary), [NewDataKey];
//   - envelopes: [Keyring.Wrap], [Keyring.Unwrap], [Envelope.Metadata],
//     [ParseMetadata], [IsReservedMetaKey];
//   - streams: [NewWriter] seals, [NewReader] opens a whole stream or a
//     range of it, in constant memory.
//
// # Errors
//
// Every error caused by data or metadata that is malformed or not authentic
// is an [*Error] and matches [ErrCorrupt] with errors.Is; failed
// authentication (a wrong key, a changed byte, a segment moved, reordered,
// dropped or appended) also matches [ErrAuth]. A master key that is not in
// the keyring matches [ErrUnknownKey], an unsupported format version
// [ErrVersion] and a bad keyring [ErrKeyring]. A reader never returns bytes
// it has not authenticated: it opens a whole segment before it hands out any
// byte of it.
//
// # Randomness
//
// Data keys, object ids and every nonce come from crypto/rand unless a
// [Config] with another Rand is used, which only tests and test vectors do.
//
// This package has no notion of HTTP or S3 requests; computing the
// plaintext MD5 bound into an envelope is the caller's job.
package crypto
