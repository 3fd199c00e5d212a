package events_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

// A tenant is [a-z0-9-]{1,32}; anything else is refused with an error
// naming the problem, before it can reach a subject.
func TestValidateTenant(t *testing.T) {
	for _, ok := range []string{"default", "acme", "a", "team-2", strings.Repeat("x", 32)} {
		if err := events.ValidateTenant(ok); err != nil {
			t.Errorf("ValidateTenant(%q) = %v, want nil", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"":                      "tenant is empty",
		strings.Repeat("x", 33): "the limit is 32",
		"Acme":                  `has 'A'`,
		"a.b":                   `has '.'`, // would split the subject
		"a*":                    `has '*'`, // a wildcard
		"a>":                    `has '>'`,
		"a b":                   `has ' '`,
		"a_b":                   `has '_'`,
		"ümlaut":                "only a-z 0-9 -",
	} {
		err := events.ValidateTenant(bad)
		if !errors.Is(err, events.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateTenant(%q) = %v, want an ErrInvalid saying %q", bad, err, want)
		}
	}
}

// The subject form <tenant>.<sid> reads back to the same ref, from a
// subject too; a one-token subject (the layout before tenants) names none.
func TestSessionRefForms(t *testing.T) {
	r := events.SessionRef{Tenant: "acme", ID: "s_1-X"}
	got, err := events.ParseSessionRef(r.String())
	if err != nil || got != r {
		t.Fatalf("ParseSessionRef(%q) = %v, %v", r.String(), got, err)
	}
	if got, ok := events.SessionOf(events.Names{}.SessionSubject(r)); !ok || got != r {
		t.Fatalf("SessionOf = %v, %v", got, ok)
	}
	if _, ok := events.SessionOf("cairn.session.s1"); ok {
		t.Fatal("a one-token session subject parsed as a tenant's session")
	}
	for _, bad := range []string{"s1", "acme.", ".s1", "acme.s.1", "Acme.s1", "acme.s 1"} {
		if _, err := events.ParseSessionRef(bad); !errors.Is(err, events.ErrInvalid) {
			t.Errorf("ParseSessionRef(%q) = %v, want ErrInvalid", bad, err)
		}
	}
	if events.Ref("", "s1") != events.DefaultRef("s1") || events.DefaultRef("s1").Tenant != events.DefaultTenant {
		t.Fatal("an empty tenant is not the default tenant")
	}
}
