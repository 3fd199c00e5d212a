package resources

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// testdata/pi_args.json holds pi's own test cases of substituteArgs and
// parseCommandArgs (packages/coding-agent/test/prompt-templates.test.ts),
// evaluated by pi's test file with the functions replaced by recorders.
func TestPiArgumentCases(t *testing.T) {
	var cases []struct {
		Name, Fn, Template, Input string
		// Args is a list, or {"fn": "parse", "input": ...}: pi's
		// integration cases parse the arguments first.
		Args json.RawMessage
		Want json.RawMessage
	}
	readJSON(t, "testdata/pi_args.json", &cases)
	if len(cases) < 80 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		switch c.Fn {
		case "substitute":
			var want string
			if err := json.Unmarshal(c.Want, &want); err != nil {
				t.Fatal(err)
			}
			var args []string
			if json.Unmarshal(c.Args, &args) != nil {
				var parse struct{ Input string }
				if err := json.Unmarshal(c.Args, &parse); err != nil {
					t.Fatal(err)
				}
				args = ParseCommandArgs(parse.Input)
			}
			if got := SubstituteArgs(c.Template, args); got != want {
				t.Errorf("%s: SubstituteArgs(%q, %q) = %q, want %q", c.Name, c.Template, args, got, want)
			}
		case "parse":
			var want []string
			if err := json.Unmarshal(c.Want, &want); err != nil {
				t.Fatal(err)
			}
			if got := ParseCommandArgs(c.Input); !slices.Equal(got, want) {
				t.Errorf("%s: ParseCommandArgs(%q) = %q, want %q", c.Name, c.Input, got, want)
			}
		default:
			t.Fatalf("case %q: unknown fn %q", c.Name, c.Fn)
		}
	}
}

// testdata/pi_skills_prompt.json: pi's formatSkillsForPrompt run on these
// skills.
func TestPiSkillsRendering(t *testing.T) {
	var cases []struct {
		Skills []struct {
			Name, Description, Location string
			DisableModelInvocation      bool
		}
		Want string
	}
	readJSON(t, "testdata/pi_skills_prompt.json", &cases)
	for i, c := range cases {
		var in []Listed
		for _, s := range c.Skills {
			in = append(in, Listed{Name: s.Name, Description: s.Description, Location: s.Location, DisableModelInvocation: s.DisableModelInvocation})
		}
		if got := FormatSkills(in); got != c.Want {
			t.Errorf("case %d:\n got %q\nwant %q", i, got, c.Want)
		}
	}
}

func TestBuildListsSkillsOnlyWithRead(t *testing.T) {
	skills := []Listed{{Name: "pdf", Description: "Work with PDFs", Location: "/skills/pdf/SKILL.md"}}
	p := SystemPrompt{Base: "You help.", Append: "Tenant rule.", Skills: skills, Tools: []string{"read", "bash"}, Date: "2026-12-01", Cwd: `C:\w`}
	got := Build(p)
	want := "You help.\n\nTenant rule." + FormatSkills(skills) + "\nCurrent date: 2026-12-01\nCurrent working directory: C:/w"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	p.Tools = []string{"bash"}
	if got := Build(p); strings.Contains(got, "available_skills") {
		t.Fatalf("skills listed without the read tool: %q", got)
	}
}

