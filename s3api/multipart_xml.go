package s3api

import "encoding/xml"

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
}

type completeMultipartUpload struct {
	XMLName xml.Name `xml:"CompleteMultipartUpload"`
	Parts   []struct {
		PartNumber int    `xml:"PartNumber"`
		ETag       string `xml:"ETag"`
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
		switch alg {
		case "crc32":
			p.ChecksumCRC32 = v
		case "crc32c":
			p.ChecksumCRC32C = v
		case "crc64nvme":
			p.ChecksumCRC64NVME = v
		case "sha1":
			p.ChecksumSHA1 = v
		case "sha256":
			p.ChecksumSHA256 = v
		}
	}
	return p
}

// asMap is the inverse of checksumsOf.
func (p partChecksums) asMap() map[string]string {
	m := map[string]string{}
	for alg, v := range map[string]string{"crc32": p.ChecksumCRC32, "crc32c": p.ChecksumCRC32C,
		"crc64nvme": p.ChecksumCRC64NVME, "sha1": p.ChecksumSHA1, "sha256": p.ChecksumSHA256} {
		if v != "" {
			m[alg] = v
		}
	}
	return m
}
