package blobwire

import (
	"strconv"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// FuzzParseBlockList: any body gives a list or an Azure error, never a panic; a parsed list
// names only non-empty ids with a known element.
func FuzzParseBlockList(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<BlockList><Latest>YmxvY2stMDAwMDAx</Latest><Latest>YmxvY2stMDAwMDAy</Latest></BlockList>`))
	f.Add([]byte(`<?xml version="1.0" encoding="utf-8" standalone="yes"?><BlockList><Committed>QQ==</Committed><Uncommitted>Qg==</Uncommitted></BlockList>`))
	f.Add([]byte(`<?xml version='1.0' encoding='utf-8'?>` + "\n" + `<BlockList />`))
	f.Add([]byte(`<BlockList><Latest><x/></Latest></BlockList>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		list, err := ParseBlockList(body)
		if err != nil {
			if azerr.From(err).Status() != 400 && azerr.From(err).Status() != 409 {
				t.Fatalf("error %v is not a 400/409", err)
			}
			return
		}
		for _, b := range list {
			if b.ID == "" || (b.Where != "Latest" && b.Where != "Committed" && b.Where != "Uncommitted") {
				t.Fatalf("bad entry %+v", b)
			}
		}
	})
}

// FuzzParseRange: a parsed range is well-formed and renders back to the same numbers.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"bytes=0-33554431", "bytes=7-10", "bytes=5-", "bytes=-5", "bytes=1-2,4-5", "bytes=9-3", "items=0-1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r, ok, err := ParseRange(v)
		if err != nil || !ok || r.Suffix {
			if err != nil && azerr.From(err).Code != azerr.InvalidRange {
				t.Fatalf("error %v", err)
			}
			return
		}
		if r.Start < 0 || (r.End >= 0 && r.End < r.Start) {
			t.Fatalf("bad range %+v from %q", r, v)
		}
		s := "bytes=" + strconv.FormatInt(r.Start, 10) + "-"
		if r.End >= 0 {
			s += strconv.FormatInt(r.End, 10)
		}
		if again, _, _ := ParseRange(s); again != r {
			t.Fatalf("%q -> %+v -> %q -> %+v", v, r, s, again)
		}
	})
}

func TestParseRange(t *testing.T) {
	for _, c := range []struct {
		in       string
		start    int64
		end      int64
		ok, fail bool
	}{
		{"bytes=0-33554431", 0, 33554431, true, false},
		{"bytes=5-", 5, -1, true, false},
		{"", 0, 0, false, false},
		{"bytes=9-3", 0, 0, false, true},
		{"bytes=a-3", 0, 0, false, true},
	} {
		r, ok, err := ParseRange(c.in)
		if ok != c.ok || (err != nil) != c.fail || (ok && (r.Start != c.start || r.End != c.end)) {
			t.Errorf("ParseRange(%q) = %+v %v %v", c.in, r, ok, err)
		}
	}
}
