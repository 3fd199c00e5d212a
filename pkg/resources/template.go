package resources

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Template is one parsed prompt template.
type Template struct {
	Name string
	// Description is the front matter's description, else the first
	// non-empty line of the body cut to 60 characters with "..." (pi's rule).
	Description string
	// Body is the text after the front matter, trimmed; without front
	// matter, the whole text.
	Body string
}

// ValidateTemplateName checks name: 1-64 characters of A-Z a-z 0-9 _ - .
// (pi takes the file name without .md; Cairn keeps names that are safe as
// storage keys and command words).
func ValidateTemplateName(name string) error {
	switch {
	case name == "":
		return &Error{Kind: "template", Name: name, Reason: "name is empty"}
	case len(name) > MaxNameLength:
		return &Error{Kind: "template", Name: name, Reason: fmt.Sprintf("name exceeds %d characters (%d)", MaxNameLength, len(name))}
	case strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "":
		return &Error{Kind: "template", Name: name, Reason: "name contains invalid characters (A-Z a-z 0-9 _ - only)"}
	}
	return nil
}

// ParseTemplate parses the markdown text of template name.
func ParseTemplate(name, text string) (Template, error) {
	if err := ValidateTemplateName(name); err != nil {
		return Template{}, err
	}
	if err := checkText("template", name, text); err != nil {
		return Template{}, err
	}
	y, body, _ := frontMatter(text)
	fm, err := parseFrontMatter("template", name, y)
	if err != nil {
		return Template{}, err
	}
	desc, err := stringField("template", name, fm, "description")
	if err != nil {
		return Template{}, err
	}
	if desc == "" {
		for _, line := range strings.Split(body, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			desc = line
			if utf8.RuneCountInString(line) > 60 {
				desc = string([]rune(line)[:60]) + "..."
			}
			break
		}
	}
	return Template{Name: name, Description: desc, Body: body}, nil
}

// Expand substitutes args into the template's body ([SubstituteArgs]).
func (t Template) Expand(args []string) string { return SubstituteArgs(t.Body, args) }

// ParseCommandArgs splits an argument string as pi does: on spaces and
// tabs, with '...' and "..." grouping (the quotes removed, no escapes).
func ParseCommandArgs(s string) []string {
	var args []string
	var cur strings.Builder
	var quote rune
	for _, c := range s {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteRune(c)
			}
		case c == '"' || c == '\'':
			quote = c
		case c == ' ' || c == '\t':
			if cur.Len() > 0 {
				args = append(args, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(c)
		}
	}
	if cur.Len() > 0 {
		args = append(args, cur.String())
	}
	return args
}

var (
	positional = regexp.MustCompile(`\$(\d+)`)
	slice      = regexp.MustCompile(`\$\{@:(\d+)(?::(\d+))?\}`)
)

// SubstituteArgs replaces pi's placeholders in content, in pi's order, each
// pass over the result of the one before: $1, $2... (a missing argument
// and $0 give ""); ${@:N} and ${@:N:L} (args from the Nth, 1-based, N=0
// read as 1; L of them); $ARGUMENTS; $@ (all args joined by a space).
func SubstituteArgs(content string, args []string) string {
	out := positional.ReplaceAllStringFunc(content, func(m string) string {
		i, err := strconv.Atoi(m[1:])
		if err != nil || i < 1 || i > len(args) {
			return ""
		}
		return args[i-1]
	})
	out = slice.ReplaceAllStringFunc(out, func(m string) string {
		sub := slice.FindStringSubmatch(m)
		start, err := strconv.Atoi(sub[1])
		if err != nil || start > len(args) {
			return ""
		}
		start = max(start-1, 0)
		end := len(args)
		if sub[2] != "" {
			l, err := strconv.Atoi(sub[2])
			if err == nil && start+l < end {
				end = start + l
			}
		}
		return strings.Join(args[start:end], " ")
	})
	all := strings.Join(args, " ")
	out = strings.ReplaceAll(out, "$ARGUMENTS", all)
	return strings.ReplaceAll(out, "$@", all)
}
