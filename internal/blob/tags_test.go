package blob

import (
	"context"
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
	"github.com/tablo/tablo/internal/tagquery"
)

// Tags are checked as Azure does, count first, then each tag (empty name, lengths in
// characters, characters), then duplicates; they come back sorted by name.
func TestNewTagsRules(t *testing.T) {
	n := func(k int) [][2]string {
		var kv [][2]string
		for i := range k {
			kv = append(kv, [2]string{fmt.Sprintf("k%02d", i), "v"})
		}
		return kv
	}
	for _, c := range []struct {
		label string
		kv    [][2]string
		want  azerr.Code
	}{
		{"ten", n(10), ""},
		{"eleven", n(11), azerr.TagsTooLarge},
		{"eleven, one empty name", append(n(10), [2]string{"", "v"}), azerr.TagsTooLarge},
		{"empty name", [][2]string{{"", "v"}}, azerr.EmptyTagName},
		{"empty value", [][2]string{{"k", ""}}, ""},
		{"name of 128", [][2]string{{strings.Repeat("k", 128), "v"}}, ""},
		{"name of 129", [][2]string{{strings.Repeat("k", 129), "v"}}, azerr.TagsTooLarge},
		{"value of 256", [][2]string{{"k", strings.Repeat("v", 256)}}, ""},
		{"value of 257", [][2]string{{"k", strings.Repeat("v", 257)}}, azerr.TagsTooLarge},
		{"128 two-byte characters", [][2]string{{strings.Repeat("é", 128), "v"}}, azerr.InvalidTag},
		{"every allowed character", [][2]string{{"azAZ09 +-./:=_", "azAZ09 +-./:=_"}}, ""},
		{"@ in a name", [][2]string{{"k@", "v"}}, azerr.InvalidTag},
		{"[ in a name", [][2]string{{"k[", "v"}}, azerr.InvalidTag},
		{"` in a name", [][2]string{{"k`", "v"}}, azerr.InvalidTag},
		{"{ in a name", [][2]string{{"k{", "v"}}, azerr.InvalidTag},
		{"! in a value", [][2]string{{"k", "v!"}}, azerr.InvalidTag},
		{"; in a value", [][2]string{{"k", "v;"}}, azerr.InvalidTag},
		{"é in a value", [][2]string{{"k", "é"}}, azerr.InvalidTag},
		{"duplicate", [][2]string{{"a", "1"}, {"b", "2"}, {"a", "3"}}, azerr.DuplicateTagNames},
		{"same name, other case", [][2]string{{"a", "1"}, {"A", "2"}}, ""},
	} {
		_, err := NewTags(c.kv)
		if c.want == "" && err != nil || c.want != "" && !azerr.Is(err, c.want) {
			t.Errorf("%s: %v, want %q", c.label, err, c.want)
		}
	}
	got, err := NewTags([][2]string{{"b", "2"}, {"a", "1"}, {"c", "3"}})
	if want := (Tags{{"a", "1"}, {"b", "2"}, {"c", "3"}}); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("NewTags sorted: %v %v, want %v", got, err, want)
	}
	if got, err := NewTags(nil); got != nil || err != nil {
		t.Errorf("no tags: %v %v, want nil", got, err)
	}
	if v, ok := got.Get("b"); v != "2" || !ok {
		t.Errorf("Get(b) = %q %v", v, ok)
	}
	if v, ok := got.Get("d"); v != "" || ok {
		t.Errorf("Get(d) = %q %v", v, ok)
	}
}

func mustTags(t *testing.T, kv ...string) Tags {
	t.Helper()
	var in [][2]string
	for i := 0; i < len(kv); i += 2 {
		in = append(in, [2]string{kv[i], kv[i+1]})
	}
	tags, err := NewTags(in)
	if err != nil {
		t.Fatal(err)
	}
	return tags
}

