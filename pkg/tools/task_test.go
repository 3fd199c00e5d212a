package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/tool"
)

func TestTaskArguments(t *testing.T) {
	var v tool.Validator
	spec := Task{}.Spec()
	good := `{"prompt":"find the flaky test","model":"scripted/x","tools":["ls","grep"],"skill":"pdf"}`
	if err := v.Validate(spec, json.RawMessage(good)); err != nil {
		t.Fatalf("schema refuses %s: %v", good, err)
	}
	a, err := ParseTaskArgs(json.RawMessage(good))
	if err != nil || a.Prompt != "find the flaky test" || a.Model != "scripted/x" || strings.Join(a.Tools, ",") != "ls,grep" || a.Skill != "pdf" {
		t.Fatalf("ParseTaskArgs = %+v, %v", a, err)
	}
	for in, field := range map[string]string{
		`{}`:                                 "prompt",
		`{"prompt":"   "}`:                   "prompt",
		`{"prompt":"x","model":"nomodel"}`:   "model",
		`{"prompt":"x","tools":["a b"]}`:     "tools[0]",
		`{"prompt":"x","tools":["ls","ls"]}`: "tools",
		`{"prompt":"x","extra":1}`:           "extra",
		`{"prompt":"` + strings.Repeat("x", MaxTaskPrompt+1) + `"}`: "prompt",
	} {
		if _, err := ParseTaskArgs(json.RawMessage(in)); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("ParseTaskArgs(%.40s) = %v, want an error naming %s", in, err, field)
		}
	}
	if _, err := (Task{}).Execute(context.Background(), tool.Call{}, nil); !errors.Is(err, ErrTaskNeedsOrchestrator) {
		t.Fatalf("Execute = %v, want ErrTaskNeedsOrchestrator", err)
	}
}
