package entity

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/tablo/tablo/internal/azerr"
)

// Calendar arithmetic on ticks (100 ns since the Unix epoch) without time.Time, so that
// formatting and parsing never allocate and work for every int64 (corrupt data included).

const (
	ticksPerMinute = 60 * TicksPerSecond
	ticksPerDay    = 86400 * TicksPerSecond
)

// daysFromCivil returns the day number (0 = 1970-01-01) of a proleptic Gregorian date.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// floorDiv is a/b rounded toward negative infinity, for b > 0 (every caller's divisor is a
// positive constant).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// splitTicks splits ticks into a calendar date, the time of day and the sub-second ticks.
func splitTicks(ticks int64) (y, mo, d, h, mi, s, frac int64) {
	days := floorDiv(ticks, ticksPerDay)
	rem := ticks - days*ticksPerDay
	y, mo, d = civilFromDays(days)
	sec := rem / TicksPerSecond
	frac = rem % TicksPerSecond
	return y, mo, d, sec / 3600, sec / 60 % 60, sec % 60, frac
}

// FormatDateTime renders ticks the way Azure does: ISO 8601 UTC with a Z, fractional
// seconds with trailing zeros trimmed and no '.' when the fraction is zero.
func FormatDateTime(ticks int64) string {
	var buf [40]byte
	return string(AppendDateTime(buf[:0], ticks))
}

// AppendDateTime appends FormatDateTime(ticks) to dst.
func AppendDateTime(dst []byte, ticks int64) []byte {
	y, mo, d, h, mi, s, frac := splitTicks(ticks)
	if y >= 0 { // 4 digits at least; a longer year (only corrupt data) gets all its digits
		dst = appendDigits(dst, y, 4)
	} else {
		dst = strconv.AppendInt(dst, y, 10) // only corrupt data gets here
	}
	dst = append(dst, '-')
	dst = appendDigits(dst, mo, 2)
	dst = append(dst, '-')
	dst = appendDigits(dst, d, 2)
	dst = append(dst, 'T')
	dst = appendDigits(dst, h, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, mi, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, s, 2)
	if frac != 0 {
		digits := 7
		for frac%10 == 0 {
			frac /= 10
			digits--
		}
		dst = append(dst, '.')
		dst = appendDigits(dst, frac, digits)
	}
	return append(dst, 'Z')
}

// appendEscapedColons appends the formatted DateTime s with each ':' written as "%3A", the
// form it takes inside an ETag.
func appendEscapedColons(dst, s []byte) []byte {
	for {
		before, after, found := bytes.Cut(s, []byte(":"))
		dst = append(dst, before...)
		if !found {
			return dst
		}
		dst, s = append(dst, "%3A"...), after
	}
}

// appendDigits appends the non-negative v zero-padded to width digits.
func appendDigits(dst []byte, v int64, width int) []byte {
	var buf [20]byte
	i := len(buf)
	for v > 0 || width > 0 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
		width--
	}
	return append(dst, buf[i:]...)
}

// dateTimeError says why a DateTime text was rejected.
type dateTimeError uint8

const (
	dateTimeOK dateTimeError = iota
	dateTimeSyntax
	dateTimeRange
)

// parsedDateTime is a DateTime as written, before range checking; text is what Azure's
// OutOfRangeInput message shows (MM/dd/yyyy HH:mm:ss of the value as given).
type parsedDateTime struct {
	y, mo, d, h, mi, s int64
}

func (p parsedDateTime) text() string {
	return fmt.Sprintf("%02d/%02d/%04d %02d:%02d:%02d", p.mo, p.d, p.y, p.h, p.mi, p.s)
}