func mustExpr(t *testing.T, s string, mode tagquery.Mode) *tagquery.Expr {
	t.Helper()
	e, err := tagquery.Parse(s, mode)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Set Blob Tags replaces the tags of a blob or a snapshot, under the blob's lease (not a
// snapshot's), its conditions and x-ms-if-tags, and leaves the ETag alone; reads and writes
// with x-ms-if-tags see them.
func TestSetTags(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "a", "ccc", "", nil); err != nil {
		t.Fatal(err)
	}
	r := Ref{Account: "a", Container: "ccc", Name: "b"}
	if err := s.SetTags(ctx, r, mustTags(t, "k", "v"), Cond{}); !azerr.Is(err, azerr.BlobNotFound) {
		t.Fatalf("tags of a missing blob: %v", err)
	}
	b, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body([]byte("x")), Tags: mustTags(t, "k", "v0")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetTags(ctx, r, mustTags(t, "k", "v1"), Cond{IfMatch: `"0x1"`}); !azerr.Is(err, azerr.ConditionNotMet) {
		t.Errorf("If-Match fails: %v", err)
	}
	if err := s.SetTags(ctx, r, mustTags(t, "k", "v1"), Cond{IfTags: mustExpr(t, `"k" = 'v1'`, tagquery.Condition)}); !azerr.Is(err, azerr.ConditionNotMet) {
		t.Errorf("x-ms-if-tags fails: %v", err)
	}
	if err := s.SetTags(ctx, r, mustTags(t, "k", "v1"), Cond{IfMatch: b.ETag(), IfTags: mustExpr(t, `"k" = 'v0'`, tagquery.Condition)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, r, Cond{})
	if err != nil || !reflect.DeepEqual(got.Tags, mustTags(t, "k", "v1")) || got.ETag() != b.ETag() || got.Modified != b.Modified {
		t.Fatalf("after Set Blob Tags: %v, ETag %s (was %s), %v", got.Tags, got.ETag(), b.ETag(), err)
	}
	if _, err := s.Get(ctx, r, Cond{IfTags: mustExpr(t, `"k" = 'v0'`, tagquery.Condition)}); !azerr.Is(err, azerr.ConditionNotMet) {
		t.Errorf("read with x-ms-if-tags on the old tags: %v", err)
	}
	if _, err := s.Get(ctx, r, Cond{IfTags: mustExpr(t, `"k" = 'v1'`, tagquery.Condition)}); err != nil {
		t.Errorf("read with x-ms-if-tags on the new tags: %v", err)
	}
	if _, err := s.Put(ctx, r, PutRequest{Type: BlockBlob, Body: body([]byte("y")), Tags: got.Tags, Cond: Cond{IfTags: mustExpr(t, `"k" = 'v0'`, tagquery.Condition)}}); !azerr.Is(err, azerr.ConditionNotMet) {
		t.Errorf("write with x-ms-if-tags on the old tags: %v", err)
	}

	_, snap, err := s.Snapshot(ctx, r, nil, false, Cond{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Lease(ctx, r, LeaseRequest{Action: "acquire", ProposedID: idA, Duration: -1, BreakPeriod: -1}, Cond{}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTags(ctx, r, mustTags(t, "k", "v2"), Cond{}); !azerr.Is(err, azerr.LeaseIDMissing) {
		t.Errorf("leased blob without the id: %v", err)
	}
	if err := s.SetTags(ctx, r, mustTags(t, "k", "v2"), Cond{LeaseID: idA}); err != nil {
		t.Errorf("leased blob with the id: %v", err)
	}
	sr := r
	sr.Snapshot = snap
	if err := s.SetTags(ctx, sr, mustTags(t, "s", "1"), Cond{}); err != nil {
		t.Errorf("snapshot of a leased blob: %v", err)
	}
	if got, _ := s.Get(ctx, sr, Cond{}); !reflect.DeepEqual(got.Tags, mustTags(t, "s", "1")) {
		t.Errorf("snapshot's tags: %v", got.Tags)
	}
	if got, _ := s.Get(ctx, r, Cond{}); !reflect.DeepEqual(got.Tags, mustTags(t, "k", "v2")) {
		t.Errorf("base blob's tags after the snapshot's changed: %v", got.Tags)
	}
}

// Find Blobs by Tags: base blobs only, in container then name order, in one container or in
// all of an account's, with the tags the expression names; pages of any size chain through
// the marker without loss or repeat; bad markers are refused.
func TestFindByTags(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	// blobs named so that container and name order differ from creation order
	for _, c := range []string{"ccb", "cca", "ccc"} {
		if _, err := s.CreateContainer(ctx, "a", c, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CreateContainer(ctx, "other", "cca", "", nil); err != nil {
		t.Fatal(err)
	}
	put := func(acct, c, name string, tags Tags) {
		t.Helper()
		if _, err := s.Put(ctx, Ref{Account: acct, Container: c, Name: name}, PutRequest{Type: BlockBlob, Body: body([]byte(name)), Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "ccb", "y", mustTags(t, "color", "red", "size", "2"))
	put("a", "ccb", "x", mustTags(t, "color", "red"))
	put("a", "cca", "z", mustTags(t, "color", "red", "shape", "round"))
	put("a", "cca", "plain", nil)
	put("a", "cca", "blue", mustTags(t, "color", "blue"))
	put("a", "ccc", "w", mustTags(t, "color", "red"))
	put("other", "cca", "o", mustTags(t, "color", "red"))
	// a snapshot of a red blob, then the blob turns blue: only the base blob is found
	if _, _, err := s.Snapshot(ctx, Ref{Account: "a", Container: "ccc", Name: "w"}, nil, false, Cond{}); err != nil {
		t.Fatal(err)
	}
	put("a", "ccc", "w", mustTags(t, "color", "blue"))

	names := func(fs []Found) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Container+"/"+f.Name)
		}
		return out
	}
	red := mustExpr(t, `"color" = 'red'`, tagquery.Find)
	all, next, err := s.FindByTags(ctx, "a", "", red, "", 0)
	if want := []string{"cca/z", "ccb/x", "ccb/y"}; err != nil || next != "" || !reflect.DeepEqual(names(all), want) {
		t.Fatalf("red in every container: %v next %q %v, want %v", names(all), next, err, want)
	}
	if want := (Tags{{"color", "red"}}); !reflect.DeepEqual(all[0].Tags, want) {
		t.Errorf("found tags %v, want only those named: %v", all[0].Tags, want)
	}
	two := mustExpr(t, `"color" = 'red' AND "size" = '2'`, tagquery.Find)
	if got, _, err := s.FindByTags(ctx, "a", "", two, "", -1); err != nil || len(got) != 1 || !reflect.DeepEqual(got[0].Tags, Tags{{"color", "red"}, {"size", "2"}}) {
		t.Errorf("two keys: %+v %v", got, err)
	}
	for max := 1; max <= 3; max++ {
		var paged []Found
		marker := ""
		for range 10 {
			page, next, err := s.FindByTags(ctx, "a", "", red, marker, max)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > max || next != "" && len(page) != max {
				t.Errorf("max %d: a page of %d, next %q", max, len(page), next)
			}
			paged = append(paged, page...)
			if marker = next; marker == "" {
				break
			}
		}
		if !reflect.DeepEqual(names(paged), names(all)) {
			t.Errorf("pages of %d: %v, want %v", max, names(paged), names(all))
		}
	}
	one, _, err := s.FindByTags(ctx, "a", "ccb", red, "", 0)
	if want := []string{"ccb/x", "ccb/y"}; err != nil || !reflect.DeepEqual(names(one), want) {
		t.Errorf("in ccb: %v %v, want %v", names(one), err, want)
	}
	if _, _, err := s.FindByTags(ctx, "a", "none", red, "", 0); !azerr.Is(err, azerr.ContainerNotFound) {
		t.Errorf("in a missing container: %v", err)
	}
	inC := mustExpr(t, `@container = 'cca' AND "color" >= 'a'`, tagquery.Find)
	if got, _, err := s.FindByTags(ctx, "a", "", inC, "", 0); err != nil || !reflect.DeepEqual(names(got), []string{"cca/blue", "cca/z"}) {
		t.Errorf("@container = cca: %v %v", names(got), err)
	}
	for _, bad := range []string{"!!", base64.RawURLEncoding.EncodeToString([]byte("no-nul"))} {
		if _, _, err := s.FindByTags(ctx, "a", "", red, bad, 0); !azerr.Is(err, azerr.InvalidQueryParameterValue) {
			t.Errorf("marker %q: %v", bad, err)
		}
	}
}

// Find Blobs by Tags reads past a blob's snapshots: they are not found themselves, and the
// blobs after them are.
func TestFindByTagsPastSnapshots(t *testing.T) {
	s, _ := openService(t, "", nil)
	ctx := context.Background()
	if _, err := s.CreateContainer(ctx, "a", "ccc", "", nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		if _, err := s.Put(ctx, Ref{Account: "a", Container: "ccc", Name: n}, PutRequest{Type: BlockBlob, Body: body([]byte(n)), Tags: mustTags(t, "color", "red")}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Snapshot(ctx, Ref{Account: "a", Container: "ccc", Name: n}, nil, false, Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	red := mustExpr(t, `"color" = 'red'`, tagquery.Find)
	got, next, err := s.FindByTags(ctx, "a", "ccc", red, "", 0)
	var names []string
	for _, f := range got {
		names = append(names, f.Name)
	}
	if want := []string{"a", "b"}; err != nil || next != "" || !reflect.DeepEqual(names, want) {
		t.Errorf("found %v next %q %v, want %v", names, next, err, want)
	}
}

// recordHasTags finds the tags field in the JSON header only, never in the inline bytes.
func TestRecordHasTags(t *testing.T) {
	with := (&Blob{Type: BlockBlob, Tags: Tags{{"k", "v"}}}).encode()
	without := (&Blob{Type: BlockBlob, inline: []byte(`"tg":`)}).encode()
	if !recordHasTags(with) || recordHasTags(without) || recordHasTags(nil) || recordHasTags([]byte{0, 0}) {
		t.Error("recordHasTags")
	}
}
