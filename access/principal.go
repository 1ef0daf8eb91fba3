package access

import (
	"fmt"

	"github.com/s3seal/s3seal/access/policy"
)

// Principal is who a request acts as: one of s3seal's credentials, or
// nobody (an anonymous request, the zero Principal). The names a policy
// or an ACL may use for it:
//
//   - its canonical user id (as S3's, 64 hex digits by default);
//   - its account id (12 digits): every principal of the account that
//     owns a bucket acts as its owner (Owner.OwnedBy);
//   - its ARN, arn:aws:iam::ACCOUNT:user/ACCESS_KEY, and its account's
//     root, arn:aws:iam::ACCOUNT:root (or the bare account id);
//   - its access key;
//   - its e-mail address, when it has one (an ACL grant by emailAddress,
//     which s3seal keeps as one to the canonical id).
//
// Its display name is shown in ACLs and listings; it decides nothing.
type Principal struct {
	AccessKey   string // "" for nobody
	CanonicalID string
	DisplayName string
	Account     string
	Email       string
}

// Anonymous reports whether p is nobody.
func (p Principal) Anonymous() bool { return p.AccessKey == "" }

// ARN is p's user ARN ("" for nobody).
func (p Principal) ARN() string {
	if p.Anonymous() {
		return ""
	}
	return fmt.Sprintf("arn:aws:iam::%s:user/%s", p.Account, p.AccessKey)
}

// RootARN is the ARN of p's account ("" for nobody).
func (p Principal) RootARN() string {
	if p.Anonymous() {
		return ""
	}
	return fmt.Sprintf("arn:aws:iam::%s:root", p.Account)
}

// policyWho is p by the names a policy may give it.
func (p Principal) policyWho() policy.Who {
	if p.Anonymous() {
		return policy.Who{Anonymous: true}
	}
	return policy.Who{AWS: []string{p.Account, p.ARN(), p.RootARN(), p.AccessKey}, Canonical: p.CanonicalID}
}
