package s3api

import (
	"context"
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// Bucket default encryption (?encryption) is kept by s3seal as the
// bucket's document docEncryption, never handed to the store as a
// bucket configuration. s3seal seals every object whatever the bucket
// says; the default says which server-side encryption the store is asked
// for on a write that names none (PutObject, POST, CopyObject,
// CreateMultipartUpload), exactly as if the client had sent the
// x-amz-server-side-encryption headers (sse.go: passed on, reported on the
// write, GET and HEAD). A bucket without the document answers
// ServerSideEncryptionConfigurationNotFoundError (docs/DESIGN.md,
// "Bucket default encryption").

// maxEncryptionBody bounds a ServerSideEncryptionConfiguration.
const maxEncryptionBody = 16 << 10

// encryptionConfig is a ServerSideEncryptionConfiguration as s3seal keeps
// and answers it.
type encryptionConfig struct {
	XMLName xml.Name `xml:"ServerSideEncryptionConfiguration"`
	docNS
	Rules []encryptionRule `xml:"Rule"`
}

type encryptionRule struct {
	Default *struct {
		SSEAlgorithm   *string `xml:"SSEAlgorithm"`
		KMSMasterKeyID *string `xml:"KMSMasterKeyID,omitempty"`
	} `xml:"ApplyServerSideEncryptionByDefault"`
	BucketKeyEnabled *bool `xml:"BucketKeyEnabled"`
}

// checkEncryptionConfig judges a ServerSideEncryptionConfiguration as S3
// does and returns it re-encoded from what was judged: one Rule whose
// ApplyServerSideEncryptionByDefault names AES256, aws:kms or
// aws:kms:dsse (else MalformedXML), a KMSMasterKeyID only with a KMS
// algorithm (else InvalidArgument), and BucketKeyEnabled given as false
// when absent, as S3 answers it.
func checkEncryptionConfig(body []byte) ([]byte, error) {
	doc := &encryptionConfig{}
	if err := decodeXML(body, doc); err != nil {
		return nil, err
	}
	malformed := s3err.New(s3err.MalformedXML, "")
	if len(doc.Rules) != 1 {
		return nil, malformed
	}
	r := &doc.Rules[0]
	if r.Default == nil || r.Default.SSEAlgorithm == nil {
		return nil, malformed
	}
	alg := strings.TrimSpace(*r.Default.SSEAlgorithm)
	switch alg {
	case "AES256", "aws:kms", "aws:kms:dsse":
	default:
		return nil, malformed
	}
	r.Default.SSEAlgorithm = &alg
	if id := r.Default.KMSMasterKeyID; id != nil {
		if alg == "AES256" {
			return nil, s3err.New(s3err.InvalidArgument, "a KMSMasterKeyID is not applicable if the default sse algorithm is not aws:kms or aws:kms:dsse")
		}
		v := strings.TrimSpace(*id)
		if v == "" || len(v) > maxKMSKeyID {
			return nil, s3err.New(s3err.InvalidArgument, "The KMSMasterKeyID is not a valid KMS key id.")
		}
		r.Default.KMSMasterKeyID = &v
	}
	if r.BucketKeyEnabled == nil {
		r.BucketKeyEnabled = new(bool)
	}
	return encodeDoc(doc)
}

func errNoEncryptionConfig() error {
	return s3err.New(s3err.ServerSideEncryptionConfigurationNotFoundError, "The server side encryption configuration was not found")
}

func (s *Server) getBucketEncryption(req *request) error {
	doc, ok, err := s.store.BucketDoc(req.r.Context(), req.bucket, docEncryption)
	if err != nil {
		return err
	}
	if !ok {
		return errNoEncryptionConfig()
	}
	// What s3seal wrote, judged again: a document that does not read back
	// is never passed on.
	canon, err := checkEncryptionConfig(doc)
	if err != nil {
		return s3err.New(s3err.InternalError, "The bucket's encryption configuration does not read back.")
	}
	req.w.Header().Set("Content-Type", "application/xml")
	req.w.WriteHeader(http.StatusOK)
	_, _ = req.w.Write(canon)
	return nil
}

func (s *Server) putBucketEncryption(req *request) error {
	body, err := readXMLBody(req, maxEncryptionBody)
	if err != nil {
		return err
	}
	canon, err := checkEncryptionConfig(body)
	if err != nil {
		return err
	}
	if err := s.checkDefaultKMSKey(req.cred, canon); err != nil {
		return err
	}
	// The bucket must be there: BucketDocs answers its NoSuchBucket.
	if _, err := s.store.BucketDocs(req.r.Context(), req.bucket); err != nil {
		return err
	}
	if err := s.store.PutBucketDoc(req.r.Context(), req.bucket, docEncryption, canon); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteBucketEncryption(req *request) error {
	if _, err := s.store.BucketDocs(req.r.Context(), req.bucket); err != nil {
		return err
	}
	if err := s.store.DeleteBucketDoc(req.r.Context(), req.bucket, docEncryption); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}

// bucketDefaultSSE applies the bucket's default encryption to a write
// that names no server-side encryption of its own (neither
// x-amz-server-side-encryption nor SSE-C), as S3 does: headers then
// carry the default's algorithm, KMS key and bucket key as if the client
// had sent them.
func (s *Server) bucketDefaultSSE(ctx context.Context, bucket string, headers *sealstore.Headers, ck *sealstore.CustomerKey) error {
	if headers.SSE != "" || ck != nil {
		return nil
	}
	doc, ok, err := s.store.BucketDoc(ctx, bucket, docEncryption)
	if err != nil || !ok {
		return err
	}
	cfg := &encryptionConfig{}
	if err := decodeXML(doc, cfg); err != nil || len(cfg.Rules) != 1 || cfg.Rules[0].Default == nil || cfg.Rules[0].Default.SSEAlgorithm == nil {
		return s3err.New(s3err.InternalError, "The bucket's encryption configuration does not read back.")
	}
	r := cfg.Rules[0]
	headers.SSE = *r.Default.SSEAlgorithm
	if headers.SSE != "AES256" {
		if r.Default.KMSMasterKeyID != nil {
			headers.SSEKMSKeyID = *r.Default.KMSMasterKeyID
		}
		headers.SSEBucketKey = r.BucketKeyEnabled != nil && *r.BucketKeyEnabled
	}
	return nil
}

// checkDefaultKMSKey refuses a default encryption naming a KMS key that
// s3seal seals under (it has a key service) and that the credential may
// not use: the default would seal other writers' objects under it. Each
// write is checked again against its own writer (sealKeyOf).
func (s *Server) checkDefaultKMSKey(cred Credential, canon []byte) error {
	cfg := &encryptionConfig{}
	if err := decodeXML(canon, cfg); err != nil || len(cfg.Rules) != 1 || cfg.Rules[0].Default == nil {
		return nil
	}
	d := cfg.Rules[0].Default
	// Also for a credential whose own SSE-KMS goes to the store: the
	// default applies to every writer, and seals theirs in s3seal.
	if d.SSEAlgorithm == nil || !strings.HasPrefix(*d.SSEAlgorithm, "aws:kms") || d.KMSMasterKeyID == nil {
		return nil
	}
	id, terminated, err := s.store.KMSKey(*d.KMSMasterKeyID, "")
	switch {
	case !terminated:
		return nil
	case err != nil:
		return err
	case !s.mayUseKMSKey(cred, id):
		return s3err.New(s3err.AccessDenied, "This credential may not use the KMS key "+*d.KMSMasterKeyID+" (kms_keys).")
	}
	return nil
}
