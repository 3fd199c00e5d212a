package events

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkDecodeEntry(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(goldenDir, "entry", "message-assistant.json"))
	if err != nil {
		b.Fatal(err)
	}
	data = bytes.TrimSpace(data)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := DecodeEntry(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeEntry(b *testing.B) {
	e := exampleEntries()[EntryMessage+"-"+RoleAssistant]
	for b.Loop() {
		if _, err := e.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadPiFile reads a 526-line v3 session (about 250 KB).
func BenchmarkReadPiFile(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(piDir, "v3-coding.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := ReadPiFile(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWritePiFile(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(piDir, "v3-coding.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	h, entries, err := ReadPiFile(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := WritePiFile(io.Discard, h, entries); err != nil {
			b.Fatal(err)
		}
	}
}
