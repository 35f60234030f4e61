package blobwire

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/blob"
)

// ParseBlockList keeps the elements in order with their ids trimmed, and refuses a body that
// is not one <BlockList> of Committed/Uncommitted/Latest elements holding text.
func TestParseBlockListShapes(t *testing.T) {
	got, err := ParseBlockList([]byte("\xef\xbb\xbf<?xml version=\"1.0\"?>\n<BlockList>\n  <Latest> QQ== </Latest><Committed>Qg==</Committed>\n<Uncommitted>Qw==</Uncommitted></BlockList>\n"))
	if err != nil || fmt.Sprint(got) != "[{QQ== Latest} {Qg== Committed} {Qw== Uncommitted}]" {
		t.Errorf("list: %v %v", got, err)
	}
	if got, err := ParseBlockList([]byte(`<BlockList></BlockList>`)); err != nil || len(got) != 0 {
		t.Errorf("empty list: %v %v", got, err)
	}
	for _, c := range []struct {
		body string
		code azerr.Code
	}{
		{``, azerr.InvalidXMLDocument},
		{`<BlockList>`, azerr.InvalidXMLDocument},
		{`<BlockList><Latest>QQ==</Latest>`, azerr.InvalidXMLDocument},
		{`<BlockList/><BlockList/>`, azerr.InvalidXMLDocument},
		{`<Blocks><Latest>QQ==</Latest></Blocks>`, azerr.InvalidXMLDocument},
		{`<BlockList><Block>QQ==</Block></BlockList>`, azerr.InvalidXMLDocument},
		{`<BlockList><Latest><Id>QQ==</Id></Latest></BlockList>`, azerr.InvalidXMLDocument},
		{`<BlockList>QQ==<Latest>Qg==</Latest></BlockList>`, azerr.InvalidXMLDocument},
		{`<BlockList><Latest>QQ==</Latest>Qg==</BlockList>`, azerr.InvalidXMLDocument},
		{`<BlockList><Latest>QQ==</BlockList>`, azerr.InvalidXMLDocument},
		{`<BlockList><Latest>  </Latest></BlockList>`, azerr.InvalidBlockList},
		{`<BlockList><Latest/></BlockList>`, azerr.InvalidBlockList},
	} {
		if _, err := ParseBlockList([]byte(c.body)); !azerr.Is(err, c.code) {
			t.Errorf("%q: %v, want %s", c.body, err, c.code)
		}
	}
}

// A block list of exactly 50,000 blocks parses; one more is 409 BlockCountExceedsLimit.
func TestParseBlockListCount(t *testing.T) {
	list := func(n int) []byte {
		return []byte("<BlockList>" + strings.Repeat("<Latest>QQ==</Latest>", n) + "</BlockList>")
	}
	if got, err := ParseBlockList(list(blob.MaxCommittedBlocks)); err != nil || len(got) != blob.MaxCommittedBlocks {
		t.Errorf("%d blocks: %d, %v", blob.MaxCommittedBlocks, len(got), err)
	}
	if _, err := ParseBlockList(list(blob.MaxCommittedBlocks + 1)); !azerr.Is(err, azerr.BlockCountExceedsLimit) {
		t.Errorf("%d blocks: %v", blob.MaxCommittedBlocks+1, err)
	}
}

// Ranges: a single byte (a-a), open ends, the forms Azure ignores, and malformed ones.
func TestParseRangeEdges(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Range
		ok   bool
		fail bool
	}{
		{"bytes=5-5", Range{Start: 5, End: 5}, true, false},
		{"bytes=0-0", Range{Start: 0, End: 0}, true, false},
		{" bytes=1-2 ", Range{Start: 1, End: 2}, true, false},
		{"bytes=6-5", Range{}, false, true},
		{"bytes=-5", Range{Suffix: true}, true, false},
		{"bytes=0-1,3-4", Range{Suffix: true}, true, false},
		{"bytes=5", Range{}, false, true},
		{"bytes=-", Range{Suffix: true}, true, false},
		{"bytes=1-x", Range{}, false, true},
		{"Bytes=1-2", Range{}, false, true},
	} {
		r, ok, err := ParseRange(c.in)
		if r != c.want || ok != c.ok || (err != nil) != c.fail {
			t.Errorf("ParseRange(%q) = %+v %v %v", c.in, r, ok, err)
		}
		if err != nil && !azerr.Is(err, azerr.InvalidRange) {
			t.Errorf("ParseRange(%q): %v", c.in, err)
		}
	}
}

