package lfs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The LFS error table of docs/LFS.md names every code the API answers
// with.
func TestReadmeErrorTableListsEveryCode(t *testing.T) {
	doc, err := os.ReadFile("../docs/LFS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## Errors")
	_, table, _ := strings.Cut(section, "| status | code | meaning |")
	table, _, _ = strings.Cut(table, "\n\n")
	if !strings.Contains(table, "`internal_error`") {
		t.Fatal("docs/LFS.md: no error table under \"## Errors\"")
	}
	files, _ := filepath.Glob("*.go")
	re := regexp.MustCompile(`errf\(http\.Status\w+, "([a-z0-9_]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			if !strings.Contains(table, "`"+m[1]+"`") {
				t.Errorf("%s answers %s, which docs/LFS.md's error table does not list", f, m[1])
			}
		}
	}
}
