package main

import (
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"text/template"
)

//go:generate go run . config-reference ../../docs/CONFIGURATION.md

// regenerateCommand remakes docs/CONFIGURATION.md, from the repository's
// root.
const regenerateCommand = "go run ./cmd/s3seal config-reference docs/CONFIGURATION.md"

// flagCommands are the commands that take flags, in the order
// docs/CONFIGURATION.md gives them, each with the function that defines
// its own flags (nil: none). The commands of usage not listed here take no
// flags (flaglessCommands).
var flagCommands = []flagCommand{
	{"serve", nil},
	{"gc", func(fs *flag.FlagSet) { new(gcFlags).define(fs) }},
	{"verify", func(fs *flag.FlagSet) { new(verifyFlags).define(fs) }},
	{"rewrap", func(fs *flag.FlagSet) { new(rewrapFlags).define(fs) }},
}

// flagCommand is a command that takes flags, and the function that
// defines its own (nil: none but those every command shares).
type flagCommand struct {
	name string
	own  func(*flag.FlagSet)
}

// flaglessCommands are the commands of usage that take no flags.
var flaglessCommands = []string{"keygen", "version"}

// aloneCommands parse their own flags alone, none of serve's, and read
// no S3SEAL_* variable but those their help names in brackets.
var aloneCommands = []flagCommand{
	{"audit verify", func(fs *flag.FlagSet) { new(auditVerifyFlags).define(fs) }},
}

// configRefTemplate is docs/CONFIGURATION.md's prose around the tables,
// which {{.Commands}} stands for.
//
//go:embed configref.md.tmpl
var configRefTemplate string

// configReferenceCommand is the hidden command config-reference: it
// writes docs/CONFIGURATION.md to the file args names, or to stdout.
func configReferenceCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) > 1 || (len(args) == 1 && strings.HasPrefix(args[0], "-")) {
		fmt.Fprintln(stderr, "usage: s3seal config-reference [file]   (writes docs/CONFIGURATION.md, to stdout without a file)")
		return 2
	}
	var b strings.Builder
	if err := writeConfigReference(&b); err != nil {
		fmt.Fprintln(stderr, "s3seal:", err)
		return 1
	}
	if len(args) == 0 {
		if _, err := io.WriteString(stdout, b.String()); err != nil {
			return 1
		}
		return 0
	}
	if err := os.WriteFile(args[0], []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(stderr, "s3seal:", err)
		return 1
	}
	return 0
}

// writeConfigReference writes docs/CONFIGURATION.md: the template's prose
// around a table of every command's flags, built by the code that parses
// them (commandFlags).
func writeConfigReference(w io.Writer) error {
	tmpl, err := template.New("configref").Parse(configRefTemplate)
	if err != nil {
		return err
	}
	var cmds strings.Builder
	_, serveFS, serveGroups := commandFlags("serve", nil)
	fmt.Fprintf(&cmds, "## s3seal serve\n\nRuns the proxy. Its flags, by group:\n\n")
	for _, g := range serveGroups.order {
		fmt.Fprintf(&cmds, "- [%s](#%s)\n", g, anchor(g))
	}
	for _, g := range serveGroups.order {
		fmt.Fprintf(&cmds, "\n### %s\n\n", g)
		flagTable(&cmds, serveGroups.flags(g))
	}
	for _, c := range flagCommands[1:] {
		_, fs, groups := commandFlags(c.name, c.own)
		// The table gives the command's own flags, and any it does not
		// share with serve as serve defines it; the sentence after it
		// the groups of serve's flags it shares.
		own := groups.flags("")
		var shared []string
		for _, g := range groups.order {
			n := 0
			for _, f := range groups.flags(g) {
				if s := serveFS.Lookup(f.Name); s == nil || s.Usage != f.Usage || s.DefValue != f.DefValue || serveGroups.of[f.Name] != g {
					own = append(own, f)
				} else {
					n++
				}
			}
			if n == 0 {
				continue
			}
			var missing []string
			for _, f := range serveGroups.flags(g) {
				if fs.Lookup(f.Name) == nil {
					missing = append(missing, "`--"+f.Name+"`")
				}
			}
			link := fmt.Sprintf("[%s](#%s)", g, anchor(g))
			if len(missing) > 0 {
				link += " (not " + strings.Join(missing, ", ") + ")"
			}
			shared = append(shared, link)
		}
		fmt.Fprintf(&cmds, "\n## s3seal %s\n\n", c.name)
		if len(own) > 0 {
			flagTable(&cmds, own)
			cmds.WriteString("\n")
		}
		fmt.Fprintf(&cmds, "`s3seal %s` also takes `s3seal serve`'s flags of these groups, with the same variables and defaults: %s.\n", c.name, strings.Join(shared, ", "))
	}
	for _, c := range aloneCommands {
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.own(fs)
		fmt.Fprintf(&cmds, "\n## s3seal %s\n\nIt takes none of `s3seal serve`'s flags, and reads only the variables named in its flags' help.\n\n", c.name)
		fmt.Fprintln(&cmds, "| flag | default | meaning |")
		fmt.Fprintln(&cmds, "|---|---|---|")
		fs.VisitAll(func(f *flag.Flag) {
			def := "*(empty)*"
			if f.DefValue != "" {
				def = "`" + f.DefValue + "`"
			}
			fmt.Fprintf(&cmds, "| `--%s` | %s | %s |\n", f.Name, def, helpMarkdown(f.Usage))
		})
	}
	var flagless []string
	for _, n := range flaglessCommands {
		flagless = append(flagless, "`s3seal "+n+"`")
	}
	fmt.Fprintf(&cmds, "\n## %s\n\nNo flags.\n", strings.Join(flagless, ", "))
	return tmpl.Execute(w, struct {
		Regenerate, Commands string
	}{regenerateCommand, cmds.String()})
}

// flagTable writes a markdown table of fl: flag, variable, default and
// meaning (the flag's help).
func flagTable(w io.Writer, fl []*flag.Flag) {
	fmt.Fprintln(w, "| flag | variable | default | meaning |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, f := range fl {
		def := "*(empty)*"
		if f.DefValue != "" {
			def = "`" + f.DefValue + "`"
		}
		fmt.Fprintf(w, "| `--%s` | `%s` | %s | %s |\n", f.Name, envName(f.Name), def, helpMarkdown(f.Usage))
	}
}

// codeWords are the words of a flag's help set as code: flags
// (--lfs-kafka-tls-* too) and environment variables.
var codeWords = regexp.MustCompile(`--[a-z0-9][a-z0-9-]*\*?|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b`)

// helpMarkdown is a flag's help as a markdown table cell: flags and
// variables as code, the characters markdown or a table would take for
// its own escaped.
func helpMarkdown(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range codeWords.FindAllStringIndex(s, -1) {
		b.WriteString(escapeMarkdown(s[last:m[0]]))
		b.WriteString("`" + s[m[0]:m[1]] + "`")
		last = m[1]
	}
	b.WriteString(escapeMarkdown(s[last:]))
	return b.String()
}

var markdownEscaper = strings.NewReplacer(`\`, `\\`, "&", "&amp;", "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)

func escapeMarkdown(s string) string { return markdownEscaper.Replace(s) }

// anchor is the id GitHub gives a markdown heading.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}
