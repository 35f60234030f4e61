package blobwire

import (
	"strconv"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/blob"
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

// FuzzParseTags: any Set Blob Tags body gives pairs or 400 InvalidXmlDocument; a valid set
// renders back to a body that parses to the same pairs.
func FuzzParseTags(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0" encoding="utf-8"?><Tags><TagSet><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>b c</Key><Value></Value></Tag></TagSet></Tags>`))
	f.Add([]byte(`<Tags><TagSet/></Tags>`))
	f.Add([]byte(`<Tags><TagSet><Tag><Key>a</Key><Key>b</Key></Tag></TagSet></Tags>`))
	f.Add([]byte(`<Tags><TagSet><Tag><Value>1</Value></Tag><Tag><x/></Tag></TagSet></Tags>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		kvs, err := ParseTags(body)
		if err != nil {
			if !azerr.Is(err, azerr.InvalidXMLDocument) {
				t.Fatalf("error %v is not InvalidXmlDocument", err)
			}
			return
		}
		tags, err := blob.NewTags(kvs)
		if err != nil {
			if azerr.From(err).Status() != 400 {
				t.Fatalf("tag error %v is not a 400", err)
			}
			return
		}
		again, err := ParseTags(appendTagSet(nil, tags))
		if err != nil || len(again) != len(tags) {
			t.Fatalf("round trip of %q: %v %v", tags, again, err)
		}
		for i := range again {
			if again[i] != tags[i] {
				t.Fatalf("round trip of %q gave %q", tags, again)
			}
		}
	})
}

// FuzzParseTagsHeader: x-ms-tags gives valid sorted tags or a 400.
func FuzzParseTagsHeader(f *testing.F) {
	for _, s := range []string{"a=1&b=2", "a+b=c%20d", "a=1&a=2", "=v", "k%zz=1", "a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		tags, err := ParseTagsHeader(v)
		if err != nil {
			if azerr.From(err).Status() != 400 {
				t.Fatalf("error %v is not a 400", err)
			}
			return
		}
		if len(tags) > blob.MaxTags {
			t.Fatalf("%d tags", len(tags))
		}
		for i := 1; i < len(tags); i++ {
			if tags[i-1][0] >= tags[i][0] {
				t.Fatalf("not sorted or duplicated: %q", tags)
			}
		}
	})
}
