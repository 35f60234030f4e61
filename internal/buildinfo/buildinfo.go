// Package buildinfo says which build of Tablo is running. Release builds stamp the version
// with -ldflags "-X github.com/tablo/tablo/internal/buildinfo.version=v1.2.3" (and .commit);
// other builds read what the Go toolchain recorded (module version, VCS revision).
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Set by -ldflags -X in release builds; empty otherwise.
var (
	version string
	commit  string
)

// Info describes the running binary.
type Info struct {
	Version  string // "v1.2.3", a module pseudo-version, or "devel"
	Commit   string // VCS revision (12 hex digits), "" when unknown
	Modified bool   // built from a tree with uncommitted changes
	Go       string // toolchain, e.g. go1.25.1
	Platform string // GOOS/GOARCH
}

// Read returns the running binary's Info.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	return fromBuildInfo(bi, ok, version, commit)
}

func fromBuildInfo(bi *debug.BuildInfo, ok bool, ldVersion, ldCommit string) Info {
	info := Info{Version: "devel", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			info.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if ldVersion != "" {
		info.Version = ldVersion
	}
	if ldCommit != "" {
		info.Commit, info.Modified = ldCommit, false
	}
	if len(info.Commit) > 12 {
		info.Commit = info.Commit[:12]
	}
	return info
}

// String is the one-line form: "v1.2.3 (commit 0123456789ab, go1.25.1 linux/amd64)".
func (i Info) String() string {
	var b strings.Builder
	b.WriteString(i.Version)
	b.WriteString(" (")
	if i.Commit != "" {
		b.WriteString("commit ")
		b.WriteString(i.Commit)
		if i.Modified {
			b.WriteString("+modified")
		}
		b.WriteString(", ")
	}
	b.WriteString(i.Go)
	b.WriteString(" ")
	b.WriteString(i.Platform)
	b.WriteString(")")
	return b.String()
}
