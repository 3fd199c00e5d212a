package client_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/client"
)

func TestBudgetAgainstARealPlatform(t *testing.T) {
	p := newPlatform(t)
	cl := newClient(t, p.URL)
	ctx := ctxFor(t)

	st, err := cl.Budget(ctx, "default")
	if err != nil || st.Tenant != "default" || st.Budget != (client.Budget{}) {
		t.Fatalf("no budget yet: %+v %v", st, err)
	}
	if _, err := cl.SetBudget(ctx, "Bad.Name", client.Budget{}); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("a bad tenant: %v", err)
	}
	if _, err := cl.SetBudget(ctx, "default", client.Budget{TokensPerDay: -1}); !errors.Is(err, client.ErrInvalid) || !strings.Contains(err.Error(), "tokensPerDay") {
		t.Errorf("a negative limit: %v", err)
	}
	st, err = cl.SetBudget(ctx, "default", client.Budget{TokensPerDay: 1})
	if err != nil || st.TokensPerDay != 1 {
		t.Fatalf("set: %+v %v", st, err)
	}

	if _, err := cl.CreateSession(ctx, client.CreateSession{ID: "b1"}, client.WaitApplied()); err != nil {
		t.Fatal(err)
	}
	cmd := client.Prompt("hello")
	cmd.ID = "p1"
	if _, err := cl.Send(ctx, "b1", cmd); err != nil {
		t.Fatal(err)
	}
	if st := settled(t, cl, "b1", "p1"); st.Message == nil {
		t.Fatalf("p1: %+v", st)
	}
	// The first call spent the day; the next prompt is refused at once.
	eventually(t, "the prompt refused over budget", func() (bool, string) {
		cmd := client.Prompt("again")
		_, err := cl.Send(ctx, "b1", cmd, client.WaitApplied())
		var e *client.Error
		if !errors.Is(err, client.ErrBudgetExceeded) || !errors.As(err, &e) {
			return false, fmt.Sprint(err)
		}
		ok := e.Status == 429 && strings.HasPrefix(e.Message, "budget exceeded: tokensPerDay 1 used ") && strings.HasSuffix(e.Message, " of tenant default")
		return ok, e.Message
	})
	st, err = cl.Budget(ctx, "default")
	if err != nil || st.Today.Tokens < 1 || st.Today.Calls != 1 {
		t.Errorf("today's use: %+v %v", st, err)
	}
	eventually(t, "the tenant's usage read model", func() (bool, string) {
		rep, err := cl.TenantUsage(ctx, "default", client.UsageFilter{})
		if err != nil || len(rep.Usage) != 1 {
			return false, fmt.Sprint(rep, err)
		}
		u := rep.Usage[0]
		return u.Tenant == "default" && u.Calls == 1 && u.Tokens.Total == st.Today.Tokens, fmt.Sprintf("%+v", u)
	})
	if rep, err := cl.TenantUsage(ctx, "acme", client.UsageFilter{}); err != nil || len(rep.Usage) != 0 {
		t.Errorf("another tenant's usage: %+v %v", rep, err)
	}
}