// parseDateTime parses YYYY-MM-DDThh:mm:ss[.f{1,7}][Z|±hh:mm]; a missing zone means UTC.
func parseDateTime(s string) (int64, parsedDateTime, dateTimeError) {
	var p parsedDateTime
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, p, dateTimeSyntax
	}
	var ok [6]bool
	p.y, ok[0] = atoiFixed(s[0:4])
	p.mo, ok[1] = atoiFixed(s[5:7])
	p.d, ok[2] = atoiFixed(s[8:10])
	p.h, ok[3] = atoiFixed(s[11:13])
	p.mi, ok[4] = atoiFixed(s[14:16])
	p.s, ok[5] = atoiFixed(s[17:19])
	if ok != [6]bool{true, true, true, true, true, true} ||
		p.y < 1 || p.mo < 1 || p.mo > 12 || p.d < 1 || p.d > daysIn(p.y, p.mo) ||
		p.h > 23 || p.mi > 59 || p.s > 59 {
		return 0, p, dateTimeSyntax
	}
	rest := s[19:]
	var frac int64
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		digits := n - 1
		if digits < 1 || digits > 7 {
			return 0, p, dateTimeSyntax
		}
		frac, _ = atoiFixed(rest[1:n])
		for range 7 - digits {
			frac *= 10
		}
		rest = rest[n:]
	}
	var offset int64 // minutes east of UTC
	switch {
	case rest == "" || rest == "Z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, okh := atoiFixed(rest[1:3])
		om, okm := atoiFixed(rest[4:6])
		if !okh || !okm || oh > 23 || om > 59 {
			return 0, p, dateTimeSyntax
		}
		offset = oh*60 + om
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return 0, p, dateTimeSyntax
	}
	days := daysFromCivil(p.y, p.mo, p.d)
	ticks := days*ticksPerDay + (p.h*3600+p.mi*60+p.s)*TicksPerSecond + frac - offset*ticksPerMinute
	if ticks < MinTicks || ticks > MaxTicks {
		return 0, p, dateTimeRange
	}
	return ticks, p, dateTimeOK
}

// ParseDateTime parses a DateTime as accepted in request bodies (0-7 fractional digits; Z,
// no zone (UTC) or a ±hh:mm offset) and returns its ticks. Errors are InvalidInput for bad
// syntax and OutOfRangeInput outside 1601-01-01 .. 9999-12-31.
func ParseDateTime(s string) (int64, error) {
	ticks, _, status := parseDateTime(s)
	switch status {
	case dateTimeSyntax:
		return 0, azerr.New(azerr.InvalidInput)
	case dateTimeRange:
		return 0, azerr.New(azerr.OutOfRangeInput)
	}
	return ticks, nil
}

func daysIn(y, m int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// atoiFixed parses a string made only of ASCII digits (callers pass at most 7, so it cannot
// overflow).
func atoiFixed(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// ETag returns the entity ETag for a Timestamp: W/"datetime'<Timestamp with %3A>'", the
// fraction trimmed exactly like the Timestamp property so clients that rebuild the ETag from
// it (Python at nometadata) produce the same text.
func ETag(ticks int64) string {
	var buf [64]byte
	return string(AppendETag(buf[:0], ticks))
}

// AppendETag appends ETag(ticks) to dst.
func AppendETag(dst []byte, ticks int64) []byte {
	var buf [40]byte
	dst = append(dst, `W/"datetime'`...)
	dst = appendEscapedColons(dst, AppendDateTime(buf[:0], ticks))
	return append(dst, `'"`...)
}

// ParseETag extracts the Timestamp from an ETag of the form W/"datetime'…'" (':' raw or as
// %3A, any number of fractional digits as long as those past the seventh are zeros). ok is
// false for any other ETag, which can then never match an entity.
func ParseETag(s string) (ticks int64, ok bool) {
	const prefix, suffix = `W/"datetime'`, `'"`
	inner, okPrefix := strings.CutPrefix(s, prefix)
	inner, okSuffix := strings.CutSuffix(inner, suffix)
	if !okPrefix || !okSuffix || len(inner) > 128 {
		return 0, false
	}
	var buf [128]byte
	b := buf[:0]
	for i := 0; i < len(inner); i++ {
		if inner[i] == '%' && i+2 < len(inner) && inner[i+1] == '3' && (inner[i+2] == 'A' || inner[i+2] == 'a') {
			b = append(b, ':')
			i += 2
			continue
		}
		b = append(b, inner[i])
	}
	b = trimExtraFraction(b)
	ticks, _, status := parseDateTime(string(b))
	return ticks, status == dateTimeOK
}

// trimExtraFraction drops fractional digits past the seventh when they are all zeros.
func trimExtraFraction(b []byte) []byte {
	_, frac, found := bytes.Cut(b, []byte("."))
	if !found {
		return b
	}
	digits := len(frac) - len(bytes.TrimLeft(frac, "0123456789"))
	keep := min(digits, 7)
	if len(bytes.TrimLeft(frac[keep:digits], "0")) != 0 {
		return b // a digit that counts past the seventh: not a DateTime
	}
	fracStart := len(b) - len(frac)
	return append(b[:fracStart+keep], frac[digits:]...)
}

// ValidETagSyntax reports whether s is a syntactically valid entity tag, W/"…" or "…"
// (without inner quotes). The wildcard "*" is the caller's concern.
func ValidETagSyntax(s string) bool {
	s = strings.TrimPrefix(s, "W/")
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if s[i] == '"' || s[i] < 0x20 || s[i] == 0x7F {
			return false
		}
	}
	return true
}
