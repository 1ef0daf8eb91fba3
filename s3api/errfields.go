package s3api

import (
	"encoding/xml"
	"strconv"

	"github.com/s3seal/s3seal/s3api/sigv4"
)

// errField is an element S3 adds to an error body after its Message,
// naming what was wrong: ArgumentName and ArgumentValue, ProposedSize and
// MaxSizeAllowed, AWSAccessKeyId, Condition and the like.
type errField struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

func field(name, value string) errField {
	return errField{XMLName: xml.Name{Local: name}, Value: value}
}

func intField(name string, v int64) errField { return field(name, strconv.FormatInt(v, 10)) }

// with returns e with the fields added.
func (e *APIError) with(fs ...errField) *APIError {
	e.Fields = append(e.Fields, fs...)
	return e
}

func sigv4Fields(se *sigv4.Error) []errField {
	var fs []errField
	for _, f := range se.Fields {
		fs = append(fs, field(f[0], f[1]))
	}
	return fs
}
