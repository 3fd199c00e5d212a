package jsonx

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// marshalString is what encoding/json writes for s, with or without HTML
// escaping.
func marshalString(t *testing.T, s string, html bool) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TestAppendJSONString compares the string writer with encoding/json on
// every string of one and two bytes, and on runs long enough for the
// eight-byte scan with each byte value at each position, and pairs of bytes
// that need a look at each pair of positions.
func TestAppendJSONString(t *testing.T) {
	check := func(s string) {
		for _, html := range []bool{false, true} {
			if got, want := appendJSONString(nil, s, html), marshalString(t, s, html); !bytes.Equal(got, want) {
				t.Fatalf("%q (html %v): got %s, want %s", s, html, got, want)
			}
		}
	}
	for a := range 256 {
		check(string([]byte{byte(a)}))
		for b := range 256 {
			check(string([]byte{byte(a), byte(b)}))
		}
	}
	base := []byte("abcdefghijklmnopqrstuvwx")
	for c := range 256 {
		for i := range base {
			s := bytes.Clone(base)
			s[i] = byte(c)
			check(string(s))
		}
	}
	for _, c := range []byte{'"', '\\', '\n', 0x00, 0x1f, 0x7f, 0x80, 0xc3, 0xe2, 0xff, '<', '&'} {
		for _, d := range []byte{'"', '\t', 0x01, 0xa9, 0xe2, '>'} {
			for i := range base {
				for j := i + 1; j < len(base); j++ {
					s := bytes.Clone(base)
					s[i], s[j] = c, d
					check(string(s))
				}
			}
		}
	}
	for _, s := range []string{"\u2028\u2029", "a\u2028b\u2029c", "\xe2\x80", "\xe2\x80\xa8\xe2", "éé\xffé", "\xed\xa0\x80\xed\xbf\xbf", "\U0010ffff\xf4\x90\x80\x80"} {
		check(s)
	}
}

var trickyFloats = []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e20, 1e21, 9.999999999999999e20, -1e21, 1e-6, 9.99e-7, 1e-7,
	1.5e-9, 123456789.123, math.MaxFloat64, 5e-324, 1 << 53, 1<<53 + 1, 1e100, math.NaN(), math.Inf(1), math.Inf(-1)}

// TestAppendJSONFloat compares the number writer with encoding/json on
// edge values and on 300,000 random bit patterns.
func TestAppendJSONFloat(t *testing.T) {
	check := func(f float64) {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return
		}
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONFloat(nil, f); !bytes.Equal(got, want) {
			t.Fatalf("%v: got %s, want %s", f, got, want)
		}
	}
	for _, f := range trickyFloats {
		check(f)
		check(math.Nextafter(f, math.Inf(1)))
		check(math.Nextafter(f, math.Inf(-1)))
	}
	for e := -330; e <= 310; e++ {
		check(math.Pow(10, float64(e)))
		check(-1.5 * math.Pow(10, float64(e)))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300_000 {
		check(math.Float64frombits(r.Uint64()))
	}
	for range 100_000 {
		check(r.Float64() * 1e-3)
		check(float64(r.Int64N(1<<60)) / 1000)
	}
}
