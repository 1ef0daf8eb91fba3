// Package access decides who may do what to a bucket and its objects, as
// S3 decides it, from plain inputs: the principal a request acts as, the
// operation (its S3 action and resource, ActionOf), its condition values,
// and what s3seal keeps for the bucket, parsed: its owner, its ACL, its
// bucket policy (package policy), its public access block, and for an
// object operation the object's record (its ACL, and the content it was
// kept for). It reads no request and no store: the S3 front gathers the
// inputs, checks the credential's lists first (the operator's ceiling,
// which no document reaches past) and renders the answer.
//
// The order is S3's policy evaluation: an explicit Deny in the bucket
// policy refuses; else an Allow in the policy, being the bucket's owner
// (ownerDecision) or an ACL grant (aclDecision) allows; else the request
// is refused. Some actions no ACL gives (notByACL), and the policy's own
// operations stay the owner's (policyOps). A bucket a part of s3seal owns
// (the LFS API's) is decided by serviceBucket alone.
package access

import "github.com/s3seal/s3seal/access/policy"

// Effect is what a rule says of a request.
type Effect int

// The three answers of a rule; Decide answers Allow or Deny.
const (
	None  Effect = iota // the rule says nothing of the request
	Allow               // it allows the request
	Deny                // it refuses it, whatever else allows it
)

func (e Effect) String() string {
	return [...]string{"none", "allow", "deny"}[e]
}

// Decision is what Decide says of a request.
type Decision struct {
	Effect Effect
	// Reason names the rule that decided, for the log.
	Reason string
	// Rule is the rule that decided, for the audit trail: short and
	// stable ("owner", "bucket-acl", "object-acl", "lists", "no-owner",
	// "policy-allow", "policy-deny", "policy-unreadable",
	// "never-anonymous", "service", "service-lists", "service-refused",
	// "default-deny"), a policy's followed by the statement that decided
	// (`policy-deny Sid "x"`, `policy-allow statement 2`).
	Rule string
	// BoundTo, on an Allow that an object record gave (the object's owner
	// or a grant in its ACL), is the content the record was kept for
	// (Record.For): the request may act on that content and no other.
	BoundTo string
}

// Bucket is what s3seal keeps for a bucket, parsed.
type Bucket struct {
	// Owner is nil for a bucket without an owner document (created before
	// s3seal kept owners, or by another client of the store): every
	// principal that signs acts as its owner, its lists alone deciding.
	Owner *Owner
	// ACL is the bucket's ACL; nil for the default one (its owner's
	// FULL_CONTROL alone), or one that does not parse (DecodeACL).
	ACL *ACL
	// Policy is the bucket policy; nil without one.
	Policy *policy.Policy
	// PolicyUnreadable says the bucket keeps a policy that does not parse
	// (a newer s3seal's): it denies whatever it would be asked, never
	// grants.
	PolicyUnreadable bool
	// Block is the bucket's public access block.
	Block PublicAccessBlock
	// ObjectRecords says some object of the bucket has a record (an ACL
	// other than the default, or an owner other than the bucket's);
	// without it, no object's record is read.
	ObjectRecords bool
}

// Record is an object's record: its ACL (whose Owner is the object's
// owner) and the content it was kept for.
type Record struct {
	ACL ACL
	For string
}

// Lists says whether the caller's credential lists name the bucket itself
// (not through "*"): the operator granted the credential that bucket,
// whoever owns it, and it is let in as the owner's account would be, by
// its write list for anything, by its read list for reads.
type Lists struct {
	Read, Write bool
}

// Request is what a request asks, with everything Decide needs of it.
type Request struct {
	Who   Principal
	Lists Lists
	// Op is s3seal's name for the operation, as its routes give it.
	Op          string
	Bucket, Key string
	// Version says the request names a version (a versionId, even empty,
	// in its query): the action is the ...Version... one (ActionOf).
	Version bool
	// Values answers the policy's condition keys; nil answers none.
	Values policy.Values
	// Record reads the record of the object (or the version) the request
	// names; false when it has none, or it cannot be read. Called only
	// when an object's ACL decides, in a bucket with ObjectRecords.
	Record func() (Record, bool)
}

