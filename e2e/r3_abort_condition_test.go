package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/internal/faultproxy"
)

// R3 FINDING (fixed; this test now guards it on the current code): AbortMultipartUpload
// with x-amz-if-match-initiated-time fails OPEN. s3seal checks the time
// by listing the uploads (s3api/mp_args.go abortCondition) and, when that
// listing fails, returns nil and aborts anyway: an abort whose
// precondition does not hold destroys the upload when the store's listing
// errs (here: one AccessDenied answer for every ListMultipartUploads).
func TestR3AbortIfMatchInitiatedTimeFailsOpen(t *testing.T) {
	p, fp := startFaultyOn(t, "moto")
	c := sdkFor(t, p)
	mustCreateBucket(t, c, "r3abort")
	cr, err := c.CreateMultipartUpload(ctxT(t), &s3.CreateMultipartUploadInput{Bucket: aws.String("r3abort"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	fp.Inject(faultproxy.Rule{Op: faultproxy.ListMultipartUploads, Fault: faultproxy.ErrorInBody, Code: "AccessDenied", Message: "Access Denied"})
	wrong := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC) // not the upload's initiation time
	_, err = c.AbortMultipartUpload(ctxT(t), &s3.AbortMultipartUploadInput{Bucket: aws.String("r3abort"), Key: aws.String("k"),
		UploadId: cr.UploadId, IfMatchInitiatedTime: aws.Time(wrong)})
	if err == nil {
		t.Errorf("abort with a wrong x-amz-if-match-initiated-time succeeded while the condition could not be checked")
	}
	fp.Reset()
	if _, err := c.ListParts(ctxT(t), &s3.ListPartsInput{Bucket: aws.String("r3abort"), Key: aws.String("k"), UploadId: cr.UploadId}); err != nil {
		wantStatus(t, "upload after the refused conditional abort (want it still there)", err, http.StatusOK, "")
	}
}
