package s3api

import (
	"encoding/xml"
	"strings"

	"github.com/s3seal/s3seal/checksum"
)

type initiateMultipartUploadResult struct {
	XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
	Xmlns    string   `xml:"xmlns,attr"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	UploadID string   `xml:"UploadId"`
}

// partChecksums are the per-part checksum elements of CompleteMultipartUpload
// requests and of ListParts answers.
type partChecksums struct {
	ChecksumCRC32     string `xml:"ChecksumCRC32,omitempty"`
	ChecksumCRC32C    string `xml:"ChecksumCRC32C,omitempty"`
	ChecksumCRC64NVME string `xml:"ChecksumCRC64NVME,omitempty"`
	ChecksumSHA1      string `xml:"ChecksumSHA1,omitempty"`
	ChecksumSHA256    string `xml:"ChecksumSHA256,omitempty"`
	ChecksumSHA512    string `xml:"ChecksumSHA512,omitempty"`
	ChecksumMD5       string `xml:"ChecksumMD5,omitempty"`
	ChecksumXXHASH64  string `xml:"ChecksumXXHASH64,omitempty"`
	ChecksumXXHASH3   string `xml:"ChecksumXXHASH3,omitempty"`
	ChecksumXXHASH128 string `xml:"ChecksumXXHASH128,omitempty"`
}

type completeMultipartUpload struct {
	XMLName xml.Name `xml:"CompleteMultipartUpload"`
	Parts   []struct {
		PartNumber *int    `xml:"PartNumber"`
		ETag       *string `xml:"ETag"`
		partChecksums
	} `xml:"Part"`
}

type completeMultipartUploadResult struct {
	XMLName  xml.Name `xml:"CompleteMultipartUploadResult"`
	Xmlns    string   `xml:"xmlns,attr"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
	partChecksums
	ChecksumType string `xml:"ChecksumType,omitempty"`
}

type copyPartResult struct {
	XMLName      xml.Name `xml:"CopyPartResult"`
	Xmlns        string   `xml:"xmlns,attr"`
	LastModified string   `xml:"LastModified"`
	ETag         string   `xml:"ETag"`
	partChecksums
}

type listedPart struct {
	PartNumber   int    `xml:"PartNumber"`
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
	Size         int64  `xml:"Size"`
	partChecksums
}

type listPartsResult struct {
	XMLName              xml.Name     `xml:"ListPartsResult"`
	Xmlns                string       `xml:"xmlns,attr"`
	Bucket               string       `xml:"Bucket"`
	Key                  string       `xml:"Key"`
	UploadID             string       `xml:"UploadId"`
	Initiator            owner        `xml:"Initiator"`
	Owner                owner        `xml:"Owner"`
	StorageClass         string       `xml:"StorageClass"`
	PartNumberMarker     int          `xml:"PartNumberMarker"`
	NextPartNumberMarker int          `xml:"NextPartNumberMarker"`
	MaxParts             int          `xml:"MaxParts"`
	IsTruncated          bool         `xml:"IsTruncated"`
	ChecksumAlgorithm    string       `xml:"ChecksumAlgorithm,omitempty"`
	ChecksumType         string       `xml:"ChecksumType,omitempty"`
	Parts                []listedPart `xml:"Part"`
}

type listedUpload struct {
	Key          string `xml:"Key"`
	UploadID     string `xml:"UploadId"`
	Initiator    owner  `xml:"Initiator"`
	Owner        owner  `xml:"Owner"`
	StorageClass string `xml:"StorageClass"`
	Initiated    string `xml:"Initiated"`
	// The checksum algorithm and type the upload was created with (none:
	// neither element).
	ChecksumAlgorithm string `xml:"ChecksumAlgorithm,omitempty"`
	ChecksumType      string `xml:"ChecksumType,omitempty"`
}

type listMultipartUploadsResult struct {
	XMLName            xml.Name       `xml:"ListMultipartUploadsResult"`
	Xmlns              string         `xml:"xmlns,attr"`
	Bucket             string         `xml:"Bucket"`
	KeyMarker          string         `xml:"KeyMarker"`
	UploadIDMarker     string         `xml:"UploadIdMarker"`
	NextKeyMarker      string         `xml:"NextKeyMarker"`
	NextUploadIDMarker string         `xml:"NextUploadIdMarker"`
	Prefix             string         `xml:"Prefix"`
	Delimiter          string         `xml:"Delimiter,omitempty"`
	EncodingType       string         `xml:"EncodingType,omitempty"`
	MaxUploads         int            `xml:"MaxUploads"`
	IsTruncated        bool           `xml:"IsTruncated"`
	Uploads            []listedUpload `xml:"Upload"`
	CommonPrefixes     []commonPrefix `xml:"CommonPrefixes"`
}

// checksumsOf maps kept checksums (algorithm name -> value) to XML elements.
func checksumsOf(cs map[string]string) partChecksums {
	var p partChecksums
	for alg, v := range cs {
		if f := p.field(alg); f != nil {
			*f = v
		}
	}
	return p
}

// field returns the element for algorithm alg (lower case), nil if none.
func (p *partChecksums) field(alg string) *string {
	switch alg {
	case "crc32":
		return &p.ChecksumCRC32
	case "crc32c":
		return &p.ChecksumCRC32C
	case "crc64nvme":
		return &p.ChecksumCRC64NVME
	case "sha1":
		return &p.ChecksumSHA1
	case "sha256":
		return &p.ChecksumSHA256
	case "sha512":
		return &p.ChecksumSHA512
	case "md5":
		return &p.ChecksumMD5
	case "xxhash64":
		return &p.ChecksumXXHASH64
	case "xxhash3":
		return &p.ChecksumXXHASH3
	case "xxhash128":
		return &p.ChecksumXXHASH128
	}
	return nil
}

// asMap is the inverse of checksumsOf.
func (p partChecksums) asMap() map[string]string {
	m := map[string]string{}
	for _, a := range checksum.Algorithms {
		alg := strings.ToLower(string(a))
		if v := *p.field(alg); v != "" {
			m[alg] = v
		}
	}
	return m
}