// Decide decides r on bucket b: Allow or Deny, with the rule that said
// so.
func Decide(b Bucket, r Request) Decision {
	if r.Who.Anonymous() && NeverAnonymous(r.Op) {
		return Decision{Effect: Deny, Rule: "never-anonymous", Reason: "S3 refuses it to anonymous callers, whatever the bucket grants"}
	}
	if r.Op == "GetObjectAttributes" {
		// S3 decides it as s3:GetObject (GetObjectVersion) and
		// s3:GetObjectAttributes both: what denies the object's reads
		// denies its attributes.
		get := r
		get.Op = "GetObject"
		d := decide(b, get)
		if d.Effect != Allow {
			return d
		}
		a := decide(b, r)
		if a.Effect == Allow && a.BoundTo == "" {
			a.BoundTo = d.BoundTo
		}
		return a
	}
	return decide(b, r)
}

func decide(b Bucket, r Request) Decision {
	if b.Owner != nil && b.Owner.Service != "" {
		return serviceBucket(b, r)
	}
	switch e, rule := policyDecision(b, r); e {
	case Deny:
		return Decision{Effect: Deny, Rule: rule, Reason: "the bucket policy denies it"}
	case Allow:
		return Decision{Effect: Allow, Rule: rule, Reason: "the bucket policy allows it"}
	}
	// The owner first: an allow by an object's ACL binds the request to
	// the content its record was kept for, which the bucket's owner
	// needs not.
	if d := ownerDecision(b, r); d.Effect == Allow {
		return d
	}
	if d := aclDecision(b, r); d.Effect == Allow {
		return d
	}
	return Decision{Effect: Deny, Rule: "default-deny", Reason: "neither the bucket's owner, nor allowed by its policy or ACL"}
}

// policyDecision is what the bucket's policy says of r, and the rule
// that said it (Decision.Rule).
func policyDecision(b Bucket, r Request) (Effect, string) {
	if b.Policy == nil && !b.PolicyUnreadable {
		return None, ""
	}
	action, resource := ActionOf(r.Op, r.Bucket, r.Key, r.Version)
	if action == "" {
		return None, ""
	}
	owner := func() bool { return ownerDecision(b, r).Effect == Allow }
	if policyOps[r.Op] && !r.Who.Anonymous() && owner() {
		return None, ""
	}
	if b.PolicyUnreadable {
		return Deny, "policy-unreadable"
	}
	var skip func(policy.Statement) bool
	if b.Block.RestrictPublicBuckets && b.Policy.IsPublic() {
		// A public policy grants only within the owner's account.
		isOwner := !r.Who.Anonymous() && owner()
		skip = func(st policy.Statement) bool { return st.Public() && !isOwner }
	}
	pr := policy.Request{Who: r.Who.policyWho(), Action: action, Resource: resource, Values: r.Values}
	switch e, i := b.Policy.Decide(pr, skip); e {
	case policy.Deny:
		return Deny, "policy-deny " + b.Policy.Name(i)
	case policy.Allow:
		return Allow, "policy-allow " + b.Policy.Name(i)
	}
	return None, ""
}

// ownerDecision allows the bucket's owner (and its account), and a
// credential whose lists name the bucket itself; on a bucket without an
// owner, every principal that signs.
func ownerDecision(b Bucket, r Request) Decision {
	switch {
	case b.Owner == nil && !r.Who.Anonymous():
		return Decision{Effect: Allow, Rule: "no-owner", Reason: "the bucket has no owner: the credential's lists decide"}
	case b.Owner != nil && b.Owner.OwnedBy(r.Who):
		return Decision{Effect: Allow, Rule: "owner", Reason: "the bucket's owner"}
	case b.Owner != nil && namesBucket(r):
		return Decision{Effect: Allow, Rule: "lists", Reason: "the credential's lists name the bucket"}
	}
	return Decision{}
}

// namesBucket reports whether r's credential lists name its bucket for
// what r does: the write list for anything, the read list for a read.
func namesBucket(r Request) bool {
	if r.Who.Anonymous() {
		return false // nobody is in no list
	}
	action, _ := ActionOf(r.Op, r.Bucket, r.Key, r.Version)
	return r.Lists.Write || r.Lists.Read && reads(action)
}

