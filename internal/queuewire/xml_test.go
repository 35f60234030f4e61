package queuewire

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tablo/tablo/internal/azerr"
)

// Message text is escaped as Azure escapes it: quotes stay raw.
func TestAppendEscaped(t *testing.T) {
	if got := string(appendEscaped(nil, `a<b>&"c"'d'`+"\r\n")); got != `a&lt;b&gt;&amp;"c"'d'&#xD;`+"\n" {
		t.Fatal(got)
	}
}

func TestParseMessageText(t *testing.T) {
	for _, tc := range []struct {
		body, text string
		present    bool
		code       azerr.Code
	}{
		{`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<QueueMessage><MessageText>hello &lt;world&gt; &amp; &#34;x&#34;</MessageText></QueueMessage>`, `hello <world> & "x"`, true, ""},
		{"\xef\xbb\xbf<QueueMessage><MessageText></MessageText></QueueMessage>", "", true, ""},
		{`<QueueMessage><Other>x</Other><MessageText>a</MessageText></QueueMessage>`, "a", true, ""},
		{`<QueueMessage></QueueMessage>`, "", false, ""},
		{``, "", false, azerr.InvalidXMLDocument},
		{`not xml`, "", false, azerr.InvalidXMLDocument},
		{`<Other><MessageText>a</MessageText></Other>`, "", false, azerr.InvalidXMLDocument},
		{`<QueueMessage><MessageText>a<b/></MessageText></QueueMessage>`, "", false, azerr.InvalidXMLDocument},
		{`<QueueMessage><MessageText>a</MessageText><MessageText>b</MessageText></QueueMessage>`, "", false, azerr.InvalidXMLDocument},
		{`<QueueMessage><MessageText>a</MessageText>`, "", false, azerr.InvalidXMLDocument},
		{`<QueueMessage/><QueueMessage/>`, "", false, azerr.InvalidXMLDocument},
	} {
		text, present, err := ParseMessageText([]byte(tc.body))
		if tc.code != "" {
			if !azerr.Is(err, tc.code) {
				t.Errorf("%q: %v, want %s", tc.body, err, tc.code)
			}
			continue
		}
		if err != nil || text != tc.text || present != tc.present {
			t.Errorf("%q: %q %v %v", tc.body, text, present, err)
		}
	}
}

// FuzzParseMessageText: never panics; what it accepts renders and parses back the same.
func FuzzParseMessageText(f *testing.F) {
	f.Add([]byte(`<QueueMessage><MessageText>hello &amp; bye</MessageText></QueueMessage>`))
	f.Add([]byte("\xef\xbb\xbf<?xml version='1.0' encoding='utf-8'?>\n<QueueMessage><MessageText>x</MessageText></QueueMessage>"))
	f.Add([]byte(`<QueueMessage><MessageText><![CDATA[a<b]]></MessageText></QueueMessage>`))
	f.Add([]byte(`<?xml version="1.0" encoding="utf-8"?><QueueMessage><MessageText>{&#34;a&#34;:1} &lt;&amp;&gt; &apos;x&apos;&#xD;&#xA;</MessageText></QueueMessage>`))
	f.Add([]byte(`<QueueMessage><MessageText>a&#x41;b</MessageText></QueueMessage>` + "\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		// The common-shape reader agrees with the full parser on all it accepts.
		if fast, ok := parseCommonMessage(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))); ok {
			slow, present, err := parseMessageXML(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
			if err != nil || !present || slow != fast {
				t.Fatalf("%q: common reader %q, full parser %q %v %v", body, fast, slow, present, err)
			}
		}
		text, present, err := ParseMessageText(body)
		if err != nil {
			if !azerr.Is(err, azerr.InvalidXMLDocument) {
				t.Fatalf("error %v is not InvalidXmlDocument", err)
			}
			return
		}
		if !present || !utf8.ValidString(text) {
			return
		}
		doc := appendElem([]byte("<QueueMessage>"), "MessageText", text)
		doc = append(doc, "</QueueMessage>"...)
		again, ok, err := ParseMessageText(doc)
		if err != nil || !ok || again != text {
			t.Fatalf("round trip: %q -> %q (%v)", text, again, err)
		}
	})
}

