package serviceprops

import (
	"errors"
	"reflect"
	"testing"

	"github.com/tablo/tablo/internal/azerr"
)

// FuzzParse checks that Parse never panics, fails only with Azure's XML errors, and that an
// accepted document applied to any base renders to XML that decodes to the same Properties
// (stored settings always load back unchanged).
func FuzzParse(f *testing.F) {
	for _, s := range []string{goBody, pythonBody, azCorsClear, azLogging, specBody, "", "<StorageServiceProperties/>",
		"<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>&lt;x&gt;</AllowedOrigins><AllowedMethods>get</AllowedMethods></CorsRule></Cors></StorageServiceProperties>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		u, err := Parse(body)
		if err != nil {
			var e *azerr.Error
			if !errors.As(err, &e) || e.Code != azerr.InvalidXMLDocument {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		for _, base := range []Properties{Default(), sdkProps} {
			p := base.Apply(u)
			doc := p.AppendXML(nil)
			back, err := Decode(doc)
			if err != nil {
				t.Fatalf("rendered document does not parse: %v\n%s", err, doc)
			}
			if !reflect.DeepEqual(back, p) {
				t.Fatalf("round trip changed the properties:\n%+v\n%+v\n%s", p, back, doc)
			}
		}
	})
}
