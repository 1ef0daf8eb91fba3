package embedded

import (
	"encoding/xml"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// ACLs on the embedded store: a canned ACL, x-amz-grant-* headers or an
// AccessControlPolicy document are kept (bucket and object) and answered
// back as S3 does: the owner's FULL_CONTROL plus the grants kept. The
// owner is "s3seal", the store's one user; nothing is enforced.

// aclState is what was set: a document as sent, or a canned ACL and
// grant headers (by suffix: read, write, read-acp, write-acp,
// full-control).
type aclState struct {
	Doc    []byte            `json:"doc,omitempty"`
	Canned string            `json:"canned,omitempty"`
	Grants map[string]string `json:"grants,omitempty"`
}

const ownerID = "s3seal"

var cannedACLList = []string{"private", "public-read", "public-read-write", "authenticated-read",
	"aws-exec-read", "bucket-owner-read", "bucket-owner-full-control", "log-delivery-write"}

var grantPerms = map[string]string{"read": "READ", "write": "WRITE", "read-acp": "READ_ACP",
	"write-acp": "WRITE_ACP", "full-control": "FULL_CONTROL"}

// aclFromHeaders reads x-amz-acl and x-amz-grant-*; nil when they ask
// for no more than the owner's access (private, the default).
func aclFromHeaders(h http.Header) (*aclState, error) {
	st := &aclState{Canned: strings.TrimSpace(h.Get("X-Amz-Acl"))}
	if st.Canned != "" && !slices.Contains(cannedACLList, st.Canned) {
		return nil, &mpError{http.StatusBadRequest, "InvalidArgument", "The canned ACL " + st.Canned + " is not one S3 knows."}
	}
	for suffix := range grantPerms {
		if v := strings.TrimSpace(h.Get("X-Amz-Grant-" + suffix)); v != "" {
			if _, err := parseGrantees(v); err != nil {
				return nil, err
			}
			if st.Grants == nil {
				st.Grants = map[string]string{}
			}
			st.Grants[suffix] = v
		}
	}
	if st.Canned != "" && st.Grants != nil {
		return nil, &mpError{http.StatusBadRequest, "InvalidRequest", "Specifying both Canned ACLs and Header Grants is not allowed"}
	}
	if st.Grants == nil && (st.Canned == "" || st.Canned == "private" || st.Canned == "bucket-owner-full-control") {
		return nil, nil
	}
	return st, nil
}

type aclGrantee struct {
	XMLNSXsi     string `xml:"xmlns:xsi,attr"`
	Type         string `xml:"xsi:type,attr"`
	ID           string `xml:"ID,omitempty"`
	DisplayName  string `xml:"DisplayName,omitempty"`
	URI          string `xml:"URI,omitempty"`
	EmailAddress string `xml:"EmailAddress,omitempty"`
}

type aclGrant struct {
	Grantee    aclGrantee `xml:"Grantee"`
	Permission string     `xml:"Permission"`
}

type aclPolicy struct {
	XMLName xml.Name `xml:"AccessControlPolicy"`
	NS      string   `xml:"xmlns,attr"`
	Owner   struct {
		ID          string `xml:"ID"`
		DisplayName string `xml:"DisplayName"`
	} `xml:"Owner"`
	Grants []aclGrant `xml:"AccessControlList>Grant"`
}

const xsi = "http://www.w3.org/2001/XMLSchema-instance"

var granteeRE = regexp.MustCompile(`^\s*(id|uri|emailAddress)\s*=\s*"?([^",]*)"?\s*$`)

// parseGrantees reads a grant header: id="...", uri="...", emailAddress="...".
func parseGrantees(v string) ([]aclGrantee, error) {
	var out []aclGrantee
	for _, part := range strings.Split(v, ",") {
		m := granteeRE.FindStringSubmatch(part)
		if m == nil || m[2] == "" {
			return nil, &mpError{http.StatusBadRequest, "InvalidArgument", "Invalid grantee in an x-amz-grant header."}
		}
		g := aclGrantee{XMLNSXsi: xsi}
		switch m[1] {
		case "id":
			g.Type, g.ID = "CanonicalUser", m[2]
		case "uri":
			g.Type, g.URI = "Group", m[2]
		default:
			g.Type, g.EmailAddress = "AmazonCustomerByEmail", m[2]
		}
		out = append(out, g)
	}
	return out, nil
}

func group(uri, perm string) aclGrant {
	return aclGrant{Grantee: aclGrantee{XMLNSXsi: xsi, Type: "Group", URI: "http://acs.amazonaws.com/groups/" + uri}, Permission: perm}
}

// policyOf is the document a GET ?acl answers.
func policyOf(st *aclState) []byte {
	if st != nil && len(st.Doc) > 0 {
		return st.Doc
	}
	p := aclPolicy{NS: s3XMLNS}
	p.Owner.ID, p.Owner.DisplayName = ownerID, ownerID
	p.Grants = []aclGrant{{Grantee: aclGrantee{XMLNSXsi: xsi, Type: "CanonicalUser", ID: ownerID, DisplayName: ownerID}, Permission: "FULL_CONTROL"}}
	if st != nil {
		switch st.Canned {
		case "public-read":
			p.Grants = append(p.Grants, group("global/AllUsers", "READ"))
		case "public-read-write":
			p.Grants = append(p.Grants, group("global/AllUsers", "READ"), group("global/AllUsers", "WRITE"))
		case "authenticated-read":
			p.Grants = append(p.Grants, group("global/AuthenticatedUsers", "READ"))
		case "log-delivery-write":
			p.Grants = append(p.Grants, group("s3/LogDelivery", "WRITE"), group("s3/LogDelivery", "READ_ACP"))
		}
		for _, suffix := range []string{"full-control", "read", "read-acp", "write", "write-acp"} {
			gs, _ := parseGrantees(st.Grants[suffix])
			for _, g := range gs {
				p.Grants = append(p.Grants, aclGrant{Grantee: g, Permission: grantPerms[suffix]})
			}
		}
	}
	b, _ := xml.Marshal(p)
	return append([]byte(xml.Header), b...)
}

func (h *attrsHandler) serveObjectACL(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	vid, named, err := h.headVersion(r, bucket, key)
	if err != nil {
		return err
	}
	return h.serveACL(w, r, bucket, key, vid, named)
}

// serveACL is Get/PutBucketAcl (key "") and Get/PutObjectAcl.
func (h *attrsHandler) serveACL(w http.ResponseWriter, r *http.Request, bucket, key, vid string, named bool) error {
	switch r.Method {
	case http.MethodGet:
		var st *aclState
		if key == "" {
			b, err := h.a.bucket(bucket)
			if err != nil {
				return err
			}
			st = b.ACL
		} else {
			o, err := h.a.object(bucket, key, vid)
			if err != nil {
				return err
			}
			st = o.ACL
		}
		setVersionHeader(w, vid, named)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusOK)
		w.Write(policyOf(st))
		return nil
	case http.MethodPut:
	default:
		return errMethod()
	}
	body, err := readSubBody(r, maxSubBody)
	if err != nil {
		return err
	}
	st, err := aclFromHeaders(r.Header)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		if st != nil || r.Header.Get("X-Amz-Acl") != "" {
			return &mpError{http.StatusBadRequest, "UnexpectedContent", "This request does not support content"}
		}
		var p aclPolicy
		if decodeRoot(body, "AccessControlPolicy", &p) != nil {
			return &mpError{http.StatusBadRequest, "MalformedACLError", "The XML you provided was not well-formed or did not validate against our published schema"}
		}
		st = &aclState{Doc: body}
	}
	set := func(a **aclState) error { *a = st; return nil }
	if key == "" {
		err = h.a.updateBucket(bucket, func(b *bucketAttrs) error { return set(&b.ACL) })
	} else {
		err = h.a.updateObject(bucket, key, vid, func(o *objAttrs) error { return set(&o.ACL) })
	}
	if err != nil {
		return err
	}
	setVersionHeader(w, vid, named)
	w.WriteHeader(http.StatusOK)
	return nil
}
