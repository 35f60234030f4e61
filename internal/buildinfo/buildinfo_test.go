package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildAndLdflags(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"},
	}}
	got := fromBuildInfo(bi, true, "", "")
	if got.Version != "devel" || got.Commit != "0123456789ab" || !got.Modified {
		t.Fatalf("from build info: %+v", got)
	}
	if s := got.String(); !strings.HasPrefix(s, "devel (commit 0123456789ab+modified, go") {
		t.Fatalf("String: %s", s)
	}
	bi.Main.Version = "v0.3.0"
	if got := fromBuildInfo(bi, true, "", ""); got.Version != "v0.3.0" {
		t.Fatalf("module version: %+v", got)
	}
	got = fromBuildInfo(bi, true, "v1.2.3", "fedcba987654")
	if got.Version != "v1.2.3" || got.Commit != "fedcba987654" || got.Modified {
		t.Fatalf("ldflags override: %+v", got)
	}
}
