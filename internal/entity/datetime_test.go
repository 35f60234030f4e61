package entity

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tablo/tablo/internal/azerr"
)

func TestFormatDateTime(t *testing.T) {
	tests := []struct {
		in   string // parsed with time.RFC3339Nano
		want string
	}{
		{"2020-09-17T00:00:00.99999Z", "2020-09-17T00:00:00.99999Z"},
		{"2021-01-01T01:02:03.569405Z", "2021-01-01T01:02:03.569405Z"},
		{"2008-07-10T00:00:00Z", "2008-07-10T00:00:00Z"},
		{"2024-05-01T10:20:30.1234567Z", "2024-05-01T10:20:30.1234567Z"},
		{"2024-05-01T10:20:30.1000000Z", "2024-05-01T10:20:30.1Z"},
		{"1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z"},
		{"1969-12-31T23:59:59.9999999Z", "1969-12-31T23:59:59.9999999Z"},
		{"1601-01-01T00:00:00Z", "1601-01-01T00:00:00Z"},
		{"9999-12-31T23:59:59.9999999Z", "9999-12-31T23:59:59.9999999Z"},
		{"2000-02-29T12:00:00.0000001Z", "2000-02-29T12:00:00.0000001Z"},
	}
	for _, tc := range tests {
		tm, err := time.Parse(time.RFC3339Nano, tc.in)
		if err != nil {
			t.Fatal(err)
		}
		ticks := Ticks(tm)
		if got := FormatDateTime(ticks); got != tc.want {
			t.Errorf("%s: got %s want %s", tc.in, got, tc.want)
		}
		back, err := ParseDateTime(tc.want)
		if err != nil || back != ticks {
			t.Errorf("%s: parse back %d, %v; want %d", tc.want, back, err, ticks)
		}
	}
	if FormatDateTime(MinTicks) != "1601-01-01T00:00:00Z" || FormatDateTime(MaxTicks) != "9999-12-31T23:59:59.9999999Z" {
		t.Error("range constants do not match their dates")
	}
	// Any int64 formats without panicking (only corrupt data is outside the range).
	for _, ticks := range []int64{math.MinInt64, math.MaxInt64, MinTicks - 1, MaxTicks + 1} {
		_ = FormatDateTime(ticks)
		_ = ETag(ticks)
	}
}

// TestDateTimeAgainstTime compares calendar arithmetic with package time over the range.
func TestDateTimeAgainstTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		ticks := MinTicks + rng.Int64N(MaxTicks-MinTicks+1)
		want := TimeOf(ticks).Format("2006-01-02T15:04:05.9999999Z")
		if got := FormatDateTime(ticks); got != want {
			t.Fatalf("%d: got %s want %s", ticks, got, want)
		}
		back, err := ParseDateTime(want)
		if err != nil || back != ticks {
			t.Fatalf("%s: parse back %d, %v; want %d", want, back, err, ticks)
		}
	}
}

func TestParseDateTimeErrors(t *testing.T) {
	tests := map[string]string{
		"":                                  azerrInvalid,
		"2024-01-02":                        azerrInvalid,
		"2024-01-02 03:04:05Z":              azerrInvalid,
		"2024-13-02T03:04:05Z":              azerrInvalid,
		"2024-00-02T03:04:05Z":              azerrInvalid,
		"2024-04-31T03:04:05Z":              azerrInvalid,
		"2024-01-02T03:60:05Z":              azerrInvalid,
		"2024-01-02T03:04:60Z":              azerrInvalid,
		"2024-01-02T03:04:05+24:00":         azerrInvalid,
		"2024-01-02T03:04:05+01:60":         azerrInvalid,
		"2024-01-02T03:04:05ZZ":             azerrInvalid,
		"+2024-01-02T03:04:05Z":             azerrInvalid,
		"2024-01-02T03:04:05.1.2Z":          azerrInvalid,
		"2024-01-02T03:04:05.123456789Z":    azerrInvalid,
		"1600-12-31T23:59:59Z":              azerrRange,
		"0001-01-01T00:00:00Z":              azerrRange,
		"9999-12-31T23:59:59.9999999-00:01": azerrRange,
	}
	for in, want := range tests {
		_, err := ParseDateTime(in)
		if got := string(azerr.From(err).Code); err == nil || got != want {
			t.Errorf("%q: got %v want %s", in, err, want)
		}
	}
}

const (
	azerrInvalid = string(azerr.InvalidInput)
	azerrRange   = string(azerr.OutOfRangeInput)
)

