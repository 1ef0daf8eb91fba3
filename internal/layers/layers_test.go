package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The rules, and how loosely tests are held:
//
//   - Every package of the module has a row in layersTable; a package
//     without one, or a row for a package that is gone, fails the test.
//   - A package's non-test files (build constraints aside: a file for
//     another system counts too) may import only the module's packages its
//     row names in may; the standard and external imports its row names in
//     never are forbidden to them, and an import onlyIn assigns to some
//     packages is forbidden to the others.
//   - Its _test.go files (in-package and external tests) may import what
//     its non-test files may, the package itself, the test helpers, and
//     what its row names in testMay: tests build the stack under them (the
//     embedded store, retry) and look at what was stored. No package's
//     tests may import a higher layer unless its row says so, and nothing
//     imports cmd/s3seal or e2e. Standard and external imports are not
//     checked in tests.
//   - knownViolations lists what breaks the rules today. A violation not
//     in it fails the test, and so does an entry that no longer happens:
//     the list can only shrink.
//   - docs/ARCHITECTURE.md's package table names every package, and the
//     non-test imports of the module's packages run down it, never back up
//     (TestArchitectureTable).

// rule is one package's row of the layers table.
type rule struct {
	// may lists the module's packages its non-test files may import.
	may []string
	// testMay lists more of the module's packages its _test.go files may
	// import.
	testMay []string
	// never maps standard or external import paths (each with the paths
	// under it) that its non-test files must not import to the reason.
	never map[string]string
}

// table is the whole of the rules.
type table struct {
	rows map[string]rule
	// helpers are the packages for tests only: any package's _test.go
	// files may import them, no package's other files may.
	helpers []string
	// onlyIn maps an import path (with the paths under it) to the only
	// packages whose non-test files may import it.
	onlyIn map[string][]string
	// known maps an importing package to the imports (the module's
	// packages by their path in it, others by their import path) that
	// break its rules today, each to why it is there and what removes it.
	known map[string]map[string]string
}

// noHTTP is why the layers under the fronts do not import net/http.
const noHTTP = "HTTP stays in s3api and lfs: sealstore and crypto see readers, writers and plain structs"

// noAccessHTTP is why the access packages do not import net/http.
const noAccessHTTP = "access decides from plain inputs: s3api reads the request and the store and hands them over"

