package main

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestConfigurationReference: docs/CONFIGURATION.md is what
// config-reference writes from the flags as they are now, byte for byte,
// so a flag added, removed or changed without regenerating it fails here.
func TestConfigurationReference(t *testing.T) {
	var want bytes.Buffer
	if err := writeConfigReference(&want); err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("../../docs/CONFIGURATION.md")
	if err != nil {
		t.Fatalf("%v: run %s", err, regenerateCommand)
	}
	if !bytes.Equal(have, want.Bytes()) {
		h, w := strings.Split(string(have), "\n"), strings.Split(want.String(), "\n")
		i := 0
		for i < len(h) && i < len(w) && h[i] == w[i] {
			i++
		}
		line := func(l []string) string {
			if i < len(l) {
				return l[i]
			}
			return "(end of file)"
		}
		t.Fatalf("docs/CONFIGURATION.md is stale: run %s\nfirst difference, line %d:\n  file:      %s\n  generated: %s", regenerateCommand, i+1, line(h), line(w))
	}
}

// TestConfigurationReferenceListsEveryFlag: the reference gives every flag
// of every command a row of its command's section (the duty of the
// README's flag table before it), whatever group its definition put it
// in; and every command of usage is either among flagCommands or takes
// no flags.
func TestConfigurationReferenceListsEveryFlag(t *testing.T) {
	var b bytes.Buffer
	if err := writeConfigReference(&b); err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, s := range strings.Split(b.String(), "\n## ")[1:] {
		head, body, _ := strings.Cut(s, "\n")
		sections[head] = body
	}
	for _, c := range flagCommands {
		section, ok := sections["s3seal "+c.name]
		if !ok {
			t.Errorf("no section ## s3seal %s", c.name)
			continue
		}
		_, fs, groups := commandFlags(c.name, c.own)
		for name := range groups.of {
			row := "| `--" + name + "` | `" + envName(name) + "` |"
			listed := strings.Contains(section, row)
			if c.name != "serve" && groups.of[name] != "" {
				// Shared with serve: listed there, and its group named here.
				listed = strings.Contains(sections["s3seal serve"], row) && strings.Contains(section, "["+groups.of[name]+"]")
			}
			if !listed {
				t.Errorf("s3seal %s --%s: not listed in its section", c.name, name)
			}
		}
		fs.VisitAll(func(f *flag.Flag) {
			if g := groups.of[f.Name]; g != "" && !slices.Contains(groups.order, g) {
				t.Errorf("s3seal %s --%s: group %q was never started", c.name, f.Name, g)
			}
		})
	}
	cmds := regexp.MustCompile(`(?m)^  ([a-z][a-z-]*) `).FindAllStringSubmatch(usage, -1)
	if len(cmds) < len(flagCommands) {
		t.Fatalf("usage lists %d commands, fewer than flagCommands", len(cmds))
	}
	for _, m := range cmds {
		name := m[1]
		isFlagCommand := slices.ContainsFunc(flagCommands, func(c flagCommand) bool { return c.name == name }) ||
			slices.ContainsFunc(aloneCommands, func(c flagCommand) bool { return strings.HasPrefix(c.name, name+" ") })
		if !isFlagCommand && !slices.Contains(flaglessCommands, name) {
			t.Errorf("command %s (usage): neither in flagCommands nor in flaglessCommands (configref.go)", name)
		}
	}
}
