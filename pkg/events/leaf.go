package events

import "encoding/json"

// LeafSelectedField is the field of a `leaf` entry that names the entry a
// navigation selected, when the leaf moved elsewhere: navigating to a user
// (or custom) message moves the leaf to its parent and hands the message's
// text back for editing, as pi does. The field is Cairn's (pi's leaf entry
// has only targetId), so it travels in [Entry.Extra] and a pi export keeps
// it as an unknown field.
const LeafSelectedField = "selectedId"

// LeafSelected returns the entry a `leaf` entry's navigation selected, ""
// when it selected its target itself (or e is not a leaf entry).
func (e *Entry) LeafSelected() string {
	if e.Type != EntryLeaf {
		return ""
	}
	var id string
	if json.Unmarshal(e.Extra[LeafSelectedField], &id) != nil {
		return ""
	}
	return id
}

// SetLeafSelected records in a `leaf` entry the entry its navigation
// selected ("" records nothing).
func (e *Entry) SetLeafSelected(id string) {
	if id == "" {
		return
	}
	data, _ := json.Marshal(id) // a string always encodes
	if e.Extra == nil {
		e.Extra = Extra{}
	}
	e.Extra[LeafSelectedField] = data
}

// EditorText is the text a navigation to e hands back for editing, and
// whether e is an entry whose text goes back: a user message or a custom
// message (their text blocks; images are not text). For any other entry a
// navigation makes e itself the leaf and hands nothing back.
func (e *Entry) EditorText() (string, bool) {
	switch {
	case e.Type == EntryMessage && e.Message != nil && e.Message.Role == RoleUser:
		return e.Message.Content.Text(), true
	case e.Type == EntryCustomMessage:
		return e.Content.Text(), true
	}
	return "", false
}
