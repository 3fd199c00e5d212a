package events

import "encoding/json"

// The golden examples: one canonical value of every entry type, message role,
// content block type, command type and event type, a tool call and a tool
// result. golden_test.go checks each against its file in testdata/golden.

const exampleTime = "2026-03-04T05:06:07.089Z"

func ptr[T any](v T) *T { return &v }

var exampleUsage = &Usage{Input: 1200, Output: 340, CacheRead: 800, CacheWrite: 64, TotalTokens: 2404,
	Cost: Cost{Input: 0.0036, Output: 0.0051, CacheRead: 0.00024, CacheWrite: 0.00024, Total: 0.00918}}

var exampleBlocks = map[string]Block{
	BlockText:     {Type: BlockText, Text: "The tests pass <now> & \"done\".", TextSignature: "txtsig-1"},
	BlockImage:    {Type: BlockImage, Data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", MimeType: "image/png"},
	BlockThinking: {Type: BlockThinking, Thinking: "The user wants the failing test fixed first.", ThinkingSignature: "EqQBCkYIBxgCKkB0c2lnbmF0dXJl"},
	BlockToolCall: {Type: BlockToolCall, ID: "toolu_01A2b3C4d5", Name: "read", Arguments: json.RawMessage(`{"path":"pkg/events/entry.go","offset":10}`), ThoughtSignature: "gem-sig"},
}

var exampleMessages = map[string]Message{
	RoleUser: {Role: RoleUser, Content: Content{Blocks: []Block{TextBlock("Fix the failing test, see the screenshot."), exampleBlocks[BlockImage]}},
		Timestamp: 1772600767089, CommandID: "cmd-7f3a"},
	RoleAssistant: {Role: RoleAssistant, Content: Content{Blocks: []Block{exampleBlocks[BlockThinking], TextBlock("Reading the file."), exampleBlocks[BlockToolCall]}},
		API: "anthropic-messages", Provider: "anthropic", Model: "claude-sonnet-4-5", Usage: exampleUsage,
		StopReason: StopToolUse, ResponseID: "msg_01XyZ", Timestamp: 1772600768000},
	RoleToolResult: {Role: RoleToolResult, ToolCallID: "toolu_01A2b3C4d5", ToolName: "read",
		Content: TextContent("package events\n"), Details: json.RawMessage(`{"lines":1,"truncated":false}`), Timestamp: 1772600768500},
	RoleCustom: {Role: RoleCustom, CustomType: "reminder", Content: Content{Blocks: []Block{TextBlock("Remember to run gofmt.")}, String: true},
		Display: true, Details: json.RawMessage(`{"source":"hook"}`), Timestamp: 1772600769000},
	RoleBranchSummary:     {Role: RoleBranchSummary, Summary: "Tried a regex; it did not handle nesting.", FromID: "a1b2c3d4", Timestamp: 1772600770000},
	RoleCompactionSummary: {Role: RoleCompactionSummary, Summary: "Goal: fix the decoder. Done: tests.", TokensBefore: 181234, Timestamp: 1772600771000},
	RoleBashExecution: {Role: RoleBashExecution, Command: "go test ./...", Output: "ok\n", ExitCode: ptr[int64](0),
		Truncated: true, FullOutputPath: "/tmp/pi-bash-1.log", Timestamp: 1772600772000},
}

func exampleEntry(typ string) Entry {
	e := Entry{Type: typ, ID: "e5f6a7b8", ParentID: ptr("a1b2c3d4"), Timestamp: exampleTime}
	switch typ {
	case EntrySession:
		e.ID, e.ParentID = "s-2026-03-04-demo", nil
		e.V, e.Version = SchemaVersion, PiVersion
		e.Cwd, e.ParentSession = "/home/dev/cairn", "s-2026-03-01-base"
		e.Model, e.ThinkingLevel, e.SystemPrompt = "anthropic/claude-sonnet-4-5", "medium", "You are a careful engineer."
		e.Tools = []string{"read", "bash", "edit"}
		e.Labels = map[string]string{"team": "core", "env": "dev"}
		e.Tenant = "acme"
	case EntryModelChange:
		e.Provider, e.ModelID = "openai", "gpt-5"
	case EntryThinkingLevelChange:
		e.ThinkingLevel = "high"
	case EntryActiveToolsChange:
		e.ActiveToolNames = []string{"read", "grep"}
	case EntryCompaction:
		e.Summary, e.FirstKeptEntryID, e.TokensBefore = "## Goal\nFix the decoder.", "c0ffee01", 181234
		e.Details = json.RawMessage(`{"readFiles":["a.go"],"modifiedFiles":["b.go"]}`)
	case EntryBranchSummary:
		e.FromID, e.Summary, e.FromHook = "deadbeef", "Abandoned the regex approach.", true
		e.Details = json.RawMessage(`{"files":2}`)
	case EntryLabel:
		e.TargetID, e.Label = ptr("c0ffee01"), "checkpoint"
	case EntryCustom:
		e.CustomType, e.Data = "todo-state", json.RawMessage(`{"open":["tests"],"done":[]}`)
	case EntryCustomMessage:
		e.CustomType, e.Content, e.Display = "git-status", TextContent("2 files changed"), true
		e.Details = json.RawMessage(`{"branch":"main"}`)
	case EntrySessionInfo:
		e.Name = "fix decoder"
	case EntryLeaf:
		e.V, e.TargetID, e.CommandID, e.ParentDigest = SchemaVersion, ptr("c0ffee01"), "cmd-nav-1", "sha256:4f2a"
	case EntryTurnInterrupted:
		e.V, e.Reason, e.ParentDigest = SchemaVersion, "orchestrator restarted during the turn", "sha256:77aa"
	case EntryCommandRejected:
		e.V, e.Reason, e.Code, e.CommandID = SchemaVersion, "session is running", "busy", "cmd-9"
	case EntryApprovalsChange:
		e.V, e.CommandID = SchemaVersion, "cmd-appr-1"
		e.Approvals = &Approvals{Tools: map[string]string{"bash": PolicyAsk, "*": PolicyAllow}, ExpiresAfterMs: 600000}
	case EntryApprovalRequested:
		e.V, e.ToolCallID, e.ToolName = SchemaVersion, "toolu_01", "bash"
		e.Arguments, e.ExpiresAt = json.RawMessage(`{"command":"rm -rf build"}`), "2026-03-04T05:16:07.089Z"
	case EntryApprovalAnswered:
		e.V, e.ToolCallID, e.Decision, e.CommandID, e.Principal = SchemaVersion, "toolu_01", DecisionApprove, "cmd-ok-1", "key:k1"
		e.Arguments = json.RawMessage(`{"command":"rm -rf build/tmp"}`)
	case EntryTaskStarted:
		e.V, e.ToolCallID, e.ToolName = SchemaVersion, "toolu_07", TaskTool
		e.Arguments, e.ChildSessionID = json.RawMessage(`{"prompt":"Find the flaky test."}`), ChildSessionID("s-2026-03-04-demo", "toolu_07")
	case EntryToolResultHeld:
		m := exampleMessages[RoleToolResult]
		e.V, e.ToolCallID, e.Message = SchemaVersion, m.ToolCallID, &m
	}
	return e
}

// exampleEntries names every entry example: one per entry type, and one
// message entry per role.
func exampleEntries() map[string]Entry {
	out := map[string]Entry{}
	for _, typ := range allEntryTypes {
		if typ == EntryMessage {
			continue
		}
		out[typ] = exampleEntry(typ)
	}
	for role, m := range exampleMessages {
		e := exampleEntry(EntryMessage)
		m := m
		e.Message = &m
		out[EntryMessage+"-"+role] = e
	}
	// An error message the harness retries carries its mark.
	r := exampleEntry(EntryMessage)
	r.V = SchemaVersion
	r.Message = &Message{Role: RoleAssistant, API: "anthropic-messages", Provider: "anthropic", Model: "claude-x",
		Content: Content{Blocks: []Block{}}, StopReason: StopError, ErrorMessage: "529 overloaded_error", Timestamp: 1772600767089}
	r.Retry = &RetryMark{Attempt: 1, DelayMs: 2000, Code: RetryTransient}
	out["message-retried"] = r
	// Fields Cairn does not model survive, in key order after the known ones.
	x := exampleEntry(EntryCustom)
	x.Extra = Extra{"piFuture": json.RawMessage(`{"a":[1,2]}`), "alpha": json.RawMessage(`true`)}
	out["custom-with-extra"] = x
	// A sub-agent's header names its parent, the calling task call and its depth.
	sub := exampleEntry(EntrySession)
	sub.ID, sub.ParentSession, sub.ParentToolCallID, sub.TaskDepth = ChildSessionID("s-2026-03-04-demo", "toolu_07"), "s-2026-03-04-demo", "toolu_07", 1
	out["session-subagent"] = sub
	return out
}

var allEntryTypes = []string{EntrySession, EntryMessage, EntryModelChange, EntryThinkingLevelChange,
	EntryActiveToolsChange, EntryCompaction, EntryBranchSummary, EntryLabel, EntryCustom, EntryCustomMessage,
	EntrySessionInfo, EntryLeaf, EntryTurnInterrupted, EntryCommandRejected,
	EntryApprovalsChange, EntryApprovalRequested, EntryApprovalAnswered, EntryToolResultHeld, EntryTaskStarted}

var allRoles = []string{RoleUser, RoleAssistant, RoleToolResult, RoleCustom, RoleBranchSummary,
	RoleCompactionSummary, RoleBashExecution}

var allBlockTypes = []string{BlockText, BlockImage, BlockThinking, BlockToolCall}

var allCommandTypes = []string{CmdCreate, CmdPrompt, CmdSteer, CmdFollowUp, CmdAbort, CmdNavigate,
	CmdCompact, CmdSetModel, CmdSetThinkingLevel, CmdSetTools, CmdLabel, CmdApprove, CmdDeny, CmdSetApprovals,
	CmdSkill, CmdPromptTemplate, CmdTaskResult}

func exampleCommands() map[string]Command {
	c := func(typ string) Command {
		return Command{V: SchemaVersion, ID: "cmd-" + typ, Type: typ, SessionID: "s-demo"}
	}
	out := map[string]Command{}
	for _, typ := range allCommandTypes {
		cmd := c(typ)
		switch typ {
		case CmdCreate:
			cmd.Model, cmd.SystemPrompt, cmd.Tools, cmd.Workspace = "anthropic/claude-sonnet-4-5", "Be brief.", []string{"read", "bash"}, "repo-1"
		case CmdPrompt:
			cmd.Text, cmd.WhenBusy = "What does <this> do?", BusyFollowUp
			cmd.Images = []Image{{Data: "aGVsbG8=", MimeType: "image/png"}}
		case CmdSteer, CmdFollowUp:
			cmd.Text = "Also check the docs."
		case CmdNavigate:
			cmd.EntryID, cmd.Summarize, cmd.Instructions = ptr("a1b2c3d4"), true, "Focus on what failed."
		case CmdCompact:
			cmd.Instructions = "Keep the file list."
		case CmdSetModel:
			cmd.Model = "openai/gpt-5"
		case CmdSetThinkingLevel:
			cmd.Level = "xhigh"
		case CmdSetTools:
			cmd.Tools = []string{"read"}
		case CmdLabel:
			cmd.EntryID, cmd.Label = ptr("a1b2c3d4"), "before-refactor"
		case CmdSkill:
			cmd.Name, cmd.Text, cmd.WhenBusy = "pdf", "Summarise report.pdf", BusySteer
		case CmdPromptTemplate:
			cmd.Name, cmd.Args = "review", []string{"main.go", "be strict"}
		case CmdApprove:
			cmd.ToolCallID, cmd.Arguments = "toolu_01", json.RawMessage(`{"command":"ls"}`)
		case CmdDeny:
			cmd.ToolCallID, cmd.Reason = "toolu_01", "not on a Friday"
		case CmdSetApprovals:
			cmd.Approvals = &Approvals{Tools: map[string]string{"write": PolicyAsk}}
		case CmdTaskResult:
			cmd.ID = TaskCommandID("result", ChildSessionID("s-demo", "toolu_07"), "")
			cmd.ToolCallID, cmd.ChildSessionID = "toolu_07", ChildSessionID("s-demo", "toolu_07")
		}
		out[typ] = cmd
	}
	root := c(CmdNavigate)
	root.ID = "cmd-navigate-root"
	out["navigate-root"] = root
	x := c(CmdAbort)
	x.Extra = Extra{"clientInfo": json.RawMessage(`{"name":"tui"}`)}
	out["abort-with-extra"] = x
	return out
}

func exampleEvents() map[string]Event {
	ev := func(typ string) Event {
		return Event{V: SchemaVersion, Type: typ, SessionID: "s-demo", Seq: 42, Time: exampleTime}
	}
	asst := exampleMessages[RoleAssistant]
	result := exampleMessages[RoleToolResult]
	out := map[string]Event{}
	for typ := range eventTypes {
		e := ev(typ)
		switch typ {
		case EvAgentEnd:
			e.Messages = []Message{exampleMessages[RoleUser], asst, result}
		case EvTurnEnd:
			e.Message, e.ToolResults = &asst, []Message{result}
		case EvMessageStart, EvMessageEnd:
			e.Message = &asst
		case EvMessageUpdate:
			e.Message = &asst
			e.Delta = &Delta{Kind: DeltaToolCall, ContentIndex: 2, Delta: `{"path":"pkg`, ToolCallID: "toolu_01A2b3C4d5", ToolName: "read"}
		case EvToolExecutionStart:
			e.ToolCallID, e.ToolName, e.Args = "toolu_01A2b3C4d5", "read", json.RawMessage(`{"path":"a.go"}`)
		case EvToolExecutionUpdate:
			e.ToolCallID, e.ToolName, e.Partial = "toolu_01A2b3C4d5", "read", &result
		case EvToolExecutionEnd:
			e.ToolCallID, e.ToolName, e.Result, e.IsError = "toolu_01A2b3C4d5", "read", &result, true
		case EvQueueUpdate:
			e.Queue = &Queue{Steering: []string{"stop and explain"}, FollowUp: []string{}}
		case EvCompactionStart:
			e.Compaction = &Compaction{Reason: "threshold", TokensBefore: 181234}
		case EvCompactionEnd:
			e.Compaction = &Compaction{Reason: "overflow", TokensBefore: 181234, Summary: "Goal: ...", EntryID: "c0ffee01"}
		case EvRetryStart:
			e.Retry = &Retry{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "overloaded"}
		case EvRetryEnd:
			e.Retry = &Retry{Attempt: 2, MaxAttempts: 3, Success: true}
		case EvHookError:
			e.Hook, e.Error = "before_tool_call", "hook timed out"
		case EvCommandRejected:
			e.CommandID, e.Error = "cmd-9", "session is running"
		case EvApprovalRequested:
			e.Approval = &Approval{ToolCallID: "toolu_01", ToolName: "bash", Arguments: json.RawMessage(`{"command":"ls"}`), EntryID: "e5f6a7b8"}
		case EvApprovalAnswered:
			e.Approval = &Approval{ToolCallID: "toolu_01", Decision: DecisionDeny, Reason: "not today", Principal: "key:k1", EntryID: "e5f6a7b9"}
		}
		out[typ] = e
	}
	return out
}

var exampleToolCall = ToolCall{V: SchemaVersion, SessionID: "s-demo", ToolCallID: "toolu_01A2b3C4d5", Name: "bash",
	Arguments: json.RawMessage(`{"command":"go test ./..."}`), Workspace: "repo-1", Idempotent: false, TimeoutMs: 120000,
	Owner: "orch-1", Dispatched: exampleTime}

var exampleToolResult = ToolResult{V: SchemaVersion, Kind: ResultKindTool, SessionID: "s-demo", ToolCallID: "toolu_01A2b3C4d5",
	ToolName: "bash", Content: []Block{TextBlock("ok  pkg/events 0.4s"), exampleBlocks[BlockImage]},
	Details: json.RawMessage(`{"exitCode":0}`), IsError: false, Terminate: true, DurationMs: 412, Worker: "runner-a"}
