package queuewire

import (
	"testing"
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
	f.Fuzz(func(t *testing.T, body []byte) {
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
