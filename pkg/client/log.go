package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// Record is one session entry as stored: its stream sequence, its stored
// bytes and their digest, and the entry they decode to.
type Record struct {
	// Seq is the entry's stream sequence (the global order).
	Seq uint64
	// Data is the entry's canonical JSON exactly as the log stores it
	// (large parts as blob references). The hash chain covers these bytes.
	Data []byte
	// Digest is session.Digest(Data), computed by this client: the
	// ParentDigest the next entry of the session must carry.
	Digest string
	// Entry is Data decoded.
	Entry events.Entry
}

// recordLine is one item of /entries, /records and /replay: {"seq", "entry"}.
// Stored, on /records only, is the entry's stored bytes when they span
// lines (an entry stored before entries were compacted where they enter):
// Entry is then those bytes compacted, and the digest is Stored's.
type recordLine struct {
	Seq    uint64          `json:"seq"`
	Entry  json.RawMessage `json:"entry"`
	Stored []byte          `json:"stored,omitempty"`
}

func (l recordLine) record() (Record, error) {
	data := []byte(l.Entry)
	if l.Stored != nil {
		data = l.Stored
	}
	e, err := events.DecodeEntry(data)
	if err != nil {
		return Record{}, fmt.Errorf("client: the entry at sequence %d does not decode: %w", l.Seq, err)
	}
	return Record{Seq: l.Seq, Data: data, Digest: session.Digest(data), Entry: e}, nil
}

// readRecordLines reads JSON Lines of recordLine.
func readRecordLines(r io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var l recordLine
		if err := json.Unmarshal(line, &l); err != nil {
			return nil, fmt.Errorf("client: invalid record line from the gateway: %w", err)
		}
		l.Entry = bytes.Clone(l.Entry) // the scanner reuses its buffer
		rec, err := l.record()
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("client: reading records: %w", err)
	}
	return out, nil
}

