package s3api

import (
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// Bucket logging (?logging) is kept, not served: s3seal judges a
// BucketLoggingStatus as S3 does (the target bucket must exist and be one
// the credential may write), keeps it as the bucket's document docLogging
// and answers it back, but delivers no access log records to the target
// bucket (docs/DESIGN.md, "Bucket logging"). TargetGrants are accepted
// and dropped: they would apply to log objects s3seal never writes, and
// S3 itself refuses them on buckets whose ACLs are off.

// maxLoggingBody bounds a BucketLoggingStatus.
const maxLoggingBody = 16 << 10

type loggingStatus struct {
	XMLName xml.Name `xml:"BucketLoggingStatus"`
	docNS
	Enabled *loggingEnabled `xml:"LoggingEnabled,omitempty"`
}

type loggingEnabled struct {
	TargetBucket    *string       `xml:"TargetBucket"`
	TargetPrefix    *string       `xml:"TargetPrefix"`
	TargetKeyFormat *logKeyFormat `xml:"TargetObjectKeyFormat"`
}

// logKeyFormat is a TargetObjectKeyFormat: one of its two forms.
type logKeyFormat struct {
	SimplePrefix      *struct{} `xml:"SimplePrefix,omitempty"`
	PartitionedPrefix *struct {
		PartitionDateSource *string `xml:"PartitionDateSource,omitempty"`
	} `xml:"PartitionedPrefix,omitempty"`
}

// checkLoggingStatus judges a BucketLoggingStatus's form and returns it
// re-encoded from what was judged (no TargetGrants; the key format
// SimplePrefix when none is given, as S3 answers it).
func checkLoggingStatus(body []byte) (*loggingStatus, []byte, error) {
	doc := &loggingStatus{}
	if err := decodeXML(body, doc); err != nil {
		return nil, nil, err
	}
	le := doc.Enabled
	if le == nil {
		out, err := encodeDoc(doc)
		return doc, out, err
	}
	malformed := s3err.New(s3err.MalformedXML, "")
	if le.TargetBucket == nil || strings.TrimSpace(*le.TargetBucket) == "" || le.TargetPrefix == nil {
		return nil, nil, malformed
	}
	target := strings.TrimSpace(*le.TargetBucket)
	le.TargetBucket = &target
	if len(*le.TargetPrefix) > 1024 {
		return nil, nil, s3err.New(s3err.InvalidArgument, "The TargetPrefix is longer than an object key may be.")
	}
	kf := le.TargetKeyFormat
	if kf == nil {
		le.TargetKeyFormat = &logKeyFormat{SimplePrefix: &struct{}{}}
	} else {
		if (kf.SimplePrefix == nil) == (kf.PartitionedPrefix == nil) {
			return nil, nil, malformed
		}
		if p := kf.PartitionedPrefix; p != nil && p.PartitionDateSource != nil {
			switch *p.PartitionDateSource {
			case "EventTime", "DeliveryTime":
			default:
				return nil, nil, malformed
			}
		}
	}
	out, err := encodeDoc(doc)
	return doc, out, err
}

func (s *Server) getBucketLogging(req *request) error {
	doc, ok, err := s.store.BucketDoc(req.r.Context(), req.bucket, docLogging)
	if err != nil {
		return err
	}
	if !ok {
		doc, _ = encodeDoc(&loggingStatus{})
	} else if _, doc, err = checkLoggingStatus(doc); err != nil {
		return s3err.New(s3err.InternalError, "The bucket's logging configuration does not read back.")
	}
	req.w.Header().Set("Content-Type", "application/xml")
	req.w.WriteHeader(http.StatusOK)
	_, _ = req.w.Write(doc)
	return nil
}

func (s *Server) putBucketLogging(req *request) error {
	body, err := readXMLBody(req, maxLoggingBody)
	if err != nil {
		return err
	}
	doc, canon, err := checkLoggingStatus(body)
	if err != nil {
		return err
	}
	ctx := req.r.Context()
	if _, err := s.store.BucketDocs(ctx, req.bucket); err != nil {
		return err
	}
	if doc.Enabled == nil {
		if err := s.store.DeleteBucketDoc(ctx, req.bucket, docLogging); err != nil {
			return err
		}
		req.w.WriteHeader(http.StatusOK)
		return nil
	}
	target := *doc.Enabled.TargetBucket
	// A bucket outside the credential's lists is not told apart from a
	// missing one by its answer.
	if !req.cred.canWrite(target) {
		return s3err.New(s3err.AccessDenied, "")
	}
	if _, err := s.store.BucketDocs(ctx, target); sealstore.StoreCode(err) == "NoSuchBucket" {
		return s3err.New(s3err.InvalidTargetBucketForLogging, "The target bucket for logging does not exist")
	} else if err != nil {
		return err
	}
	if err := s.store.PutBucketDoc(ctx, req.bucket, docLogging, canon); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}
