package events

import "testing"

func TestQuickRoundTrip(t *testing.T) {
	in := `{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-02T03:04:05.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm","thinkingSignature":"sig"},{"type":"toolCall","id":"t1","name":"ls","arguments":{"path":"."}}],"api":"anthropic-messages","provider":"anthropic","model":"claude","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":1700000000000,"zzz":{"a":1}},"other":true}`
	e, err := DecodeEntry([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Fatalf("got\n%s\nwant\n%s", out, in)
	}
	_, err = DecodeEntry([]byte(`{"type":"message","id":"x","parentId":null,"timestamp":"2026-01-02T03:04:05.000Z","message":{"role":"user","content":[{"type":"bogus"}]}}`))
	t.Log(err)
	if err == nil || err.Error() != `message.content[0].type: unknown content block type "bogus" (want text, image, thinking or toolCall)` {
		t.Fatalf("err = %v", err)
	}
}
