package policy

import "strings"

// A policy is public, as S3 judges it (GetBucketPolicyStatus, a public
// access block), when one of its Allow statements grants to everyone: a
// principal "*" (or one with a wildcard, or a NotPrincipal) that no
// condition narrows to fixed values of a key that names who or where the
// caller is. The keys that narrow, on a positive operator and with values
// without wildcards: aws:SourceIp (a range no wider than an IPv4 /8 or an
// IPv6 /32), aws:SourceArn, aws:SourceVpc,
// aws:SourceVpce, aws:SourceAccount, aws:SourceOwner, aws:PrincipalOrgID,
// aws:PrincipalAccount, aws:PrincipalArn, aws:userid,
// s3:DataAccessPointArn and s3:DataAccessPointAccount.

// narrowingKeys are the condition keys that make a grant to "*" not public.
var narrowingKeys = map[string]bool{
	"aws:sourceip": true, "aws:sourcearn": true, "aws:sourcevpc": true, "aws:sourcevpce": true,
	"aws:sourceaccount": true, "aws:sourceowner": true, "aws:principalorgid": true,
	"aws:principalaccount": true, "aws:principalarn": true, "aws:userid": true,
	"s3:dataaccesspointarn": true, "s3:dataaccesspointaccount": true,
}

// IsPublic reports whether p grants access to everyone.
func (p *Policy) IsPublic() bool {
	for _, st := range p.Statements {
		if st.Public() {
			return true
		}
	}
	return false
}

// Public reports whether st is an Allow statement that grants to everyone.
func (st Statement) Public() bool {
	if st.Deny {
		return false
	}
	if st.Principal != nil && !st.Principal.wildcard() {
		return false
	}
	for _, c := range st.Conditions {
		if c.narrows() {
			return false
		}
	}
	return true
}

// wildcard reports whether the principals include everyone or a name
// with a wildcard.
func (p *Principals) wildcard() bool {
	if p.Everyone {
		return true
	}
	for _, l := range [][]string{p.AWS, p.Canonical} {
		for _, n := range l {
			if strings.ContainsAny(n, "*?") {
				return true
			}
		}
	}
	return false
}

// narrows reports whether the condition ties the statement to fixed
// callers or places.
func (c Condition) narrows() bool {
	if !narrowingKeys[c.Key] || c.op.negated || c.ifExists || c.set == forAllValues || c.op.kind == kNull {
		return false
	}
	for _, v := range c.Values {
		if strings.ContainsAny(v, "*?") {
			return false
		}
		if c.op.kind == kIP {
			r, ok := parseIPRange(v)
			if !ok || r.Addr().Is4() && r.Bits() < 8 || !r.Addr().Is4() && r.Bits() < 32 {
				return false
			}
		}
	}
	return true
}
