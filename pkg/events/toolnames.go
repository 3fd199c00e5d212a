package events

// UniqueToolNames refuses a list of tool names that names one tool twice
// (field is the list's name, e.g. "tools"): the model could not tell the
// two apart, and pi refuses such a tool set too. The error is a
// [*FieldError] naming the repeat, e.g. `tools[2]: duplicate tool name "ls"
// (tools[0] already names it)`.
//
// It is not part of [Command.Validate]: a command with a repeated name that
// was stored before this rule existed must still be read, and refused with
// its reason in the log, not dropped as unreadable.
func UniqueToolNames(field string, names []string) error {
	seen := make(map[string]int, len(names))
	for i, n := range names {
		if j, dup := seen[n]; dup {
			return fieldErr(field+"["+itoa(i)+"]", "duplicate tool name %q (%s[%d] already names it)", n, field, j)
		}
		seen[n] = i
	}
	return nil
}
