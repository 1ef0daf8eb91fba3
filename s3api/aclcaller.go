package s3api

import (
	"bytes"
	"encoding/xml"
	"net/http"

	"github.com/s3seal/s3seal/backend"
)

// aclToStore turns an admin's PUT ?acl document of a bucket back into the
// store's terms: s3seal shows the caller's access key as the owner of
// every bucket (answerDoc), so a document read, changed and put
// back names it where the store has its own account. The store's owner
// ID, read from its current ACL, takes its place. Other documents go as
// sent.
func (s *Server) aclToStore(req *request, in backend.RawRequest) ([]byte, error) {
	caller := req.auth.AccessKey
	if len(bytes.TrimSpace(in.Body)) == 0 || !bytes.Contains(in.Body, []byte(caller)) {
		return in.Body, nil
	}
	var doc aclDoc
	if xml.Unmarshal(in.Body, &doc) != nil {
		return in.Body, nil
	}
	names := doc.Owner != nil && doc.Owner.ID == caller
	for _, g := range doc.Grants {
		names = names || g.Grantee.ID == caller
	}
	if !names {
		return in.Body, nil
	}
	cur := backend.RawRequest{Method: http.MethodGet, Bucket: in.Bucket, Key: in.Key, Query: in.Query, Header: http.Header{}}
	out, err := s.cfg.Forwarder.Forward(req.r.Context(), cur)
	if err != nil {
		return nil, forwardErr(err)
	}
	var now aclDoc
	if xml.Unmarshal(out.Body, &now) != nil || now.Owner == nil || now.Owner.ID == "" {
		return in.Body, nil
	}
	if doc.Owner != nil && doc.Owner.ID == caller {
		doc.Owner.ID, doc.Owner.DisplayName = now.Owner.ID, ""
	}
	for i := range doc.Grants {
		if g := &doc.Grants[i].Grantee; g.ID == caller {
			g.ID, g.DisplayName = now.Owner.ID, ""
		}
	}
	doc.setNS()
	b, err := xml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), b...), nil
}
