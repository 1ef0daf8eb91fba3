package s3api

import (
	"encoding/xml"

	"github.com/s3seal/s3seal/s3api/sigv4"
)

// errExt is one extra element of an S3 error body, named by the
// field (ArgumentName, HeadersNotSigned, X-Amz-Expires, ...).
type errExt struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

// errExts renders an error's extra fields as elements, in order.
func errExts(fs []sigv4.Field) []errExt {
	if len(fs) == 0 {
		return nil
	}
	out := make([]errExt, len(fs))
	for i, f := range fs {
		out[i] = errExt{XMLName: xml.Name{Local: f.Name}, Value: f.Value}
	}
	return out
}