// appendHTTPTime writes what time.Format(http.TimeFormat) writes.
func TestAppendHTTPTime(t *testing.T) {
	for _, tm := range []time.Time{
		time.Unix(0, 0), time.Date(2026, 11, 26, 1, 2, 3, 999, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 2, 29, 12, 0, 9, 0, time.FixedZone("x", 3600)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		if got, want := string(appendHTTPTime(nil, tm)), tm.UTC().Format(http.TimeFormat); got != want {
			t.Errorf("appendHTTPTime(%v) = %q, want %q", tm, got, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		tm := time.Unix(r.Int64N(253402300800), 0)
		if got, want := string(appendHTTPTime(nil, tm)), tm.UTC().Format(http.TimeFormat); got != want {
			t.Fatalf("appendHTTPTime(%v) = %q, want %q", tm, got, want)
		}
	}
}

// The bodies the SDKs send (any of the three declarations or none, printable ASCII, the
// entities encoding/xml and the SDKs write, an empty text, a trailing newline) take the
// common-shape reader, and it reads what the full parser reads; every byte outside that set
// is left to the full parser, whose answer stands.
func TestCommonShapeReader(t *testing.T) {
	var printable []byte
	for c := byte(0x20); c < 0x7f; c++ {
		if c != '<' && c != '&' && c != '>' { // '>' is left to the full parser ("]]>")
			printable = append(printable, c)
		}
	}
	texts := []string{"", "a", " ", "\t\n", string(printable), "&lt;x&gt;", "&amp;", "a&#34;b&#39;c&quot;d&apos;", "&#x9;&#xA;&#xD;", "x&lt;",
		string(printable) + "\t\n&amp;"} // every printable byte beside an entity too
	for _, decl := range append([]string{""}, func() []string {
		var ds []string
		for _, d := range commonDecls {
			ds = append(ds, string(d), string(d)+"\n")
		}
		return ds
	}()...) {
		for _, text := range texts {
			for _, tail := range []string{"", "\r\n"} {
				body := []byte(decl + "<QueueMessage><MessageText>" + text + "</MessageText></QueueMessage>" + tail)
				fast, ok := parseCommonMessage(body)
				if !ok {
					t.Errorf("%q: not read by the common-shape reader", body)
					continue
				}
				slow, present, err := parseMessageXML(body)
				if err != nil || !present || slow != fast {
					t.Errorf("%q: common reader %q, full parser %q %v %v", body, fast, slow, present, err)
				}
			}
		}
	}
	for _, tc := range []struct {
		text, want string // want "!" : InvalidXmlDocument
	}{
		{"\x01", "!"}, {"a\x1fb", "!"}, {"\x00", "!"}, {"\x0b&amp;", "!"},
		{"a\r\nb", "a\nb"}, {"a\rb", "a\nb"}, {"&amp;\r\n", "&\n"}, // XML normalises line ends
		{"\xff", "!"}, {"\xc3", "!"}, {"&amp;\xff", "!"},
		{"é", "é"}, {"&lt;é", "<é"}, {"\x7f", "\x7f"},
		{"<", "!"}, {"<b/>", "!"}, {"&amp;<b/>", "!"}, {">", ">"}, {"&lt;>", "<>"},
		{"&bogus;", "!"}, {"&", "!"}, {"&#x41;", "A"},
	} {
		body := []byte("<QueueMessage><MessageText>" + tc.text + "</MessageText></QueueMessage>")
		text, present, err := ParseMessageText(body)
		if tc.want == "!" {
			if !azerr.Is(err, azerr.InvalidXMLDocument) {
				t.Errorf("%q: %q %v %v, want InvalidXmlDocument", body, text, present, err)
			}
			continue
		}
		if err != nil || !present || text != tc.want {
			t.Errorf("%q: %q %v %v, want %q", body, text, present, err, tc.want)
		}
	}
	// The full parser: white space around the root (Python's declaration and newline) and
	// text or elements after MessageText inside it are not part of the message.
	for _, tc := range []struct{ body, want string }{
		{"<?xml version='1.0' encoding='utf-8'?>\n<QueueMessage><MessageText>py</MessageText></QueueMessage>\n", "py"},
		{"<QueueMessage><MessageText>a</MessageText>b</QueueMessage>", "a"},
		{"<QueueMessage><MessageText>a</MessageText><Other>c</Other></QueueMessage>", "a"},
	} {
		text, present, err := ParseMessageText([]byte(tc.body))
		if err != nil || !present || text != tc.want {
			t.Errorf("%q: %q %v %v, want %q", tc.body, text, present, err, tc.want)
		}
	}
	// Anything after the document but white space is refused.
	for _, tail := range []string{"x", "<QueueMessage/>", " \n<a/>"} {
		body := []byte(`<?xml version="1.0" encoding="utf-8"?><QueueMessage><MessageText>a</MessageText></QueueMessage>` + tail)
		if _, _, err := ParseMessageText(body); !azerr.Is(err, azerr.InvalidXMLDocument) {
			t.Errorf("%q: %v, want InvalidXmlDocument", body, err)
		}
	}
}
