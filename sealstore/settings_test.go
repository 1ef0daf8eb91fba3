package sealstore

import (
	"context"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// answeringForwarder answers every setting request with a Tagging
// document and the version header it is given.
type answeringForwarder struct{ version string }

func (a answeringForwarder) Forward(_ context.Context, in backend.RawRequest) (*backend.RawResponse, error) {
	h := map[string][]string{}
	if a.version != "" {
		h["X-Amz-Version-Id"] = []string{a.version}
	}
	return &backend.RawResponse{StatusCode: 200, Header: h, Body: []byte("<Tagging><TagSet/></Tagging>")}, nil
}

// The version a store names in its answer about a setting is passed on
// only when it is one a store makes and, for a version asked for by id,
// that version: a hostile store cannot make the client believe it acted
// on another version, nor break its HTTP parse with a control byte.
func TestSettingAnswersNameOnlyTheVersionAsked(t *testing.T) {
	const v1, v2 = "3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY", "3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHZ"
	ctx := context.Background()
	for _, c := range []struct {
		answered, asked string
		want            string // "" with ok: none; "!" an error
	}{
		{v1, v1, v1},
		{v1, "", v1},
		{"", v1, ""},
		{v2, v1, "!"},
		{"bad\x7fversion-id-of-twenty", "", "!"},
		{"short", "", "!"},
	} {
		f := newFixtureWith(t, Options{Settings: answeringForwarder{version: c.answered}})
		ref := SettingRef{Bucket: bucket, Key: "k", VersionID: c.asked}
		for name, call := range map[string]func() (SettingDoc, error){
			"Setting":       func() (SettingDoc, error) { return f.st.Setting(ctx, ObjectTagging, ref) },
			"DeleteSetting": func() (SettingDoc, error) { return f.st.DeleteSetting(ctx, ObjectTagging, ref) },
		} {
			d, err := call()
			switch {
			case c.want == "!" && err == nil:
				t.Errorf("%s answered %q when %q was asked: passed on as %q", name, c.answered, c.asked, d.VersionID)
			case c.want != "!" && (err != nil || d.VersionID != c.want):
				t.Errorf("%s answered %q when %q was asked: %q, %v; want %q", name, c.answered, c.asked, d.VersionID, err, c.want)
			}
		}
	}
}
