package auth

import (
	"testing"
	"time"
)

func TestParseISOTime(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	good := []struct {
		in   string
		want time.Time
	}{
		{"2025-01-01", utc(2025, 1, 1, 0, 0, 0, 0)},
		{"2025-01-01T10:20Z", utc(2025, 1, 1, 10, 20, 0, 0)},
		{"2025-01-01T10:20", utc(2025, 1, 1, 10, 20, 0, 0)},
		{"2025-01-01T10:20:30Z", utc(2025, 1, 1, 10, 20, 30, 0)},
		{"2025-01-01T10:20:30.5Z", utc(2025, 1, 1, 10, 20, 30, 500000000)},
		{"2025-01-01T10:20:30.1234567Z", utc(2025, 1, 1, 10, 20, 30, 123456700)},
		{"2025-01-01T10:20:30.123456789Z", utc(2025, 1, 1, 10, 20, 30, 123456700)},
		{"2025-01-01T10:20:30+01:30", utc(2025, 1, 1, 8, 50, 30, 0)},
		{"2025-01-01T00:00-02:00", utc(2025, 1, 1, 2, 0, 0, 0)},
		{"2024-02-29T23:59:59Z", utc(2024, 2, 29, 23, 59, 59, 0)},
	}
	for _, tt := range good {
		got, err := parseISOTime(tt.in)
		if err != nil || !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("%q: got %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	bad := []string{"", "2025", "2025-01", "2025-1-01", "2025-01-01T", "2025-01-01T10", "2025-01-01T10:2Z",
		"2025-13-01", "2025-00-01", "2025-02-30", "2023-02-29", "2025-01-01T24:00Z", "2025-01-01T10:60Z",
		"2025-01-01T10:20:60Z", "2025-01-01T10:20:30.Z", "2025-01-01T10:20:30.1234567890Z",
		"2025-01-01T10:20:30ZZ", "2025-01-01T10:20:30+1:00", "2025-01-01T10:20:30+24:00", "2025-01-01Z",
		"2025-01-01 10:20:30Z", "0000-01-01", "9999-12-31T23:00-02:00", "２０２５-01-01", "2025-01-01t10:20z"}
	for _, in := range bad {
		if got, err := parseISOTime(in); err == nil {
			t.Errorf("%q: accepted as %v", in, got)
		}
	}
}

func TestFormatISOTime(t *testing.T) {
	tm := time.Date(2021, 7, 8, 9, 10, 9, 0, time.FixedZone("x", 3600))
	if got := formatISOTime(tm); got != "2021-07-08T08:10:09.0000000Z" {
		t.Fatal(got)
	}
}
