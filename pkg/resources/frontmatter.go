package resources

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// frontMatter splits content as pi's parseFrontmatter does: newlines
// normalised to \n; front matter only when the text starts with "---" and
// a later line starts with "---"; the body after it trimmed. yamlText is
// "" without front matter.
func frontMatter(content string) (yamlText, body string, ok bool) {
	n := normalizeNewlines(content)
	if !strings.HasPrefix(n, "---") {
		return "", n, false
	}
	end := strings.Index(n[3:], "\n---")
	if end == -1 {
		return "", n, false
	}
	end += 3
	start := min(4, end)
	return n[start:end], strings.TrimSpace(n[end+4:]), true
}

func normalizeNewlines(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// parseFrontMatter decodes the YAML of the front matter into a map; empty
// YAML gives an empty map, as in pi.
func parseFrontMatter(kind, name, yamlText string) (map[string]any, error) {
	m := map[string]any{}
	if strings.TrimSpace(yamlText) == "" {
		return m, nil
	}
	var v any
	if err := yaml.Unmarshal([]byte(yamlText), &v); err != nil {
		// yaml numbers lines from the front matter's first line, which is
		// line 2 of the file.
		return nil, &Error{Kind: kind, Name: name, Line: 2, Reason: "front matter is not valid YAML (its line numbers count from this line): " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if v == nil {
		return m, nil
	}
	mm, isMap := v.(map[string]any)
	if !isMap {
		return nil, &Error{Kind: kind, Name: name, Line: 2, Reason: "front matter must be a YAML mapping of fields"}
	}
	return mm, nil
}

// stringField returns field key of m as a string: absent is "", a value
// of another type is an error (pi would fail on it).
func stringField(kind, name string, m map[string]any, key string) (string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", &Error{Kind: kind, Name: name, Line: 2, Reason: "front matter field " + key + " must be a string"}
	}
	return s, nil
}
