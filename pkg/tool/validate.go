package tool

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cairn-agents/cairn/pkg/events"
)

// ErrInvalidArguments matches every *ArgumentError.
var ErrInvalidArguments = errors.New("invalid tool arguments")

// ArgumentError says why a tool call's arguments do not fit the tool's
// schema, in words the model can act on: one problem a line, each naming
// the argument (as a JSON pointer) and what was expected.
type ArgumentError struct {
	Tool     string
	Problems []string
}

func (e *ArgumentError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Invalid arguments for tool %s:", e.Tool)
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p)
	}
	b.WriteString("\nFix the arguments and call the tool again.")
	return b.String()
}

// Is matches ErrInvalidArguments.
func (e *ArgumentError) Is(target error) bool { return target == ErrInvalidArguments }

// Validator checks tool arguments against tool schemas, compiling each
// schema once. The zero value is ready to use and safe for concurrent use.
type Validator struct {
	mu      sync.Mutex
	schemas map[string]*compiled // by tool name
}

type compiled struct {
	source string // the schema text it was compiled from
	schema *jsonschema.Schema
	err    error
}

// Validate checks args (a JSON object) against spec.Parameters. A spec
// without parameters, or with `{}` or `{"type":"object"}`, accepts any
// object. The error is an *ArgumentError for arguments that do not fit, or
// a plain error naming the tool when its schema itself is broken.
func (v *Validator) Validate(spec events.ToolSpec, args []byte) error {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 {
		trimmed = []byte("{}")
	}
	if trimmed[0] != '{' {
		return &ArgumentError{Tool: spec.Name, Problems: []string{"arguments must be a JSON object"}}
	}
	if trivialSchema(spec.Parameters) {
		return nil
	}
	sch, err := v.schema(spec)
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(trimmed))
	if err != nil {
		return &ArgumentError{Tool: spec.Name, Problems: []string{"arguments are not valid JSON: " + err.Error()}}
	}
	err = sch.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ArgumentError{Tool: spec.Name, Problems: []string{err.Error()}}
	}
	return &ArgumentError{Tool: spec.Name, Problems: problems(ve)}
}

func trivialSchema(p []byte) bool {
	s := string(bytes.TrimSpace(p))
	switch s {
	case "", "null", "{}", `{"type":"object"}`, `{"type": "object"}`:
		return true
	}
	return false
}

func (v *Validator) schema(spec events.ToolSpec) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	src := string(spec.Parameters)
	if c, ok := v.schemas[spec.Name]; ok && c.source == src {
		return c.schema, c.err
	}
	c := &compiled{source: src}
	c.schema, c.err = compile(spec)
	if v.schemas == nil {
		v.schemas = make(map[string]*compiled)
	}
	v.schemas[spec.Name] = c
	return c.schema, c.err
}

func compile(spec events.ToolSpec) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(spec.Parameters))
	if err != nil {
		return nil, fmt.Errorf("tool %s: parameters schema is not valid JSON: %w", spec.Name, err)
	}
	c := jsonschema.NewCompiler()
	url := "tool:///" + spec.Name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("tool %s: parameters schema: %w", spec.Name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tool %s: parameters schema does not compile: %w", spec.Name, err)
	}
	return sch, nil
}

// problems lists the validation error's failing keywords, each as
// "<where>: <what>".
func problems(ve *jsonschema.ValidationError) []string {
	var out []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		msg := u.Error.String()
		if strings.HasPrefix(msg, "validation failed") || msg == "" {
			continue
		}
		where := "arguments"
		if u.InstanceLocation != "" {
			where = "argument " + u.InstanceLocation
		}
		out = append(out, where+": "+msg)
	}
	if len(out) == 0 {
		out = append(out, ve.Error())
	}
	return out
}
