package tools

import (
	"bytes"
	"regexp/syntax"
	"strings"
)

// foldLiteral returns the lowercased literal when expr is nothing but an
// ASCII literal matched case-insensitively (the common "ignoreCase" search),
// else "". Such a search can rule a file out far faster than the regexp
// engine, whose case folding disables its literal scans.
func foldLiteral(expr string) string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return ""
	}
	re = re.Simplify()
	if re.Op != syntax.OpLiteral || re.Flags&syntax.FoldCase == 0 {
		return ""
	}
	lit := string(re.Rune)
	for i := range len(lit) {
		if lit[i] >= 0x80 {
			return ""
		}
	}
	return strings.ToLower(lit)
}

// Non-ASCII runes that fold to ASCII letters: KELVIN SIGN (k) and LATIN
// SMALL LETTER LONG S (s).
var (
	kelvin = []byte("\u212A")
	longS  = []byte("\u017F")
)

// mayContainFold reports whether data may contain lit (lowercase ASCII)
// case-insensitively. It never answers false when the regexp would match.
func (g *grepper) mayContainFold(data []byte, lit string) bool {
	if bytes.Contains(data, kelvin) || bytes.Contains(data, longS) {
		return true
	}
	g.lower = append(g.lower[:0], data...)
	for i, c := range g.lower {
		if 'A' <= c && c <= 'Z' {
			g.lower[i] = c + 'a' - 'A'
		}
	}
	return bytes.Contains(g.lower, []byte(lit))
}
