package s3api

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/s3seal/s3seal/access"
)

// A request acts as the principal (access.Principal) of its credential,
// or as nobody (the zero Principal) when it is anonymous. A credential
// names its principal:
//
//   - its canonical user id: the credential's canonical_id, else the
//     SHA-256 of its access key in hex (64 hex digits, as S3's);
//   - its account id: the credential's account, else DefaultAccount;
//   - its access key, and its e-mail address when the credential gives
//     one;
//   - its display name, in ACLs and listings: the credential's
//     display_name, else its access key.

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
func (c Credential) principal() access.Principal {
	p := access.Principal{AccessKey: c.AccessKey, CanonicalID: c.CanonicalID, DisplayName: c.DisplayName,
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