func TestETag(t *testing.T) {
	ticks := mustTicks(t, "2024-05-01T10:20:30.1234567Z")
	if got := ETag(ticks); got != `W/"datetime'2024-05-01T10%3A20%3A30.1234567Z'"` {
		t.Error(got)
	}
	trimmed := mustTicks(t, "2021-06-09T01:17:12.93486Z")
	if got := ETag(trimmed); got != `W/"datetime'2021-06-09T01%3A17%3A12.93486Z'"` {
		t.Error(got)
	}
	accept := map[string]int64{
		ETag(ticks): ticks,
		`W/"datetime'2024-05-01T10:20:30.1234567Z'"`:          ticks,
		`W/"datetime'2024-05-01T10%3a20%3a30.1234567Z'"`:      ticks,
		`W/"datetime'2021-06-09T01%3A17%3A12.9348600Z'"`:      trimmed, // 7-digit form (Azurite)
		`W/"datetime'2021-06-09T01%3A17%3A12.934860000000Z'"`: trimmed,
		`W/"datetime'2021-06-09T01%3A17%3A12.93486'"`:         trimmed,
	}
	for in, want := range accept {
		got, ok := ParseETag(in)
		if !ok || got != want {
			t.Errorf("%s: got %d,%v want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"", "*", `"x"`, `W/"0x5B168C7B6E589D2"`, `W/"datetime'2024-05-01T10%3A20%3A30.12345678Z'"`,
		`W/"datetime'2024-05-01T10%3A20%3A30Z"`, `"datetime'2024-05-01T10%3A20%3A30Z'"`,
		`W/"datetime'0001-01-01T00%3A00%3A00Z'"`, `W/"datetime'` + string(make([]byte, 200)) + `'"`,
	} {
		if _, ok := ParseETag(in); ok {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestValidETagSyntax(t *testing.T) {
	for in, want := range map[string]bool{
		`W/"datetime'2024-05-01T10%3A20%3A30Z'"`: true,
		`"abc"`:                                  true,
		`""`:                                     true,
		`W/""`:                                   true,
		`*`:                                      false,
		``:                                       false,
		`abc`:                                    false,
		`"abc`:                                   false,
		`W/abc`:                                  false,
		`w/"abc"`:                                false,
		`"a"b"`:                                  false,
		`"`:                                      false,
	} {
		if got := ValidETagSyntax(in); got != want {
			t.Errorf("%q: got %v", in, got)
		}
	}
}

// TestDateTimeEdges: each bound of the DateTime syntax at its edge, compared with package time
// where it has an answer.
func TestDateTimeEdges(t *testing.T) {
	for _, in := range []string{
		"2024-01-02T03:04:05",               // no zone: UTC, 19 characters exactly
		"2024-01-02T03:04:05+23:59",         // largest offsets
		"2024-01-02T03:04:05-23:59",         //
		"2024-01-02T03:04:05+23:00",         //
		"2024-01-02T03:04:05-00:59",         //
		"2000-02-29T00:00:00Z",              // leap day of a year divisible by 400
		"1904-02-29T00:00:00Z",              // and by 4
		"2024-01-02T03:04:05.12345670Z",     // an eighth digit, zero, is dropped (ETags only)
		"1969-12-31T00:00:00Z",              // day boundaries before the epoch
		"1600-12-31T23:00:00.0000001-01:00", // the first tick, written with an offset
	} {
		want, err := time.Parse("2006-01-02T15:04:05.999999999Z07:00", in)
		if len(in) == 19 {
			want, err = time.Parse("2006-01-02T15:04:05", in)
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseDateTime(in)
		if len(in) > 28 && in[19] == '.' && in[27] == '0' { // eight fraction digits
			if err == nil {
				t.Errorf("%s: eight fraction digits accepted in a body", in)
			}
			if got, ok := ParseETag(`W/"datetime'` + in + `'"`); !ok || got != Ticks(want) {
				t.Errorf("ETag of %s: %d, %v; want %d", in, got, ok, Ticks(want))
			}
			continue
		}
		if err != nil || got != Ticks(want) {
			t.Errorf("%s: %d, %v; want %d (%s)", in, got, err, Ticks(want), FormatDateTime(Ticks(want)))
		}
	}
	for _, in := range []string{
		"1900-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2023-02-29T00:00:00Z", // not leap years
		"2024-01-02T03:04:0", // 18 characters
		"2024-01-02T03:04:05+24:00", "2024-01-02T03:04:05+00:60", "2024-01-02T03:04:05+1:00",
	} {
		if _, err := ParseDateTime(in); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
	// Only corrupt data has years outside 0..9999; they still format, unpadded.
	for year, want := range map[int]string{0: "0000-01-01T00:00:00Z", 10000: "10000-01-01T00:00:00Z", -1: "-1-01-01T00:00:00Z"} {
		ticks := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC).Unix() * TicksPerSecond
		if got := FormatDateTime(ticks); got != want {
			t.Errorf("year %d: %s, want %s", year, got, want)
		}
	}
}

// TestETagEdges: the 128-character bound of an ETag's inner text, "%3" cut short, and ETags
// too short to hold the prefix and suffix.
func TestETagEdges(t *testing.T) {
	const inner7 = "2024-05-01T10%3A20%3A30.1234567"
	ticks := mustTicks(t, "2024-05-01T10:20:30.1234567Z")
	at128 := inner7 + strings.Repeat("0", 128-len(inner7)-1) + "Z"
	if got, ok := ParseETag(`W/"datetime'` + at128 + `'"`); !ok || got != ticks {
		t.Errorf("128 characters inside: %d, %v; want %d", got, ok, ticks)
	}
	if _, ok := ParseETag(`W/"datetime'` + "0" + at128[1:] + "0" + `'"`); ok {
		t.Error("129 characters inside accepted")
	}
	for _, in := range []string{
		`W/"datetime'2024-05-01T10%3A20%3A30Z%3'"`, `W/"datetime'2024-05-01T10%3A20%3A30Z%'"`,
		`W/"datetime'2024-05-01T10%3A20%3A30%3`, `W/"datetim`, `W/"datetime`, `W/"datetime'`,
		`W/"datetime''"`, `W/"datetime'"`,
	} {
		if _, ok := ParseETag(in); ok {
			t.Errorf("%q accepted", in)
		}
	}
	for in, want := range map[string]bool{`"a b"`: true, `"a` + "\x1f" + `b"`: false, `"a` + "\x7f" + `b"`: false, `"~"`: true, `W/`: false, `W/"`: false} {
		if got := ValidETagSyntax(in); got != want {
			t.Errorf("ValidETagSyntax(%q) = %v", in, got)
		}
	}
}