// The skill fixtures of pi's tests (test/fixtures/skills), as Cairn stores
// them: pi's warnings are refusals here.
func TestParseSkillLikePiFixtures(t *testing.T) {
	cases := []struct {
		dir, text, wantErr string
	}{
		{"valid-skill", "---\nname: valid-skill\ndescription: A valid skill for testing purposes.\n---\n\n# Valid Skill\n\nBody.\n", ""},
		{"unknown-field", "---\nname: unknown-field\ndescription: A skill with an unknown frontmatter field.\nauthor: someone\nversion: 1.0\n---\n\n# Unknown Field\n", ""},
		{"multiline-description", "---\nname: multiline-description\ndescription: |\n  This is a multiline description.\n  It spans multiple lines.\n---\n\nBody\n", ""},
		{"root-skill-preferred", "---\ndescription: Root skill should win.\n---\n", ""},
		{"bad--name", "---\nname: bad--name\ndescription: d\n---\n", `skill "bad--name": name must not contain consecutive hyphens`},
		{"Invalid_Name", "---\nname: Invalid_Name\ndescription: d\n---\n", `name contains invalid characters`},
		{strings.Repeat("a", 65), "---\ndescription: d\n---\n", "name exceeds 64 characters (65)"},
		{"missing-description", "---\nname: missing-description\n---\n\n# Missing\n", `line 2: description is required`},
		{"name-mismatch", "---\nname: different-name\ndescription: d\n---\n", `line 2: front matter name "different-name" does not match the skill's name "name-mismatch"`},
		{"no-frontmatter", "# No Frontmatter\n\nNo YAML.\n", "line 1: no front matter"},
		{"invalid-yaml", "---\nname: invalid-yaml\ndescription: [unclosed bracket\n---\n\n# Invalid\n", "line 2: front matter is not valid YAML"},
		{"desc-type", "---\ndescription: [a, b]\n---\n", "description must be a string"},
		{"too-long", "---\ndescription: " + strings.Repeat("x", MaxDescriptionLength+1) + "\n---\n", "description exceeds 1024 characters (1025)"},
		{"huge", "---\ndescription: d\n---\n" + strings.Repeat("x", MaxSize), "bytes, over the limit of 131072"},
		{"binary", "---\ndescription: d\n---\nok\n\xff\xfe", "line 5: is not valid UTF-8"},
		{"nul", "---\ndescription: d\n---\na\x00", "line 4: contains a NUL byte"},
	}
	for _, c := range cases {
		s, err := ParseSkill(c.dir, c.text)
		if c.wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", c.dir, err)
			} else if s.Name != c.dir || s.Description == "" {
				t.Errorf("%s: parsed %+v", c.dir, s)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want one containing %q", c.dir, err, c.wantErr)
		}
	}
}

func TestSkillFields(t *testing.T) {
	s, err := ParseSkill("manual", "---\r\nname: manual\r\ndescription: |\r\n  Two\r\n  lines\r\ndisable-model-invocation: true\r\n---\r\n\r\n# Manual\r\n\r\nDo it.\r\n")
	if err != nil {
		t.Fatal(err)
	}
	if !s.DisableModelInvocation || s.Description != "Two\nlines\n" || s.Body != "# Manual\n\nDo it." {
		t.Fatalf("%+v", s)
	}
}

// pi's _expandSkillCommand: the block, then the trimmed arguments.
func TestSkillExpand(t *testing.T) {
	s := Skill{Name: "pdf", Body: "Use pdftotext."}
	want := "<skill name=\"pdf\" location=\"/s/pdf/SKILL.md\">\nReferences are relative to /s/pdf.\n\nUse pdftotext.\n</skill>"
	if got := s.Expand("/s/pdf/SKILL.md", "/s/pdf", "  "); got != want {
		t.Fatalf("got %q", got)
	}
	if got := s.Expand("/s/pdf/SKILL.md", "/s/pdf", " read a.pdf "); got != want+"\n\nread a.pdf" {
		t.Fatalf("got %q", got)
	}
}

func TestParseTemplate(t *testing.T) {
	cases := []struct{ name, text, desc, body string }{
		{"review", "---\ndescription: Review staged git changes\n---\nReview the staged changes.\n", "Review staged git changes", "Review the staged changes."},
		{"plain", "\n\n  First line here\nsecond\n", "  First line here", "\n\n  First line here\nsecond\n"},
		{"long", strings.Repeat("é", 61) + "\n", strings.Repeat("é", 60) + "...", strings.Repeat("é", 61) + "\n"},
		{"empty-fm", "---\n---\nBody $1", "Body $1", "Body $1"},
	}
	for _, c := range cases {
		tp, err := ParseTemplate(c.name, c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if tp.Description != c.desc || tp.Body != c.body {
			t.Errorf("%s: got desc %q body %q", c.name, tp.Description, tp.Body)
		}
	}
	tp, _ := ParseTemplate("component", "---\ndescription: Create a component\n---\nCreate a React component named $1 with features: $@")
	if got := tp.Expand(ParseCommandArgs(`Button "onClick handler" "disabled support"`)); got != "Create a React component named Button with features: Button onClick handler disabled support" {
		t.Fatalf("got %q", got)
	}
	for _, bad := range []struct{ name, text, want string }{
		{"a/b", "x", "name contains invalid characters"},
		{"", "x", "name is empty"},
		{"t", "---\ndescription: : :\n  - x\n---\n", "front matter is not valid YAML"},
		{"t", "---\n- a\n- b\n---\n", "must be a YAML mapping"},
		{"t", strings.Repeat("x", MaxSize+1), "over the limit"},
	} {
		if _, err := ParseTemplate(bad.name, bad.text); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseTemplate(%q): %v, want %q", bad.name, err, bad.want)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}
