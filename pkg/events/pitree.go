package events

import "fmt"

// CheckTree reports whether entries, in order, form a session tree: every id
// is unique and every parentId names an earlier entry (nil is a root). The
// error is a [*FieldError] naming the entry, e.g. "entries[7].parentId".
func CheckTree(entries []Entry) error {
	if i, err := checkTree(entries); err != nil {
		return prefixed("entries["+itoa(i)+"]", err)
	}
	return nil
}

// checkTree returns the index of the first bad entry and what is wrong with
// it, the field named relative to the entry.
func checkTree(entries []Entry) (int, error) {
	seen := make(map[string]bool, len(entries))
	for i, e := range entries {
		if seen[e.ID] {
			return i, &FieldError{Field: "id", Problem: fmt.Sprintf("id %q is used by an earlier entry", e.ID)}
		}
		if e.ParentID != nil && !seen[*e.ParentID] {
			return i, &FieldError{Field: "parentId", Problem: fmt.Sprintf("parent %q is not an earlier entry", *e.ParentID)}
		}
		seen[e.ID] = true
	}
	return 0, nil
}
