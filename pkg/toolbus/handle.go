package toolbus

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/nats-io/nats.go/jetstream"
)

// handle takes one call message to its single outcome: a stored result and an
// ack, a hand-back (NAK), or a termination of a message that names no call.
// ctx is the work pool's: it ends with ErrShutdown at the shutdown deadline.
func (s *Server) handle(ctx context.Context, msg jetstream.Msg) {
	var delivered uint64 = 1
	if meta, err := msg.Metadata(); err == nil {
		delivered = meta.NumDelivered
	}
	subjectTenant, subjectTool := subjectTail(msg.Subject())
	call, err := events.DecodeToolCall(msg.Data())
	if err == nil {
		err = validateCallID(call.ToolCallID)
	}
	if err != nil {
		s.refuse(msg, subjectTool, err)
		return
	}
	log := s.log.With("tenant", call.Session().Tenant, "session", call.SessionID, "toolCall", call.ToolCallID, "tool", call.Name, "delivery", delivered)
	span := startRun(msg, call, s.w.Name, delivered)
	defer span.End()
	fail := func(format string, args ...any) {
		s.finish(msg, call, tool.Error(fmt.Sprintf(format, args...)), 0, false)
	}
	if call.Name != subjectTool {
		fail("tool call names tool %q but was published on %s, the subject of tool %q", call.Name, msg.Subject(), subjectTool)
		return
	}
	if tenant := call.Session().Tenant; tenant != subjectTenant {
		fail("tool call of a session of tenant %q was published on %s, the subject of tenant %q", tenant, msg.Subject(), subjectTenant)
		return
	}
	if !s.serves(call.Session().Tenant) {
		fail("pool %q does not serve tenant %q", s.w.Pool, call.Session().Tenant)
		return
	}
	t, ok := s.tool(call.Name)
	if !ok {
		fail("unknown tool %q: pool %q serves %s", call.Name, s.w.Pool, strings.Join(s.toolNames(), ", "))
		return
	}
	spec := t.Spec()
	if s.isRunning(call.Session(), call.ToolCallID) {
		// Redelivered while still running here (in-progress acks were late):
		// the running execution will answer and acknowledge it.
		log.Warn("call redelivered while still running on this worker; leaving it to the running execution")
		return
	}
	if delivered > uint64(s.w.MaxDeliveries) {
		log.Error("giving up on a call delivered too often")
		fail("tool call %s was delivered %d times without completing (the limit is %d); giving up", call.ToolCallID, delivered, s.w.MaxDeliveries)
		return
	}
	// Only non-idempotent calls need a start record: an idempotent call is
	// simply run again on redelivery, its result deduplicated by Msg-Id.
	key := ""
	if !spec.Idempotent {
		key = startKey(call.Session(), call.ToolCallID)
		prev, won, err := claim(context.Background(), s.starts, key, s.w.Name, delivered)
		if err != nil {
			log.Warn("cannot record the call's start; handing it back", "err", err)
			_ = msg.NakWithDelay(time.Second)
			return
		}
		if !won {
			if prev.State == stateDone {
				log.Info("result already stored; acknowledging a redelivered call")
				_ = msg.Ack()
				return
			}
			log.Warn("not running a redelivered non-idempotent call again", "startedBy", prev.Worker)
			r := tool.Error(fmt.Sprintf("tool call %s (%s) was interrupted: it had started on worker %s, which stopped before returning a result; it is not idempotent, so it was not run again",
				call.ToolCallID, call.Name, prev.Worker))
			s.finishKeyed(msg, call, r, 0, true, key)
			return
		}
	} else if delivered > 1 {
		log.Info("running a redelivered idempotent call again")
	}
	workspace := ""
	if s.w.WorkspaceRoot != "" {
		var err error
		workspace, err = resolveWorkspace(s.w.WorkspaceRoot, call.Session(), call.Workspace)
		if err != nil {
			s.finishKeyed(msg, call, tool.Error(err.Error()), 0, false, key)
			return
		}
	}
	start := time.Now()
	res, handBack := s.execute(ctx, call, t, workspace)
	endRun(span, res, handBack)
	if handBack {
		log.Info("handing back a call cut off by shutdown")
		_ = msg.Nak()
		return
	}
	s.finishKeyed(msg, call, res, time.Since(start), false, key)
}

// refuse answers a message that is not a valid call: with an error result if
// it names its session and call, else by terminating it.
func (s *Server) refuse(msg jetstream.Msg, subjectTool string, cause error) {
	var peek struct {
		Tenant     string `json:"tenant"`
		SessionID  string `json:"sessionId"`
		ToolCallID string `json:"toolCallId"`
		Name       string `json:"name"`
	}
	_ = json.Unmarshal(msg.Data(), &peek)
	if events.Ref(peek.Tenant, peek.SessionID).Validate() == nil && validateCallID(peek.ToolCallID) == nil {
		name := peek.Name
		if events.ValidateToolName("name", name) != nil {
			name = subjectTool
		}
		s.log.Warn("invalid tool call; answering with an error result", "session", peek.SessionID, "toolCall", peek.ToolCallID, "err", cause)
		call := events.ToolCall{Tenant: peek.Tenant, SessionID: peek.SessionID, ToolCallID: peek.ToolCallID, Name: name}
		s.finish(msg, call, tool.Error("invalid tool call: "+cause.Error()), 0, false)
		return
	}
	reason := "invalid tool call naming no valid session and call id: " + cause.Error()
	s.log.Warn("terminating message", "subject", msg.Subject(), "reason", reason)
	if err := msg.TermWithReason(reason); err != nil {
		s.log.Warn("terminate failed", "err", err)
	}
}

// subjectTail returns the tenant and tool tokens of a call's subject,
// <prefix>.tool.<pool>.<tenant>.<tool>.
func subjectTail(subject string) (tenant, tool string) {
	i := strings.LastIndexByte(subject, '.')
	j := strings.LastIndexByte(subject[:max(i, 0)], '.')
	return subject[j+1 : max(i, j+1)], subject[i+1:]
}

// serves reports whether the worker's pool takes calls of tenant's
// sessions (every tenant when it is restricted to none).
func (s *Server) serves(tenant string) bool {
	return len(s.w.Tenants) == 0 || slices.Contains(s.w.Tenants, tenant)
}

func (s *Server) toolNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.mu.tools))
	for n := range s.mu.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (s *Server) tool(name string) (tool.Tool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.mu.tools[name]
	return t, ok
}
