package s3err

import (
	"strings"
	"testing"
)

// Every default message is a sentence as AWS writes it, ending with a
// period.
func TestErrorTableMessagesEndWithPeriod(t *testing.T) {
	for code, e := range table {
		if code == "InvalidRange" || code == "InvalidPartNumber" {
			continue // AWS: "The requested range (partnumber) is not satisfiable", no period
		}
		if !strings.HasSuffix(e.Message, ".") {
			t.Errorf("%s: message %q does not end with a period", code, e.Message)
		}
	}
}
