//go:build cluster

package clustertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/cairn-agents/cairn/pkg/provider/secret"
)

// gatewayClient posts commands to the gateway, retrying with the same
// command id (the gateway's message id, so a retry is a no-op duplicate) while
// the platform recovers.
type gatewayClient struct {
	base  string
	http  *http.Client
	token secret.Secret // an admin key
}

// outcome is how the gateway acknowledged a command.
type outcome int

const (
	acked    outcome = iota // stored (and applied, or still to be)
	rejected                // refused by the orchestrator, recorded in the log
)

// post sends body to path until the gateway acknowledges it (2xx, or 504:
// stored but not yet applied), it is refused (409), or ctx ends. Any other
// answer (a 503 while NATS elects a leader, a lost connection) is retried.
func (c *gatewayClient) post(ctx context.Context, path string, body any) (outcome, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	var last string
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, "POST", c.base+path, bytes.NewReader(data))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+c.token.Reveal())
		resp, err := c.http.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case resp.StatusCode < 300, resp.StatusCode == http.StatusGatewayTimeout:
				return acked, nil
			case resp.StatusCode == http.StatusConflict:
				return rejected, nil
			case resp.StatusCode == http.StatusBadRequest:
				return 0, fmt.Errorf("POST %s: 400 %s", path, b)
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, b)
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("POST %s: not acknowledged before the deadline; last answer: %s", path, last)
		case <-tick.C:
		}
	}
}

func (c *gatewayClient) createSession(ctx context.Context, sid, commandID string) (outcome, error) {
	return c.post(ctx, "/v1/sessions?wait=applied", map[string]any{"id": sid, "commandId": commandID})
}

func (c *gatewayClient) prompt(ctx context.Context, sid, commandID, text string) (outcome, error) {
	return c.command(ctx, sid, commandID, map[string]any{"type": "prompt", "text": text, "whenBusy": "reject"})
}

// command sends body (its "id" set to commandID) to the session's commands.
func (c *gatewayClient) command(ctx context.Context, sid, commandID string, body map[string]any) (outcome, error) {
	body["id"] = commandID
	return c.post(ctx, "/v1/sessions/"+url.PathEscape(sid)+"/commands?wait=applied", body)
}

// createOnce asks once for a new session, waiting until it is applied, and
// returns the gateway's status.
func (c *gatewayClient) createOnce(ctx context.Context, sid, commandID string) (int, error) {
	data, _ := json.Marshal(map[string]any{"id": sid, "commandId": commandID})
	req, err := http.NewRequestWithContext(ctx, "POST", c.base+"/v1/sessions?wait=applied", bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token.Reveal())
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}
