package secret

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestSecretNeverShows(t *testing.T) {
	const key = "sk-test-very-secret-0123456789"
	s := Secret(key)
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	log.Info("x", "key", s, "cfg", struct{ Key Secret }{s})
	slog.New(slog.NewTextHandler(&logs, nil)).Info("y", "key", s)
	j, _ := json.Marshal(struct{ Key Secret }{s})
	out := logs.String() + string(j) + fmt.Sprint(s) + fmt.Sprintf("%v %+v %#v %s %q %d %x %X %10.3s", s, s, s, s, s, s, s, s, s) +
		fmt.Sprintf("%+v %#v", struct{ Key Secret }{s}, struct{ Key Secret }{s})
	if strings.Contains(out, key) {
		t.Fatalf("the key leaked: %s", out)
	}
	if !strings.Contains(out, Redacted) {
		t.Fatalf("no redaction marker in %s", out)
	}
	if s.Reveal() != key {
		t.Fatal("Reveal lost the value")
	}
	if Secret("").String() != "" || !Secret("").IsZero() {
		t.Fatal("an unset secret should show as empty")
	}
}
