package s3api

import (
	"regexp"
	"testing"
)

func TestPrincipalDefaults(t *testing.T) {
	a := Credential{AccessKey: "AKA"}.principal()
	b := Credential{AccessKey: "AKB"}.principal()
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(a.CanonicalID) || a.CanonicalID == b.CanonicalID {
		t.Fatalf("canonical ids %q %q", a.CanonicalID, b.CanonicalID)
	}
	// Credentials that name no account are the deployment's one account.
	if a.Account != DefaultAccount || b.Account != DefaultAccount {
		t.Fatalf("accounts %q %q", a.Account, b.Account)
	}
	if a.DisplayName != "AKA" || a.ARN() != "arn:aws:iam::"+a.Account+":user/AKA" || a.RootARN() != "arn:aws:iam::"+a.Account+":root" {
		t.Fatalf("%+v %s %s", a, a.ARN(), a.RootARN())
	}
	if again := (Credential{AccessKey: "AKA"}).principal(); again != a {
		t.Fatal("a credential's principal is not stable")
	}
	c := Credential{AccessKey: "AKC", CanonicalID: "testid", DisplayName: "M. Tester", Account: "123456789012", Email: "t@example.com"}.principal()
	if c.CanonicalID != "testid" || c.DisplayName != "M. Tester" || c.Account != "123456789012" || c.Email != "t@example.com" {
		t.Fatalf("configured names not kept: %+v", c)
	}
}
