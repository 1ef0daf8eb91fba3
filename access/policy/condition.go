package policy

import (
	"encoding/base64"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

type kind int

const (
	kString kind = iota
	kStringFold
	kStringLike
	kNumeric
	kDate
	kBool
	kBinary
	kIP
	kArn
	kNull
)

type cmp int

const (
	eq cmp = iota
	lt
	le
	gt
	ge
)

// operator is a base condition operator: what it compares, how, and
// whether it is negated (true when no policy value matches).
type operator struct {
	kind    kind
	cmp     cmp
	negated bool
}

// operators are the condition operators of S3 policies, without the
// IfExists suffix and the ForAnyValue:/ForAllValues: qualifiers.
var operators = map[string]operator{
	"StringEquals":              {kind: kString},
	"StringNotEquals":           {kind: kString, negated: true},
	"StringEqualsIgnoreCase":    {kind: kStringFold},
	"StringNotEqualsIgnoreCase": {kind: kStringFold, negated: true},
	"StringLike":                {kind: kStringLike},
	"StringNotLike":             {kind: kStringLike, negated: true},
	"NumericEquals":             {kind: kNumeric},
	"NumericNotEquals":          {kind: kNumeric, negated: true},
	"NumericLessThan":           {kind: kNumeric, cmp: lt},
	"NumericLessThanEquals":     {kind: kNumeric, cmp: le},
	"NumericGreaterThan":        {kind: kNumeric, cmp: gt},
	"NumericGreaterThanEquals":  {kind: kNumeric, cmp: ge},
	"DateEquals":                {kind: kDate},
	"DateNotEquals":             {kind: kDate, negated: true},
	"DateLessThan":              {kind: kDate, cmp: lt},
	"DateLessThanEquals":        {kind: kDate, cmp: le},
	"DateGreaterThan":           {kind: kDate, cmp: gt},
	"DateGreaterThanEquals":     {kind: kDate, cmp: ge},
	"Bool":                      {kind: kBool},
	"BinaryEquals":              {kind: kBinary},
	"IpAddress":                 {kind: kIP},
	"NotIpAddress":              {kind: kIP, negated: true},
	"ArnEquals":                 {kind: kArn},
	"ArnLike":                   {kind: kArn},
	"ArnNotEquals":              {kind: kArn, negated: true},
	"ArnNotLike":                {kind: kArn, negated: true},
	"Null":                      {kind: kNull},
}

// check judges a policy value for the operator at put time.
func (o operator) check(v string) error {
	switch o.kind {
	case kNumeric:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return errors.New("not a number")
		}
	case kDate:
		if _, ok := parseDate(v); !ok {
			return errors.New("not a date")
		}
	case kBool, kNull:
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return errors.New("not true or false")
		}
	case kIP:
		if _, ok := parseIPRange(v); !ok {
			return errors.New("not an IP address or CIDR range")
		}
	case kBinary:
		if _, err := base64.StdEncoding.DecodeString(v); err != nil {
			return errors.New("not base64")
		}
	}
	return nil
}

// matches reports whether the request's value v matches the policy's
// value want, as the positive form of the operator compares them.
func (o operator) matches(want, v string) bool {
	switch o.kind {
	case kString:
		return want == v
	case kStringFold:
		return strings.EqualFold(want, v)
	case kStringLike, kArn:
		return Match(want, v, false)
	case kBool:
		return strings.EqualFold(want, v)
	case kBinary:
		return want == v
	case kNumeric:
		a, err1 := strconv.ParseFloat(v, 64)
		b, err2 := strconv.ParseFloat(want, 64)
		return err1 == nil && err2 == nil && compare(o.cmp, a, b)
	case kDate:
		a, ok1 := parseDate(v)
		b, ok2 := parseDate(want)
		return ok1 && ok2 && compare(o.cmp, float64(a.UnixNano()), float64(b.UnixNano()))
	case kIP:
		ip, err := netip.ParseAddr(strings.TrimSpace(v))
		r, ok := parseIPRange(want)
		return err == nil && ok && r.Contains(ip.Unmap())
	}
	return false
}

func compare(c cmp, a, b float64) bool {
	switch c {
	case lt:
		return a < b
	case le:
		return a <= b
	case gt:
		return a > b
	case ge:
		return a >= b
	}
	return a == b
}

// parseDate reads a date as policies write them: ISO 8601 (with or
// without a time) or seconds since the epoch.
func parseDate(v string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(n, 0), true
	}
	return time.Time{}, false
}

// parseIPRange reads a CIDR range or a single address.
func parseIPRange(v string) (netip.Prefix, bool) {
	v = strings.TrimSpace(v)
	if p, err := netip.ParsePrefix(v); err == nil {
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(v); err == nil {
		return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), true
	}
	return netip.Prefix{}, false
}

// Values answers a condition key (as NormalizeKey spells it) for one
// request: its values and whether the request has the key at all.
type Values func(key string) ([]string, bool)

// holds evaluates one condition against the request's values.
func (c Condition) holds(values Values) bool {
	got, present := values(c.Key)
	if present && len(got) == 0 && c.set == single {
		present = false
	}
	if c.op.kind == kNull {
		want := strings.EqualFold(c.Values[0], "true")
		return want == !present
	}
	if !present {
		switch {
		case c.ifExists:
			return true
		case c.set == forAllValues:
			return true
		case c.set == forAnyValue:
			return false
		}
		return c.op.negated
	}
	// one reports whether a request value passes: it matches one of the
	// policy's values, or, negated, none of them.
	one := func(v string) bool {
		for _, want := range c.Values {
			if c.op.matches(want, v) {
				return !c.op.negated
			}
		}
		return c.op.negated
	}
	switch c.set {
	case forAllValues:
		for _, v := range got {
			if !one(v) {
				return false
			}
		}
		return true
	case forAnyValue:
		for _, v := range got {
			if one(v) {
				return true
			}
		}
		return false
	}
	// A single-valued key with several values (a header sent twice):
	// the positive form holds when one of them matches, the negated form
	// when none does.
	any := false
	for _, v := range got {
		for _, want := range c.Values {
			if c.op.matches(want, v) {
				any = true
			}
		}
	}
	return any != c.op.negated
}

// Match reports whether s matches pattern, where * matches any run of
// characters (including none, and "/") and ? any one character; fold
// compares without case.
func Match(pattern, s string, fold bool) bool {
	if fold {
		pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	}
	return match([]rune(pattern), []rune(s))
}

func match(pattern, s []rune) bool {
	// Iterative glob with one backtrack point: linear in practice.
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]) && pattern[p] != '*':
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
