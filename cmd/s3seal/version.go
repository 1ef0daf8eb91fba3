package main

import "runtime/debug"

// version and commit are set at build time where the build has no module
// version and no VCS information, as the Docker image's (no .git in its
// context):
//
//	go build -ldflags "-X main.version=v1.2.0 -X main.commit=0123456789ab" ./cmd/s3seal
var version, commit string

// buildVersion is the version s3seal reports (s3seal version, the first
// log line of serve, s3seal_build_info{version} on /metrics): the module
// version ("(devel)" when built from a checkout), then the VCS commit and
// "-dirty" when the tree had uncommitted changes: "v1.2.0",
// "(devel)+0123456789ab-dirty". A version or commit given with -ldflags -X
// (main.version, main.commit) takes the place of the build info's.
func buildVersion() string {
	if version != "" || commit != "" {
		return stampedVersion(version, commit)
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return versionOf(bi)
}

// stampedVersion is v ("(devel)" when empty), then "+" and the first 12
// characters of the commit rev when there is one: the version from
// -ldflags, and from the build info.
func stampedVersion(v, rev string) string {
	if v == "" {
		v = "(devel)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += "+" + rev
	}
	return v
}

// versionOf is the version the build info bi reports.
func versionOf(bi *debug.BuildInfo) string {
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
	v := stampedVersion(bi.Main.Version, rev)
	if rev != "" && modified {
		v += "-dirty"
	}
	return v
}
