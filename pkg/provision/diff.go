package provision

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
)

// Field is a setting an update changed.
type Field struct {
	Name     string // the Go field of jetstream.StreamConfig or ConsumerConfig
	Was, Now string
}

func (f Field) String() string { return f.Name + " " + f.Was + " -> " + f.Now }

// diff lists the fields of two configurations of the same struct type
// (jetstream.StreamConfig or ConsumerConfig) that differ, ignoring the
// server's own metadata (keys starting with "_nats.").
func diff(was, now any) []Field {
	a, b := reflect.ValueOf(was), reflect.ValueOf(now)
	var fields []Field
	for i := range a.NumField() {
		name := a.Type().Field(i).Name
		x, y := a.Field(i).Interface(), b.Field(i).Interface()
		if name == "Metadata" {
			x, y = userMetadata(x.(map[string]string)), userMetadata(y.(map[string]string))
		}
		if !reflect.DeepEqual(x, y) {
			fields = append(fields, Field{Name: name, Was: show(x), Now: show(y)})
		}
	}
	return fields
}

func userMetadata(m map[string]string) map[string]string {
	m = maps.Clone(m)
	maps.DeleteFunc(m, func(k, _ string) bool { return strings.HasPrefix(k, "_nats.") })
	if len(m) == 0 {
		return nil
	}
	return m
}

func show(v any) string {
	r := reflect.ValueOf(v)
	if r.Kind() == reflect.Pointer {
		if r.IsNil() {
			return "none"
		}
		return fmt.Sprintf("%+v", r.Elem().Interface())
	}
	return fmt.Sprintf("%v", v)
}