// ParseTags reads keys and values in document order (an absent value is empty) and refuses
// anything but <Tags><TagSet><Tag><Key/><Value/></Tag>…</TagSet></Tags>.
func TestParseTagsShapes(t *testing.T) {
	got, err := ParseTags([]byte("\xef\xbb\xbf<?xml version=\"1.0\"?>\n<Tags>\n <TagSet>\n  <Tag><Key>b</Key><Value> 2 </Value></Tag>\n  <Tag><Value>1</Value><Key>a</Key></Tag><Tag><Key>c</Key></Tag>\n </TagSet>\n</Tags>"))
	if err != nil || fmt.Sprintf("%q", got) != `[["b" " 2 "] ["a" "1"] ["c" ""]]` {
		t.Errorf("tags: %q %v", got, err)
	}
	if got, err := ParseTags([]byte(`<Tags><TagSet></TagSet></Tags>`)); err != nil || len(got) != 0 {
		t.Errorf("empty set: %q %v", got, err)
	}
	if got, err := ParseTags([]byte(`<Tags></Tags>`)); err != nil || len(got) != 0 {
		t.Errorf("no set: %q %v", got, err)
	}
	for _, body := range []string{
		``,
		`<Tags>`,
		`<Tags/><Tags/>`,
		`<TagSet></TagSet>`,
		`<Tags><Tag></Tag></Tags>`,
		`<Tags><TagSet><Key>a</Key></TagSet></Tags>`,
		`<Tags><TagSet><Tag><Name>a</Name></Tag></TagSet></Tags>`,
		`<Tags><TagSet><Tag><Key><b/></Key></Tag></TagSet></Tags>`,
		`<Tags>x<TagSet></TagSet></Tags>`,
		`<Tags><TagSet>x</TagSet></Tags>`,
		`<Tags><TagSet><Tag>x<Key>a</Key></Tag></TagSet></Tags>`,
		`<Tags><TagSet><TagSet></TagSet></TagSet></Tags>`,
		`<Tags><TagSet><Tag><Key>a</Key></Tag></TagSet>`,
	} {
		if got, err := ParseTags([]byte(body)); !azerr.Is(err, azerr.InvalidXMLDocument) {
			t.Errorf("%q: %q %v, want InvalidXmlDocument", body, got, err)
		}
	}
}

// ParseTags reads at most 1,000 tags (the count limit is blob.NewTags's, far below): a body
// with more is refused before it is held whole.
func TestParseTagsBound(t *testing.T) {
	set := func(n int) []byte {
		return []byte("<Tags><TagSet>" + strings.Repeat("<Tag><Key>k</Key><Value>v</Value></Tag>", n) + "</TagSet></Tags>")
	}
	if got, err := ParseTags(set(1000)); err != nil || len(got) != 1000 {
		t.Errorf("1,000 tags: %d %v", len(got), err)
	}
	if _, err := ParseTags(set(1001)); !azerr.Is(err, azerr.InvalidXMLDocument) {
		t.Errorf("1,001 tags: %v", err)
	}
}

// x-ms-tags: percent-encoded pairs, '+' a space, a pair without '=' an empty value.
func TestParseTagsHeaderValues(t *testing.T) {
	got, err := ParseTagsHeader("b=2&a+x=c%20d&e")
	if err != nil || fmt.Sprintf("%q", got) != `[["a x" "c d"] ["b" "2"] ["e" ""]]` {
		t.Errorf("tags: %q %v", got, err)
	}
	if got, err := ParseTagsHeader(""); err != nil || got != nil {
		t.Errorf("empty: %q %v", got, err)
	}
	for _, c := range []struct {
		in   string
		code azerr.Code
	}{
		{"a%zz=1", azerr.InvalidTag},
		{"a=%zz", azerr.InvalidTag},
		{"a=1&a=2", azerr.DuplicateTagNames},
		{"=1", azerr.EmptyTagName},
	} {
		if _, err := ParseTagsHeader(c.in); !azerr.Is(err, c.code) {
			t.Errorf("%q: %v, want %s", c.in, err, c.code)
		}
	}
}
