package access

import (
	"strings"
	"testing"

	"github.com/s3seal/s3seal/access/policy"
)

// The principals of the tests: the bucket's owner and another user of
// its account, bob of another account, a credential of a third account
// that the operator's lists name, and nobody.
var (
	owner     = Principal{AccessKey: "AKOWNER", CanonicalID: strings.Repeat("a", 64), DisplayName: "owner", Account: "111111111111"}
	ownerUser = Principal{AccessKey: "AKOWNERUSER", CanonicalID: strings.Repeat("b", 64), Account: "111111111111"}
	bob       = Principal{AccessKey: "AKBOB", CanonicalID: strings.Repeat("c", 64), Account: "222222222222", Email: "bob@example.com"}
	carol     = Principal{AccessKey: "AKCAROL", CanonicalID: strings.Repeat("d", 64), Account: "333333333333"}
	anonymous = Principal{}
)

var ownerDoc = &Owner{ID: owner.CanonicalID, DisplayName: "owner", Account: owner.Account}

// pol parses a policy of the given statements.
func pol(t testing.TB, statements ...string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(`{"Version":"2012-10-17","Statement":[` + strings.Join(statements, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func userGrant(p Principal, perm string) Grant {
	return Grant{Grantee: Grantee{Type: "CanonicalUser", ID: p.CanonicalID}, Permission: perm}
}

func groupGrant(uri, perm string) Grant {
	return Grant{Grantee: Grantee{Type: "Group", URI: uri}, Permission: perm}
}

func acl(o Principal, grants ...Grant) *ACL {
	return &ACL{Owner: &ACLOwner{ID: o.CanonicalID}, Grants: append([]Grant{userGrant(o, "FULL_CONTROL")}, grants...)}
}

// record is an object record of o's granting grants, kept for content.
func record(content string, o Principal, grants ...Grant) func() (Record, bool) {
	return func() (Record, bool) { return Record{ACL: *acl(o, grants...), For: content}, true }
}

func values(m map[string]string) policy.Values {
	return func(k string) ([]string, bool) {
		v, ok := m[k]
		return []string{v}, ok
	}
}

// TestDecideAsS3 walks S3's documented evaluation (the IAM policy
// evaluation logic, and "How Amazon S3 authorizes a request" for bucket
// and object operations) through cases of its own: an explicit Deny in
// the bucket policy refuses whatever else allows; else the policy's
// Allow, the bucket's owner, or an ACL grant allows; else the request is
// refused (the implicit deny).
func TestDecideAsS3(t *testing.T) {
	const (
		getObjects = `"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"`
		listBucket = `"Action":"s3:ListBucket","Resource":"arn:aws:s3:::bkt"`
		allObjects = `"Action":"s3:*","Resource":["arn:aws:s3:::bkt","arn:aws:s3:::bkt/*"]`
	)
	public := PublicAccessBlock{IgnorePublicAcls: true}
	restrict := PublicAccessBlock{RestrictPublicBuckets: true}
	unexpected := func() (Record, bool) { panic("the object's record was read") }
	cases := []struct {
		name   string
		b      Bucket
		r      Request
		want   Effect
		reason string // a part of the reason, when it matters
		bound  string
	}{
		// The bucket's owner, and its account.
		{name: "the owner, with nothing kept but its ownership", b: Bucket{Owner: ownerDoc},
			r: Request{Who: owner, Op: "PutBucketTagging"}, want: Allow, reason: "owner"},
		{name: "another principal of the owner's account", b: Bucket{Owner: ownerDoc},
			r: Request{Who: ownerUser, Op: "DeleteObject", Key: "k", Version: true}, want: Allow},
		{name: "another account: the implicit deny", b: Bucket{Owner: ownerDoc},
			r: Request{Who: bob, Op: "GetObject", Key: "k"}, want: Deny, reason: "neither"},
		{name: "the owner reads what another account wrote (BucketOwnerEnforced), its record unread",
			b: Bucket{Owner: ownerDoc, ObjectRecords: true}, r: Request{Who: owner, Op: "GetObject", Key: "k", Record: unexpected}, want: Allow},
		{name: "a bucket without an owner: every signer, as its lists decide", b: Bucket{},
			r: Request{Who: bob, Op: "PutBucketAcl"}, want: Allow, reason: "no owner"},
		{name: "a bucket without an owner: not nobody", b: Bucket{},
			r: Request{Who: anonymous, Op: "GetObject", Key: "k"}, want: Deny},
		{name: "an owner document that does not parse is no one's", b: Bucket{Owner: ptr(DecodeOwner([]byte("{")))},
			r: Request{Who: owner, Op: "GetObject", Key: "k"}, want: Deny},

		// The operator's lists naming the bucket itself.
		{name: "a read list naming the bucket: reads", b: Bucket{Owner: ownerDoc},
			r: Request{Who: carol, Lists: Lists{Read: true}, Op: "HeadObject", Key: "k"}, want: Allow, reason: "lists"},
		{name: "a read list naming the bucket: no writes", b: Bucket{Owner: ownerDoc},
			r: Request{Who: carol, Lists: Lists{Read: true}, Op: "PutObject", Key: "k"}, want: Deny},
		{name: "a write list naming the bucket: anything", b: Bucket{Owner: ownerDoc},
			r: Request{Who: carol, Lists: Lists{Write: true}, Op: "DeleteObject", Key: "k", Version: true}, want: Allow},
		{name: "a list naming the bucket does not pass the policy's Deny",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Deny","Principal":{"AWS":"AKCAROL"},`+getObjects+`}`)},
			r: Request{Who: carol, Lists: Lists{Write: true}, Op: "GetObject", Key: "k"}, want: Deny, reason: "policy denies"},
		{name: "lists name nobody", b: Bucket{Owner: ownerDoc},
			r: Request{Who: anonymous, Lists: Lists{Read: true, Write: true}, Op: "GetObject", Key: "k"}, want: Deny},

		// The explicit deny beats every allow.
		{name: "Deny beats the policy's own Allow",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Allow","Principal":"*",`+getObjects+`}`,
				`{"Effect":"Deny","Principal":{"AWS":"222222222222"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/secret/*"}`)},
			r: Request{Who: bob, Op: "GetObject", Key: "secret/k"}, want: Deny, reason: "policy denies"},
		{name: "the same policy allows bob the rest",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Allow","Principal":"*",`+getObjects+`}`,
				`{"Effect":"Deny","Principal":{"AWS":"222222222222"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/secret/*"}`)},
			r: Request{Who: bob, Op: "GetObject", Key: "open/k"}, want: Allow, reason: "policy allows"},
		{name: "Deny beats the bucket's owner",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Deny","Principal":"*",`+allObjects+`}`)},
			r: Request{Who: owner, Op: "ListObjectsV2"}, want: Deny},
		{name: "Deny beats a bucket ACL grant",
			b: Bucket{Owner: ownerDoc, ACL: acl(owner, userGrant(bob, "READ")), Policy: pol(t, `{"Effect":"Deny","Principal":{"CanonicalUser":"`+bob.CanonicalID+`"},`+listBucket+`}`)},
			r: Request{Who: bob, Op: "ListObjects"}, want: Deny},
		{name: "Deny beats an object record's grant, which is not read",
			b: Bucket{Owner: ownerDoc, ObjectRecords: true, Policy: pol(t, `{"Effect":"Deny","Principal":"*",`+getObjects+`}`)},
			r: Request{Who: bob, Op: "GetObject", Key: "k", Record: unexpected}, want: Deny},
		{name: "a Deny under a condition the request meets",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Deny","Principal":"*",`+allObjects+`,"Condition":{"Bool":{"aws:SecureTransport":"false"}}}`)},
			r: Request{Who: owner, Op: "PutObject", Key: "k", Values: values(map[string]string{"aws:securetransport": "false"})}, want: Deny},
		{name: "a Deny under a condition the request does not meet",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Deny","Principal":"*",`+allObjects+`,"Condition":{"Bool":{"aws:SecureTransport":"false"}}}`)},
			r: Request{Who: owner, Op: "PutObject", Key: "k", Values: values(map[string]string{"aws:securetransport": "true"})}, want: Allow},
		{name: "the policy's own operations stay the owner's, so that it can be taken back",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Deny","Principal":"*",`+allObjects+`}`)},
			r: Request{Who: ownerUser, Op: "DeleteBucketPolicy"}, want: Allow},
		{name: "not another account's",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Allow","Principal":"*",`+allObjects+`}`, `{"Effect":"Deny","Principal":{"AWS":"AKBOB"},`+allObjects+`}`)},
			r: Request{Who: bob, Op: "PutBucketPolicy"}, want: Deny},
		{name: "a kept policy that does not parse denies",
			b: Bucket{Owner: ownerDoc, PolicyUnreadable: true, ACL: acl(owner, groupGrant(AllUsers, "FULL_CONTROL"))},
			r: Request{Who: owner, Op: "GetObject", Key: "k"}, want: Deny, reason: "policy denies"},
		{name: "but not the owner's way to replace it",
			b: Bucket{Owner: ownerDoc, PolicyUnreadable: true}, r: Request{Who: owner, Op: "PutBucketPolicy"}, want: Allow},
		{name: "nor what no policy names",
			b: Bucket{Owner: ownerDoc, PolicyUnreadable: true}, r: Request{Who: owner, Op: "DeleteObjects"}, want: Allow},

		// An Allow in the policy, without any ACL.
		{name: "an Allow naming bob's account",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::222222222222:root"},`+getObjects+`}`)},
			r: Request{Who: bob, Op: "GetObject", Key: "k"}, want: Allow, reason: "policy allows"},
		{name: "it allows no other action",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::222222222222:root"},`+getObjects+`}`)},
			r: Request{Who: bob, Op: "PutObject", Key: "k"}, want: Deny},
		{name: "nor a version, which is its own action",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::222222222222:root"},`+getObjects+`}`)},
			r: Request{Who: bob, Op: "GetObject", Key: "k", Version: true}, want: Deny},
		{name: "an Allow by user ARN",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::222222222222:user/AKBOB"},`+listBucket+`}`)},
			r: Request{Who: bob, Op: "HeadBucket"}, want: Allow},

		// ACL grants, without any policy.
		{name: "a bucket WRITE grant writes",
			b: Bucket{Owner: ownerDoc, ACL: acl(owner, userGrant(bob, "WRITE"))}, r: Request{Who: bob, Op: "PutObject", Key: "k"}, want: Allow, reason: "bucket's ACL"},
		{name: "it does not list",
			b: Bucket{Owner: ownerDoc, ACL: acl(owner, userGrant(bob, "WRITE"))}, r: Request{Who: bob, Op: "ListObjectsV2"}, want: Deny},
		{name: "FULL_CONTROL is every permission",
			b: Bucket{Owner: ownerDoc, ACL: acl(owner, userGrant(bob, "FULL_CONTROL"))}, r: Request{Who: bob, Op: "PutBucketAcl"}, want: Allow},
		{name: "no ACL grants what is not an ACL's (bucket configuration)",
			b: Bucket{Owner: ownerDoc, ACL: acl(owner, userGrant(bob, "FULL_CONTROL"))}, r: Request{Who: bob, Op: "PutBucketLifecycleConfiguration"}, want: Deny},
		{name: "an object record's READ grant reads that content",
			b: Bucket{Owner: ownerDoc, ObjectRecords: true},
			r: Request{Who: bob, Op: "GetObject", Key: "k", Record: record("content-1", owner, userGrant(bob, "READ"))}, want: Allow, reason: "object's ACL", bound: "content-1"},
		{name: "the object's owner reads it, bound to the content its record was kept for",
			b: Bucket{Owner: ownerDoc, ObjectRecords: true},
			r: Request{Who: bob, Op: "GetObjectAcl", Key: "k", Record: record("content-2", bob)}, want: Allow, bound: "content-2"},
		{name: "a bucket without records reads none",
			b: Bucket{Owner: ownerDoc}, r: Request{Who: bob, Op: "GetObject", Key: "k", Record: unexpected}, want: Deny},
		{name: "an object without a record has the default ACL",
			b: Bucket{Owner: ownerDoc, ObjectRecords: true},
			r: Request{Who: bob, Op: "GetObject", Key: "k", Record: func() (Record, bool) { return Record{}, false }}, want: Deny},
		{name: "an object READ grant does not write the object",
			b: Bucket{Owner: ownerDoc, ObjectRecords: true},
			r: Request{Who: bob, Op: "PutObjectAcl", Key: "k", Record: record("c", owner, userGrant(bob, "READ"))}, want: Deny},
		{name: "GetObjectAttributes is also a GetObject: a Deny of the read denies it",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Deny","Principal":"*",`+getObjects+`}`)},
			r: Request{Who: owner, Op: "GetObjectAttributes", Key: "k"}, want: Deny},
		{name: "GetObjectAttributes allowed by the record, bound to its content",
			b: Bucket{Owner: ownerDoc, ObjectRecords: true},
			r: Request{Who: bob, Op: "GetObjectAttributes", Key: "k", Record: record("c3", owner, userGrant(bob, "READ"))}, want: Allow, bound: "c3"},

		// s3:DeleteObjectVersion and the tag reads are never an ACL's.
		{name: "a WRITE grant adds a delete marker",
			b: Bucket{Owner: ownerDoc, ACL: acl(owner, userGrant(bob, "WRITE"))}, r: Request{Who: bob, Op: "DeleteObject", Key: "k"}, want: Allow},
		{name: "but deletes no version",
			b: Bucket{Owner: ownerDoc, ACL: acl(owner, userGrant(bob, "FULL_CONTROL"))}, r: Request{Who: bob, Op: "DeleteObject", Key: "k", Version: true}, want: Deny},
		{name: "nor does everyone's public-read-write",
			b: Bucket{Owner: ownerDoc, ACL: acl(owner, groupGrant(AllUsers, "READ"), groupGrant(AllUsers, "WRITE"))},
			r: Request{Who: anonymous, Op: "DeleteObject", Key: "k", Version: true}, want: Deny},
		{name: "a policy allows deleting versions",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Allow","Principal":{"AWS":"AKBOB"},"Action":"s3:DeleteObjectVersion","Resource":"arn:aws:s3:::bkt/*"}`)},
			r: Request{Who: bob, Op: "DeleteObject", Key: "k", Version: true}, want: Allow},
		{name: "the owner deletes versions",
			b: Bucket{Owner: ownerDoc}, r: Request{Who: owner, Op: "DeleteObject", Key: "k", Version: true}, want: Allow},
		{name: "an object's FULL_CONTROL does not read its tags",
			b: Bucket{Owner: ownerDoc, ObjectRecords: true},
			r: Request{Who: bob, Op: "GetObjectTagging", Key: "k", Record: record("c", owner, userGrant(bob, "FULL_CONTROL"))}, want: Deny},
		{name: "a policy allowing s3:GetObjectTagging reads the current tags",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Allow","Principal":{"AWS":"AKBOB"},"Action":"s3:GetObjectTagging","Resource":"arn:aws:s3:::bkt/*"}`)},
			r: Request{Who: bob, Op: "GetObjectTagging", Key: "k"}, want: Allow},
		{name: "not a version's, s3:GetObjectVersionTagging",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Allow","Principal":{"AWS":"AKBOB"},"Action":"s3:GetObjectTagging","Resource":"arn:aws:s3:::bkt/*"}`)},
			r: Request{Who: bob, Op: "GetObjectTagging", Key: "k", Version: true}, want: Deny},

		// Anonymous callers: only what is granted everyone.
		{name: "nobody, granted nothing", b: Bucket{Owner: ownerDoc}, r: Request{Who: anonymous, Op: "GetObject", Key: "k"}, want: Deny},
		{name: "nobody, by an AllUsers grant",
			b: Bucket{Owner: ownerDoc, ACL: acl(owner, groupGrant(AllUsers, "READ"))}, r: Request{Who: anonymous, Op: "ListObjects"}, want: Allow},
		{name: "nobody is not an authenticated user",
			b: Bucket{Owner: ownerDoc, ACL: acl(owner, groupGrant(AuthenticatedUsers, "READ"))}, r: Request{Who: anonymous, Op: "ListObjects"}, want: Deny},
		{name: "bob is",
			b: Bucket{Owner: ownerDoc, ACL: acl(owner, groupGrant(AuthenticatedUsers, "READ"))}, r: Request{Who: bob, Op: "ListObjects"}, want: Allow},
		{name: "nobody, by a policy's \"*\"",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Allow","Principal":"*",`+getObjects+`}`)}, r: Request{Who: anonymous, Op: "GetObject", Key: "k"}, want: Allow},
		{name: "nobody, by {\"AWS\": \"*\"}",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Allow","Principal":{"AWS":"*"},`+getObjects+`}`)}, r: Request{Who: anonymous, Op: "HeadObject", Key: "k"}, want: Allow},
		{name: "nobody is no account",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Allow","Principal":{"AWS":"111111111111"},`+getObjects+`}`)}, r: Request{Who: anonymous, Op: "GetObject", Key: "k"}, want: Deny},
		{name: "nobody changes no ACL, whatever is granted everyone",
			b: Bucket{Owner: ownerDoc, ObjectRecords: true, ACL: acl(owner, groupGrant(AllUsers, "FULL_CONTROL")),
				Policy: pol(t, `{"Effect":"Allow","Principal":"*",`+allObjects+`}`)},
			r: Request{Who: anonymous, Op: "PutObjectAcl", Key: "k", Record: record("c", owner, groupGrant(AllUsers, "FULL_CONTROL"))}, want: Deny, reason: "anonymous"},
		{name: "nor starts a multipart upload on a public-read-write bucket",
			b: Bucket{Owner: ownerDoc, ACL: acl(owner, groupGrant(AllUsers, "READ"), groupGrant(AllUsers, "WRITE"))},
			r: Request{Who: anonymous, Op: "CreateMultipartUpload", Key: "k"}, want: Deny},
		{name: "but puts an object there",
			b: Bucket{Owner: ownerDoc, ACL: acl(owner, groupGrant(AllUsers, "READ"), groupGrant(AllUsers, "WRITE"))},
			r: Request{Who: anonymous, Op: "PutObject", Key: "k"}, want: Allow},
		{name: "nobody owns no object (a record naming no one)",
			b: Bucket{Owner: ownerDoc, ObjectRecords: true},
			r: Request{Who: anonymous, Op: "GetObject", Key: "k", Record: record("c", anonymous)}, want: Deny},

		// The public access block.
		{name: "IgnorePublicAcls: AllUsers counts for nothing",
			b: Bucket{Owner: ownerDoc, Block: public, ACL: acl(owner, groupGrant(AllUsers, "READ"))}, r: Request{Who: anonymous, Op: "ListObjects"}, want: Deny},
		{name: "IgnorePublicAcls: nor AuthenticatedUsers",
			b: Bucket{Owner: ownerDoc, Block: public, ACL: acl(owner, groupGrant(AuthenticatedUsers, "WRITE"))}, r: Request{Who: bob, Op: "PutObject", Key: "k"}, want: Deny},
		{name: "IgnorePublicAcls: a grant to bob still counts",
			b: Bucket{Owner: ownerDoc, Block: public, ACL: acl(owner, groupGrant(AllUsers, "READ"), userGrant(bob, "READ"))}, r: Request{Who: bob, Op: "ListObjects"}, want: Allow},
		{name: "IgnorePublicAcls: an object's public grant too",
			b: Bucket{Owner: ownerDoc, Block: public, ObjectRecords: true},
			r: Request{Who: anonymous, Op: "GetObject", Key: "k", Record: record("c", owner, groupGrant(AllUsers, "READ"))}, want: Deny},
		{name: "IgnorePublicAcls leaves the policy",
			b: Bucket{Owner: ownerDoc, Block: public, Policy: pol(t, `{"Effect":"Allow","Principal":"*",`+getObjects+`}`)}, r: Request{Who: anonymous, Op: "GetObject", Key: "k"}, want: Allow},
		{name: "RestrictPublicBuckets: a public policy reaches no anonymous caller",
			b: Bucket{Owner: ownerDoc, Block: restrict, Policy: pol(t, `{"Effect":"Allow","Principal":"*",`+getObjects+`}`)}, r: Request{Who: anonymous, Op: "GetObject", Key: "k"}, want: Deny},
		{name: "RestrictPublicBuckets: nor another account",
			b: Bucket{Owner: ownerDoc, Block: restrict, Policy: pol(t, `{"Effect":"Allow","Principal":"*",`+getObjects+`}`)}, r: Request{Who: bob, Op: "GetObject", Key: "k"}, want: Deny},
		{name: "RestrictPublicBuckets: a statement naming bob still allows him",
			b: Bucket{Owner: ownerDoc, Block: restrict, Policy: pol(t, `{"Effect":"Allow","Principal":"*",`+getObjects+`}`,
				`{"Effect":"Allow","Principal":{"AWS":"AKBOB"},`+getObjects+`}`)}, r: Request{Who: bob, Op: "GetObject", Key: "k"}, want: Allow},
		{name: "RestrictPublicBuckets: the public policy's Deny still applies",
			b: Bucket{Owner: ownerDoc, Block: restrict, Policy: pol(t, `{"Effect":"Allow","Principal":"*",`+getObjects+`}`,
				`{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/private/*"}`)}, r: Request{Who: ownerUser, Op: "GetObject", Key: "private/k"}, want: Deny},
		{name: "RestrictPublicBuckets: the owner's account is not restricted",
			b: Bucket{Owner: ownerDoc, Block: restrict, Policy: pol(t, `{"Effect":"Allow","Principal":"*",`+getObjects+`}`)}, r: Request{Who: ownerUser, Op: "GetObject", Key: "k"}, want: Allow},

		// NotPrincipal, which S3 takes only in a Deny.
		{name: "a Deny to all but the owner's account refuses bob",
			b: Bucket{Owner: ownerDoc, ACL: acl(owner, userGrant(bob, "READ")), Policy: pol(t, `{"Effect":"Deny","NotPrincipal":{"AWS":"111111111111"},`+listBucket+`}`)},
			r: Request{Who: bob, Op: "ListObjects"}, want: Deny},
		{name: "and spares the owner's account",
			b: Bucket{Owner: ownerDoc, Policy: pol(t, `{"Effect":"Deny","NotPrincipal":{"AWS":"111111111111"},`+listBucket+`}`)},
			r: Request{Who: ownerUser, Op: "ListObjects"}, want: Allow},
		{name: "and refuses nobody too",
			b: Bucket{Owner: ownerDoc, ACL: acl(owner, groupGrant(AllUsers, "READ")), Policy: pol(t, `{"Effect":"Deny","NotPrincipal":{"AWS":"111111111111"},`+listBucket+`}`)},
			r: Request{Who: anonymous, Op: "ListObjects"}, want: Deny},

		// A service bucket (the LFS API's): its credential and the
		// operator's named lists, never a policy or an ACL.
		{name: "the service's credential", b: Bucket{Owner: &Owner{ID: carol.CanonicalID, Service: "LFS API"}},
			r: Request{Who: carol, Op: "PutObject", Key: "blob"}, want: Allow},
		{name: "a list naming it acts on its objects", b: Bucket{Owner: &Owner{ID: carol.CanonicalID, Service: "LFS API"}},
			r: Request{Who: bob, Lists: Lists{Write: true}, Op: "DeleteObject", Key: "blob", Version: true}, want: Allow},
		{name: "and lists them", b: Bucket{Owner: &Owner{ID: carol.CanonicalID, Service: "LFS API"}},
			r: Request{Who: bob, Lists: Lists{Read: true}, Op: "ListObjectsV2"}, want: Allow},
		{name: "a read list reads, writes nothing", b: Bucket{Owner: &Owner{ID: carol.CanonicalID, Service: "LFS API"}},
			r: Request{Who: bob, Lists: Lists{Read: true}, Op: "PutObject", Key: "blob"}, want: Deny},
		{name: "but changes nothing of the bucket's own", b: Bucket{Owner: &Owner{ID: carol.CanonicalID, Service: "LFS API"}},
			r: Request{Who: bob, Lists: Lists{Write: true}, Op: "PutBucketPolicy"}, want: Deny, reason: "s3seal's own (LFS API)"},
		{name: "no policy opens it", b: Bucket{Owner: &Owner{ID: carol.CanonicalID, Service: "LFS API"},
			Policy: pol(t, `{"Effect":"Allow","Principal":"*",`+allObjects+`}`)}, r: Request{Who: anonymous, Op: "GetObject", Key: "blob"}, want: Deny},
		{name: "no ACL opens it", b: Bucket{Owner: &Owner{ID: carol.CanonicalID, Service: "LFS API"},
			ACL: acl(carol, userGrant(bob, "FULL_CONTROL"))}, r: Request{Who: bob, Op: "ListObjects"}, want: Deny},
		{name: "no policy closes it to its credential", b: Bucket{Owner: &Owner{ID: carol.CanonicalID, Service: "LFS API"},
			Policy: pol(t, `{"Effect":"Deny","Principal":"*",`+allObjects+`}`)}, r: Request{Who: carol, Op: "GetObject", Key: "blob"}, want: Allow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.r
			r.Bucket = "bkt"
			d := Decide(c.b, r)
			if d.Effect != c.want || !strings.Contains(d.Reason, c.reason) || d.BoundTo != c.bound {
				t.Errorf("%v (%q, bound to %q), want %v (%q, bound to %q)", d.Effect, d.Reason, d.BoundTo, c.want, c.reason, c.bound)
			}
			if d.Effect == Deny && d.Reason == "" {
				t.Error("a refusal without a reason for the log")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestRestrictPublicBuckets: with RestrictPublicBuckets, a public
// policy's grants reach no one outside the owner's account (here: an
// anonymous caller); its Denies still apply.
func TestRestrictPublicBuckets(t *testing.T) {
	b := Bucket{Policy: pol(t, `{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"}`)}
	r := Request{Op: "GetObject", Bucket: "bkt", Key: "k"}
	if got, _ := policyDecision(b, r); got != Allow {
		t.Fatalf("a public policy without a block: %v", got)
	}
	b.Block = DecodePublicAccessBlock([]byte(`<PublicAccessBlockConfiguration><RestrictPublicBuckets>true</RestrictPublicBuckets></PublicAccessBlockConfiguration>`))
	if got, _ := policyDecision(b, r); got != None {
		t.Fatalf("a public policy under RestrictPublicBuckets, for an anonymous caller: %v", got)
	}
}

// TestNotPrincipalOnlyInDeny: S3 refuses a policy whose Allow has a
// NotPrincipal (it would grant everyone else, anonymous callers
// included), so none is ever kept to be decided by.
func TestNotPrincipalOnlyInDeny(t *testing.T) {
	_, err := policy.Check([]byte(`{"Statement":[{"Effect":"Allow","NotPrincipal":{"AWS":"111111111111"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"}]}`),
		"bkt", func(string) bool { return false })
	if !policy.IsMalformed(err) {
		t.Fatalf("NotPrincipal in an Allow: %v, want MalformedPolicy", err)
	}
}
