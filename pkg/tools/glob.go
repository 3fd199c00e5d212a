package tools

import (
	"path"
	"strings"
)

// globMatch reports whether the slash-separated relative path name matches
// pattern. A pattern without "/" is matched against the last element of name
// only (as fd and ripgrep do); one with "/" against the whole path, where a
// "**" element matches any number of elements. Within an element, *, ? and
// [...] work as in [path.Match], and {a,b} alternatives are expanded.
func globMatch(pattern, name string) bool {
	for _, p := range expandBraces(pattern) {
		if !strings.Contains(p, "/") {
			if ok, _ := path.Match(p, path.Base(name)); ok {
				return true
			}
			continue
		}
		if matchElems(strings.Split(strings.TrimPrefix(p, "/"), "/"), strings.Split(name, "/")) {
			return true
		}
	}
	return false
}

// validGlob reports whether every alternative of pattern is well formed.
func validGlob(pattern string) bool {
	for _, p := range expandBraces(pattern) {
		for e := range strings.SplitSeq(p, "/") {
			if _, err := path.Match(e, ""); err != nil {
				return false
			}
		}
	}
	return true
}

func matchElems(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := range name {
				if matchElems(pat, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// expandBraces expands the first {a,b,...} group of p, recursively. An
// unbalanced brace is kept literally.
func expandBraces(p string) []string {
	open := strings.IndexByte(p, '{')
	if open < 0 {
		return []string{p}
	}
	depth, end := 0, -1
	var cuts []int
	for i := open; i < len(p) && end < 0; i++ {
		switch p[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				end = i
			}
		case ',':
			if depth == 1 {
				cuts = append(cuts, i)
			}
		}
	}
	if end < 0 {
		return []string{p}
	}
	var out []string
	prev := open + 1
	for _, c := range append(cuts, end) {
		for _, rest := range expandBraces(p[end+1:]) {
			out = append(out, expandBraces(p[:open]+p[prev:c]+rest)...)
		}
		prev = c + 1
	}
	return out
}
