package backend

import "strings"

// WellFormedVersionID reports whether id can be a version id of some S3
// store: "null", or 20 to 1024 characters of letters, digits and
// ".", "_", "-", "+", "/", "=", with "_" only in a 32-character id or one
// of 64 characters or more. That covers S3's own ids (32 characters of
// letters, digits, "." and "_"), its early 64-character base64 ones, the
// UUIDs of moto and MinIO, the ULIDs of versitygw, Ceph's 32-character
// instance ids, the embedded store's 32 hex digits and Backblaze B2's
// file ids (about 80 characters, "_"-separated). A
// request naming anything else (versitygw's suite names
// "invalid_versionId", "non_existing_version_id", "../../secret.txt") is
// 400 InvalidArgument "Invalid version id specified" before any store is
// asked (moto cannot tell a malformed id from a missing one); a
// well-formed id no version has is NoSuchVersion.
func WellFormedVersionID(id string) bool {
	if id == "null" {
		return true
	}
	if len(id) < 20 || len(id) > 1024 || (len(id) != 32 && len(id) < 64 && strings.Contains(id, "_")) {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.' || c == '_' || c == '-' || c == '+' || c == '/' || c == '=':
		default:
			return false
		}
	}
	return true
}
