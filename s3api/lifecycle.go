package s3api

import "github.com/s3seal/s3seal/s3api/s3err"

// maxLifecycleRules is S3's limit on the rules of a lifecycle
// configuration.
const maxLifecycleRules = 1000

// checkLifecycleRules refuses a lifecycle configuration of no rule or
// more than maxLifecycleRules with MalformedXML, as S3 does; the rules
// themselves are the store's to judge.
func checkLifecycleRules(body []byte) error {
	var doc struct {
		Rules []struct{} `xml:"Rule"`
	}
	if err := decodeXML(body, &doc); err != nil {
		return err
	}
	if len(doc.Rules) == 0 || len(doc.Rules) > maxLifecycleRules {
		return s3err.New("MalformedXML", "")
	}
	return nil
}
