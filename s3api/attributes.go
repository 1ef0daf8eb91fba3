package s3api

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// getObjectAttributesOutput is S3's GetObjectAttributesOutput (its root
// element GetObjectAttributesResponse, as S3 sends it): only the
// attributes asked for in x-amz-object-attributes are present.
type getObjectAttributesOutput struct {
	XMLName      xml.Name            `xml:"GetObjectAttributesResponse"`
	Xmlns        string              `xml:"xmlns,attr"`
	ETag         string              `xml:"ETag,omitempty"`
	Checksum     *attributesChecksum `xml:"Checksum"`
	ObjectParts  *attributesParts    `xml:"ObjectParts"`
	StorageClass string              `xml:"StorageClass,omitempty"`
	ObjectSize   *int64              `xml:"ObjectSize"`
}

type attributesChecksum struct {
	partChecksums
	ChecksumType string `xml:"ChecksumType,omitempty"`
}

type attributesParts struct {
	IsTruncated          bool             `xml:"IsTruncated"`
	MaxParts             int              `xml:"MaxParts"`
	NextPartNumberMarker int              `xml:"NextPartNumberMarker"`
	PartNumberMarker     int              `xml:"PartNumberMarker"`
	Parts                []attributesPart `xml:"Part"`
	PartsCount           int              `xml:"PartsCount"`
}

type attributesPart struct {
	partChecksums
	PartNumber int   `xml:"PartNumber"`
	Size       int64 `xml:"Size"`
}

// objectAttributeNames are the values x-amz-object-attributes may list.
var objectAttributeNames = map[string]bool{"ETag": true, "Checksum": true, "ObjectParts": true, "StorageClass": true, "ObjectSize": true}

// getObjectAttributes answers GET ?attributes with the plaintext values:
// size, ETag and checksums from the sealed metadata or manifest, the parts
// of a multipart object (with their checksums) from its manifest. A
// ?versionId reads that version as HEAD does (but a delete marker answers
// 404 NoSuchKey, by id too, with x-amz-delete-marker); x-amz-version-id
// names the version described.
func (s *Server) getObjectAttributes(req *request) error {
	if err := readPolicy.check(req.r.Header); err != nil {
		return err
	}
	vid, err := versionParam(req.r)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, v := range req.r.Header.Values("X-Amz-Object-Attributes") {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); name == "" {
				continue
			}
			if !objectAttributeNames[name] {
				return s3err.New(s3err.InvalidArgument, "Invalid attribute name specified.")
			}
			want[name] = true
		}
	}
	if len(want) == 0 {
		// A missing bucket is named before the missing header, as S3
		// does.
		if err := s.store.HeadBucket(req.r.Context(), req.bucket); err != nil {
			return bucketErr(err)
		}
		return s3err.New(s3err.InvalidRequest, "The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty")
	}
	maxParts, marker := 1000, 0
	if v := req.r.Header.Get("X-Amz-Max-Parts"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return s3err.New(s3err.InvalidArgument, "Argument max-parts must be an integer between 0 and 2147483647")
		}
		maxParts = min(n, 1000)
	}
	if v := req.r.Header.Get("X-Amz-Part-Number-Marker"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return s3err.New(s3err.InvalidArgument, "Argument part-number-marker must be an integer between 0 and 2147483647")
		}
		marker = n
	}
	ck, err := customerKey(req.r)
	if err != nil {
		return err
	}
	// As S3: an object sealed with a customer key answers only with it,
	// checked against the version described.
	info, parts, err := s.store.Attributes(req.r.Context(), req.bucket, req.key, vid, ck)
	if err == nil && req.boundTo != "" && info.ContentID() != req.boundTo {
		err = sealstore.ErrContentChanged // allowed by a record of other content
	}
	if err != nil {
		return attributesErr(req.w.Header(), err, vid)
	}
	if ck != nil {
		setCustomerKeyHeaders(req.w.Header(), ck)
	}
	out := getObjectAttributesOutput{Xmlns: s3ns}
	if want["ETag"] {
		out.ETag = info.ETag // S3 gives it without quotes here
	}
	if want["StorageClass"] {
		out.StorageClass = storageClass(info)
	}
	if want["ObjectSize"] {
		out.ObjectSize = &info.Size
	}
	if want["Checksum"] && len(info.Checksums) > 0 {
		// A COMPOSITE value is given without its "-N" suffix here, as S3
		// does (the part count is in ObjectParts).
		cs := map[string]string{}
		for alg, v := range info.Checksums {
			cs[alg], _, _ = strings.Cut(v, "-")
		}
		out.Checksum = &attributesChecksum{partChecksums: checksumsOf(cs), ChecksumType: checksumType(info.Checksums)}
	}
	if want["ObjectParts"] && parts != nil {
		op := &attributesParts{MaxParts: maxParts, PartNumberMarker: marker, PartsCount: len(parts)}
		for _, p := range parts {
			if p.PartNumber <= marker {
				continue
			}
			if len(op.Parts) == maxParts {
				op.IsTruncated = true
				break
			}
			op.Parts = append(op.Parts, attributesPart{partChecksums: checksumsOf(objectPartChecksums(info.Checksums, p.Checksums)), PartNumber: p.PartNumber, Size: p.Size})
			op.NextPartNumberMarker = p.PartNumber
		}
		out.ObjectParts = op
	}
	setVersionID(req.w.Header(), info.VersionID)
	req.w.Header().Set("Last-Modified", info.LastModified.UTC().Format(http.TimeFormat))
	writeXML(req.w, http.StatusOK, out)
	return nil
}

// storageClass is the object's storage class as S3 reports it.
func storageClass(info sealstore.ObjectInfo) string {
	if info.StorageClass == "" {
		return "STANDARD"
	}
	return info.StorageClass
}

// objectPartChecksums is what ObjectParts shows of a part's kept checksums: those
// of the object's algorithm when it has one, as S3 documents it (a part of
// an upload created without an algorithm keeps the client's checksum beside
// the CRC64NVME its object is combined from, and shows the CRC64NVME). An
// object without a checksum (parts recorded by an s3seal from before the
// default CRC64NVME) shows each part's client checksum alone, as S3 shows
// one per part: s3seal's CRC64NVME is left out of a part that keeps another.
func objectPartChecksums(object, part map[string]string) map[string]string {
	if len(object) == 0 {
		return clientChecksums("", part)
	}
	out := map[string]string{}
	for a := range object {
		if v, ok := part[a]; ok {
			out[a] = v
		}
	}
	return out
}
