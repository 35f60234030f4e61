package query

import (
	"encoding/hex"
	"time"

	"github.com/tablo/tablo/internal/entity"
)

// parseDateTime parses the body of datetime'…':
//
//	yyyy-mm-ddThh:mm[:ss[.f{1,7}]][Z | ±hh:mm]
//
// No zone means UTC. The result is in 100 ns ticks since the Unix epoch; years 0001..9999
// are accepted (filters commonly use DateTime.MinValue, which is below Azure's storage range).
func parseDateTime(s string) (int64, bool) {
	p := 0
	num := func(n int) (int, bool) {
		if p+n > len(s) {
			return 0, false
		}
		v := 0
		for _, c := range []byte(s[p : p+n]) {
			if !isDigit(c) {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		p += n
		return v, true
	}
	sep := func(c byte) bool {
		if p < len(s) && s[p] == c {
			p++
			return true
		}
		return false
	}
	year, ok1 := num(4)
	ok2 := sep('-')
	month, ok3 := num(2)
	ok4 := sep('-')
	day, ok5 := num(2)
	ok6 := sep('T') || sep('t')
	hour, ok7 := num(2)
	ok8 := sep(':')
	minute, ok9 := num(2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && ok8 && ok9) {
		return 0, false
	}
	sec, frac := 0, int64(0)
	if sep(':') {
		var ok bool
		if sec, ok = num(2); !ok {
			return 0, false
		}
		if sep('.') {
			digits := 0
			for p < len(s) && isDigit(s[p]) {
				if digits == 7 {
					return 0, false
				}
				frac = frac*10 + int64(s[p]-'0')
				digits++
				p++
			}
			if digits == 0 {
				return 0, false
			}
			for ; digits < 7; digits++ {
				frac *= 10
			}
		}
	}
	offset := 0 // seconds east of UTC
	switch {
	case p == len(s):
	case sep('Z') || sep('z'):
	case s[p] == '+' || s[p] == '-':
		sign := 1
		if s[p] == '-' {
			sign = -1
		}
		p++
		oh, ok1 := num(2)
		ok2 := sep(':')
		om, ok3 := num(2)
		if !(ok1 && ok2 && ok3) || oh > 14 || om > 59 {
			return 0, false
		}
		offset = sign * (oh*3600 + om*60)
	}
	if p != len(s) || year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return 0, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC)
	if t.Day() != day { // time.Date normalises 2021-02-30 to March
		return 0, false
	}
	ticks := (t.Unix()-int64(offset))*entity.TicksPerSecond + frac
	if ticks < minLiteralTicks || ticks > maxLiteralTicks {
		return 0, false // an offset pushed the instant outside years 0001..9999
	}
	return ticks, true
}

// The instants a DateTime literal may denote: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.9999999Z.
const (
	minLiteralTicks = -62135596800 * entity.TicksPerSecond
	maxLiteralTicks = entity.MaxTicks
)

// parseGuid validates hex8-hex4-hex4-hex4-hex12 and returns it in canonical lower case.
func parseGuid(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	var b [36]byte
	for i := range 36 {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", false
			}
		default:
			switch {
			case isDigit(c), c >= 'a' && c <= 'f':
			case c >= 'A' && c <= 'F':
				c += 'a' - 'A'
			default:
				return "", false
			}
		}
		b[i] = c
	}
	return string(b[:]), true
}

// parseHex decodes an even number of hex digits (either case).
func parseHex(s string) ([]byte, bool) {
	if len(s)%2 != 0 {
		return nil, false
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, false
	}
	return b, true
}
