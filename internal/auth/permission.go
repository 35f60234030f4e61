package auth

import "strings"

// perms is a set of SAS permission letters, one bit per letter of allLetters.
type perms uint32

// allLetters lists every permission letter an account SAS may carry, in canonical order.
// Service (table) SAS tokens and stored access policies use only r, a, u, d.
const (
	allLetters       = "rwdlacupxtfiymeo"
	tableLetters     = "raud"
	queueLetters     = "raup"
	blobLetters      = "racwdxytmeopi"
	containerLetters = "racwdxltfmeopi"
)

func permBit(c byte) perms {
	if i := strings.IndexByte(allLetters, c); i >= 0 {
		return 1 << i
	}
	return 0
}

// parsePerms parses letters (any order, repeats allowed) drawn from allowed.
func parsePerms(s, allowed string) (perms, bool) {
	var p perms
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(allowed, s[i]) < 0 {
			return 0, false
		}
		p |= permBit(s[i])
	}
	return p, true
}

// has reports whether every letter of letters is in p.
func (p perms) has(letters string) bool {
	q, _ := parsePerms(letters, allLetters)
	return p&q == q
}

// hasAny reports whether at least one letter of letters is in p.
func (p perms) hasAny(letters string) bool {
	q, _ := parsePerms(letters, allLetters)
	return p&q != 0
}

// canonicalPerms returns the letters of s in the order of letters, or false when s holds
// any other character.
func canonicalPerms(s, letters string) (string, bool) {
	p, ok := parsePerms(s, letters)
	if !ok {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(letters); i++ {
		if p&permBit(letters[i]) != 0 {
			b.WriteByte(letters[i])
		}
	}
	return b.String(), true
}
