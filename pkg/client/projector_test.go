package client_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/cairn-agents/cairn/pkg/client"
)

// A tree node carries its preview and tools; an online rebuild through the
// admin routes ends with the same digest as before; the answers decode
// strictly into the SDK's types and the routes are in the API document.
func TestTreePreviewsAndOnlineRebuild(t *testing.T) {
	p := newPlatform(t)
	cl := newClient(t, p.URL)
	ctx := ctxFor(t)
	if _, err := cl.CreateSession(ctx, client.CreateSession{ID: "r1"}, client.WaitApplied()); err != nil {
		t.Fatal(err)
	}
	acc, err := cl.Send(ctx, "r1", client.Prompt("please list files"), client.WaitApplied())
	if err != nil {
		t.Fatal(err)
	}
	settled(t, cl, "r1", acc.CommandID)
	var tree client.Tree
	eventually(t, "the whole run in the tree", func() (bool, string) {
		tree, err = cl.Tree(ctx, "r1")
		return err == nil && len(tree.Nodes) == 5, errString(err) // with the system prompt record after the prompt
	})
	if n := tree.Nodes[0]; n.Role != "user" || n.Preview != "please list files" {
		t.Errorf("the prompt's node: %+v", n)
	}
	if n := tree.Nodes[1]; n.Type != "custom" {
		t.Errorf("the system prompt record's node: %+v", n)
	}
	if n := tree.Nodes[2]; !slices.Equal(n.Tools, []string{"ls"}) {
		t.Errorf("the tool call's node: %+v", n)
	}
	if n := tree.Nodes[4]; n.Preview != "I see the files." {
		t.Errorf("the answer's node: %+v", n)
	}

	if st, err := cl.RebuildStatus(ctx); err != nil || st.State != client.RebuildIdle || st.Running() {
		t.Fatalf("status before: %+v %v", st, err)
	}
	before, err := cl.Digest(ctx)
	if err != nil || before.Applied == 0 || len(before.SHA256) != 64 {
		t.Fatalf("digest: %+v %v", before, err)
	}
	st, err := cl.StartRebuild(ctx)
	if err != nil || st.Target < before.Applied {
		t.Fatalf("StartRebuild: %+v %v", st, err)
	}
	if _, err := cl.StartRebuild(ctx); err != nil && !errors.Is(err, client.ErrRejected) {
		t.Fatalf("a second StartRebuild: %v, want none or ErrRejected while one runs", err)
	}
	eventually(t, "the online rebuild to end", func() (bool, string) {
		st, err = cl.RebuildStatus(ctx)
		return err == nil && !st.Running(), st.State
	})
	if st.State != client.RebuildDone || st.Applied < before.Applied || st.Error != "" {
		t.Fatalf("status after: %+v", st)
	}
	if after, err := cl.Digest(ctx); err != nil || after != before {
		t.Fatalf("digest after the rebuild %+v (%v), before %+v", after, err, before)
	}

	strict := func(path string, v any) {
		t.Helper()
		resp, err := authGet(p.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("%s: %v\n%s", path, err, data)
		}
	}
	strict("/v1/admin/projector/rebuild", &client.RebuildStatus{})
	strict("/v1/admin/projector/digest", &client.Digest{})
	paths := dig(t, openAPI(t), "paths").(map[string]any)
	for _, route := range []string{"/v1/admin/projector/rebuild", "/v1/admin/projector/digest"} {
		if _, ok := paths[route]; !ok {
			t.Errorf("the SDK calls %s, which the document lacks", route)
		}
	}
}
