package query

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of the query options.
const (
	MaxSelect   = 255  // names in $select
	MaxTop      = 1000 // $top and the page size
	maxNameLen  = 255  // characters in a property name
	maxTopDigit = 9    // longer $top values cannot be in range; rejects without overflow
)

// ParseSelect parses $select: comma-separated property names, spaces around names trimmed,
// empty items ignored. nil means all properties ("", "*", or a list containing "*").
// Duplicates are dropped, keeping the first. Names must be C# identifiers of at most 255
// characters, and at most MaxSelect are allowed; otherwise InvalidInput.
func ParseSelect(s string) ([]string, error) {
	var names []string
	for item := range strings.SplitSeq(s, ",") {
		name := strings.Trim(item, " \t")
		switch {
		case name == "":
			continue
		case name == "*":
			return nil, nil
		case !validName(name):
			return nil, optionErr("The $select property name '%s' is invalid.", echo(name))
		}
		if !containsString(names, name) {
			names = append(names, name)
		}
		if len(names) > MaxSelect {
			return nil, optionErr("$select lists more than %d properties.", MaxSelect)
		}
	}
	return names, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// validName reports whether s is a C# identifier of at most 255 characters.
func validName(s string) bool {
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > maxNameLen {
		return false
	}
	for i, r := range s {
		if i == 0 && !identStart(r) || !identPart(r) {
			return false
		}
	}
	return true
}

// ParseTop parses $top: a decimal integer in 0..MaxTop. "" means unset and returns -1; 0
// asks for an empty page (Azure answers it with no entities and no continuation).
func ParseTop(s string) (int, error) {
	if s == "" {
		return -1, nil
	}
	bad := optionErr("The $top value '%s' is invalid: it must be an integer from 0 to %d.", echo(s), MaxTop)
	if len(s) > maxTopDigit {
		return 0, bad
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, bad
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > MaxTop {
		return 0, bad
	}
	return n, nil
}