// aclDecision is what the bucket's (and the object's) ACL grants say of
// r: allow, or nothing. A grant to AllUsers is to anyone, anonymous
// callers included; to AuthenticatedUsers, to any principal that signs;
// with the public access block's IgnorePublicAcls, both count for
// nothing.
func aclDecision(b Bucket, r Request) Decision {
	if action, _ := ActionOf(r.Op, r.Bucket, r.Key, r.Version); notByACL[action] {
		return Decision{}
	}
	ignorePublic := b.Block.IgnorePublicAcls
	if perm, ok := objectOpPermission[r.Op]; ok && r.Key != "" {
		if !b.ObjectRecords || r.Record == nil {
			return Decision{} // every object has the default ACL: its owner's, the bucket's
		}
		// A version named by id is decided by its own record, never by
		// the current object's: the current ACL may have been put on
		// another version. Record reads the one r names.
		rec, kept := r.Record()
		if !kept {
			return Decision{}
		}
		owner := rec.ACL.Owner != nil && !r.Who.Anonymous() && rec.ACL.Owner.ID == r.Who.CanonicalID
		if owner || rec.ACL.Gives(r.Who, perm, ignorePublic) {
			// Allowed on the content the record was kept for, and no
			// other: an overwrite landing before the read is not it.
			return Decision{Effect: Allow, Rule: "object-acl", Reason: "the object's ACL grants it", BoundTo: rec.For}
		}
		return Decision{}
	}
	perm, ok := bucketOpPermission[r.Op]
	if !ok || b.ACL == nil {
		return Decision{}
	}
	if b.ACL.Gives(r.Who, perm, ignorePublic) {
		return Decision{Effect: Allow, Rule: "bucket-acl", Reason: "the bucket's ACL grants it"}
	}
	return Decision{}
}

// neverAnonymous are the operations S3 refuses to anonymous callers,
// whatever a bucket's policy or ACL grants everyone.
var neverAnonymous = map[string]bool{
	"ListBuckets": true, "CreateBucket": true, "PutBucketAcl": true, "PutObjectAcl": true,
	"CreateMultipartUpload": true, "CopyObject": true, "UploadPartCopy": true,
	"PutBucketOwnershipControls": true, "DeleteBucketOwnershipControls": true, "GetBucketOwnershipControls": true,
	"PutPublicAccessBlock": true, "DeletePublicAccessBlock": true, "GetPublicAccessBlock": true,
}

// NeverAnonymous reports whether S3 refuses op to anonymous callers
// whatever the bucket grants: listing the buckets, creating one, changing
// an ACL, ownership controls or the public access block, copies and
// multipart uploads. The S3 front refuses those before anything else, in
// S3's words for each; Decide refuses them too.
func NeverAnonymous(op string) bool { return neverAnonymous[op] }

// A service bucket belongs to a part of s3seal itself (the LFS API's
// blobs), not to any account: its owner names the service and the one
// credential the service signs with. Through the S3 API it is reached by
// that credential, and by a credential whose lists name the bucket itself
// (never through "*"): the operator's deliberate grant, for a retention
// job or a backup of the blobs, which may act on objects and list them
// but change nothing of the bucket's own. Every other request is refused,
// and no policy or ACL ever decides there: no account, admin or anonymous
// caller can read, change, delete or block it.

// serviceBucketOps are the operations on a service bucket itself that a
// credential naming it may do besides those on its objects: listings.
var serviceBucketOps = map[string]bool{"ListObjects": true, "ListObjectsV2": true, "ListObjectVersions": true,
	"ListMultipartUploads": true, "HeadBucket": true, "DeleteObjects": true, "GetBucketLocation": true}

// serviceBucket decides r on a service bucket.
func serviceBucket(b Bucket, r Request) Decision {
	o := b.Owner
	switch {
	case !r.Who.Anonymous() && o.ID == r.Who.CanonicalID:
		return Decision{Effect: Allow, Rule: "service", Reason: "the service's own credential"}
	case namesBucket(r) && (r.Key != "" || serviceBucketOps[r.Op]):
		return Decision{Effect: Allow, Rule: "service-lists", Reason: "the credential's lists name the service's bucket"}
	}
	return Decision{Effect: Deny, Rule: "service-refused", Reason: "the bucket is s3seal's own (" + o.Service + "); only s3seal, and credentials whose lists name it, reach it"}
}
