package access

import "encoding/xml"

// PublicAccessBlock is a bucket's public access block, all false when it
// has none. BlockPublicAcls and BlockPublicPolicy refuse, when they are
// put, an ACL or a policy that is public (ACL.Public, Policy.IsPublic);
// IgnorePublicAcls makes an ACL's public grants count for nothing;
// RestrictPublicBuckets makes a public policy's grants reach no one but
// the bucket's owner (its Denies still apply).
type PublicAccessBlock struct {
	BlockPublicAcls       bool `xml:"BlockPublicAcls"`
	IgnorePublicAcls      bool `xml:"IgnorePublicAcls"`
	BlockPublicPolicy     bool `xml:"BlockPublicPolicy"`
	RestrictPublicBuckets bool `xml:"RestrictPublicBuckets"`
}

// DecodePublicAccessBlock reads a kept PublicAccessBlockConfiguration. A
// document that does not parse blocks everything: it was s3seal's own,
// checked when it was put.
func DecodePublicAccessBlock(doc []byte) PublicAccessBlock {
	var pab PublicAccessBlock
	if xml.Unmarshal(doc, &pab) != nil {
		return PublicAccessBlock{true, true, true, true}
	}
	return pab
}
