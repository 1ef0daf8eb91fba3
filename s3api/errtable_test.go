package s3api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/s3api/s3err"
)

const s3errPath = "github.com/s3seal/s3seal/s3api/s3err"

// forwardFile is the one file of s3api that passes on an error another
// layer decided with its own code and status (s3err.Forward).
const forwardFile = "errors.go"

// An error s3api answers with takes its code from s3err's constants and
// its status from the table: in s3api's non-test files (its packages
// below included, s3err aside) no s3err.New of a string literal, no
// s3err.Code of one, no s3err.Error literal, no code or status set by
// hand, and s3err.Forward (a code and status passed on from another layer)
// in errors.go only.
func TestErrorsFromTable(t *testing.T) {
	var bad []string
	news := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "s3err" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		name := s3errName(f)
		if name == "" {
			return nil
		}
		// s3errSel reports whether e is name.sel.
		s3errSel := func(e ast.Expr, sel string) bool {
			se, ok := e.(*ast.SelectorExpr)
			if !ok || se.Sel.Name != sel {
				return false
			}
			id, ok := se.X.(*ast.Ident)
			return ok && id.Name == name
		}
		isLiteral := func(e ast.Expr) bool {
			if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				return true
			}
			call, ok := e.(*ast.CallExpr)
			return ok && s3errSel(call.Fun, "Code") && len(call.Args) == 1 && isStringLit(call.Args[0])
		}
		report := func(n ast.Node, what string) {
			bad = append(bad, fset.Position(n.Pos()).String()+": "+what)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if s3errSel(n.Type, "Error") {
					report(n, "an s3err.Error literal: use s3err.New(s3err.<Code>, msg)")
				}
			case *ast.CallExpr:
				switch {
				case s3errSel(n.Fun, "New"):
					news++
					if len(n.Args) > 0 && isLiteral(n.Args[0]) {
						report(n, "s3err.New of a string: use the code's constant (add it to s3err's table if it is new)")
					}
				case s3errSel(n.Fun, "Code") && len(n.Args) == 1 && isStringLit(n.Args[0]):
					report(n, "s3err.Code of a string: use the code's constant")
				case s3errSel(n.Fun, "Forward") && filepath.ToSlash(path) != forwardFile:
					report(n, "s3err.Forward outside "+forwardFile+": a status not from the table")
				}
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					if se, ok := l.(*ast.SelectorExpr); ok && (se.Sel.Name == "StatusCode" || se.Sel.Name == "Code") {
						report(n, "a code or status set by hand: they come from s3err's table")
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if news < 100 {
		t.Fatalf("found %d calls of s3err.New: the scan missed s3api's files", news)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// s3errName is the name f imports s3err under, "" if it does not.
func s3errName(f *ast.File) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == s3errPath {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "s3err"
		}
	}
	return ""
}

func isStringLit(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	return ok && lit.Kind == token.STRING
}

// sealstore's errors pass through s3err.New with their code (toAPIError):
// every code sealstore names is in the table, so none answers with
// InternalError's status by accident.
func TestSealstoreCodesInTable(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir("../sealstore")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join("../sealstore", e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	codes := 0
	check := func(n ast.Node, e ast.Expr) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return
		}
		code, _ := strconv.Unquote(lit.Value)
		codes++
		if _, ok := s3err.Lookup(s3err.Code(code)); !ok {
			t.Errorf("%s: sealstore's code %s is not in s3err's table", fset.Position(n.Pos()), code)
		}
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if id, ok := n.Type.(*ast.Ident); ok && id.Name == "Error" {
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Code" {
								check(n, kv.Value)
							}
						}
					}
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "errorf" && len(n.Args) > 0 {
					check(n, n.Args[0])
				}
			}
			return true
		})
	}
	if codes < 20 {
		t.Fatalf("found %d codes in sealstore: the scan missed its errors", codes)
	}
}
