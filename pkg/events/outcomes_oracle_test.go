package events

import "testing"

// While the old implementations exist, writing the outcomes (go test
// -update) also checks that the old and the new agree on every input and
// value they are made of.

func oracleDecode(t *testing.T, name string, in []byte) {
	t.Helper()
	if !*update {
		return
	}
	base := map[string]string{"event-message": "message", "toolresult-block": "block"}[name]
	if base == "" {
		base = name
	}
	for _, d := range decoderPairs() {
		if d.name == base {
			agree(t, d, in)
		}
	}
	for _, p := range encoderPairs() {
		if p.name == name {
			if v, err := p.decode(in); err == nil {
				encodeAgree(t, p, v)
			}
		}
	}
}

func oracleEncode(t *testing.T, name string, v any) {
	t.Helper()
	if !*update {
		return
	}
	for _, p := range encoderPairs() {
		if p.name == name {
			encodeAgree(t, p, v)
			return
		}
	}
	t.Fatalf("no encoder pair %q", name)
}
