package batch

import (
	"fmt"
	"strings"
	"testing"
)

// TestChangesetWriterInsertedNoContent checks WriteInsertedNoContent writes exactly what
// Write(InsertedNoContent(…)) writes, among other sub-responses, and fails the same way.
func TestChangesetWriterInsertedNoContent(t *testing.T) {
	locs := []string{
		"http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='a',RowKey='b')",
		"https://acct.table.core.windows.net/t(PartitionKey='%20',RowKey='')",
		"",
	}
	etags := []string{`W/"datetime'2024-01-02T03%3A04%3A05.1234567Z'"`, ""}
	for _, loc := range locs {
		for _, etag := range etags {
			viaSub := NewChangesetWriter([]byte("x"), "batchresponse_1", "changesetresponse_2")
			direct := NewChangesetWriter([]byte("x"), "batchresponse_1", "changesetresponse_2")
			for _, w := range []*ChangesetWriter{&viaSub, &direct} {
				d := Deleted()
				w.Write(&d)
			}
			sub := InsertedNoContent(loc, etag)
			viaSub.Write(&sub)
			direct.WriteInsertedNoContent([]byte(loc), etag)
			for _, w := range []*ChangesetWriter{&viaSub, &direct} {
				u := Updated(etag)
				w.Write(&u)
			}
			want, err1 := viaSub.Finish()
			got, err2 := direct.Finish()
			if err1 != nil || err2 != nil || string(got) != string(want) {
				t.Fatalf("loc %q etag %q:\n got %q, %v\nwant %q, %v", loc, etag, got, err2, want, err1)
			}
			all, err := AppendResponse([]byte("x"), "batchresponse_1", "changesetresponse_2", []SubResponse{Deleted(), sub, Updated(etag)})
			if err != nil || string(all) != string(want) {
				t.Fatalf("AppendResponse differs:\n got %q\nwant %q", all, want)
			}
		}
	}
	for _, bad := range [][2]string{{"a\rb", "e"}, {"a", "e\nf"}, {"\rb", "e"}, {"\nb", "e"}} {
		viaSub := NewChangesetWriter([]byte("x"), "b", "c")
		direct := NewChangesetWriter([]byte("x"), "b", "c")
		sub := InsertedNoContent(bad[0], bad[1])
		viaSub.Write(&sub)
		direct.WriteInsertedNoContent([]byte(bad[0]), bad[1])
		want, err1 := viaSub.Finish()
		got, err2 := direct.Finish()
		if err1 == nil || err2 == nil || err1.Error() != err2.Error() || string(got) != "x" || string(want) != "x" {
			t.Fatalf("%q: got %q, %v; want %q, %v", bad, got, err2, want, err1)
		}
	}
}

// TestChangesetWriterStickyError checks the first error stops all later writes.
func TestChangesetWriterStickyError(t *testing.T) {
	w := NewChangesetWriter([]byte("x"), "b", "c")
	bad := SubResponse{Status: 299}
	w.Write(&bad)
	ok := Deleted()
	w.Write(&ok)
	w.WriteInsertedNoContent([]byte("l"), "e")
	if got, err := w.Finish(); err == nil || string(got) != "x" {
		t.Fatalf("got %q, %v", got, err)
	}
	w = NewChangesetWriter([]byte("x"), "", "c")
	w.Write(&ok)
	if got, err := w.Finish(); err == nil || string(got) != "x" {
		t.Fatalf("empty boundary: got %q, %v", got, err)
	}
}

func TestFormatUUID(t *testing.T) {
	for _, u := range [][16]byte{{}, {0: 0xff, 5: 0x0a, 15: 0x01}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}} {
		want := fmt.Sprintf("%s%x-%x-%x-%x-%x", ChangesetResponsePrefix, u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
		if got := formatUUID(ChangesetResponsePrefix, u); got != want {
			t.Errorf("formatUUID(%x) = %q, want %q", u, got, want)
		}
	}
}

// TestAppendResponseAnySize: AppendResponse writes what a ChangesetWriter writes for any
// boundary lengths (1 to 70) and sub-response count, none included, and AppendRetrieveResponse
// writes sub-responses whose header values and body are far larger than the fixed parts.
func TestAppendResponseAnySize(t *testing.T) {
	big := strings.Repeat("v", 20000)
	subs := []SubResponse{
		{Status: 200, ContentID: big},
		{Status: 200, PreferenceApplied: big},
		{Status: 200, DataServiceVersion: big},
		{Status: 200, ContentType: big},
		{Status: 200, Location: big},
		{Status: 200, DataServiceID: big},
		{Status: 200, ETag: big},
		{Status: 200, Body: []byte(big)},
	}
	for _, lb := range []int{1, 70} {
		for _, lc := range []int{1, 70} {
			bb, cb := strings.Repeat("b", lb), strings.Repeat("c", lc)
			for _, n := range []int{0, 1, len(subs)} {
				w := NewChangesetWriter([]byte("x"), bb, cb)
				for i := range subs[:n] {
					w.Write(&subs[i])
				}
				want, err1 := w.Finish()
				got, err2 := AppendResponse([]byte("x"), bb, cb, subs[:n])
				if err1 != nil || err2 != nil || string(got) != string(want) {
					t.Fatalf("boundaries of %d and %d, %d subs: %v, %v, outputs differ", lb, lc, n, err1, err2)
				}
			}
		}
	}
	for _, sub := range subs {
		got, err := AppendRetrieveResponse(nil, "b", sub)
		if err != nil || !strings.Contains(string(got), big) {
			t.Fatalf("retrieve response with a large field: %v, %d bytes", err, len(got))
		}
	}
}
