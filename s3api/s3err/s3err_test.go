package s3err

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// Every default message is a sentence as AWS writes it, ending with a
// period.
func TestErrorTableMessagesEndWithPeriod(t *testing.T) {
	for code, e := range table {
		if code == "InvalidRange" || code == "InvalidPartNumber" {
			continue // AWS: "The requested range (partnumber) is not satisfiable", no period
		}
		if !strings.HasSuffix(e.Message, ".") {
			t.Errorf("%s: message %q does not end with a period", code, e.Message)
		}
	}
}

// Every Code constant is named as its code and has a row in the table, and
// every row is a constant's: a code cannot be answered without its status.
func TestEveryCodeInTable(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "s3err.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[Code]bool{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for i, name := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Errorf("%s: not a string literal", name.Name)
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				// A code with a dot (AWS's "KMS.DisabledException") is named
				// without it.
				if strings.ReplaceAll(v, ".", "") != name.Name {
					t.Errorf("constant %s is code %q: a constant is named as its code", name.Name, v)
				}
				consts[Code(v)] = true
				if _, ok := table[Code(v)]; !ok {
					t.Errorf("%s: a constant without a row in the table", v)
				}
			}
		}
	}
	if len(consts) == 0 {
		t.Fatal("no Code constants found in s3err.go")
	}
	for code, e := range table {
		if !consts[code] {
			t.Errorf("%s: a row of the table without a constant", code)
		}
		if e.StatusCode < 300 || e.StatusCode > 599 {
			t.Errorf("%s: status %d", code, e.StatusCode)
		}
	}
}

// New takes status and default message from the table; a message given
// replaces the default only.
func TestNewFromTable(t *testing.T) {
	e := New(RequestHeaderSectionTooLarge, "")
	if e.Code != RequestHeaderSectionTooLarge || e.StatusCode != 400 || e.Message != table[RequestHeaderSectionTooLarge].Message {
		t.Errorf("New(RequestHeaderSectionTooLarge, \"\") = %+v", e)
	}
	if e := New(InvalidBucketState, "why"); e.StatusCode != 409 || e.Message != "why" {
		t.Errorf("New(InvalidBucketState, \"why\") = %+v", e)
	}
	if e := New(Code("NotInTheTable"), ""); e.StatusCode != 500 || e.Code != "NotInTheTable" {
		t.Errorf("a code outside the table: %+v", e)
	}
}
