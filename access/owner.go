package access

import "encoding/json"

// Owner is a bucket's owner, as its owner document (JSON) keeps it: the
// principal that created the bucket through s3seal, or the part of
// s3seal that owns it (Service). The canonical id decides; the display
// name is the one the principal had when it created the bucket, shown
// while no credential has the id any more.
type Owner struct {
	ID          string `json:"id"`
	DisplayName string `json:"display_name,omitempty"`
	// Account is the owner's account: every principal of the account
	// acts as the owner (S3's IAM users of the owning account, whose own
	// permissions are the credential lists s3seal checks first).
	Account string `json:"account,omitempty"`
	// Service names the part of s3seal that owns the bucket ("lfs"): the
	// bucket is its alone (a service bucket, decided by serviceBucket),
	// whatever policies or ACLs say. Such an owner has no account.
	Service string `json:"service,omitempty"`
}

// unreadableOwner is the owner of a bucket whose owner document does not
// parse: an id no principal has.
const unreadableOwner = "unreadable-owner-document"

// DecodeOwner reads an owner document. One that does not parse, or names
// no id, names nobody: it was s3seal's own, and a bucket whose owner
// cannot be read is no one's to act on as its owner.
func DecodeOwner(doc []byte) Owner {
	var o Owner
	if json.Unmarshal(doc, &o) != nil || o.ID == "" {
		return Owner{ID: unreadableOwner}
	}
	return o
}

// OwnedBy reports whether who acts as the owner o: the owner itself, or
// a principal of its account. Nobody owns nothing.
func (o Owner) OwnedBy(who Principal) bool {
	if who.Anonymous() {
		return false
	}
	return o.ID == who.CanonicalID || o.Account != "" && o.Account == who.Account
}
