package auth

import (
	"errors"
	"time"
)

var errBadTime = errors.New("auth: not an ISO 8601 UTC time")

// parseISOTime parses the ISO 8601 forms Azure accepts for SAS and access-policy times:
//
//	YYYY-MM-DD
//	YYYY-MM-DDThh:mm[TZD]
//	YYYY-MM-DDThh:mm:ss[TZD]
//	YYYY-MM-DDThh:mm:ss.f…[TZD]   (1 to 9 fraction digits, kept to 100 ns)
//
// where TZD is "Z", "+hh:mm" or "-hh:mm"; a missing TZD means UTC. The result is in UTC,
// in years 1 to 9999.
func parseISOTime(s string) (time.Time, error) {
	p := isoParser{s: s, ok: true}
	year := p.digits(4)
	p.lit('-')
	month := p.digits(2)
	p.lit('-')
	day := p.digits(2)
	var hour, minute, sec, nsec int
	if p.ok && p.more() {
		p.lit('T')
		hour = p.digits(2)
		p.lit(':')
		minute = p.digits(2)
		if p.ok && p.peek(':') {
			p.lit(':')
			sec = p.digits(2)
			if p.ok && p.peek('.') {
				p.lit('.')
				nsec = p.fraction()
			}
		}
	}
	offset := p.zone()
	if !p.ok || p.more() {
		return time.Time{}, errBadTime
	}
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, errBadTime
	}
	// Azure keeps 100 ns ticks; dropping finer digits makes parse → format → parse stable.
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec/100*100, time.UTC)
	if t.Day() != day { // e.g. February 30 normalised into March
		return time.Time{}, errBadTime
	}
	t = t.Add(-offset)
	if t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, errBadTime
	}
	return t, nil
}

// formatISOTime renders t the way Azure returns access-policy times: UTC, 7 fraction digits.
func formatISOTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.0000000Z")
}

// isoParser is a tiny cursor; after the first mismatch ok stays false and every step is a no-op.
type isoParser struct {
	s  string
	i  int
	ok bool
}

func (p *isoParser) more() bool { return p.i < len(p.s) }

func (p *isoParser) peek(c byte) bool { return p.i < len(p.s) && p.s[p.i] == c }

func (p *isoParser) lit(c byte) {
	if !p.ok || !p.peek(c) {
		p.ok = false
		return
	}
	p.i++
}

func (p *isoParser) digits(n int) int {
	if !p.ok || p.i+n > len(p.s) {
		p.ok = false
		return 0
	}
	v := 0
	for _, c := range []byte(p.s[p.i : p.i+n]) {
		if c < '0' || c > '9' {
			p.ok = false
			return 0
		}
		v = v*10 + int(c-'0')
	}
	p.i += n
	return v
}

// fraction reads 1–9 digits as nanoseconds.
func (p *isoParser) fraction() int {
	if !p.ok {
		return 0
	}
	v, n := 0, 0
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		if n == 9 {
			p.ok = false
			return 0
		}
		v = v*10 + int(p.s[p.i]-'0')
		n++
		p.i++
	}
	if n == 0 {
		p.ok = false
		return 0
	}
	for ; n < 9; n++ {
		v *= 10
	}
	return v
}

// zone reads an optional TZD and returns its offset east of UTC.
func (p *isoParser) zone() time.Duration {
	if !p.ok || !p.more() {
		return 0
	}
	switch p.s[p.i] {
	case 'Z':
		p.i++
		return 0
	case '+', '-':
		sign := time.Duration(1)
		if p.s[p.i] == '-' {
			sign = -1
		}
		p.i++
		h := p.digits(2)
		p.lit(':')
		m := p.digits(2)
		if h > 23 || m > 59 {
			p.ok = false
		}
		return sign * (time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
	}
	p.ok = false
	return 0
}
