package oai

import "strings"

// Tool-call ids. The Responses API names a function call twice: its call_id
// (which the output refers to) and its item id (which a preceding reasoning
// item refers to). Cairn keeps both in one tool-call id, "call_id|item_id",
// as pi does; each API takes the part it needs.

func joinID(callID, itemID string) string {
	if itemID == "" {
		return callID
	}
	return callID + "|" + itemID
}

func splitID(id string) (callID, itemID string) {
	callID, itemID, _ = strings.Cut(id, "|")
	return callID, itemID
}

// chatID is the id Chat Completions accepts: the call id alone, at most 40
// characters (OpenAI's limit).
func chatID(id string) string {
	callID, _ := splitID(id)
	if len(callID) > 40 {
		callID = callID[:40]
	}
	return callID
}
