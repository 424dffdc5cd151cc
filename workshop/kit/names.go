package kit

import (
	"regexp"
	"strings"
)

// objectKey is an object's key, namespace/name, as one word of an entry
// ("default/p-0", or "default/x:" before a colon).
var objectKey = regexp.MustCompile(`^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?/[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?$`)

// NamesOff reports whether yours differs from real only in the names of
// objects: each of your entries has real's words, except that where real
// has an object's key (namespace/name) yours has another word (a name
// without its namespace, another name). A checker then says that the
// names are off, not that the reasoning is: the right idea with a wrong
// name is a different mistake, and the page gives the names. It is false
// when the two are equal.
func NamesOff(yours, real []string) bool {
	if len(yours) != len(real) {
		return false
	}
	off := false
	for i := range real {
		if yours[i] == real[i] {
			continue
		}
		y, r := strings.Fields(yours[i]), strings.Fields(real[i])
		if len(y) != len(r) {
			return false
		}
		for j := range r {
			if y[j] == r[j] {
				continue
			}
			rw, punct := trimPunct(r[j])
			yw, ypunct := trimPunct(y[j])
			if !objectKey.MatchString(rw) || punct != ypunct || yw == "" {
				return false
			}
			off = true
		}
	}
	return off
}

// trimPunct splits a trailing ':' or ',' off w.
func trimPunct(w string) (string, string) {
	if s, ok := strings.CutSuffix(w, ":"); ok {
		return s, ":"
	}
	if s, ok := strings.CutSuffix(w, ","); ok {
		return s, ","
	}
	return w, ""
}
