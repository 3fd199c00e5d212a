package resources

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits of a stored resource. Names and descriptions follow the Agent
// Skills spec pi checks (64 and 1024 characters); the size bounds what one
// resource adds to a context.
const (
	MaxNameLength        = 64
	MaxDescriptionLength = 1024
	MaxSize              = 128 << 10
)

// Skill is one parsed SKILL.md.
type Skill struct {
	Name        string
	Description string
	// DisableModelInvocation (front matter disable-model-invocation: true)
	// keeps the skill out of the system prompt's list; it still runs by
	// the skill command.
	DisableModelInvocation bool
	// Body is the text after the front matter, trimmed.
	Body string
}

// ValidateSkillName checks name by pi's rules for skills: 1-64 characters
// of a-z 0-9 and -, not starting or ending with -, no "--".
func ValidateSkillName(name string) error {
	if p := skillNameProblem(name); p != "" {
		return &Error{Kind: "skill", Name: name, Reason: "name " + p}
	}
	return nil
}

func skillNameProblem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > MaxNameLength:
		return fmt.Sprintf("exceeds %d characters (%d)", MaxNameLength, len(name))
	case strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789-") != "":
		return "contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-"):
		return "must not start or end with a hyphen"
	case strings.Contains(name, "--"):
		return "must not contain consecutive hyphens"
	}
	return ""
}

// ParseSkill parses the SKILL.md text of skill name. It refuses what pi
// warns about or skips: a bad name, a front matter name that differs from
// name (pi: the parent directory's name), a missing or too long
// description, YAML that does not parse, text over [MaxSize] or not UTF-8.
func ParseSkill(name, text string) (Skill, error) {
	if err := ValidateSkillName(name); err != nil {
		return Skill{}, err
	}
	if err := checkText("skill", name, text); err != nil {
		return Skill{}, err
	}
	y, body, has := frontMatter(text)
	if !has {
		return Skill{}, &Error{Kind: "skill", Name: name, Line: 1, Reason: "no front matter: SKILL.md must start with a --- line, then name and description, then ---"}
	}
	fm, err := parseFrontMatter("skill", name, y)
	if err != nil {
		return Skill{}, err
	}
	fmName, err := stringField("skill", name, fm, "name")
	if err != nil {
		return Skill{}, err
	}
	if fmName != "" && fmName != name {
		return Skill{}, &Error{Kind: "skill", Name: name, Line: 2, Reason: fmt.Sprintf("front matter name %q does not match the skill's name %q", fmName, name)}
	}
	desc, err := stringField("skill", name, fm, "description")
	if err != nil {
		return Skill{}, err
	}
	switch {
	case strings.TrimSpace(desc) == "":
		return Skill{}, &Error{Kind: "skill", Name: name, Line: 2, Reason: "description is required"}
	case utf8.RuneCountInString(desc) > MaxDescriptionLength:
		return Skill{}, &Error{Kind: "skill", Name: name, Line: 2, Reason: fmt.Sprintf("description exceeds %d characters (%d)", MaxDescriptionLength, utf8.RuneCountInString(desc))}
	}
	disable, _ := fm["disable-model-invocation"].(bool)
	return Skill{Name: name, Description: desc, DisableModelInvocation: disable, Body: body}, nil
}

func checkText(kind, name, text string) error {
	if len(text) > MaxSize {
		return &Error{Kind: kind, Name: name, Reason: fmt.Sprintf("is %d bytes, over the limit of %d", len(text), MaxSize)}
	}
	if !utf8.ValidString(text) {
		line := 1 + strings.Count(text[:firstInvalid(text)], "\n")
		return &Error{Kind: kind, Name: name, Line: line, Reason: "is not valid UTF-8"}
	}
	if i := strings.IndexByte(text, 0); i >= 0 {
		return &Error{Kind: kind, Name: name, Line: 1 + strings.Count(text[:i], "\n"), Reason: "contains a NUL byte"}
	}
	return nil
}

func firstInvalid(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return i
			}
		}
	}
	return len(s)
}

// Expand is the user message pi's /skill:NAME ARGS becomes: the skill's
// body in a <skill> block naming its location and base directory, then
// the arguments (trimmed) after a blank line when there are any.
func (s Skill) Expand(location, baseDir, args string) string {
	block := "<skill name=\"" + s.Name + "\" location=\"" + location + "\">\nReferences are relative to " + baseDir + ".\n\n" + s.Body + "\n</skill>"
	if a := strings.TrimSpace(args); a != "" {
		return block + "\n\n" + a
	}
	return block
}
