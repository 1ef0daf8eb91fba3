package access

import (
	"encoding/xml"
	"strings"
	"testing"
)

func TestPrincipalNames(t *testing.T) {
	if bob.ARN() != "arn:aws:iam::222222222222:user/AKBOB" || bob.RootARN() != "arn:aws:iam::222222222222:root" || bob.Anonymous() {
		t.Fatalf("%+v: %s %s", bob, bob.ARN(), bob.RootARN())
	}
	if (Principal{}).ARN() != "" || (Principal{}).RootARN() != "" || !(Principal{}).Anonymous() {
		t.Fatal("nobody has an ARN")
	}
	// Nobody is named by no account, however the zero values compare.
	if w := (Principal{Account: "111111111111", CanonicalID: "x"}).policyWho(); !w.Anonymous || len(w.AWS) != 0 || w.Canonical != "" {
		t.Fatalf("an anonymous principal's names: %+v", w)
	}
}

func TestOwnerDocument(t *testing.T) {
	o := DecodeOwner([]byte(`{"id":"` + owner.CanonicalID + `","display_name":"owner","account":"111111111111"}`))
	if o != *ownerDoc {
		t.Fatalf("%+v", o)
	}
	if !o.OwnedBy(owner) || !o.OwnedBy(ownerUser) || o.OwnedBy(bob) || o.OwnedBy(anonymous) {
		t.Fatal("OwnedBy: the owner and its account, no one else")
	}
	// An owner without an account (a service's, or one kept before
	// accounts) is its canonical id alone; nobody is never it.
	svc := Owner{ID: carol.CanonicalID, Service: "LFS API"}
	if !svc.OwnedBy(carol) || svc.OwnedBy(Principal{AccessKey: "k", CanonicalID: "other"}) || (Owner{}).OwnedBy(anonymous) {
		t.Fatal("OwnedBy without an account")
	}
	for _, bad := range []string{`{`, `{"display_name":"x"}`, `[]`} {
		if o := DecodeOwner([]byte(bad)); o.ID != unreadableOwner || o.OwnedBy(owner) {
			t.Errorf("%s: %+v", bad, o)
		}
	}
}

func TestACLDocument(t *testing.T) {
	doc := `<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>` + owner.CanonicalID + `</ID></Owner><AccessControlList>` +
		`<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>` + bob.CanonicalID + `</ID></Grantee><Permission>READ</Permission></Grant>` +
		`<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group"><URI>` + AuthenticatedUsers + `</URI></Grantee><Permission>WRITE</Permission></Grant>` +
		`</AccessControlList></AccessControlPolicy>`
	a, ok := DecodeACL([]byte(doc))
	if !ok || a.Owner.ID != owner.CanonicalID || len(a.Grants) != 2 || a.Grants[1].Grantee.Type != "Group" {
		t.Fatalf("%v %+v", ok, a)
	}
	for _, c := range []struct {
		who          Principal
		perm         string
		ignorePublic bool
		want         bool
	}{
		{bob, "READ", false, true}, {bob, "READ_ACP", false, false}, {carol, "WRITE", false, true},
		{carol, "WRITE", true, false}, {bob, "READ", true, true}, {anonymous, "WRITE", false, false},
		{owner, "READ", false, false}, // the ACL's owner is decided by aclDecision, not by a grant
	} {
		if got := a.Gives(c.who, c.perm, c.ignorePublic); got != c.want {
			t.Errorf("%s %s (ignore public %v): %v", c.who.AccessKey, c.perm, c.ignorePublic, got)
		}
	}
	if !a.Public() || acl(owner, userGrant(bob, "FULL_CONTROL")).Public() ||
		acl(owner, groupGrant("http://acs.amazonaws.com/groups/s3/LogDelivery", "WRITE")).Public() {
		t.Error("Public: a grant to AllUsers or AuthenticatedUsers, no other")
	}
	// As kept and shown: the grantee's type with S3's xsi prefix.
	b, err := xml.Marshal(a)
	if err != nil || !strings.Contains(string(b), `xsi:type="Group"`) {
		t.Fatalf("%v %s", err, b)
	}
	if again, ok := DecodeACL(b); !ok || len(again.Grants) != 2 || again.Grants[0].Grantee != a.Grants[0].Grantee {
		t.Fatalf("the kept form does not read back: %+v", again)
	}
	for _, bad := range []string{`<AccessControlPolicy>`, `<AccessControlPolicy><AccessControlList/></AccessControlPolicy>`} {
		if _, ok := DecodeACL([]byte(bad)); ok {
			t.Errorf("%s read as an ACL", bad)
		}
	}
}

func TestPublicAccessBlockDocument(t *testing.T) {
	if b := DecodePublicAccessBlock([]byte(`<PublicAccessBlockConfiguration><IgnorePublicAcls>true</IgnorePublicAcls></PublicAccessBlockConfiguration>`)); b != (PublicAccessBlock{IgnorePublicAcls: true}) {
		t.Errorf("%+v", b)
	}
	if b := DecodePublicAccessBlock([]byte(`<PublicAccessBlockConfiguration>`)); b != (PublicAccessBlock{true, true, true, true}) {
		t.Errorf("a document that does not parse blocks everything: %+v", b)
	}
}
