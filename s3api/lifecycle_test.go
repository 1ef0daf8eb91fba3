package s3api

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// A lifecycle configuration's rules are judged as S3 judges them before
// the store sees them: IDs of at most 255 characters and never twice, a
// positive Expiration Days, dates at midnight UTC, Status Enabled or
// Disabled.
func TestLifecycleRulesJudged(t *testing.T) {
	url := newEmbeddedFullServer(t)
	if status, body := sendDoc(t, url, "PUT", "/bkt", ""); status != 200 {
		t.Fatalf("CreateBucket: %d %s", status, body)
	}
	rule := func(inner string) string {
		return "<Rule>" + inner + "<Filter><Prefix>p/</Prefix></Filter><Status>Enabled</Status></Rule>"
	}
	doc := func(rules ...string) string {
		return "<LifecycleConfiguration>" + strings.Join(rules, "") + "</LifecycleConfiguration>"
	}
	days := func(id, d string) string {
		return rule("<ID>" + id + "</ID><Expiration><Days>" + d + "</Days></Expiration>")
	}
	for _, tc := range []struct {
		name, body string
		status     int
		code, msg  string
	}{
		{"an ID of 255", doc(days(strings.Repeat("a", 255), "1")), 200, "", ""},
		{"an ID of 256", doc(days(strings.Repeat("a", 256), "1")), 400, "InvalidArgument", "ID length should not exceed allowed limit of 255"},
		{"an ID twice", doc(days("r", "1"), days("r", "2")), 400, "InvalidArgument", "Rule ID must be unique. Found same ID for more than one rule"},
		{"Days 0", doc(days("r", "0")), 400, "InvalidArgument", "'Days' for Expiration action must be a positive integer"},
		{"a date at midnight", doc(rule("<ID>r</ID><Expiration><Date>2030-01-01T00:00:00Z</Date></Expiration>")), 200, "", ""},
		{"a date past midnight", doc(rule("<ID>r</ID><Expiration><Date>1970-08-22T19:08:21Z</Date></Expiration>")), 400, "InvalidArgument", "'Date' must be at midnight GMT"},
		{"a transition date past midnight", doc(rule("<ID>r</ID><Transition><Date>1970-08-23T00:55:27Z</Date><StorageClass>GLACIER</StorageClass></Transition>")), 400, "InvalidArgument", "'Date' must be at midnight GMT"},
		{"a date that is none", doc(rule("<ID>r</ID><Expiration><Date>soon</Date></Expiration>")), 400, "MalformedXML", ""},
		{"Status enabled", doc("<Rule><ID>r</ID><Prefix>p/</Prefix><Status>enabled</Status><Expiration><Days>1</Days></Expiration></Rule>"), 400, "MalformedXML", ""},
	} {
		status, body := sendDoc(t, url, "PUT", "/bkt?lifecycle", tc.body)
		if status != tc.status || tc.code != "" && !strings.Contains(body, "<Code>"+tc.code+"</Code>") ||
			tc.msg != "" && !strings.Contains(body, "<Message>"+strings.ReplaceAll(tc.msg, "'", "&#39;")+"</Message>") {
			t.Errorf("%s: %d %s, want %d %s %s", tc.name, status, body, tc.status, tc.code, tc.msg)
		}
	}
}

// A rule sent without an ID gets one, as S3 names it, and a GET answers
// it; each rule its own.
func TestLifecycleRuleWithoutIDNamed(t *testing.T) {
	url := newEmbeddedFullServer(t)
	ctx := context.Background()
	c := sdkClient(url, "ak", "sk")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	rules := []types.LifecycleRule{
		{Filter: &types.LifecycleRuleFilter{Prefix: aws.String("a/")}, Status: types.ExpirationStatusEnabled, Expiration: &types.LifecycleExpiration{Days: aws.Int32(31)}},
		{Filter: &types.LifecycleRuleFilter{Prefix: aws.String("b/")}, Status: types.ExpirationStatusEnabled, Expiration: &types.LifecycleExpiration{Days: aws.Int32(120)}},
	}
	if _, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String("bkt"),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: rules}}); err != nil {
		t.Fatal(err)
	}
	out, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String("bkt")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Rules) != 2 {
		t.Fatalf("%d rules, want 2", len(out.Rules))
	}
	a, b := aws.ToString(out.Rules[0].ID), aws.ToString(out.Rules[1].ID)
	if a == "" || b == "" || a == b {
		t.Errorf("rule IDs %q and %q, want two distinct IDs", a, b)
	}
	if d := aws.ToInt32(out.Rules[1].Expiration.Days); d != 120 {
		t.Errorf("the second rule's days: %d, want 120", d)
	}
}

