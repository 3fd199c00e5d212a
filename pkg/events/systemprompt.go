package events

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// CustomSystemPrompt is the customType of the `custom` entry that records
// the system prompt a session's model calls are sent with from that entry
// on (DESIGN §13): written just before a model call whose prompt differs
// from the last one recorded on the branch, so a replay or an audit knows
// exactly what the model was told, and by which resource versions. Being a pi `custom` entry, it is not part of the context and a
// pi file keeps it as it is.
const CustomSystemPrompt = "cairn.system_prompt"

// SystemPromptRecord is the data of a [CustomSystemPrompt] entry.
type SystemPromptRecord struct {
	// Digest is "sha256:" and the hex SHA-256 of Text.
	Digest string `json:"digest"`
	Text   string `json:"text"`
	// Resources are the resources the prompt was built from (the skills it
	// lists), each at the version it had, sorted by kind and name.
	Resources []ResourceVersion `json:"resources,omitempty"`
	// FromHook: a hook (before_agent_start, before_provider_request)
	// changed the prompt the builder made.
	FromHook bool `json:"fromHook,omitempty"`
}

// ResourceVersion names one version of a tenant's resource.
type ResourceVersion struct {
	Kind    string `json:"kind"` // skill or template
	Name    string `json:"name"`
	Version uint64 `json:"version"` // its KV revision
}

// PromptDigest returns the Digest of a system prompt.
func PromptDigest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// SystemPromptEntry returns the custom entry recording r.
func SystemPromptEntry(r SystemPromptRecord) Entry {
	data, _ := json.Marshal(r) // strings, bools and numbers: cannot fail
	return Entry{Type: EntryCustom, CustomType: CustomSystemPrompt, Data: data}
}

// DecodeSystemPrompt returns the record of a [CustomSystemPrompt] entry,
// false for any other entry; an error when its data is not a record whose
// digest matches its text.
func DecodeSystemPrompt(e *Entry) (SystemPromptRecord, bool, error) {
	var r SystemPromptRecord
	if e.Type != EntryCustom || e.CustomType != CustomSystemPrompt {
		return r, false, nil
	}
	if err := json.Unmarshal(e.Data, &r); err != nil {
		return r, true, fmt.Errorf("entry %s: %s data: %w", e.ID, CustomSystemPrompt, err)
	}
	if r.Digest != PromptDigest(r.Text) {
		return r, true, fmt.Errorf("entry %s: %s digest %q does not match its text", e.ID, CustomSystemPrompt, r.Digest)
	}
	return r, true, nil
}

// LastSystemPrompt returns the last system prompt recorded on path (a
// branch, root first), false when none is.
func LastSystemPrompt(path []Entry) (SystemPromptRecord, bool, error) {
	for i := len(path) - 1; i >= 0; i-- {
		if r, ok, err := DecodeSystemPrompt(&path[i]); ok {
			return r, true, err
		}
	}
	return SystemPromptRecord{}, false, nil
}
