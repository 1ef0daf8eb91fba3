package crypto

const uploadSettingsLabel = "s3seal v1 upload settings\x00"

// SealUploadSettings seals the settings s3seal acts on for a whole
// multipart upload (lower-case names -> values: its id, checksum algorithm
// and type) with the upload's data key, so that the store can neither
// change them nor pass one upload's off as another's: base64url without
// padding of the encoding of [SealUserMeta] under AAD =
// "s3seal v1 upload settings\x00" || oid.
func SealUploadSettings(dk *DataKey, m map[string]string) (string, error) {
	if len(m) == 0 {
		return "", newErr(ErrCorrupt, "no upload settings")
	}
	return sealEntries(dk, uploadSettingsLabel, m)
}

// OpenUploadSettings opens a value sealed by SealUploadSettings for dk's
// upload: [ErrAuth] when it was not sealed with dk (another upload's, or
// changed), [ErrCorrupt] when malformed.
func OpenUploadSettings(dk *DataKey, v string) (map[string]string, error) {
	return openEntries(dk, uploadSettingsLabel, v, "upload settings", "sealed upload settings")
}