// Records returns session sid's entries exactly as the stream stores them,
// read from the stream itself by the gateway (GET .../records: no snapshot,
// no read model), with digests this client computed from the bytes. It is
// what [Client.VerifySession] checks; [ErrCorrupt] if the stored log does
// not decode.
func (c *Client) Records(ctx context.Context, sid string) ([]Record, error) {
	path, err := sessionPath(sid, "/records")
	if err != nil {
		return nil, err
	}
	resp, err := c.open(ctx, http.MethodGet, path, nil, nil, "", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return readRecordLines(resp.Body)
}

// ListEntries selects a page of GET /v1/sessions/{id}/entries.
type ListEntries struct {
	// After is an entry id of the session or a stream sequence: the page
	// starts after it. "": from the first entry.
	After string
	// Limit is 1–10000; 0: the gateway's default (1000).
	Limit int
}

// Entries returns a page of session sid's entries from the read model, in
// log order. Fewer than the limit means the end; to page on, pass the last
// record's Seq as After, or use [Client.AllEntries].
func (c *Client) Entries(ctx context.Context, sid string, req ListEntries) ([]Record, error) {
	path, err := sessionPath(sid, "/entries")
	if err != nil {
		return nil, err
	}
	q := url.Values{"format": {"jsonl"}}
	if req.After != "" {
		q.Set("after", req.After)
	}
	if req.Limit != 0 {
		q.Set("limit", strconv.Itoa(req.Limit))
	}
	resp, err := c.open(ctx, http.MethodGet, path, q, nil, "", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return readRecordLines(resp.Body)
}

// AllEntries yields every entry of session sid the read model holds, in
// log order, reading pages of pageSize (0: 1000). It stops at the first
// error, yielding it.
func (c *Client) AllEntries(ctx context.Context, sid string, pageSize int) iter.Seq2[Record, error] {
	if pageSize == 0 {
		pageSize = 1000
	}
	return func(yield func(Record, error) bool) {
		req := ListEntries{Limit: pageSize}
		for {
			page, err := c.Entries(ctx, sid, req)
			if err != nil {
				yield(Record{}, err)
				return
			}
			for _, r := range page {
				if !yield(r, nil) {
					return
				}
			}
			if len(page) < pageSize {
				return
			}
			req.After = strconv.FormatUint(page[len(page)-1].Seq, 10)
		}
	}
}

// Context is what the reducer builds for a leaf: the messages the model
// would see, and the effective model, thinking level and tools.
type Context struct {
	Leaf          string           `json:"leaf,omitempty"`
	Model         string           `json:"model"`
	ThinkingLevel string           `json:"thinkingLevel"`
	Tools         []string         `json:"tools"`
	CompactionID  string           `json:"compactionId,omitempty"`
	Messages      []events.Message `json:"messages"`
	// SystemPrompt is the system prompt the branch's model calls were
	// last sent with, as the log records it; nil before a run.
	SystemPrompt *events.SystemPromptRecord `json:"systemPrompt,omitempty"`
}

// Context returns the context of session sid at its active leaf, or at
// entry leaf if not "" (read from the log, not a read model).
func (c *Client) Context(ctx context.Context, sid, leaf string) (Context, error) {
	path, err := sessionPath(sid, "/context")
	if err != nil {
		return Context{}, err
	}
	q := url.Values{}
	if leaf != "" {
		q.Set("leaf", leaf)
	}
	var out Context
	err = c.getJSON(ctx, path, q, &out)
	return out, err
}

// TreeNode is one entry of a session tree (every entry but the header).
type TreeNode struct {
	Seq       uint64  `json:"seq"`
	ID        string  `json:"id"`
	ParentID  *string `json:"parentId"`
	Type      string  `json:"type"`
	Role      string  `json:"role,omitempty"` // message entries
	Timestamp string  `json:"timestamp"`
	Label     string  `json:"label,omitempty"`
	// Preview is a short text of the entry: its first line of text (at
	// most 80 characters, "…" when cut), or what stands for it in an entry
	// without text (a label's label, a model change's model...; the rule
	// per type is in docs/read-models.md). Empty when it has none.
	Preview string `json:"preview,omitempty"`
	// Tools names the tools of the entry: an assistant message's tool
	// calls in order, a tool result's tool, an active_tools_change's tools.
	Tools []string `json:"tools,omitempty"`
	// Children are the ids of the entries whose parent it is, in log order.
	Children []string `json:"children"`
}

// Tree is a session's tree from the read model: its nodes in log order and
// the active leaf.
type Tree struct {
	Session string     `json:"session"`
	Leaf    *string    `json:"leaf"`
	Nodes   []TreeNode `json:"nodes"`
}

// ActivePath returns the ids on the path from the root to the active leaf,
// root first (none before the first entry).
func (t Tree) ActivePath() []string {
	if t.Leaf == nil {
		return nil
	}
	parent := make(map[string]*string, len(t.Nodes))
	for _, n := range t.Nodes {
		parent[n.ID] = n.ParentID
	}
	var path []string
	for id := t.Leaf; id != nil && len(path) <= len(t.Nodes); {
		p, ok := parent[*id]
		if !ok {
			break
		}
		path = append(path, *id)
		id = p
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

// Tree returns session sid's tree.
func (c *Client) Tree(ctx context.Context, sid string) (Tree, error) {
	path, err := sessionPath(sid, "/tree")
	if err != nil {
		return Tree{}, err
	}
	var out Tree
	err = c.getJSON(ctx, path, nil, &out)
	return out, err
}

// Export formats.
const (
	FormatPi    = "pi"    // a pi v3 session file
	FormatJSONL = "jsonl" // Cairn's entries as stored, one a line, digests included
)

// Export writes session sid to w as a JSON Lines file in format (FormatPi
// or FormatJSONL), read from the log.
func (c *Client) Export(ctx context.Context, sid, format string, w io.Writer) error {
	if format != FormatPi && format != FormatJSONL {
		return fmt.Errorf("%w: format: want %q or %q, got %q", ErrInvalid, FormatPi, FormatJSONL, format)
	}
	path, err := sessionPath(sid, "/export")
	if err != nil {
		return err
	}
	resp, err := c.open(ctx, http.MethodGet, path, url.Values{"format": {format}}, nil, "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("client: export of %s: %w", sid, err)
	}
	return nil
}

// Imported is the answer of an import.
type Imported struct {
	ID      string `json:"id"`      // the new session's id
	Entries int    `json:"entries"` // entries written, the header included
}

// Import writes the pi session file (version 1–3) read from file as a new
// session, under id if not "" (else the file's own id). A session of that
// id that exists already is refused with [ErrRejected].
func (c *Client) Import(ctx context.Context, file io.Reader, id string) (Imported, error) {
	q := url.Values{}
	if id != "" {
		if err := events.ValidateSessionID(id); err != nil {
			return Imported{}, fmt.Errorf("%w: session id: %v", ErrInvalid, err)
		}
		q.Set("id", id)
	}
	resp, err := c.open(ctx, http.MethodPost, "/v1/import", q, file, "application/x-ndjson", nil)
	if err != nil {
		return Imported{}, err
	}
	defer resp.Body.Close()
	var out Imported
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return Imported{}, fmt.Errorf("client: the gateway answered the import with invalid JSON: %w", err)
	}
	return out, nil
}
