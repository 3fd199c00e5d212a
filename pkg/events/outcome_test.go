package events

import (
	"errors"
	"testing"
)

func TestOutcomeRoundTrip(t *testing.T) {
	r := Outcome{SessionID: "s1", CommandID: "c1", Type: CmdCreate, Code: "invalid",
		Reason: "workspace: \"/etc\" is outside the workspace root /w", Timestamp: "2026-01-02T03:04:05.006Z"}
	data, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"sessionId":"s1","commandId":"c1","type":"create","code":"invalid","reason":"workspace: \"/etc\" is outside the workspace root /w","timestamp":"2026-01-02T03:04:05.006Z"}`
	if SchemaVersion != 1 {
		t.Fatalf("golden written for schema version 1, this build has %d", SchemaVersion)
	}
	if string(data) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", data, want)
	}
	got, err := DecodeOutcome(data)
	r.V = SchemaVersion
	if err != nil || got != r {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, r)
	}
	noop := Outcome{V: SchemaVersion, SessionID: "s1", CommandID: "c2", Type: CmdNavigate, NoEffect: true, Timestamp: "2026-01-02T03:04:05.006Z"}
	data, _ = noop.MarshalJSON()
	if got, err := DecodeOutcome(data); err != nil || got != noop {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, noop)
	}
	for _, bad := range []string{`{"v":1,"sessionId":"s","commandId":"c","noEffect":true,"reason":"x"}`,
		`{"v":1,"sessionId":"s","commandId":"c","noEffect":true,"code":"busy"}`, `{"v":1,"sessionId":"a b","commandId":"c","reason":"x"}`, `{"v":1,"sessionId":"s","commandId":"c"}`,
		`{"v":9,"sessionId":"s","commandId":"c","reason":"x"}`, `{"v":1,"sessionId":"s","commandId":"c","reason":3}`, `[`} {
		if _, err := DecodeOutcome([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("DecodeOutcome(%s) = %v, want ErrInvalid", bad, err)
		}
	}
}
