package s3api

import (
	"encoding/xml"
	"time"

	"github.com/s3seal/s3seal/s3api/s3err"
)

const s3ns = "http://s3.amazonaws.com/doc/2006-03-01/"

// s3Time formats a time as S3 does in XML bodies.
func s3Time(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

type owner struct {
	ID          string `xml:"ID"`
	DisplayName string `xml:"DisplayName"`
}

type listAllMyBucketsResult struct {
	XMLName xml.Name     `xml:"ListAllMyBucketsResult"`
	Xmlns   string       `xml:"xmlns,attr"`
	Owner   owner        `xml:"Owner"`
	Buckets []bucketInfo `xml:"Buckets>Bucket"`
	// ContinuationToken is the token of the next page, as S3 names it.
	ContinuationToken string `xml:"ContinuationToken,omitempty"`
	Prefix            string `xml:"Prefix,omitempty"`
}

type bucketInfo struct {
	Name         string `xml:"Name"`
	CreationDate string `xml:"CreationDate"`
	BucketRegion string `xml:"BucketRegion,omitempty"`
}

type locationConstraint struct {
	XMLName xml.Name `xml:"LocationConstraint"`
	Xmlns   string   `xml:"xmlns,attr"`
	Region  string   `xml:",chardata"`
}

type listEntry struct {
	Key          string `xml:"Key"`
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
	// The algorithms of the object's kept checksums and their type, as S3
	// lists them (none kept: neither element).
	ChecksumAlgorithm []string `xml:"ChecksumAlgorithm,omitempty"`
	ChecksumType      string   `xml:"ChecksumType,omitempty"`
	Size              int64    `xml:"Size"`
	Owner             *owner   `xml:"Owner,omitempty"`
	StorageClass      string   `xml:"StorageClass"`
}

type commonPrefix struct {
	Prefix string `xml:"Prefix"`
}

type listBucketResult struct {
	XMLName               xml.Name       `xml:"ListBucketResult"`
	Xmlns                 string         `xml:"xmlns,attr"`
	Name                  string         `xml:"Name"`
	Prefix                string         `xml:"Prefix"`
	Marker                *string        `xml:"Marker,omitempty"`
	NextMarker            string         `xml:"NextMarker,omitempty"`
	ContinuationToken     *string        `xml:"ContinuationToken,omitempty"` // echoed when sent, even empty
	NextContinuationToken string         `xml:"NextContinuationToken,omitempty"`
	StartAfter            *string        `xml:"StartAfter,omitempty"` // echoed when sent, even empty
	KeyCount              *int           `xml:"KeyCount,omitempty"`
	MaxKeys               int32          `xml:"MaxKeys"`
	Delimiter             string         `xml:"Delimiter,omitempty"`
	EncodingType          string         `xml:"EncodingType,omitempty"`
	IsTruncated           bool           `xml:"IsTruncated"`
	Contents              []listEntry    `xml:"Contents"`
	CommonPrefixes        []commonPrefix `xml:"CommonPrefixes"`
}

type copyObjectResult struct {
	XMLName      xml.Name `xml:"CopyObjectResult"`
	Xmlns        string   `xml:"xmlns,attr"`
	LastModified string   `xml:"LastModified"`
	ETag         string   `xml:"ETag"`
	partChecksums
	ChecksumType string `xml:"ChecksumType,omitempty"`
}

// createBucketConfiguration is the optional body of CreateBucket; Other
// collects every element s3seal does not implement.
type createBucketConfiguration struct {
	XMLName            xml.Name `xml:"CreateBucketConfiguration"`
	LocationConstraint string   `xml:"LocationConstraint"`
	Tags               *struct {
		Tags []tag `xml:"Tag"`
	} `xml:"Tags"` // createbucket.go
	Other []struct {
		XMLName xml.Name
	} `xml:",any"`
}

// deleteRequest is the body of DeleteObjects.
type deleteRequest struct {
	XMLName xml.Name `xml:"Delete"`
	Quiet   bool     `xml:"Quiet"`
	Objects []struct {
		Key string `xml:"Key"`
		// VersionID is nil without a VersionId element; an empty element
		// names no version and is refused (S3: NoSuchVersion).
		VersionID        *string `xml:"VersionId"`
		ETag             string  `xml:"ETag"`
		LastModifiedTime string  `xml:"LastModifiedTime"`
		Size             string  `xml:"Size"`
	} `xml:"Object"`
}

type deletedEntry struct {
	Key                   string `xml:"Key"`
	VersionID             string `xml:"VersionId,omitempty"`
	DeleteMarker          bool   `xml:"DeleteMarker,omitempty"`
	DeleteMarkerVersionID string `xml:"DeleteMarkerVersionId,omitempty"`
}

type deleteError struct {
	Key       string     `xml:"Key"`
	VersionID string     `xml:"VersionId,omitempty"`
	Code      s3err.Code `xml:"Code"`
	Message   string     `xml:"Message"`
}

type deleteResult struct {
	XMLName xml.Name       `xml:"DeleteResult"`
	Xmlns   string         `xml:"xmlns,attr"`
	Deleted []deletedEntry `xml:"Deleted"`
	Errors  []deleteError  `xml:"Error"`
}
