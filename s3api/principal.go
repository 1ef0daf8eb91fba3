package s3api

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// A principal is who a request acts as: one of s3seal's credentials, or
// nobody (an anonymous request).
// The names a policy or an ACL may use for it:
//
//   - its canonical user id (64 hex digits, as S3's), the credential's
//     canonical_id, else the SHA-256 of its access key in hex;
//   - its account id (12 digits), the credential's account, else
//     DefaultAccount;
//   - its ARN, arn:aws:iam::ACCOUNT:user/ACCESS_KEY, and its account's
//     root, arn:aws:iam::ACCOUNT:root (or the bare account id);
//   - its access key;
//   - its e-mail address, when the credential gives one (an ACL grant by
//     emailAddress).
//
// Its display name, in ACLs and listings, is the credential's
// display_name, else its access key.
type principal struct {
	AccessKey   string // "" for an anonymous request
	CanonicalID string
	DisplayName string
	Account     string
	Email       string
}

// isAnonymous reports whether p is nobody.
func (p principal) isAnonymous() bool { return p.AccessKey == "" }

// ARN is p's user ARN ("" for nobody).
func (p principal) ARN() string {
	if p.isAnonymous() {
		return ""
	}
	return fmt.Sprintf("arn:aws:iam::%s:user/%s", p.Account, p.AccessKey)
}

// RootARN is the ARN of p's account ("" for nobody).
func (p principal) RootARN() string {
	if p.isAnonymous() {
		return ""
	}
	return fmt.Sprintf("arn:aws:iam::%s:root", p.Account)
}

// DefaultAccount is the account of every credential that names none:
// the deployment's one account, as IAM users of one AWS account. Each of
// them acts as the owner of the buckets any of them made, within its own
// lists, so a deployment that gives no accounts is decided by its lists
// as before s3seal kept owners, and a key that is replaced (a new access
// key, the same account) keeps its buckets. Credentials given distinct
// accounts are distinct owners, each reaching another's bucket only as
// its ACL or policy allows.
const DefaultAccount = "000000000000"

// principal is the principal c signs as.
func (c Credential) principal() principal {
	p := principal{AccessKey: c.AccessKey, CanonicalID: c.CanonicalID, DisplayName: c.DisplayName,
		Account: c.Account, Email: c.Email}
	if p.CanonicalID == "" {
		sum := sha256.Sum256([]byte(c.AccessKey))
		p.CanonicalID = hex.EncodeToString(sum[:])
	}
	if p.DisplayName == "" {
		p.DisplayName = c.AccessKey
	}
	if p.Account == "" {
		p.Account = DefaultAccount
	}
	return p
}
