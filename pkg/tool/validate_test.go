package tool

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

func TestValidateNamesTheArgument(t *testing.T) {
	spec := events.ToolSpec{Name: "read", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`)}
	var v Validator
	if err := v.Validate(spec, []byte(`{"path":"a.txt","limit":3}`)); err != nil {
		t.Fatalf("valid arguments refused: %v", err)
	}
	cases := map[string]struct{ args, want string }{
		"missing":    {`{}`, "missing property 'path'"},
		"wrong type": {`{"path":3}`, "argument /path: got number, want string"},
		"minimum":    {`{"path":"a","limit":0}`, "argument /limit: minimum"},
		"extra":      {`{"path":"a","x":1}`, "additional properties 'x' not allowed"},
		"not object": {`[1]`, "arguments must be a JSON object"},
	}
	for name, c := range cases {
		err := v.Validate(spec, []byte(c.args))
		if !errors.Is(err, ErrInvalidArguments) {
			t.Fatalf("%s: err = %v, want ErrInvalidArguments", name, err)
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "tool read") {
			t.Errorf("%s: message %q does not contain %q", name, err.Error(), c.want)
		}
	}
}

func TestValidateBrokenSchemaNamesTheTool(t *testing.T) {
	var v Validator
	err := v.Validate(events.ToolSpec{Name: "bad", Parameters: []byte(`{"type":"nope"}`)}, []byte(`{}`))
	if err == nil || errors.Is(err, ErrInvalidArguments) || !strings.Contains(err.Error(), "tool bad") {
		t.Fatalf("err = %v, want a schema error naming the tool", err)
	}
}

func TestValidateTrivialSchemaAcceptsObjects(t *testing.T) {
	var v Validator
	if err := v.Validate(events.ToolSpec{Name: "noop"}, nil); err != nil {
		t.Fatal(err)
	}
}