// layersTable is docs/ARCHITECTURE.md's package table as imports: each
// row names what the package may import, from the top of the stack down.
var layersTable = table{
	rows: map[string]rule{
		// The binary: configuration and start-up build every piece.
		"cmd/s3seal": {may: []string{"audit", "backend", "backend/embedded", "crypto", "internal/progress", "internal/reqid", "kms", "kms/awskms", "kms/pkcs11", "kms/vault",
			"lfs", "lfs/brokers", "lfs/kafkaproxy", "metrics", "retry", "s3api", "sealstore"}},

		// The S3 front reaches the store only through sealstore. Its tests build the whole stack on the
		// embedded store and look at the sealed bytes.
		"s3api": {may: []string{"access", "access/policy", "audit", "checksum", "internal/reqid", "s3api/cors",
			"s3api/postpolicy", "s3api/s3err", "s3api/sigv4", "sealstore"},
			testMay: []string{"backend", "backend/embedded", "crypto", "retry"}},
		"s3api/cors":       {may: []string{"s3api/s3err"}},
		"s3api/postpolicy": {may: []string{"s3api/s3err"}},
		"s3api/s3err":      {may: []string{"s3api/sigv4"}}, // sigv4.Field, an error document's extra elements
		"s3api/sigv4":      {},

		// Who may do what, decided from plain inputs: no HTTP, no store,
		// nothing of the module but the policy language.
		"access":        {may: []string{"access/policy"}, never: map[string]string{"net/http": noAccessHTTP}},
		"access/policy": {never: map[string]string{"net/http": noAccessHTTP}},

		// The LFS front stores blobs through sealstore; the keyring seals
		// its session ids (crypto); backend gives the plain types
		// sealstore's API takes (Headers, ListUploadsInput) and ErrorCode,
		// as it does to s3api. Its tests read blobs back through s3api.
		"lfs":         {may: []string{"backend", "crypto", "internal/tick", "lfs/brokers", "sealstore"}, testMay: []string{"backend/embedded", "s3api"}},
		"lfs/brokers": {},
		// The Kafka front: the protocol (kmsg) toward clients, blobs
		// through the LFS module, brokers through lfs/brokers.
		"lfs/kafkaproxy": {may: []string{"internal/tick", "lfs", "lfs/brokers"}, testMay: []string{"backend", "backend/embedded", "crypto", "internal/kafkatest", "s3api", "sealstore"}},

		// The encrypting object layer, on the store's client.
		"sealstore": {may: []string{"backend", "checksum", "crypto", "internal/tick", "kms"}, testMay: []string{"backend/embedded", "retry"},
			never: map[string]string{"net/http": noHTTP}},
		"checksum": {}, // net/http for http.Header only: the declared values and trailers it reads
		"crypto": {never: map[string]string{
			"net":     noHTTP + "; the format does no I/O beyond readers, writers and the keyring file",
			"os/exec": "the format does no I/O beyond readers, writers and the keyring file",
		}},
		// Master keys held outside s3seal: the key service over the
		// providers, and each provider on its own client.
		"kms":        {may: []string{"crypto"}},
		"kms/awskms": {may: []string{"kms"}, testMay: []string{"crypto", "internal/localkms", "internal/moto"}},
		"kms/pkcs11": {may: []string{"crypto", "kms"}}, // only with -tags pkcs11 and cgo
		"kms/vault":  {may: []string{"crypto", "kms"}},

		"retry":            {may: []string{"backend"}, testMay: []string{"backend/embedded"}},
		"backend":          {testMay: []string{"backend/embedded"}}, // its external tests run the store contract on the embedded store
		"backend/embedded": {may: []string{"backend"}},

		// Beside the stack: metrics implements the Observer interfaces of
		// s3api, sealstore and retry without importing them (its tests
		// check that it does); s3api and cmd/s3seal import reqid,
		// sealstore's and lfs's periodic chores tick, the commands over a
		// bucket show progress.
		"metrics":           {testMay: []string{"retry", "s3api", "sealstore"}},
		"internal/reqid":    {},
		"internal/tick":     {},
		"internal/progress": {},
		"internal/layers":   {},

		// The audit trail: its writer and verifier, on plain records that
		// s3api and cmd/s3seal hand it; nothing of the module.
		"audit": {},

		// For tests only (helpers).
		"internal/faultproxy":        {},
		"internal/kafkatest":         {},
		"backend/internal/storetest": {may: []string{"backend"}},
		"internal/moto":              {},
		"internal/localkms":          {},

		// The binary driven from outside; tests only.
		"e2e": {testMay: []string{"backend", "backend/embedded", "checksum", "crypto", "internal/localkms"}},
	},
	helpers: []string{"internal/faultproxy", "internal/kafkatest", "backend/internal/storetest", "internal/moto", "internal/localkms"},
	onlyIn: map[string][]string{
		"github.com/gorilla/mux": {"s3api"}, // the S3 front's router
		// The store's client; lfs presigns GETs of s3seal's own S3 API
		// with it (presign.go).
		"github.com/aws/aws-sdk-go-v2":      {"backend", "lfs", "kms/awskms"},
		"github.com/aws/smithy-go":          {"backend", "kms/awskms"},
		"github.com/johannesboyne/gofakes3": {"backend/embedded"},  // the embedded store's engine
		"github.com/xdg-go/scram":           {"lfs/kafkaproxy"},    // the Kafka listener's SCRAM server
		"github.com/miekg/pkcs11":           {"kms/pkcs11"},        // cgo: linked only into a PKCS#11 build
		"github.com/hashicorp/vault/api":    {"kms/vault"},         // Vault's client, for Transit
		"golang.org/x/term":                 {"internal/progress"}, // whether stderr is a terminal, and its width
	},
	known: knownViolations,
}

