package main

import "flag"

// flagGroups records the group each flag of a FlagSet is listed under in
// docs/CONFIGURATION.md, from where it was defined: every flag defined
// after start(g), up to the next start or end, belongs to g. Flags defined
// before the first start (a command's own) belong to the group "".
type flagGroups struct {
	fs      *flag.FlagSet
	current string
	of      map[string]string // flag name → group
	order   []string          // the groups, as first started
}

func newFlagGroups(fs *flag.FlagSet) *flagGroups {
	return &flagGroups{fs: fs, of: map[string]string{}}
}

// start puts the flags defined since the last start in the group then
// current, and those defined next in group. A group may be started again:
// its flags are listed together.
func (g *flagGroups) start(group string) {
	g.end()
	g.current = group
	for _, o := range g.order {
		if o == group {
			return
		}
	}
	g.order = append(g.order, group)
}

// end puts the flags defined since the last start in the group then
// current.
func (g *flagGroups) end() {
	g.fs.VisitAll(func(f *flag.Flag) {
		if _, ok := g.of[f.Name]; !ok {
			g.of[f.Name] = g.current
		}
	})
}

// flags returns the flags of group, sorted by name.
func (g *flagGroups) flags(group string) []*flag.Flag {
	var fl []*flag.Flag
	g.fs.VisitAll(func(f *flag.Flag) {
		if g.of[f.Name] == group {
			fl = append(fl, f)
		}
	})
	return fl
}