// x-amz-expiration tells, on PUT, GET and HEAD, when a rule of the
// bucket's lifecycle will expire the object: its last modification plus
// the rule's days, rounded up to the next midnight UTC, and the rule's ID.
// Only objects the rule's prefix and tags match get it, and a change of
// the rules through s3seal shows at once.
func TestLifecycleExpirationHeader(t *testing.T) {
	url := newEmbeddedFullServer(t)
	ctx := context.Background()
	c := sdkClient(url, "ak", "sk")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	putRules := func(rules ...types.LifecycleRule) {
		t.Helper()
		if _, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String("bkt"),
			LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: rules}}); err != nil {
			t.Fatal(err)
		}
	}
	// Read before any rule: the absence is cached, and the PUT of the
	// rules must forget it.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("x"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	putRules(types.LifecycleRule{ID: aws.String("rule1"), Filter: &types.LifecycleRuleFilter{Prefix: aws.String("days1/")},
		Status: types.ExpirationStatusEnabled, Expiration: &types.LifecycleExpiration{Days: aws.Int32(1)}},
		types.LifecycleRule{ID: aws.String("tagged"), Filter: &types.LifecycleRuleFilter{Tag: &types.Tag{Key: aws.String("k1"), Value: aws.String("v1")}},
			Status: types.ExpirationStatusEnabled, Expiration: &types.LifecycleExpiration{Days: aws.Int32(3)}})
	header := regexp.MustCompile(`^expiry-date="([^"]+)", rule-id="([^"]+)"$`)
	check := func(what string, h http.Header, ruleID string, days int) {
		t.Helper()
		v := h.Get("x-amz-expiration")
		if ruleID == "" {
			if v != "" {
				t.Errorf("%s: x-amz-expiration %q, want none", what, v)
			}
			return
		}
		m := header.FindStringSubmatch(v)
		if m == nil || m[2] != ruleID {
			t.Fatalf("%s: x-amz-expiration %q, want rule %s", what, v, ruleID)
		}
		got, err := time.Parse(http.TimeFormat, m[1])
		if err != nil {
			t.Fatal(err)
		}
		mod, err := time.Parse(http.TimeFormat, h.Get("Last-Modified"))
		if err != nil {
			mod = time.Now() // a PUT answers no Last-Modified
		}
		want := mod.UTC().AddDate(0, 0, days).Truncate(24 * time.Hour).Add(24 * time.Hour)
		if !got.Equal(want) && !got.Equal(want.Add(-24*time.Hour)) {
			t.Errorf("%s: expires %v, want %v", what, got, want)
		}
		if got.Hour() != 0 || got.Minute() != 0 || got.Second() != 0 {
			t.Errorf("%s: expires %v, not at midnight", what, got)
		}
	}
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("days1/foo"), Body: strings.NewReader("bar")})
	if err != nil {
		t.Fatal(err)
	}
	check("PUT", rawHeader(put.ResultMetadata), "rule1", 1)
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("days1/foo")})
	if err != nil {
		t.Fatal(err)
	}
	check("HEAD", rawHeader(head.ResultMetadata), "rule1", 1)
	get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("days1/foo")})
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	check("GET", rawHeader(get.ResultMetadata), "rule1", 1)
	other, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("x")})
	if err != nil {
		t.Fatal(err)
	}
	check("HEAD outside the prefix", rawHeader(other.ResultMetadata), "", 0)

	// Tags: given on PUT, or set afterwards and read on HEAD.
	put, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("t"), Body: strings.NewReader("t"), Tagging: aws.String("k1=v1&k2=v2")})
	if err != nil {
		t.Fatal(err)
	}
	check("PUT with the tag", rawHeader(put.ResultMetadata), "tagged", 3)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("u"), Body: strings.NewReader("u")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("bkt"), Key: aws.String("u"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("k1"), Value: aws.String("v1")}}}}); err != nil {
		t.Fatal(err)
	}
	head, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("u")})
	if err != nil {
		t.Fatal(err)
	}
	check("HEAD after tagging", rawHeader(head.ResultMetadata), "tagged", 3)

	putRules(types.LifecycleRule{ID: aws.String("tagged"), Filter: &types.LifecycleRuleFilter{Tag: &types.Tag{Key: aws.String("k2"), Value: aws.String("v1")}},
		Status: types.ExpirationStatusEnabled, Expiration: &types.LifecycleExpiration{Days: aws.Int32(3)}})
	head, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("u")})
	if err != nil {
		t.Fatal(err)
	}
	check("HEAD after the rule changed", rawHeader(head.ResultMetadata), "", 0)
}

