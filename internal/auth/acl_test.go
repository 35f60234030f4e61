package auth

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

func tp(s string) *time.Time {
	t, err := parseISOTime(s)
	if err != nil {
		panic(err)
	}
	return &t
}

// TestACLSamples parses every Set/Get Table ACL body captured from the SDKs and Azurite.
func TestACLSamples(t *testing.T) {
	files, _ := filepath.Glob("testdata/acl/*.xml")
	if len(files) < 9 {
		t.Fatalf("only %d ACL samples", len(files))
	}
	p1 := SignedIdentifier{ID: "policy1", Policy: AccessPolicy{Start: tp("2024-01-01"), Expiry: tp("2030-01-01"), Permission: "raud"}}
	p2 := SignedIdentifier{ID: "policy2", Policy: AccessPolicy{Start: tp("2024-01-01"), Expiry: tp("2030-01-01"), Permission: "r"}}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := ParseSignedIdentifiers(body)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		var want []SignedIdentifier
		switch name := filepath.Base(f); {
		case strings.HasPrefix(name, "azcli-05-set-table-acl-1"):
			// <SignedIdentifiers/>: no policies
		case strings.HasPrefix(name, "azcli-"):
			want = []SignedIdentifier{p1}
		default:
			want = []SignedIdentifier{p1, p2}
		}
		if !reflect.DeepEqual(ids, want) {
			t.Errorf("%s: got %+v", f, ids)
		}
	}
}

// TestACLSpecExample renders table-api.md §8.1's example byte for byte.
func TestACLSpecExample(t *testing.T) {
	const want = `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>policy1</Id><AccessPolicy><Start>2021-07-08T09:10:09.0000000Z</Start><Expiry>2021-07-09T09:10:09.0000000Z</Expiry><Permission>raud</Permission></AccessPolicy></SignedIdentifier><SignedIdentifier><Id>idonly</Id></SignedIdentifier><SignedIdentifier><Id>partial</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	in := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<SignedIdentifiers>
  <SignedIdentifier><Id>policy1</Id><AccessPolicy><Permission>dura</Permission><Start>2021-07-08T09:10:09Z</Start><Expiry>2021-07-09T11:10:09+02:00</Expiry></AccessPolicy></SignedIdentifier>
  <SignedIdentifier><Id>idonly</Id><AccessPolicy/></SignedIdentifier>
  <SignedIdentifier><AccessPolicy><Permission>r</Permission><Start></Start></AccessPolicy><Id>partial</Id></SignedIdentifier>
</SignedIdentifiers>`
	ids, err := ParseSignedIdentifiers([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(AppendSignedIdentifiersXML(nil, ids)); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got := string(AppendSignedIdentifiersXML([]byte("x"), nil)); got != `x<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers />` {
		t.Fatal(got)
	}
	esc := AppendSignedIdentifiersXML(nil, []SignedIdentifier{{ID: `a<&>"'b`}})
	back, err := ParseSignedIdentifiers(esc)
	if err != nil || len(back) != 1 || back[0].ID != `a<&>"'b` {
		t.Fatalf("escaping: %s → %+v %v", esc, back, err)
	}
}

func TestParseSignedIdentifiersClear(t *testing.T) {
	for _, in := range []string{"", "  \n", "\xef\xbb\xbf", "<SignedIdentifiers/>", "\xef\xbb\xbf<?xml version='1.0'?><SignedIdentifiers></SignedIdentifiers>\n",
		"<!-- c --><SignedIdentifiers>\n</SignedIdentifiers><!-- c -->"} {
		ids, err := ParseSignedIdentifiers([]byte(in))
		if err != nil || len(ids) != 0 {
			t.Errorf("%q: %v %v", in, ids, err)
		}
	}
	// Unknown elements are skipped.
	ids, err := ParseSignedIdentifiers([]byte(`<SignedIdentifiers><X><Y/></X><SignedIdentifier><Id>a</Id><Extra>1</Extra><AccessPolicy><Other/></AccessPolicy></SignedIdentifier></SignedIdentifiers>`))
	if err != nil || len(ids) != 1 || ids[0].ID != "a" {
		t.Fatal(ids, err)
	}
}

func TestParseSignedIdentifiersErrors(t *testing.T) {
	id := func(s string) string { return "<SignedIdentifier><Id>" + s + "</Id></SignedIdentifier>" }
	wrap := func(s string) string { return "<SignedIdentifiers>" + s + "</SignedIdentifiers>" }
	tests := []struct{ name, in string }{
		{"not xml", "hello"},
		{"truncated", "<SignedIdentifiers><SignedIdentifier>"},
		{"wrong root", "<Identifiers/>"},
		{"mismatched tags", "<SignedIdentifiers></SignedIdentifier>"},
		{"two roots", "<SignedIdentifiers/><SignedIdentifiers/>"},
		{"text after root", "<SignedIdentifiers/>x"},
		{"text before root", "x<SignedIdentifiers/>"},
		{"six identifiers", wrap(id("1") + id("2") + id("3") + id("4") + id("5") + id("6"))},
		{"duplicate id", wrap(id("a") + id("a"))},
		{"missing id", wrap("<SignedIdentifier><AccessPolicy/></SignedIdentifier>")},
		{"empty id", wrap(id(""))},
		{"long id", wrap(id(strings.Repeat("x", 65)))},
		{"two ids", wrap("<SignedIdentifier><Id>a</Id><Id>b</Id></SignedIdentifier>")},
		{"id with element", wrap("<SignedIdentifier><Id>a<b/></Id></SignedIdentifier>")},
		{"two policies", wrap("<SignedIdentifier><Id>a</Id><AccessPolicy/><AccessPolicy/></SignedIdentifier>")},
		{"bad permission", wrap("<SignedIdentifier><Id>a</Id><AccessPolicy><Permission>rw</Permission></AccessPolicy></SignedIdentifier>")},
		{"upper permission", wrap("<SignedIdentifier><Id>a</Id><AccessPolicy><Permission>R</Permission></AccessPolicy></SignedIdentifier>")},
		{"bad start", wrap("<SignedIdentifier><Id>a</Id><AccessPolicy><Start>soon</Start></AccessPolicy></SignedIdentifier>")},
		{"bad expiry", wrap("<SignedIdentifier><Id>a</Id><AccessPolicy><Expiry>2025-02-30</Expiry></AccessPolicy></SignedIdentifier>")},
		{"two starts", wrap("<SignedIdentifier><Id>a</Id><AccessPolicy><Start>2025-01-01</Start><Start>2025-01-01</Start></AccessPolicy></SignedIdentifier>")},
		{"utf-16 declared", `<?xml version="1.0" encoding="utf-16"?><SignedIdentifiers/>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, err := ParseSignedIdentifiers([]byte(tt.in))
			if ids != nil {
				t.Fatalf("got %+v", ids)
			}
			wantCode(t, err, azerr.InvalidXMLDocument)
		})
	}
	// 64 characters (not bytes) are fine.
	if _, err := ParseSignedIdentifiers([]byte(wrap(id(strings.Repeat("é", 64))))); err != nil {
		t.Fatal(err)
	}
}
