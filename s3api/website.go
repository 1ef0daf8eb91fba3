package s3api

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// Bucket website configuration (?website) is kept, not served: s3seal
// checks the document as S3 does, forwards it to the object store (admin
// credentials only, like CORS and lifecycle) and answers it back, but it
// has no website endpoint: index and error documents and redirects are
// never applied to requests (docs/DESIGN.md).

// maxWebsiteBody is S3's limit on a website configuration.
const maxWebsiteBody = 128 << 10

// maxRoutingRules is S3's limit on a website configuration's routing rules.
const maxRoutingRules = 50

type websiteDoc struct {
	XMLName xml.Name `xml:"WebsiteConfiguration"`
	docNS
	RedirectAllRequestsTo *struct {
		HostName *string `xml:"HostName"`
		Protocol *string `xml:"Protocol"`
	} `xml:"RedirectAllRequestsTo,omitempty"`
	IndexDocument *struct {
		Suffix *string `xml:"Suffix"`
	} `xml:"IndexDocument,omitempty"`
	ErrorDocument *struct {
		Key *string `xml:"Key"`
	} `xml:"ErrorDocument,omitempty"`
	RoutingRules *struct {
		Rules []routingRule `xml:"RoutingRule"`
	} `xml:"RoutingRules,omitempty"`
}

type routingRule struct {
	Condition *struct {
		HTTPErrorCodeReturnedEquals *string `xml:"HttpErrorCodeReturnedEquals"`
		KeyPrefixEquals             *string `xml:"KeyPrefixEquals"`
	} `xml:"Condition,omitempty"`
	Redirect *struct {
		HostName             *string `xml:"HostName"`
		HTTPRedirectCode     *string `xml:"HttpRedirectCode"`
		Protocol             *string `xml:"Protocol"`
		ReplaceKeyPrefixWith *string `xml:"ReplaceKeyPrefixWith"`
		ReplaceKeyWith       *string `xml:"ReplaceKeyWith"`
	} `xml:"Redirect,omitempty"`
}

func val(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func invalidWebsite(msg string) *s3err.Error {
	return s3err.New(s3err.InvalidRequest, msg)
}

// checkWebsite judges a WebsiteConfiguration as S3 does and returns it
// re-encoded from what was judged.
func checkWebsite(body []byte) ([]byte, error) {
	doc := &websiteDoc{}
	if err := decodeXML(body, doc); err != nil {
		return nil, err
	}
	malformed := s3err.New(s3err.MalformedXML, "")
	if r := doc.RedirectAllRequestsTo; r != nil {
		// Redirecting every request excludes everything else.
		if doc.IndexDocument != nil || doc.ErrorDocument != nil || doc.RoutingRules != nil || strings.TrimSpace(val(r.HostName)) == "" {
			return nil, malformed
		}
		if err := checkProtocol(r.Protocol); err != nil {
			return nil, err
		}
		return encodeDoc(doc)
	}
	if doc.IndexDocument == nil || doc.IndexDocument.Suffix == nil {
		return nil, malformed
	}
	if s := val(doc.IndexDocument.Suffix); s == "" || strings.Contains(s, "/") {
		return nil, s3err.New(s3err.InvalidArgument, "The IndexDocument Suffix is not well formed")
	}
	if e := doc.ErrorDocument; e != nil && val(e.Key) == "" {
		return nil, s3err.New(s3err.InvalidArgument, "The ErrorDocument Key is not well formed")
	}
	if doc.RoutingRules != nil {
		rules := doc.RoutingRules.Rules
		if len(rules) == 0 {
			return nil, malformed
		}
		if len(rules) > maxRoutingRules {
			return nil, invalidWebsite(fmt.Sprintf("%d routing rules provided, the number of routing rules in a website configuration is limited to %d.", len(rules), maxRoutingRules))
		}
		for _, rule := range rules {
			if err := checkRoutingRule(rule); err != nil {
				return nil, err
			}
		}
	}
	return encodeDoc(doc)
}

func checkRoutingRule(rule routingRule) error {
	malformed := s3err.New(s3err.MalformedXML, "")
	rd := rule.Redirect
	if rd == nil {
		return malformed
	}
	if val(rd.HostName) == "" && val(rd.HTTPRedirectCode) == "" && val(rd.Protocol) == "" &&
		val(rd.ReplaceKeyPrefixWith) == "" && val(rd.ReplaceKeyWith) == "" {
		return malformed
	}
	if val(rd.ReplaceKeyWith) != "" && val(rd.ReplaceKeyPrefixWith) != "" {
		return invalidWebsite("You can only define ReplaceKeyPrefix or ReplaceKey but not both.")
	}
	if err := checkProtocol(rd.Protocol); err != nil {
		return err
	}
	if rd.HTTPRedirectCode != nil {
		code, err := strconv.Atoi(strings.TrimSpace(*rd.HTTPRedirectCode))
		if err != nil {
			return malformed
		}
		switch code {
		case 301, 302, 303, 304, 305, 307, 308:
		default:
			return invalidWebsite(fmt.Sprintf("The provided HTTP redirect code (%d) is not valid. Valid codes are 3XX except 300.", code))
		}
	}
	if c := rule.Condition; c != nil {
		if val(c.HTTPErrorCodeReturnedEquals) == "" && val(c.KeyPrefixEquals) == "" {
			return malformed
		}
		if c.HTTPErrorCodeReturnedEquals != nil {
			code, err := strconv.Atoi(strings.TrimSpace(*c.HTTPErrorCodeReturnedEquals))
			if err != nil {
				return malformed
			}
			if !(code >= 400 && code <= 417 || code >= 500 && code <= 505) {
				return invalidWebsite(fmt.Sprintf("The provided HTTP error code (%d) is not valid. Valid codes are 4XX or 5XX.", code))
			}
		}
	}
	return nil
}

func checkProtocol(p *string) error {
	if p != nil && *p != "http" && *p != "https" {
		return invalidWebsite("Invalid protocol, protocol can be http or https. If not defined the protocol will be selected automatically.")
	}
	return nil
}

func encodeDoc(doc document) ([]byte, error) {
	doc.setNS()
	out, err := xml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), out...), nil
}

// absentDocs are AWS's words for a bucket without the document (no
// period, as AWS writes them); a store's own words (moto's) do not pass.
var absentDocs = map[s3err.Code]string{
	s3err.NoSuchCORSConfiguration:    "The CORS configuration does not exist",
	s3err.NoSuchWebsiteConfiguration: "The specified bucket does not have a website configuration",
}

func absentDoc(err error) *s3err.Error {
	code := s3err.Code(sealstore.StoreCode(err))
	if msg, ok := absentDocs[code]; ok {
		return s3err.New(code, msg)
	}
	return nil
}
