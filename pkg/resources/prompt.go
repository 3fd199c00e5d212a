package resources

import "strings"

// Listed is one skill as the system prompt lists it: where the model can
// read it.
type Listed struct {
	Name, Description, Location string
	DisableModelInvocation      bool
}

// FormatSkills renders skills as pi's formatSkillsForPrompt does: "" when
// none is visible (disable-model-invocation hides one), else two blank
// lines, pi's three lines of instructions and an <available_skills> XML
// block, each value XML-escaped.
func FormatSkills(skills []Listed) string {
	var b strings.Builder
	for _, s := range skills {
		if s.DisableModelInvocation {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n\nThe following skills provide specialized instructions for specific tasks.\n" +
				"Use the read tool to load a skill's file when the task matches its description.\n" +
				"When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.\n" +
				"\n<available_skills>")
		}
		b.WriteString("\n  <skill>\n    <name>" + escapeXML(s.Name) + "</name>\n    <description>" +
			escapeXML(s.Description) + "</description>\n    <location>" + escapeXML(s.Location) + "</location>\n  </skill>")
	}
	if b.Len() == 0 {
		return ""
	}
	b.WriteString("\n</available_skills>")
	return b.String()
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func escapeXML(s string) string { return xmlEscaper.Replace(s) }

// SystemPrompt is what [Build] assembles.
type SystemPrompt struct {
	// Base is the session's system prompt (pi's custom prompt).
	Base string
	// Append is the tenant's or session's additions (pi's
	// appendSystemPrompt), after a blank line.
	Append string
	// Skills are listed when Tools has read (pi lists them only then).
	Skills []Listed
	// Tools are the session's active tools.
	Tools []string
	// Date (YYYY-MM-DD) and Cwd close the prompt as pi's do.
	Date, Cwd string
}

// Build renders p as pi's buildSystemPrompt renders a custom prompt: the
// base, the additions, the skills when the read tool is active, then the
// current date and working directory lines.
func Build(p SystemPrompt) string {
	var b strings.Builder
	b.WriteString(p.Base)
	if p.Append != "" {
		b.WriteString("\n\n" + p.Append)
	}
	if ListsSkills(p.Tools) {
		b.WriteString(FormatSkills(p.Skills))
	}
	b.WriteString("\nCurrent date: " + p.Date)
	b.WriteString("\nCurrent working directory: " + strings.ReplaceAll(p.Cwd, `\`, "/"))
	return b.String()
}

// The names of a tenant's system prompt parts (KindSystem).
const (
	SystemBase   = "base"   // pi's SYSTEM.md
	SystemAppend = "append" // pi's APPEND_SYSTEM.md
)

// ValidateSystemName checks the name of a system prompt part: base or
// append.
func ValidateSystemName(name string) error {
	if name != SystemBase && name != SystemAppend {
		return &Error{Kind: "system", Name: name, Reason: "name must be base (the base prompt of sessions that give none) or append (added after the base)"}
	}
	return nil
}

// ListsSkills reports whether a prompt built for the active tools lists
// the skills: only with the read tool, which loads them (pi).
func ListsSkills(tools []string) bool { return hasTool(tools, "read") }

func hasTool(tools []string, name string) bool {
	for _, t := range tools {
		if t == name {
			return true
		}
	}
	return false
}