// rawHeader is the HTTP header of an SDK call's answer.
func rawHeader(md middleware.Metadata) http.Header {
	if r, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok {
		return r.Header
	}
	return http.Header{}
}

// Which rule names an object's expiry: enabled rules only, every tag of
// an And filter, size bounds exclusive, the earliest expiry among those
// that match (a Date, or Days from the last modification rounded up to
// midnight UTC).
func TestLifecycleExpiryOfRules(t *testing.T) {
	doc := `<LifecycleConfiguration>
<Rule><ID>off</ID><Filter><Prefix></Prefix></Filter><Status>Disabled</Status><Expiration><Days>1</Days></Expiration></Rule>
<Rule><ID>tags</ID><Filter><And><Prefix>a/</Prefix><Tag><Key>k1</Key><Value>v1</Value></Tag><Tag><Key>k2</Key><Value>v2</Value></Tag></And></Filter><Status>Enabled</Status><Expiration><Days>2</Days></Expiration></Rule>
<Rule><ID>big</ID><Filter><ObjectSizeGreaterThan>100</ObjectSizeGreaterThan></Filter><Status>Enabled</Status><Expiration><Days>5</Days></Expiration></Rule>
<Rule><ID>date</ID><Prefix>d/</Prefix><Status>Enabled</Status><Expiration><Date>2030-01-01T00:00:00Z</Date></Expiration></Rule>
</LifecycleConfiguration>`
	_, rules, err := parseLifecycle([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	mod := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	both := []tag{{"k1", "v1"}, {"k2", "v2"}}
	for _, tc := range []struct {
		name, key string
		size      int64
		tags      []tag
		want      string
	}{
		{"no rule", "x", 1, nil, ""},
		{"one tag of two", "a/x", 1, []tag{{"k1", "v1"}}, ""},
		{"both tags", "a/x", 1, both, `expiry-date="Sat, 05 Dec 2026 00:00:00 GMT", rule-id="tags"`},
		{"size at the bound", "x", 100, nil, ""},
		{"size past the bound", "x", 101, nil, `expiry-date="Tue, 08 Dec 2026 00:00:00 GMT", rule-id="big"`},
		{"the earliest of two", "a/x", 101, both, `expiry-date="Sat, 05 Dec 2026 00:00:00 GMT", rule-id="tags"`},
		{"a date", "d/x", 1, nil, `expiry-date="Tue, 01 Jan 2030 00:00:00 GMT", rule-id="date"`},
	} {
		if got := expirationHeader(rules, tc.key, tc.size, mod, func() []tag { return tc.tags }); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A lifecycle rule that would expire or move s3seal's own keys (the
// bucket's owner, policy, ACL records, multipart manifests, all under
// sealstore.ReservedPrefix) is refused before the store sees it: the
// store would open the bucket to every credential whose lists reach it
// and lose multipart objects. Rules scoped away from those keys, and
// rules that only clear delete markers, pass.
func TestLifecycleRuleSparesReservedKeys(t *testing.T) {
	f := newFakeStore()
	url := fakeServer(t, f, lockCreds())
	c := sdkClient(url, "admin", "as")
	put := func(rule types.LifecycleRule) error {
		if rule.ID == nil {
			rule.ID = aws.String("r")
		}
		_, err := c.PutBucketLifecycleConfiguration(context.Background(), &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String("bkt"),
			LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{rule}}})
		return err
	}
	days := &types.LifecycleExpiration{Days: aws.Int32(30)}
	on := types.ExpirationStatusEnabled
	for name, rule := range map[string]types.LifecycleRule{
		"every key expires":           {Status: on, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")}, Expiration: days},
		"the legacy empty prefix":     {Status: on, Prefix: aws.String(""), Expiration: days},
		"a prefix of the reserved":    {Status: on, Filter: &types.LifecycleRuleFilter{Prefix: aws.String(".s3")}, Expiration: days},
		"inside the reserved":         {Status: on, Filter: &types.LifecycleRuleFilter{Prefix: aws.String(sealstore.ReservedPrefix + "objects/")}, Expiration: days},
		"a size filter alone":         {Status: on, Filter: &types.LifecycleRuleFilter{ObjectSizeLessThan: aws.Int64(1 << 20)}, Expiration: days},
		"every key moves to Glacier":  {Status: on, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")}, Transitions: []types.Transition{{Days: aws.Int32(1), StorageClass: types.TransitionStorageClassGlacier}}},
		"every key expires on a date": {Status: on, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")}, Expiration: &types.LifecycleExpiration{Date: aws.Time(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))}},
	} {
		if err := put(rule); errCode(err) != "InvalidRequest" {
			t.Errorf("%s: %v, want InvalidRequest", name, err)
		}
	}
	if p := f.putCalls(); len(p) != 0 {
		t.Fatalf("refused rules reached the store: %+v", p)
	}
	for name, rule := range map[string]types.LifecycleRule{
		"a prefix of the client's": {Status: on, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("logs/")}, Expiration: days},
		"a tag filter":             {Status: on, Filter: &types.LifecycleRuleFilter{Tag: &types.Tag{Key: aws.String("k"), Value: aws.String("v")}}, Expiration: days},
		"delete markers only":      {Status: on, Filter: &types.LifecycleRuleFilter{}, Expiration: &types.LifecycleExpiration{ExpiredObjectDeleteMarker: aws.Bool(true)}},
		"noncurrent versions only": {Status: on, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")}, NoncurrentVersionExpiration: &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(7)}},
		"a disabled rule":          {Status: types.ExpirationStatusDisabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")}, Expiration: days},
	} {
		if err := put(rule); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// An answer waits for its bucket's lifecycle rules (x-amz-expiration,
// advice) no longer than lifecycleWait on a slow store; the read goes on
// and the answers after it have the rules, read once.
func TestLifecycleRulesDoNotHoldAnswersOnASlowStore(t *testing.T) {
	defer func(w time.Duration) { lifecycleWait = w }(lifecycleWait)
	lifecycleWait = 50 * time.Millisecond
	f := newFakeStore()
	f.settings[sealstore.BucketLifecycle] = `<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status><Filter><Prefix>logs/</Prefix></Filter><Expiration><Days>3</Days></Expiration></Rule></LifecycleConfiguration>`
	f.settingDelay = 400 * time.Millisecond
	var c lifecycleCache
	start := time.Now()
	if r := c.rules(context.Background(), f, "bkt", 4); r != nil || time.Since(start) >= f.settingDelay {
		t.Fatalf("first answer on a slow store: %v after %v, want none within lifecycleWait", r, time.Since(start))
	}
	time.Sleep(500 * time.Millisecond)
	for i := 0; i < 3; i++ {
		if r := c.rules(context.Background(), f, "bkt", 4); len(r) != 1 {
			t.Fatalf("answer %d after the read: %v, want the rule", i, r)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.settingReads != 1 {
		t.Fatalf("the store was read %d times, want once", f.settingReads)
	}
}

// A rule that gives an element twice is MalformedXML: s3seal would judge
// the first copy and a store might act on the last (a second, empty
// Prefix would expire .s3seal/).
func TestLifecycleRuleElementsOnce(t *testing.T) {
	rule := func(inner string) []byte {
		return []byte(`<LifecycleConfiguration><Rule><ID>r</ID>` + inner + `</Rule></LifecycleConfiguration>`)
	}
	exp := `<Expiration><Days>3</Days></Expiration>`
	for name, body := range map[string][]byte{
		"two prefixes":          rule(`<Status>Enabled</Status><Filter><Prefix>logs/</Prefix><Prefix></Prefix></Filter>` + exp),
		"two filters":           rule(`<Status>Enabled</Status><Filter><Prefix>logs/</Prefix></Filter><Filter><Prefix></Prefix></Filter>` + exp),
		"two statuses":          rule(`<Status>Disabled</Status><Status>Enabled</Status><Filter><Prefix></Prefix></Filter>` + exp),
		"two legacy prefixes":   rule(`<Status>Enabled</Status><Prefix>logs/</Prefix><Prefix></Prefix>` + exp),
		"two prefixes in And":   rule(`<Status>Enabled</Status><Filter><And><Prefix>logs/</Prefix><Prefix></Prefix><Tag><Key>a</Key><Value>b</Value></Tag></And></Filter>` + exp),
		"two days in an expiry": rule(`<Status>Enabled</Status><Filter><Prefix>logs/</Prefix></Filter><Expiration><Days>3</Days><Days>1</Days></Expiration>`),
	} {
		if _, err := checkLifecycle(body); toAPIError(err).Code != s3err.MalformedXML {
			t.Errorf("%s: %v, want MalformedXML", name, err)
		}
	}
	ok := rule(`<Status>Enabled</Status><Filter><And><Prefix>logs/</Prefix><Tag><Key>a</Key><Value>b</Value></Tag><Tag><Key>c</Key><Value>d</Value></Tag></And></Filter>` +
		exp + `<Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition><Transition><Days>9</Days><StorageClass>DEEP_ARCHIVE</StorageClass></Transition>`)
	if _, err := checkLifecycle(ok); err != nil {
		t.Errorf("a rule with two tags in And and two transitions: %v", err)
	}
}
