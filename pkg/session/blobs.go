package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/cairn-agents/cairn/pkg/events"
)

// BlobStore keeps the large parts of entries, named by the [Digest] of their
// content. Put of a name that exists is a no-op; Get of a missing name fails
// with an error matching [ErrNotFound].
type BlobStore interface {
	Put(ctx context.Context, name string, data []byte) error
	Get(ctx context.Context, name string) ([]byte, error)
}

// blobKey is the field a text or thinking block carries, in place of its
// text, when its content moved to the blob store (images use Block.Blob).
const blobKey = "blob"

// minBlob is the smallest block worth moving out of an entry.
const minBlob = 1024

// externalize returns the stored form of e, moving the largest blocks' content
// to blobs until it is at most limit bytes. e itself is not modified.
func externalize(ctx context.Context, e events.Entry, limit int, blobs BlobStore) ([]byte, error) {
	data, err := encodeEntry(e)
	if err != nil || len(data) <= limit {
		return data, err
	}
	if blobs == nil {
		return nil, fmt.Errorf("%w: entry %s is %d bytes; the limit is %d and no blob store is configured", ErrTooLarge, e.ID, len(data), limit)
	}
	// Work on copies of the block slices the entry shares with the caller.
	var blocks []*events.Block
	if e.Message != nil {
		m := *e.Message
		m.Content.Blocks = slices.Clone(m.Content.Blocks)
		e.Message = &m
		for i := range m.Content.Blocks {
			blocks = append(blocks, &m.Content.Blocks[i])
		}
	}
	e.Content.Blocks = slices.Clone(e.Content.Blocks)
	for i := range e.Content.Blocks {
		blocks = append(blocks, &e.Content.Blocks[i])
	}
	slices.SortStableFunc(blocks, func(a, b *events.Block) int { return len(blockPayload(b)) - len(blockPayload(a)) })
	size := len(data)
	for _, b := range blocks {
		if size <= limit {
			break
		}
		p := blockPayload(b)
		if len(p) < minBlob {
			break
		}
		name := Digest([]byte(p))
		if err := blobs.Put(ctx, name, []byte(p)); err != nil {
			return nil, fmt.Errorf("session: store blob of entry %s: %w", e.ID, err)
		}
		setBlockPayload(b, "", name)
		size -= len(p) - len(name)
	}
	data, err = encodeEntry(e)
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%w: entry %s is %d bytes after moving its large blocks out; the limit is %d", ErrTooLarge, e.ID, len(data), limit)
	}
	return data, nil
}

// blockPayload is the content of b that can move to a blob.
func blockPayload(b *events.Block) string {
	switch b.Type {
	case events.BlockImage:
		return b.Data
	case events.BlockText:
		return b.Text
	case events.BlockThinking:
		return b.Thinking
	}
	return ""
}

// setBlockPayload sets b's content to p; a non-empty ref names the blob that
// holds it instead.
func setBlockPayload(b *events.Block, p, ref string) {
	switch b.Type {
	case events.BlockImage:
		b.Data, b.Blob = p, ref
		return
	case events.BlockText:
		b.Text = p
	case events.BlockThinking:
		b.Thinking = p
	}
	x := make(events.Extra, len(b.Extra)+1)
	for k, v := range b.Extra {
		x[k] = v
	}
	delete(x, blobKey)
	if ref != "" {
		x[blobKey], _ = json.Marshal(ref)
	}
	if len(x) == 0 {
		x = nil
	}
	b.Extra = x
}

// blobRef returns the blob a block refers to, or "".
func blobRef(b *events.Block) string {
	if b.Type == events.BlockImage {
		return b.Blob
	}
	raw, ok := b.Extra[blobKey]
	if !ok {
		return ""
	}
	var ref string
	if json.Unmarshal(raw, &ref) != nil {
		return ""
	}
	return ref
}

// inflate restores the blocks of e whose content is in the blob store. It
// changes e in place; e must not share blocks with anyone (a freshly decoded
// entry does not).
func inflate(ctx context.Context, e *events.Entry, blobs BlobStore) error {
	var blocks []events.Block
	if e.Message != nil {
		blocks = e.Message.Content.Blocks
	}
	for _, list := range [][]events.Block{blocks, e.Content.Blocks} {
		for i := range list {
			b := &list[i]
			ref := blobRef(b)
			if ref == "" {
				continue
			}
			if blobs == nil {
				return fmt.Errorf("%w: entry %s refers to blob %s and no blob store is configured", ErrCorrupt, e.ID, ref)
			}
			data, err := blobs.Get(ctx, ref)
			if err != nil {
				return fmt.Errorf("%w: entry %s: blob %s: %w", ErrCorrupt, e.ID, ref, err)
			}
			if Digest(data) != ref {
				return fmt.Errorf("%w: entry %s: blob %s has digest %s", ErrCorrupt, e.ID, ref, Digest(data))
			}
			setBlockPayload(b, string(data), "")
		}
	}
	return nil
}

// MemBlobs is a BlobStore in memory, for tests and the in-memory log.
type MemBlobs struct {
	mu struct {
		sync.Mutex
		m map[string][]byte
	}
}

// Put stores data under name.
func (s *MemBlobs) Put(_ context.Context, name string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.m == nil {
		s.mu.m = make(map[string][]byte)
	}
	if _, ok := s.mu.m[name]; !ok {
		s.mu.m[name] = slices.Clone(data)
	}
	return nil
}

// Get returns the data stored under name.
func (s *MemBlobs) Get(_ context.Context, name string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, ok := s.mu.m[name]
	if !ok {
		return nil, fmt.Errorf("%w: blob %s", ErrNotFound, name)
	}
	return slices.Clone(data), nil
}
