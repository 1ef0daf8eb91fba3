package main

import "runtime/debug"

// buildVersion is the version s3seal reports (s3seal version, the first
// log line of serve, s3seal_build_info{version} on /metrics): the module
// version ("(devel)" when built from a checkout), then the VCS commit and
// "-dirty" when the tree had uncommitted changes: "v1.2.0",
// "(devel)+0123456789ab-dirty".
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += "+" + rev
		if modified {
			v += "-dirty"
		}
	}
	return v
}
