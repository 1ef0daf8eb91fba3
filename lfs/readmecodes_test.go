package lfs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's LFS error table names every code the API answers with.
func TestReadmeErrorTableListsEveryCode(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "## Kafka large blobs (LFS)")
	_, table, _ := strings.Cut(section, "| status | code | meaning |")
	table, _, _ = strings.Cut(table, "\n\n")
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
				t.Errorf("%s answers %s, which the README's error table does not list", f, m[1])
			}
		}
	}
}