// knownViolations are the imports that break the rules today, each with
// what removes it. Remove an entry with the import: the test fails while
// an entry names an import no file makes.
var knownViolations = map[string]map[string]string{}

// listed is one package of the module as the check sees it.
type listed struct {
	path  string              // its path in the module, e.g. "s3api/sigv4"
	code  map[string][]string // non-test file (from the module root) -> its imports
	tests map[string][]string // _test.go file -> its imports
}

// check returns every break of t's rules by pkgs (of module), sorted.
func (t table) check(module string, pkgs []listed) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	exists := map[string]bool{}
	for _, p := range pkgs {
		exists[p.path] = true
	}
	for name, r := range t.rows {
		if !exists[name] {
			add("the layers table has a row for %s, which is no package of the module: remove the row", name)
		}
		for _, m := range slices.Concat(r.may, r.testMay) {
			if !exists[m] {
				add("%s's row names %s, which is no package of the module", name, m)
			}
		}
		for _, m := range r.may {
			if slices.Contains(t.helpers, m) {
				add("%s's row lets its non-test files import %s, a package for tests only: name it in testMay", name, m)
			}
		}
	}
	for importer, imps := range t.known {
		if !exists[importer] {
			add("knownViolations names %s, which is no package of the module", importer)
		}
		for imp := range imps {
			if slices.Contains(t.rows[importer].may, imp) {
				add("knownViolations lists %s -> %s, which %s's row allows: remove one of them", importer, imp, importer)
			}
		}
	}
	happens := map[[2]string]bool{} // known violations seen
	for _, p := range pkgs {
		r, ok := t.rows[p.path]
		if !ok {
			add("%s has no row in the layers table (internal/layers/layers_test.go): give it one, and one in docs/ARCHITECTURE.md's package table", p.path)
			continue
		}
		// why returns what breaks the rules in p's non-test files
		// importing imp, "" if nothing does.
		why := func(imp string) string {
			if own, ok := inModule(module, imp); ok {
				if slices.Contains(r.may, own) {
					return ""
				}
				return fmt.Sprintf("%s's non-test files may import %s", p.path, only(r.may))
			}
			for prefix, reason := range r.never {
				if under(imp, prefix) {
					return fmt.Sprintf("%s's row forbids %s: %s", p.path, prefix, reason)
				}
			}
			for prefix, allowed := range t.onlyIn {
				if under(imp, prefix) && !slices.Contains(allowed, p.path) {
					return fmt.Sprintf("%s may import %s", only(allowed), prefix)
				}
			}
			return ""
		}
		for _, imp := range sortedKeys(byImport(p.code)) {
			reason := why(imp)
			if reason == "" {
				continue
			}
			short := imp
			if own, ok := inModule(module, imp); ok {
				short = own
			}
			if _, ok := t.known[p.path][short]; ok {
				happens[[2]string{p.path, short}] = true
				continue
			}
			add("%s imports %s in %s: %s", p.path, short, strings.Join(byImport(p.code)[imp], ", "), reason)
		}
		testMay := slices.Concat(r.may, r.testMay, t.helpers, []string{p.path})
		for _, imp := range sortedKeys(byImport(p.tests)) {
			own, ok := inModule(module, imp)
			if !ok || slices.Contains(testMay, own) {
				continue
			}
			add("%s's tests import %s in %s: %s's tests may import %s", p.path, own,
				strings.Join(byImport(p.tests)[imp], ", "), p.path, only(testMay))
		}
	}
	for importer, imps := range t.known {
		for imp, reason := range imps {
			if exists[importer] && !happens[[2]string{importer, imp}] {
				add("knownViolations lists %s -> %s (%q), which no longer happens: delete the entry (the list only shrinks) and say so in docs/ARCHITECTURE.md",
					importer, imp, reason)
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// inModule returns imp's path in module, and whether it is in module.
func inModule(module, imp string) (string, bool) {
	if imp == module {
		return ".", true
	}
	return strings.CutPrefix(imp, module+"/")
}

// under reports whether import path imp is prefix or a path under it.
func under(imp, prefix string) bool {
	return imp == prefix || strings.HasPrefix(imp, prefix+"/")
}

// only says which of the module's packages list allows.
func only(list []string) string {
	if len(list) == 0 {
		return "none of the module's packages"
	}
	return "only " + strings.Join(slices.Sorted(slices.Values(list)), ", ")
}

// byImport inverts file -> imports into import -> sorted files.
func byImport(files map[string][]string) map[string][]string {
	out := map[string][]string{}
	for f, imps := range files {
		for _, imp := range imps {
			if !slices.Contains(out[imp], f) {
				out[imp] = append(out[imp], f)
			}
		}
	}
	for _, fs := range out {
		sort.Strings(fs)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// moduleList is the module as `go list -json ./...` run from its root
// lists it, each file's imports parsed from the file.
type moduleList struct {
	path, root string // the module's path and root directory
	pkgs       []listed
}

// loaded lists the module once for every test.
var loaded = sync.OnceValues(func() (*moduleList, error) {
	gomod, err := goCmd("", "env", "GOMOD")
	if err != nil {
		return nil, err
	}
	gm := strings.TrimSpace(string(gomod))
	if gm == "" || gm == os.DevNull {
		return nil, errors.New("go env GOMOD names no go.mod: the test must run inside the module")
	}
	m := &moduleList{root: filepath.Dir(gm)}
	out, err := goCmd(m.root, "list", "-json=ImportPath,Dir,Module,GoFiles,CgoFiles,IgnoredGoFiles,TestGoFiles,XTestGoFiles", "./...")
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Dir                                              string
			Module                                                       *struct{ Path string }
			GoFiles, CgoFiles, IgnoredGoFiles, TestGoFiles, XTestGoFiles []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list -json: %w", err)
		}
		if p.Module == nil {
			return nil, fmt.Errorf("go list: %s is in no module", p.ImportPath)
		}
		m.path = p.Module.Path
		own, _ := inModule(m.path, p.ImportPath)
		l := listed{path: own, code: map[string][]string{}, tests: map[string][]string{}}
		for _, f := range slices.Concat(p.GoFiles, p.CgoFiles, p.IgnoredGoFiles, p.TestGoFiles, p.XTestGoFiles) {
			imps, err := fileImports(filepath.Join(p.Dir, f))
			if err != nil {
				return nil, err
			}
			rel, err := filepath.Rel(m.root, filepath.Join(p.Dir, f))
			if err != nil {
				return nil, err
			}
			if strings.HasSuffix(f, "_test.go") {
				l.tests[filepath.ToSlash(rel)] = imps
			} else {
				l.code[filepath.ToSlash(rel)] = imps
			}
		}
		m.pkgs = append(m.pkgs, l)
	}
	if len(m.pkgs) == 0 {
		return nil, errors.New("go list ./... listed no package")
	}
	return m, nil
})

func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

// fileImports returns the import paths of one Go file ("C" left out).
func fileImports(path string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	var imps []string
	for _, s := range f.Imports {
		imp, err := strconv.Unquote(s.Path.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: import %s: %v", path, s.Path.Value, err)
		}
		if imp != "C" {
			imps = append(imps, imp)
		}
	}
	return imps, nil
}

// TestLayers holds every package of the module to its row of the layers
// table.
func TestLayers(t *testing.T) {
	m, err := loaded()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range layersTable.check(m.path, m.pkgs) {
		t.Error(p)
	}
}

// TestArchitectureTable: docs/ARCHITECTURE.md's package table has a row
// for every package of the module and names no other, and every package's
// non-test imports of the module's packages run down it, never back up.
func TestArchitectureTable(t *testing.T) {
	m, err := loaded()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(m.root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := packageTableRows(string(doc))
	if len(row) == 0 {
		t.Fatal("docs/ARCHITECTURE.md: no package table under \"## Packages\"")
	}
	listedPkgs := map[string]bool{}
	for _, p := range m.pkgs {
		listedPkgs[p.path] = true
		if _, ok := row[p.path]; !ok {
			t.Errorf("docs/ARCHITECTURE.md's package table has no row for %s", p.path)
		}
	}
	for _, n := range sortedKeys(row) {
		if !listedPkgs[n] {
			t.Errorf("docs/ARCHITECTURE.md's package table names %s, which is no package of the module", n)
		}
	}
	for _, p := range m.pkgs {
		files := byImport(p.code)
		for _, imp := range sortedKeys(files) {
			own, ok := inModule(m.path, imp)
			from, ok1 := row[p.path]
			to, ok2 := row[own]
			if ok && ok1 && ok2 && to <= from {
				t.Errorf("%s imports %s in %s, which docs/ARCHITECTURE.md's package table lists above it (or in its row): imports run down the table",
					p.path, own, strings.Join(files[imp], ", "))
			}
		}
	}
}

var backquoted = regexp.MustCompile("`([^`]+)`")

// packageTableRows returns the packages named (in backquotes) in the first
// column of the table under "## Packages", each with its row's index.
func packageTableRows(doc string) map[string]int {
	_, section, _ := strings.Cut(doc, "\n## Packages\n")
	section, _, _ = strings.Cut(section, "\n## ")
	row := map[string]int{}
	for i, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(line, "|") {
			continue
		}
		for _, m := range backquoted.FindAllStringSubmatch(cells[1], -1) {
			row[m[1]] = i
		}
	}
	return row
}

// TestCheckCatches runs the check on a made-up module: each break of the
// rules is reported, naming the importer, the import and the files.
func TestCheckCatches(t *testing.T) {
	const mod = "example.com/m"
	tbl := table{
		rows: map[string]rule{
			"front":  {may: []string{"store"}},
			"store":  {may: []string{"format"}, never: map[string]string{"net/http": "no HTTP here"}},
			"format": {},
			"helper": {},
		},
		helpers: []string{"helper"},
		onlyIn:  map[string][]string{"example.com/router": {"front"}},
		known: map[string]map[string]string{
			"front": {"format": "to be removed", "helper": "to be removed"},
		},
	}
	pkgs := []listed{
		{path: "front", code: map[string][]string{
			"front/a.go": {mod + "/store", mod + "/format", "example.com/router/sub"},
		}},
		{path: "store", code: map[string][]string{
			"store/a.go": {mod + "/format", "net/http"},
			"store/b.go": {mod + "/front", "net/http/httptest"},
			"store/c.go": {"example.com/router"},
		}, tests: map[string][]string{
			"store/a_test.go": {mod + "/helper", mod + "/store"},
			"store/b_test.go": {mod + "/front"},
		}},
		{path: "format", code: map[string][]string{"format/a.go": {mod + "/helper"}}},
		{path: "helper"},
		{path: "stray"},
	}
	want := []string{
		"format imports helper in format/a.go: format's non-test files may import none of the module's packages",
		"knownViolations lists front -> helper (\"to be removed\"), which no longer happens: delete the entry (the list only shrinks) and say so in docs/ARCHITECTURE.md",
		"store imports example.com/router in store/c.go: only front may import example.com/router",
		"store imports front in store/b.go: store's non-test files may import only format",
		"store imports net/http in store/a.go: store's row forbids net/http: no HTTP here",
		"store imports net/http/httptest in store/b.go: store's row forbids net/http: no HTTP here",
		"store's tests import front in store/b_test.go: store's tests may import only format, helper, store",
		"stray has no row in the layers table (internal/layers/layers_test.go): give it one, and one in docs/ARCHITECTURE.md's package table",
	}
	got := tbl.check(mod, pkgs)
	if !slices.Equal(got, want) {
		t.Errorf("check found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
