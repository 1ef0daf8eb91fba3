package s3api

import (
	"strings"
	"testing"
)

// TestLockDocsStrict: a lock document that could be read two ways is
// refused, and what is forwarded is s3seal's own encoding of the values it
// judged.
func TestLockDocsStrict(t *testing.T) {
	const ns = `xmlns="http://s3.amazonaws.com/doc/2006-03-01/"`
	bad := []struct {
		name  string
		check func([]byte) ([]byte, error)
		body  string
	}{
		{"retention twice", checkRetention, `<Retention><Mode>COMPLIANCE</Mode><RetainUntilDate>2000-01-01T00:00:00Z</RetainUntilDate><RetainUntilDate>2099-01-01T00:00:00Z</RetainUntilDate></Retention>`},
		{"retention foreign ns", checkRetention, `<Retention ` + ns + `><Mode>COMPLIANCE</Mode><RetainUntilDate>2000-01-01T00:00:00Z</RetainUntilDate><x:RetainUntilDate xmlns:x="urn:x">2099-01-01T00:00:00Z</x:RetainUntilDate></Retention>`},
		{"retention foreign root", checkRetention, `<x:Retention xmlns:x="urn:x"><Mode>COMPLIANCE</Mode><RetainUntilDate>2099-01-01T00:00:00Z</RetainUntilDate></x:Retention>`},
		{"retention unknown", checkRetention, `<Retention><Mode>COMPLIANCE</Mode><Until>1</Until><RetainUntilDate>2099-01-01T00:00:00Z</RetainUntilDate></Retention>`},
		{"hold twice", checkLegalHold, `<LegalHold><Status>OFF</Status><Status>ON</Status></LegalHold>`},
		{"hold foreign", checkLegalHold, `<LegalHold><Status>ON</Status><y:Status xmlns:y="urn:y">OFF</y:Status></LegalHold>`},
		{"config days twice", checkLockConfig, `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days><Days>3650</Days></DefaultRetention></Rule></ObjectLockConfiguration>`},
		{"config rule twice", checkLockConfig, `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule><Rule/></ObjectLockConfiguration>`},
		{"config foreign", checkLockConfig, `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><z:Mode xmlns:z="urn:z">COMPLIANCE</z:Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`},
	}
	for _, c := range bad {
		if _, err := c.check([]byte(c.body)); err == nil || !strings.Contains(err.Error(), "MalformedXML") {
			t.Errorf("%s: err %v, want MalformedXML", c.name, err)
		}
	}
	good := []struct {
		check     func([]byte) ([]byte, error)
		body, out string
	}{
		{checkRetention, `<Retention ` + ns + `><Mode>COMPLIANCE</Mode><RetainUntilDate> 2099-01-01T00:00:00.2+02:00 </RetainUntilDate></Retention>`,
			`<Retention ` + ns + `><Mode>COMPLIANCE</Mode><RetainUntilDate>2098-12-31T22:00:01Z</RetainUntilDate></Retention>`},
		{checkRetention, `<Retention/>`, `<Retention ` + ns + `></Retention>`},
		{checkLegalHold, `<LegalHold><!-- c --><Status>ON</Status></LegalHold>`, `<LegalHold ` + ns + `><Status>ON</Status></LegalHold>`},
		{checkLockConfig, `<ObjectLockConfiguration ` + ns + `><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Years> 02 </Years></DefaultRetention></Rule></ObjectLockConfiguration>`,
			`<ObjectLockConfiguration ` + ns + `><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Years>2</Years></DefaultRetention></Rule></ObjectLockConfiguration>`},
	}
	for _, c := range good {
		out, err := c.check([]byte(c.body))
		if err != nil || strings.TrimPrefix(string(out), `<?xml version="1.0" encoding="UTF-8"?>`+"\n") != c.out {
			t.Errorf("%s: got %q %v, want %s", c.body, out, err, c.out)
		}
	}
}

// TestLockConfigPeriods: a default retention is a positive whole number
// (InvalidRetentionPeriod, as s3-tests expect for 0 days and -1 years) of
// at most 100 years or 36500 days (InvalidArgument "too large", AWS's
// limit); an empty body is MissingRequestBodyError.
func TestLockConfigPeriods(t *testing.T) {
	conf := func(period string) string {
		return `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode>` +
			period + `</DefaultRetention></Rule></ObjectLockConfiguration>`
	}
	for body, want := range map[string]string{
		conf("<Days>0</Days>"):     "InvalidRetentionPeriod",
		conf("<Days>-3</Days>"):    "InvalidRetentionPeriod",
		conf("<Years>-1</Years>"):  "InvalidRetentionPeriod",
		conf("<Days>36501</Days>"): "InvalidArgument: Default retention period too large.",
		conf("<Years>101</Years>"): "InvalidArgument: Default retention period too large.",
		conf("<Days>36500</Days>"): "",
		conf("<Years>100</Years>"): "",
		"":                         "MissingRequestBodyError: Request Body is empty",
		" \n":                      "MissingRequestBodyError: Request Body is empty",
	} {
		_, err := checkLockConfig([]byte(body))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want accepted", body, err)
		case want != "" && (err == nil || !strings.HasPrefix(err.Error(), want)):
			t.Errorf("%q: %v, want %s", body, err, want)
		}
	}
}
