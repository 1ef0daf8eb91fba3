package access

import (
	"reflect"
	"slices"
	"testing"

	"github.com/s3seal/s3seal/access/policy"
)

// fuzzOps are the operations FuzzDecide asks about: object and bucket
// operations, ones no ACL gives, the policy's own and one no policy
// names.
var fuzzOps = []string{"GetObject", "HeadObject", "GetObjectAttributes", "PutObject", "DeleteObject", "GetObjectAcl",
	"PutObjectAcl", "GetObjectTagging", "ListObjectsV2", "ListObjectVersions", "HeadBucket", "PutBucketAcl",
	"GetBucketPolicy", "PutBucketPolicy", "DeleteBucketPolicy", "PutBucketLifecycleConfiguration",
	"CreateMultipartUpload", "DeleteObjects", "NotImplemented"}

// FuzzDecide holds the policy parser and Decide to their invariants, for
// any document that parses and any request:
//
//   - nothing panics;
//   - parsing is deterministic, and what Check passes is what Parse reads
//     (one parser);
//   - the same inputs get the same decision;
//   - an explicit Deny in the policy that matches the request refuses it,
//     whatever else allows it: an Allow of everything to everyone in the
//     same policy, the caller owning the bucket and the object, an ACL
//     and a record granting everyone FULL_CONTROL, lists naming the
//     bucket. The exceptions are S3's: the owner's operations on the
//     policy itself, and a service bucket, which no policy decides.
//
// sel picks the caller, the operation, and the bucket's state.
func FuzzDecide(f *testing.F) {
	for _, d := range []string{
		`{"Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"*"}]}`,
		`{"Statement":{"Effect":"Deny","NotPrincipal":{"AWS":"111111111111"},"Action":"s3:Get*","Resource":"arn:aws:s3:::bkt/*"}}`,
		`{"Statement":[{"Effect":"Deny","Principal":{"AWS":"AKBOB"},"NotAction":"s3:List*","NotResource":"arn:aws:s3:::bkt/open/*"}]}`,
		`{"Statement":[{"Effect":"Deny","Principal":"*","Action":"*","Resource":"*","Condition":{"StringLike":{"s3:prefix":"secret*"},"Bool":{"aws:SecureTransport":"false"}}}]}`,
		`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"},` +
			`{"Effect":"Deny","Principal":{"CanonicalUser":"cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"},"Action":"s3:DeleteObjectVersion","Resource":"arn:aws:s3:::bkt/*"}]}`,
		`{"Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*Policy","Resource":"arn:aws:s3:::bkt","Condition":{"ForAnyValue:StringEquals":{"aws:PrincipalAccount":["111111111111"]}}}]}`,
	} {
		f.Add([]byte(d), uint32(0), "k")
		f.Add([]byte(d), uint32(0x1234), "secret/k")
		f.Add([]byte(d), uint32(0xfff7), "")
	}
	known := func(n string) bool { return n == "AKBOB" || n == "AKOWNER" }
	allowAll := pol(f, `{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*"}`)
	f.Fuzz(func(t *testing.T, doc []byte, sel uint32, key string) {
		p, err := policy.Parse(doc)
		if err != nil {
			if !policy.IsMalformed(err) {
				t.Fatalf("an error that is not MalformedPolicy: %v", err)
			}
			if _, cerr := policy.Check(doc, "bkt", known); cerr == nil {
				t.Fatalf("Check passed what Parse refuses (%v)", err)
			}
			return
		}
		if again, _ := policy.Parse(doc); !reflect.DeepEqual(again, p) {
			t.Fatal("the same document parses two ways")
		}
		if judged, err := policy.Check(doc, "bkt", known); err == nil && !reflect.DeepEqual(judged, p) {
			t.Fatal("Check and Parse read the same document two ways")
		}

		who := []Principal{owner, ownerUser, bob, anonymous}[sel&3]
		op := fuzzOps[int(sel>>2&0x1f)%len(fuzzOps)]
		b := Bucket{
			Owner:         ownerDoc,
			ACL:           acl(owner, groupGrant(AllUsers, "FULL_CONTROL"), groupGrant(AuthenticatedUsers, "FULL_CONTROL")),
			Policy:        &policy.Policy{Statements: append(slices.Clip(p.Statements), allowAll.Statements...)},
			Block:         PublicAccessBlock{IgnorePublicAcls: sel&(1<<8) != 0, RestrictPublicBuckets: sel&(1<<9) != 0},
			ObjectRecords: true,
		}
		switch sel >> 12 & 3 {
		case 1:
			b.Owner = nil
		case 2:
			b.Owner = &Owner{ID: who.CanonicalID, Service: "LFS API"}
		}
		vals := map[string]string{"s3:prefix": key, "aws:securetransport": "false", "aws:sourceip": "10.1.2.3"}
		if !who.Anonymous() {
			vals["aws:principalaccount"] = who.Account
		}
		r := Request{
			Who:     who,
			Lists:   Lists{Read: sel&(1<<10) != 0, Write: sel&(1<<11) != 0},
			Op:      op,
			Bucket:  "bkt",
			Key:     key,
			Version: sel&(1<<14) != 0,
			Values:  values(vals),
			Record:  record("content", who, groupGrant(AllUsers, "FULL_CONTROL")),
		}
		d := Decide(b, r)
		if again := Decide(b, r); again != d {
			t.Fatalf("the same request decided %+v, then %+v", d, again)
		}
		if d.Effect != Allow && d.Effect != Deny || d.Effect == Deny && d.Reason == "" || d.Effect == Deny && d.BoundTo != "" {
			t.Fatalf("a decision that is not one: %+v", d)
		}

		action, resource := ActionOf(op, "bkt", key, r.Version)
		if action == "" {
			return
		}
		pr := policy.Request{Who: who.policyWho(), Action: action, Resource: resource, Values: r.Values}
		if p.Evaluate(pr, nil) != policy.Deny {
			return
		}
		if b.Policy.Evaluate(pr, nil) != policy.Deny {
			t.Fatal("an Allow added to a policy undid its Deny")
		}
		ownersPolicyOp := policyOps[op] && ownerDecision(b, r).Effect == Allow
		service := b.Owner != nil && b.Owner.Service != ""
		if !ownersPolicyOp && !service && d.Effect != Deny {
			t.Fatalf("%s by %s on %q: the policy's explicit Deny lost to %+v", op, who.AccessKey, key, d)
		}
	})
}
