package s3api

import (
	"net/http"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
)

// storageClasses are the values S3 accepts in x-amz-storage-class.
var storageClasses = map[string]bool{
	"STANDARD": true, "REDUCED_REDUNDANCY": true, "STANDARD_IA": true, "ONEZONE_IA": true,
	"INTELLIGENT_TIERING": true, "GLACIER": true, "DEEP_ARCHIVE": true, "OUTPOSTS": true,
	"GLACIER_IR": true, "SNOW": true, "EXPRESS_ONEZONE": true, "FSX_OPENZFS": true, "FSX_ONTAP": true,
}

// maxRedirectLocation is S3's limit on x-amz-website-redirect-location.
const maxRedirectLocation = 2048

// classAndRedirect reads x-amz-storage-class and
// x-amz-website-redirect-location of a PUT, copy or CreateMultipartUpload,
// checked as S3 checks them. Both are passed on to the backend as they
// are: the class is the backend's to honour, and the redirect is a path
// or URL that S3 website hosting acts on, not object content.
func classAndRedirect(h http.Header) (class, redirect string, err error) {
	if vs, ok := h["X-Amz-Storage-Class"]; ok {
		class = strings.TrimSpace(strings.Join(vs, ","))
		if !storageClasses[class] {
			return "", "", s3err.New(s3err.InvalidStorageClass, "")
		}
	}
	if vs, ok := h["X-Amz-Website-Redirect-Location"]; ok {
		redirect = strings.Join(vs, ",")
		if !strings.HasPrefix(redirect, "/") && !strings.HasPrefix(redirect, "http://") && !strings.HasPrefix(redirect, "https://") {
			// AWS's own code for it (not in the shared table: one use).
			return "", "", s3err.New(s3err.InvalidRedirectLocation,
				"The website redirect location must have a prefix of 'http://' or 'https://' or '/'.")
		}
		if len(redirect) > maxRedirectLocation {
			return "", "", s3err.New(s3err.InvalidArgument, "The length of website redirect location cannot exceed 2,048 characters.")
		}
	}
	return class, redirect, nil
}
