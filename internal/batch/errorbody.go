package batch

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

// timeLayout is Azure's error-message time: UTC, always seven fractional digits.
const timeLayout = "2006-01-02T15:04:05.0000000Z"

// ErrorBody returns the one-line JSON body of a failed sub-operation and its HTTP status:
//
//	{"odata.error":{"code":"<code>","message":{"lang":"en-US","value":"<index>:<message>\nRequestId:<id>\nTime:<time>"}}}
//
// err is mapped with azerr.From (non-Azure errors become InternalError). The "\n" are JSON
// escapes, so the body stays on one line, as JS's error regexp needs; Python and .NET parse
// the index before the first ':'.
func ErrorBody(index int, err error, requestID string, now time.Time) ([]byte, int) {
	e := azerr.From(err)
	type message struct {
		Lang  string `json:"lang"`
		Value string `json:"value"`
	}
	type odataError struct {
		Code    string  `json:"code"`
		Message message `json:"message"`
	}
	v := struct {
		Error odataError `json:"odata.error"`
	}{odataError{
		Code: string(e.Code),
		Message: message{
			Lang: "en-US",
			Value: strconv.Itoa(index) + ":" + e.Message() +
				"\nRequestId:" + requestID + "\nTime:" + now.UTC().Format(timeLayout),
		},
	}}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep echoed values literal (\u003c is valid JSON, but needless)
	_ = enc.Encode(v)        // cannot fail: only strings
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), e.Status()
}
