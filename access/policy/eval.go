package policy

import (
	"slices"
	"strconv"
	"strings"
)

// Who is the principal a request acts as, by every name a policy may give
// it.
type Who struct {
	Anonymous bool
	// AWS are its names in an "AWS" principal: account id, user ARN,
	// account root ARN, access key.
	AWS       []string
	Canonical string // its canonical user id
}

// Request is what a policy is asked about.
type Request struct {
	Who      Who
	Action   string // S3's action, e.g. "s3:GetObject"
	Resource string // arn:aws:s3:::bucket or arn:aws:s3:::bucket/key
	Values   Values // the request's condition keys; nil answers none
}

// Effect is what a policy says of a request.
type Effect int

// The three answers of Evaluate.
const (
	NoOpinion Effect = iota // no statement applies
	Allow                   // an Allow statement applies, no Deny does
	Deny                    // a Deny statement applies
)

func (e Effect) String() string {
	return [...]string{"none", "allow", "deny"}[e]
}

// Evaluate applies every statement of p to r: a Deny that applies wins,
// else an Allow that applies allows, else p says nothing. skipAllow, when
// not nil, leaves out the Allow statements it returns true for (a public
// access block's RestrictPublicBuckets).
func (p *Policy) Evaluate(r Request, skipAllow func(Statement) bool) Effect {
	e, _ := p.Decide(r, skipAllow)
	return e
}

// Decide is Evaluate, with the index in p.Statements of the statement
// that decided (the Deny that applies, else the first Allow that
// applies; -1 with NoOpinion).
func (p *Policy) Decide(r Request, skipAllow func(Statement) bool) (Effect, int) {
	if r.Values == nil {
		r.Values = func(string) ([]string, bool) { return nil, false }
	}
	out, by := NoOpinion, -1
	for i, st := range p.Statements {
		if !st.Deny && (out == Allow || skipAllow != nil && skipAllow(st)) {
			continue
		}
		if !st.applies(r) {
			continue
		}
		if st.Deny {
			return Deny, i
		}
		out, by = Allow, i
	}
	return out, by
}

// Name names the statement for a log: its Sid, else its place in the
// policy (index from 0).
func (p *Policy) Name(i int) string {
	if i < 0 || i >= len(p.Statements) {
		return ""
	}
	if sid := p.Statements[i].Sid; sid != "" {
		return "Sid " + strconv.Quote(sid)
	}
	return "statement " + strconv.Itoa(i)
}

// applies reports whether the statement covers the request.
func (st Statement) applies(r Request) bool {
	if st.Principal != nil && !st.Principal.match(r.Who) {
		return false
	}
	if st.NotPrincipal != nil && st.NotPrincipal.match(r.Who) {
		return false
	}
	action := strings.ToLower(r.Action)
	if st.Actions != nil && !slices.ContainsFunc(st.Actions, func(a string) bool { return Match(a, action, true) }) {
		return false
	}
	if st.NotActions != nil && slices.ContainsFunc(st.NotActions, func(a string) bool { return Match(a, action, true) }) {
		return false
	}
	res := func(p string) bool { return Match(p, r.Resource, false) }
	if st.Resources != nil && !slices.ContainsFunc(st.Resources, res) {
		return false
	}
	if st.NotResources != nil && slices.ContainsFunc(st.NotResources, res) {
		return false
	}
	for _, c := range st.Conditions {
		if !c.holds(r.Values) {
			return false
		}
	}
	return true
}

// match reports whether the principals name who.
func (p *Principals) match(who Who) bool {
	if p.Everyone {
		return true
	}
	if who.Anonymous {
		return false
	}
	for _, n := range p.AWS {
		if slices.Contains(who.AWS, n) {
			return true
		}
	}
	return who.Canonical != "" && slices.Contains(p.Canonical, who.Canonical)
}
