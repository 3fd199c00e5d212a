// Cairn console. Plain JavaScript, no build step, no third-party code.
// Every read and write goes to this origin's public /v1 API with the login
// cookie; unsafe requests carry the CSRF token of the page's meta tag.
"use strict";
(function () {
  const body = document.body;
  const page = body.dataset.page;
  const canAct = body.dataset.canAct === "true";
  const isAdmin = body.dataset.admin === "true";
  const csrfMeta = document.querySelector('meta[name="cairn-csrf"]');
  const csrf = csrfMeta ? csrfMeta.content : "";
  const params = new URLSearchParams(location.search);
  // An admin may act for another tenant: ?tenant= on any page.
  const tenant = isAdmin ? (params.get("tenant") || "") : "";

  // ---- helpers ----------------------------------------------------------
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "text") e.textContent = v;
      else if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : v);
    }
    for (const kid of kids) if (kid !== null && kid !== undefined) e.append(kid);
    return e;
  }
  const svgNS = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, ...kids) {
    const e = document.createElementNS(svgNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") e.textContent = v; else e.setAttribute(k, v);
    }
    for (const kid of kids) if (kid) e.append(kid);
    return e;
  }
  const alertBox = document.getElementById("alert");
  function showError(msg) {
    alertBox.textContent = msg;
    alertBox.hidden = false;
  }
  function clearError() { alertBox.hidden = true; alertBox.textContent = ""; }

  class APIError extends Error {
    constructor(status, code, message) { super(message); this.status = status; this.code = code; }
  }
  function headers(extra) {
    const h = Object.assign({}, extra || {});
    if (tenant) h["Cairn-Tenant"] = tenant;
    return h;
  }
  async function api(method, path, data, opts) {
    opts = opts || {};
    const h = headers(opts.headers);
    let payload;
    if (method !== "GET") h["X-Cairn-CSRF"] = csrf;
    if (data !== undefined) {
      if (typeof data === "string") { payload = data; h["Content-Type"] = opts.contentType || "application/jsonl"; }
      else { payload = JSON.stringify(data); h["Content-Type"] = "application/json"; }
    }
    const resp = await fetch(path, { method, headers: h, body: payload, credentials: "same-origin", cache: "no-store" });
    if (resp.status === 401) { location.href = "/login"; throw new APIError(401, "unauthenticated", "not logged in"); }
    const text = await resp.text();
    if (!resp.ok) {
      let code = "", msg = text || resp.statusText;
      try { const j = JSON.parse(text); code = j.error.code; msg = j.error.message; } catch (_) { /* not JSON */ }
      throw new APIError(resp.status, code, msg);
    }
    if (opts.raw) return text;
    return text ? JSON.parse(text) : null;
  }
  function jsonl(text) {
    const out = [];
    for (const line of text.split("\n")) if (line.trim()) out.push(JSON.parse(line));
    return out;
  }
  const enc = encodeURIComponent;
  // One formatter each: toLocaleString builds a new one per call, which
  // costs seconds over a 5,000-entry session.
  const timeFmt = new Intl.DateTimeFormat(undefined, { dateStyle: "short", timeStyle: "medium" });
  const intFmt = new Intl.NumberFormat();
  function fmtTime(s) {
    if (!s) return "";
    const d = new Date(s);
    return isNaN(d) ? String(s) : timeFmt.format(d);
  }
  function fmtCost(c) { return "$" + (c || 0).toFixed(4); }
  function fmtInt(n) { return intFmt.format(n || 0); }
  function tenantQuery() { return tenant ? "?tenant=" + enc(tenant) : ""; }
  function statusBadge(s) { return el("span", { class: "badge st-" + s, text: s }); }
  function pretty(v) {
    if (v === undefined || v === null) return "";
    if (typeof v === "string") { try { return JSON.stringify(JSON.parse(v), null, 2); } catch (_) { return v; } }
    return JSON.stringify(v, null, 2);
  }

  // ---- messages ----------------------------------------------------------
  // A message's key, to render each message once whether it came from the
  // log or the live stream.
  function msgKey(m) { return m.role + ":" + (m.timestamp || 0) + ":" + (m.toolCallId || ""); }
  function textOf(content) {
    if (typeof content === "string") return content;
    return (content || []).filter(b => b.type === "text").map(b => b.text).join("");
  }
  function renderBlocks(content, li) {
    if (typeof content === "string") { li.append(el("div", { class: "text", text: content })); return; }
    for (const b of content || []) {
      if (b.type === "text") li.append(el("div", { class: "text", text: b.text }));
      else if (b.type === "thinking") li.append(el("details", { class: "thinking" }, el("summary", { text: "Thinking" }), el("pre", { text: b.thinking })));
      else if (b.type === "toolCall") li.append(el("div", { class: "toolcall", "data-tool-call": b.id },
        el("span", { class: "tool-name", text: "→ " + b.name }), el("pre", { class: "args", text: pretty(b.arguments) })));
      else if (b.type === "image") li.append(el("div", { class: "muted", text: "[image " + (b.mimeType || "") + "]" }));
    }
  }
  function renderMessage(m) {
    const li = el("li", { class: "msg role-" + m.role, "data-key": msgKey(m) });
    const head = el("div", { class: "msg-head" }, el("strong", { text: roleName(m) }));
    if (m.timestamp) head.append(el("time", { text: fmtTime(m.timestamp) }));
    li.append(head);
    if (m.role === "toolResult") {
      li.classList.toggle("is-error", !!m.isError);
      li.append(el("pre", { class: "result", text: textOf(m.content) }));
    } else if (m.role === "branchSummary" || m.role === "compactionSummary") {
      li.append(el("div", { class: "text", text: m.summary || "" }));
    } else {
      renderBlocks(m.content, li);
    }
    if (m.role === "assistant") {
      if (m.errorMessage) li.append(el("p", { class: "error", text: "Error: " + m.errorMessage }));
      if (m.stopReason === "aborted") li.append(el("p", { class: "notice", text: "aborted" }));
      if (m.usage) li.append(el("p", { class: "muted small", text: fmtInt(m.usage.totalTokens) + " tokens · " + fmtCost(m.usage.cost && m.usage.cost.total) }));
    }
    return li;
  }
  function roleName(m) {
    switch (m.role) {
      case "toolResult": return "tool result · " + (m.toolName || "") + (m.isError ? " (error)" : "");
      case "branchSummary": return "branch summary";
      case "compactionSummary": return "compaction summary";
      case "assistant": return "assistant" + (m.model ? " · " + m.model : "");
      default: return m.role;
    }
  }
  function notice(text, cls) { return el("li", { class: "notice " + (cls || ""), text }); }
  // renderEntry renders an entry of the log, or null for one with nothing to show.
  function renderEntry(e) {
    switch (e.type) {
      case "message": return renderMessage(e.message);
      case "compaction": return notice("Compacted " + fmtInt(e.tokensBefore) + " tokens: " + (e.summary || ""), "compaction");
      case "branch_summary": return notice("Branch summary: " + (e.summary || ""), "compaction");
      case "model_change": return notice("Model: " + e.provider + "/" + e.modelId);
      case "thinking_level_change": return notice("Thinking level: " + e.thinkingLevel);
      case "command_rejected": return notice("Command refused: " + (e.reason || e.error || ""), "error");
      case "approval_requested": return notice("Approval asked for " + e.toolName + " (" + e.toolCallId + ")" + (e.expiresAt ? ", expires " + fmtTime(e.expiresAt) : ""), "approval");
      case "approval_answered": return notice("Approval " + (e.decision || "answered") + " for " + e.toolCallId + (e.principal ? " by " + e.principal : "") + (e.reason ? ": " + e.reason : ""), "approval");
      case "turn_interrupted": return notice("A turn was interrupted (recovered)", "error");
      default: return null;
    }
  }

  // ---- sessions page -------------------------------------------------------
  function sessionsPage() {
    const tbody = document.querySelector("#sessions tbody");
    const more = document.getElementById("more");
    const count = document.getElementById("count");
    const fSearch = document.getElementById("f-search");
    const fStatus = document.getElementById("f-status");
    const fModel = document.getElementById("f-model");
    const fTenant = document.getElementById("f-tenant");
    if (fTenant && tenant) fTenant.value = tenant;
    let rows = new Map(); // id -> summary, newest activity first
    let cursor = "";
    const pageSize = 200;
    const models = new Set();

    function matches(s) {
      const q = fSearch.value.trim().toLowerCase();
      if (q && !(s.id.toLowerCase().includes(q) || (s.name || "").toLowerCase().includes(q))) return false;
      if (fStatus.value && s.status !== fStatus.value) return false;
      if (fModel.value && s.model !== fModel.value) return false;
      return true;
    }
    function render() {
      const frag = document.createDocumentFragment();
      let shown = 0;
      const list = [...rows.values()].sort((a, b) => (b.lastActivity || "").localeCompare(a.lastActivity || ""));
      for (const s of list) {
        if (!matches(s)) continue;
        shown++;
        const href = "/sessions/" + enc(s.id) + tenantQuery();
        const tr = el("tr", { "data-session": s.id },
          el("td", {}, el("a", { href, text: s.id }), s.name ? el("span", { class: "muted", text: " " + s.name }) : null),
          el("td", {}, statusBadge(s.status)),
          el("td", { text: s.model || "" }));
        if (isAdmin) tr.append(el("td", { text: s.tenant || tenant || body.dataset.tenant }));
        tr.append(el("td", { class: "num", text: fmtInt(s.entries) }), el("td", { class: "num", text: fmtCost(s.cost) }),
          el("td", {}, el("time", { datetime: s.lastActivity, text: fmtTime(s.lastActivity) })));
        frag.append(tr);
      }
      tbody.replaceChildren(frag);
      count.textContent = shown + " of " + rows.size + " loaded sessions" + (cursor ? " (more on the server)" : "");
      more.hidden = !cursor;
      for (const s of rows.values()) if (s.model && !models.has(s.model)) {
        models.add(s.model);
        fModel.append(el("option", { text: s.model }));
      }
    }
    async function load(next) {
      const q = "/v1/sessions?limit=" + pageSize + (next ? "&cursor=" + enc(next) : "");
      const page = await api("GET", q);
      for (const s of page.sessions) rows.set(s.id, s);
      return page.nextCursor || "";
    }
    async function first() {
      try {
        cursor = await load("");
        render();
        body.dataset.loaded = "true";
      } catch (e) { showError("Listing sessions failed: " + e.message); }
    }
    // Live status: the newest page is read again every few seconds while
    // the page is visible; rows it holds replace the ones shown.
    async function refresh() {
      if (document.hidden) return;
      try {
        const page = await api("GET", "/v1/sessions?limit=" + pageSize);
        for (const s of page.sessions) rows.set(s.id, s);
        render();
        clearError();
      } catch (e) { showError("Refreshing sessions failed: " + e.message); }
    }
    more.addEventListener("click", async () => {
      try { cursor = await load(cursor); render(); } catch (e) { showError(e.message); }
    });
    for (const f of [fSearch, fStatus, fModel]) f.addEventListener("input", render);
    document.getElementById("filters").addEventListener("submit", ev => {
      ev.preventDefault();
      if (fTenant) {
        const u = new URL(location.href);
        if (fTenant.value) u.searchParams.set("tenant", fTenant.value); else u.searchParams.delete("tenant");
        location.href = u.toString();
      }
    });
    if (fTenant) fTenant.addEventListener("change", () => document.getElementById("filters").requestSubmit());
    const create = document.getElementById("create-form");
    if (create) create.addEventListener("submit", async ev => {
      ev.preventDefault();
      const req = {};
      const id = document.getElementById("c-id").value.trim();
      const model = document.getElementById("c-model").value.trim();
      if (id) req.id = id;
      if (model) req.model = model;
      try {
        const out = await api("POST", "/v1/sessions?wait=applied", req);
        location.href = "/sessions/" + enc(out.id) + tenantQuery();
      } catch (e) { showError("Creating the session failed: " + e.message); }
    });
    first();
    setInterval(refresh, 3000);
  }

  // ---- session page --------------------------------------------------------
  function sessionPage() {
    const sid = body.dataset.session;
    const base = "/v1/sessions/" + enc(sid);
    const transcript = document.getElementById("transcript");
    const live = document.getElementById("live");
    const streamState = document.getElementById("s-stream");
    const shownAtFirst = 300;   // entries of the path rendered at load
    // Every item of the output by its key: "m:" and a message's key, "e:"
    // and the id of another entry, "rs:"/"re:" and the key of a retried
    // message for a retry's start and end; so that each shows once whether
    // it came from the log or the live stream.
    const shown = new Map();
    let lastAssistant = "";     // key of the last assistant message shown live
    let liveRetry = "";         // key of the retried message of the live retry
    let logRetry = "";          // the same, reading the log
    let lastSeq = 0;            // the last log sequence rendered
    let leaf = null;
    let pathIds = new Set();
    let lastEventId = 0;
    let historyLoaded = false;
    let pending = [];           // events that came before the history
    let es = null;
    const liveBlocks = new Map(); // contentIndex -> element, of the message streaming now
    let liveMsg = null;
    const liveTools = new Map();  // toolCallId -> element

    // Tabs: arrow keys move between them.
    const tabs = [...document.querySelectorAll('[role="tab"]')];
    function selectTab(t) {
      for (const o of tabs) {
        const on = o === t;
        o.setAttribute("aria-selected", on);
        o.tabIndex = on ? 0 : -1;
        document.getElementById(o.getAttribute("aria-controls")).hidden = !on;
      }
      const v = t.id.slice(2);
      if (v === "tree") loadTree();
      if (v === "context") loadContext();
      if (v === "tools") loadTools();
    }
    tabs.forEach((t, i) => {
      t.tabIndex = i === 0 ? 0 : -1;
      t.addEventListener("click", () => selectTab(t));
      t.addEventListener("keydown", ev => {
        const d = ev.key === "ArrowRight" ? 1 : ev.key === "ArrowLeft" ? -1 : 0;
        if (!d) return;
        const n = tabs[(i + d + tabs.length) % tabs.length];
        n.focus(); selectTab(n);
      });
    });

    async function loadSummary() {
      try {
        const s = await api("GET", base);
        const st = document.getElementById("s-status");
        st.replaceChildren(statusBadge(s.status));
        body.dataset.status = s.status;
        document.getElementById("s-model").textContent = s.model || "";
        document.getElementById("s-entries").textContent = fmtInt(s.entries);
        document.getElementById("s-tokens").textContent = fmtInt(s.tokens && s.tokens.total);
        document.getElementById("s-cost").textContent = fmtCost(s.cost);
        return s;
      } catch (e) {
        if (e.status === 404) showError("No session " + sid + " (yet): the read model may not have it.");
        else showError("Reading the session failed: " + e.message);
        return null;
      }
    }
    async function allEntries(after) {
      const out = [];
      for (;;) {
        const page = jsonl(await api("GET", base + "/entries?format=jsonl&limit=10000" + (after ? "&after=" + after : ""), undefined, { raw: true }));
        out.push(...page);
        if (page.length < 10000) return out;
        after = page[page.length - 1].seq;
      }
    }
    function activePath(entries, leafId) {
      const byId = new Map(entries.map(r => [r.entry.id, r]));
      const ids = new Set();
      for (let id = leafId; id; ) {
        const r = byId.get(id);
        if (!r || ids.has(id)) break;
        ids.add(id);
        id = r.entry.parentId;
      }
      return ids;
    }
    function retryEndText(ok, err) { return ok ? "Retry succeeded" : "Retry gave up" + (err ? ": " + err : ""); }
    // logItems returns the items of log entry r in output order, each with
    // its key and its place in log order (ord: 4 × seq, plus 1 for the
    // entry, 0 for a notice before it, 2 for one after it). A retry is
    // drawn from the log as the live stream draws it: the retried
    // message's mark gives "Retrying…" after it, the next assistant
    // message "Retry succeeded" after it or "Retry gave up" (before an
    // error, which the stream announces first). The log holds no attempt
    // limit, so its notice names the attempt alone.
    function logItems(r) {
      const e = r.entry, s = r.seq * 4, out = [];
      if (e.type !== "message") {
        out.push({ key: "e:" + e.id, ord: s + 1, entry: e.id, make: () => renderEntry(e) });
        return out;
      }
      const m = e.message, k = msgKey(m);
      const mark = e.retry && (e.retry.code === "transient" || e.retry.code === "overflow") ? e.retry : null;
      let after = null;
      if (m.role === "assistant" && logRetry && !mark) {
        const ok = m.stopReason !== "error" && m.stopReason !== "aborted";
        const n = { key: "re:" + logRetry, make: () => notice(retryEndText(ok, m.errorMessage), "retry") };
        if (m.stopReason === "error") { n.ord = s; out.push(n); } else { n.ord = s + 2; after = n; }
        logRetry = "";
      }
      out.push({ key: "m:" + k, ord: s + 1, entry: e.id, make: () => renderMessage(m) });
      if (after) out.push(after);
      if (mark && mark.code === "transient") {
        out.push({ key: "rs:" + k, ord: s + 2, make: () => notice("Retrying (attempt " + mark.attempt + ") in " + (mark.delayMs || 0) + " ms: " + (m.errorMessage || ""), "retry") });
      }
      if (mark) logRetry = k;
      if (m.role === "assistant") lastAssistant = k;
      return out;
    }
    // make renders item it unless it is shown; it returns the new element
    // or null.
    function make(it) {
      if (shown.has(it.key)) return null;
      const li = it.make();
      shown.set(it.key, li || null);
      if (!li) return null;
      li.dataset.ord = it.ord;
      if (it.entry) li.dataset.entry = it.entry;
      return li;
    }
    // place inserts li into the output at its place in log order: after
    // the last item whose place is known and earlier. Items of the live
    // stream not yet read from the log have no place; they are newer than
    // what the log read holds, or not in the log at all, and stay as they are.
    function place(li) {
      const ord = Number(li.dataset.ord), kids = transcript.children;
      let first = null;
      for (let i = kids.length - 1; i >= 0; i--) {
        const o = kids[i].dataset.ord;
        if (o === undefined) continue;
        if (Number(o) < ord) { kids[i].after(li); return; }
        first = kids[i];
      }
      if (first) first.before(li); else transcript.append(li);
    }
    // history renders the active path from the log.
    async function history() {
      const [tree, entries] = await Promise.all([api("GET", base + "/tree"), allEntries(0)]);
      leaf = tree.leaf;
      pathIds = activePath(entries, leaf);
      shown.clear(); logRetry = "";
      liveBlocks.clear(); liveTools.clear(); liveMsg = null;
      live.replaceChildren();
      // A long path shows its last entries first; the rest on request,
      // so a 5,000-entry session renders as fast as a short one.
      const onPath = entries.filter(r => pathIds.has(r.entry.id));
      const items = onPath.map(logItems); // in order: a retry spans entries
      const cut = Math.max(0, onPath.length - shownAtFirst);
      const frag = document.createDocumentFragment();
      if (cut > 0) {
        const more = el("li", { class: "notice" }, el("button", { type: "button", id: "earlier", text: "Show " + cut + " earlier entries" }));
        more.querySelector("button").addEventListener("click", () => {
          const f = document.createDocumentFragment();
          for (const its of items.slice(0, cut)) for (const it of its) { const li = make(it); if (li) f.append(li); }
          more.replaceWith(f);
        });
        frag.append(more);
      }
      for (const its of items.slice(cut)) for (const it of its) { const li = make(it); if (li) frag.append(li); }
      for (const r of entries) lastSeq = Math.max(lastSeq, r.seq);
      transcript.replaceChildren(frag);
      historyLoaded = true;
      const buffered = pending; pending = [];
      for (const ev of buffered) onEvent(ev);
    }
    // catchUp appends what the log holds after the last entry rendered:
    // whatever the live stream missed before it opened. A leaf entry (a
    // navigation) changes the path: the history is read again.
    async function catchUp() {
      try {
        const entries = await allEntries(lastSeq);
        if (entries.some(r => r.entry.type === "leaf")) { await history(); return; }
        // Items the stream showed first get their place; the rest are
        // put in theirs, so a notice read now lands among the messages
        // where the log has it, not after the ones streamed since.
        const items = entries.flatMap(logItems);
        for (const r of entries) lastSeq = Math.max(lastSeq, r.seq);
        for (const it of items) {
          const li = shown.get(it.key);
          if (li) { li.dataset.ord = it.ord; if (it.entry) li.dataset.entry = it.entry; }
        }
        for (const it of items) { const li = make(it); if (li) place(li); }
      } catch (e) { showError("Reading the log failed: " + e.message); }
    }

    function liveNotice(text, cls) { live.append(el("p", { class: "notice " + (cls || ""), text })); }
    // A retry and a compaction are part of the run's output: their notices
    // go to the transcript, which the run's end does not clear as it
    // clears #live (a manual compaction has no run end at all).
    function outputNotice(text, cls, key) {
      if (key && shown.has(key)) return;
      const li = notice(text, cls);
      if (key) shown.set(key, li);
      transcript.append(li);
    }
    function compactionEnd(c) {
      for (const n of live.querySelectorAll(".notice.compacting")) n.remove();
      if (c.error || c.aborted || !c.entryId) {
        outputNotice(c.error ? "Compaction failed: " + c.error : c.aborted ? "Compaction aborted" : "Compacted", "compaction" + (c.error ? " error" : ""));
        return;
      }
      if (shown.has("e:" + c.entryId)) return;
      // as the log's entry renders, so that reading the log adds nothing
      const li = renderEntry({ type: "compaction", tokensBefore: c.tokensBefore, summary: c.summary });
      li.dataset.entry = c.entryId;
      shown.set("e:" + c.entryId, li);
      transcript.append(li);
    }
    function finishMessage(m) {
      if (liveMsg) { liveMsg.remove(); liveMsg = null; liveBlocks.clear(); }
      const k = msgKey(m);
      if (m.role === "assistant") lastAssistant = k;
      if (shown.has("m:" + k)) return;
      const li = renderMessage(m);
      shown.set("m:" + k, li);
      transcript.append(li);
    }
    function onEvent(ev) {
      if (!historyLoaded) { pending.push(ev); return; }
      switch (ev.type) {
        case "agent_start": body.dataset.status = "running"; document.getElementById("s-status").replaceChildren(statusBadge("running")); break;
        case "message_start":
          if (ev.message && ev.message.role === "assistant") {
            liveMsg = el("div", { class: "msg role-assistant streaming", "aria-busy": "true" }, el("div", { class: "msg-head" }, el("strong", { text: "assistant (streaming)" })));
            live.append(liveMsg);
          } else if (ev.message) finishMessage(ev.message);
          break;
        case "message_update": {
          const d = ev.delta;
          if (!liveMsg || !d) break;
          let b = liveBlocks.get(d.contentIndex);
          if (!b) {
            if (d.kind === "thinking") { const pre = el("pre"); b = el("details", { class: "thinking" }, el("summary", { text: "Thinking" }), pre); b.sink = pre; }
            else if (d.kind === "toolCall") { const pre = el("pre", { class: "args" }); b = el("div", { class: "toolcall" }, el("span", { class: "tool-name", text: "→ " + (d.toolName || "") }), pre); b.sink = pre; }
            else { b = el("div", { class: "text" }); b.sink = b; }
            liveBlocks.set(d.contentIndex, b);
            liveMsg.append(b);
          }
          b.sink.textContent += d.delta;
          break;
        }
        case "message_end": if (ev.message) finishMessage(ev.message); break;
        case "tool_execution_start": {
          const t = el("div", { class: "tool-live", "data-tool-call": ev.toolCallId }, el("span", { class: "tool-name", text: "⚙ " + ev.toolName + " running" }), el("pre", { class: "args", text: pretty(ev.args) }));
          liveTools.set(ev.toolCallId, t); live.append(t); break;
        }
        case "tool_execution_update": {
          const t = liveTools.get(ev.toolCallId);
          if (t && ev.partial) { let p = t.querySelector(".partial"); if (!p) { p = el("pre", { class: "partial" }); t.append(p); } p.textContent = textOf(ev.partial.content); }
          break;
        }
        case "tool_execution_end": {
          const t = liveTools.get(ev.toolCallId);
          if (t) { t.remove(); liveTools.delete(ev.toolCallId); }
          if (ev.result) finishMessage(Object.assign({ role: "toolResult", toolCallId: ev.toolCallId, toolName: ev.toolName, isError: ev.isError }, ev.result));
          break;
        }
        case "turn_end": for (const m of ev.toolResults || []) finishMessage(m); break;
        // A retry follows the message it retries (published just before).
        case "auto_retry_start":
          liveRetry = lastAssistant;
          outputNotice("Retrying (attempt " + ev.retry.attempt + " of " + ev.retry.maxAttempts + ") in " + (ev.retry.delayMs || 0) + " ms: " + (ev.retry.errorMessage || ""), "retry", liveRetry && "rs:" + liveRetry);
          break;
        case "auto_retry_end":
          outputNotice(retryEndText(ev.retry.success, ev.retry.errorMessage), "retry", liveRetry && "re:" + liveRetry);
          liveRetry = "";
          break;
        case "compaction_start": liveNotice("Compacting (" + ev.compaction.reason + ")…", "compaction compacting"); break;
        case "compaction_end": compactionEnd(ev.compaction); break;
        case "queue_update": {
          const q = ev.queue || {};
          document.getElementById("p-state") && (document.getElementById("p-state").textContent = "Queued: " + (q.steering || []).length + " steering, " + (q.followUp || []).length + " follow-up");
          break;
        }
        case "approval_requested": {
          const a = ev.approval || {};
          const box = el("div", { class: "card approval", "data-tool-call": a.toolCallId },
            el("p", {}, el("strong", { text: "Waiting for approval: " }), (a.toolName || "") + " ", el("code", { text: a.toolCallId || "" })),
            el("pre", { class: "args", text: pretty(a.arguments) }));
          if (canAct) box.append(el("div", { class: "row" },
            el("button", { type: "button", "data-action": "approve", text: "Approve", onclick: () => send({ type: "approve", toolCallId: a.toolCallId }).then(() => box.remove(), () => {}) }),
            el("button", { type: "button", class: "danger", "data-action": "deny", text: "Deny", onclick: () => {
              const reason = prompt("Why deny " + (a.toolName || "this call") + "?");
              if (reason) send({ type: "deny", toolCallId: a.toolCallId, reason }).then(() => box.remove(), () => {});
            } })));
          live.append(box);
          body.dataset.status = "waiting";
          document.getElementById("s-status").replaceChildren(statusBadge("waiting"));
          break;
        }
        case "approval_answered": {
          const a = ev.approval || {};
          const box = live.querySelector('.approval[data-tool-call="' + CSS.escape(a.toolCallId || "") + '"]');
          if (box) box.remove();
          liveNotice("Approval " + (a.decision || "answered") + " for " + (a.toolName || a.toolCallId || "") + (a.principal ? " by " + a.principal : "") + (a.reason ? ": " + a.reason : ""), "approval");
          break;
        }
        case "hook_error": liveNotice("Hook " + ev.hook + " failed: " + ev.error, "error"); break;
        case "command_rejected": liveNotice("Command " + ev.commandId + " refused: " + ev.error, "error"); break;
        case "agent_end":
          live.replaceChildren(); liveBlocks.clear(); liveTools.clear(); liveMsg = null;
          settle();
          break;
      }
    }
    // settle reads the summary until the read model has the run's end.
    async function settle() {
      for (let i = 0; i < 20; i++) {
        const s = await loadSummary();
        await catchUp();
        if (!s || s.status !== "running") { body.dataset.settled = String(lastEventId); return; }
        await new Promise(r => setTimeout(r, 250 * (i + 1)));
      }
    }
    // The live stream. The browser's EventSource resumes by itself with
    // Last-Event-ID; when a stream is closed for good it is opened again
    // after the last id seen (?after=), so no event is missed or repeated.
    function connect() {
      const q = lastEventId ? "?after=" + lastEventId : "";
      es = new EventSource(base + "/events" + q);
      es.onopen = () => { streamState.textContent = "live"; body.dataset.stream = "live"; };
      es.onmessage = msg => {
        const id = Number(msg.lastEventId);
        if (id && id <= lastEventId) return; // a repeat
        if (id) lastEventId = id;
        body.dataset.lastEvent = String(lastEventId);
        let ev;
        try { ev = JSON.parse(msg.data); } catch (_) { return; }
        onEvent(ev);
      };
      es.onerror = () => {
        streamState.textContent = "reconnecting";
        body.dataset.stream = "reconnecting";
        if (es.readyState === EventSource.CLOSED) { es = null; setTimeout(connect, 1000); }
      };
    }
    // For people and tests: drop the stream as a network failure would.
    window.cairnDropStream = () => { if (es) { es.close(); es = null; streamState.textContent = "reconnecting"; body.dataset.stream = "reconnecting"; setTimeout(connect, 200); } };

    // ---- commands
    // A command that may queue (steer, follow-up, a prompt that lets
    // itself queue when busy) is applied only when the run reaches it,
    // perhaps minutes later (after an approval, at the run's end): it is
    // sent without waiting, its queueing shows as queue changes and a
    // refusal as a refused command in the stream. The rest wait to be
    // applied, so a refusal shows here.
    async function send(cmd) {
      clearError();
      const state = document.getElementById("p-state");
      const queues = cmd.type === "steer" || cmd.type === "follow_up" ||
        (cmd.type === "prompt" && (cmd.whenBusy === "steer" || cmd.whenBusy === "follow_up"));
      try {
        const out = await api("POST", base + "/commands" + (queues ? "" : "?wait=applied"), cmd);
        if (state) state.textContent = cmd.type + (queues ? " sent; applied when the run reaches it (" : " applied (") + out.commandId + ")";
        return out;
      } catch (e) {
        if (e.status === 504 && e.code === "timeout") { // stored; the run has not reached it yet
          if (state) state.textContent = cmd.type + " stored, not applied yet: " + e.message;
          return {};
        }
        showError(cmd.type + " refused: " + e.message);
        if (state) state.textContent = "";
        throw e;
      }
    }
    const form = document.getElementById("prompt-form");
    if (form) {
      const text = document.getElementById("p-text");
      const busy = document.getElementById("p-busy");
      form.addEventListener("submit", async ev => {
        ev.preventDefault();
        const t = text.value.trim();
        if (!t) return;
        try { await send({ type: "prompt", text: t, whenBusy: busy.value }); text.value = ""; } catch (_) { /* shown */ }
      });
      for (const id of ["p-steer", "p-follow"]) document.getElementById(id).addEventListener("click", async ev => {
        const t = text.value.trim();
        if (!t) { text.focus(); return; }
        try { await send({ type: ev.target.dataset.type, text: t }); text.value = ""; } catch (_) { /* shown */ }
      });
      document.getElementById("p-abort").addEventListener("click", () => send({ type: "abort" }).catch(() => {}));
      document.getElementById("p-compact").addEventListener("click", () => send({ type: "compact" }).catch(() => {}));
    }

    // ---- tree
    // conversational says whether tree node n is a point of the
    // conversation, from the type the tree route gives it: a message (of
    // any role), a custom message, a compaction or a branch summary, where
    // navigating, forking or a label lead somewhere. Bookkeeping entries
    // (labels, leaf moves, approvals, model and thinking changes, refused
    // commands, interruptions, session info) get no such action.
    const conversationTypes = new Set(["message", "custom_message", "compaction", "branch_summary"]);
    function conversational(n) { return conversationTypes.has(n.type); }
    async function loadTree() {
      const ul = document.getElementById("tree");
      try {
        const t = await api("GET", base + "/tree");
        const nodes = new Map(t.nodes.map(n => [n.id, n]));
        const onPath = new Set();
        for (let id = t.leaf; id; id = nodes.get(id) && nodes.get(id).parentId) { if (onPath.has(id)) break; onPath.add(id); }
        const roots = t.nodes.filter(n => !n.parentId || !nodes.has(n.parentId));
        const labels = new Map();
        for (const n of t.nodes) if (n.type === "label" && n.preview) labels.set(n.parentId, n.preview);
        function row(n) {
          const li = el("li", { "data-entry": n.id, class: onPath.has(n.id) ? "on-path" : "" });
          const line = el("div", { class: "node" + (n.id === t.leaf ? " leaf" : "") },
            el("code", { text: n.id }), " ",
            el("span", { class: "node-type", text: n.type + (n.role ? " · " + n.role : "") }), " ",
            el("span", { class: "preview", text: n.preview || (n.tools || []).join(", ") }));
          if (n.label) line.append(el("span", { class: "label", text: "🏷 " + n.label }));
          if (n.id === t.leaf) line.append(el("strong", { class: "leaf-mark", text: " ← active leaf" }));
          if (canAct && conversational(n)) {
            line.append(el("button", { type: "button", class: "small", "data-action": "navigate", text: "Navigate here", "aria-label": "Navigate to " + n.id,
              onclick: async () => {
                const summarize = document.getElementById("nav-summarize").checked;
                try { await send({ type: "navigate", entryId: n.id, summarize }); await history(); await loadTree(); } catch (_) { /* shown */ }
              } }));
            line.append(el("button", { type: "button", class: "small", "data-action": "fork", text: "Fork", "aria-label": "Fork a new session from " + n.id, onclick: () => fork(n.id) }));
            line.append(el("button", { type: "button", class: "small", "data-action": "label", text: "Label", "aria-label": "Label " + n.id,
              onclick: async () => {
                const l = prompt("Label for " + n.id + " (empty clears)", n.label || "");
                if (l === null) return;
                try { await send({ type: "label", entryId: n.id, label: l }); await loadTree(); } catch (_) { /* shown */ }
              } }));
          }
          li.append(line);
          return li;
        }
        // items renders n and its descendants into out: a chain of only
        // children stays at one level; a branch point indents each branch.
        function items(n, out) {
          for (;;) {
            const li = row(n);
            out.append(li);
            const kids = n.children.filter(c => nodes.has(c)).map(c => nodes.get(c));
            if (kids.length === 1) { n = kids[0]; continue; }
            if (kids.length > 1) {
              const sub = el("ul", { class: "branches" });
              for (const k of kids) { const b = el("li", { class: "branch" }, el("ul")); items(k, b.firstChild); sub.append(b); }
              li.append(sub);
            }
            return;
          }
        }
        const frag = document.createDocumentFragment();
        for (const r of roots) items(r, frag);
        ul.replaceChildren(frag);
        ul.dataset.loaded = "true";
      } catch (e) { showError("Reading the tree failed: " + e.message); }
    }
    // fork copies the path from the root to entry id into a new session:
    // the pi export, cut to that path, imported under a new id.
    async function fork(id) {
      const newId = prompt("Id of the new session", sid + "-fork");
      if (!newId) return;
      try {
        const lines = (await api("GET", base + "/export?format=pi", undefined, { raw: true })).split("\n").filter(l => l.trim());
        const recs = lines.map(l => JSON.parse(l));
        const byId = new Map(recs.filter(r => r.id).map(r => [r.id, r]));
        const keep = new Set();
        for (let x = id; x && byId.has(x); x = byId.get(x).parentId) keep.add(x);
        const out = recs.filter(r => r.type === "session" || keep.has(r.id)).map(r => JSON.stringify(r)).join("\n") + "\n";
        const res = await api("POST", "/v1/import?id=" + enc(newId), out, { contentType: "application/x-ndjson" });
        location.href = "/sessions/" + enc(res.id) + tenantQuery();
      } catch (e) { showError("Fork failed: " + e.message); }
    }

    // ---- context
    async function loadContext() {
      try {
        const c = await api("GET", base + "/context");
        document.getElementById("ctx-meta").textContent = "Model " + c.model + " · thinking " + c.thinkingLevel + " · tools " + (c.tools || []).join(", ") + " · " + c.messages.length + " messages" + (c.compactionId ? " · after compaction " + c.compactionId : "");
        const frag = document.createDocumentFragment();
        for (const m of c.messages) frag.append(renderMessage(m));
        document.getElementById("context").replaceChildren(frag);
      } catch (e) { showError("Reading the context failed: " + e.message); }
    }

    // ---- tool calls
    async function loadTools() {
      try {
        const p = await api("GET", "/v1/audit/tool-calls?session=" + enc(sid) + "&limit=1000");
        const frag = document.createDocumentFragment();
        for (const t of p.toolCalls) frag.append(el("tr", {},
          el("td", {}, el("time", { text: fmtTime(t.started) })), el("td", { text: t.tool }), el("td", {}, el("code", { text: t.id })),
          el("td", {}, el("span", { class: "badge out-" + t.outcome, text: t.outcome })), el("td", { class: "num", text: t.durationMs + " ms" })));
        document.querySelector("#tools tbody").replaceChildren(frag);
      } catch (e) { showError("Reading tool calls failed: " + e.message); }
    }

    // ---- audit
    document.getElementById("verify").addEventListener("click", async () => {
      const out = document.getElementById("verify-result");
      out.textContent = "Verifying…";
      try {
        const resp = await fetch("/sessions/" + enc(sid) + "/verify" + tenantQuery(), { credentials: "same-origin", cache: "no-store" });
        const v = await resp.json();
        if (!resp.ok) throw new Error(v.error.message);
        out.replaceChildren(v.ok
          ? el("span", { class: "ok", text: "✓ Verified: " + v.entries + " entries form an unbroken hash chain. Last digest " + v.lastDigest })
          : el("span", { class: "error", text: "✗ " + v.problems.length + " problem(s): " + v.problems.map(p => p.Detail).join("; ") }));
        out.dataset.ok = String(v.ok);
      } catch (e) { out.textContent = "Verification failed: " + e.message; }
    });

    connect();
    loadSummary();
    history().then(() => { body.dataset.loaded = "true"; }, e => showError("Reading the log failed: " + e.message));
  }

  // ---- usage page ----------------------------------------------------------
  const palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
  // barChart draws stacked bars per day, one colour per model, as SVG.
  function barChart(container, rows, value, label) {
    const days = [...new Set(rows.map(r => r.day))].sort();
    const models = [...new Set(rows.map(r => r.model))].sort();
    if (!days.length) { container.replaceChildren(el("p", { class: "muted", text: "No usage in this range." })); return; }
    const totals = days.map(d => rows.filter(r => r.day === d).reduce((a, r) => a + value(r), 0));
    const max = Math.max(...totals) || 1;
    const W = 640, H = 240, padL = 56, padB = 40, bw = Math.max(4, Math.min(48, (W - padL) / days.length - 6));
    const g = svg("svg", { viewBox: "0 0 " + W + " " + (H + 30 + 18 * Math.ceil(models.length / 3)), role: "img", "aria-label": label, class: "chart-svg" });
    g.append(svg("title", { text: label }));
    for (let i = 0; i <= 4; i++) {
      const y = H - padB - (H - padB - 10) * i / 4;
      g.append(svg("line", { x1: padL, x2: W, y1: y, y2: y, class: "grid" }));
      g.append(svg("text", { x: padL - 4, y: y + 4, "text-anchor": "end", class: "axis", text: fmtAxis(max * i / 4) }));
    }
    days.forEach((d, i) => {
      const x = padL + 4 + i * ((W - padL) / days.length);
      let y = H - padB;
      models.forEach((m, mi) => {
        const v = rows.filter(r => r.day === d && r.model === m).reduce((a, r) => a + value(r), 0);
        if (!v) return;
        const h = (H - padB - 10) * v / max;
        y -= h;
        g.append(svg("rect", { x, y, width: bw, height: h, fill: palette[mi % palette.length] }, svg("title", { text: d + " " + m + ": " + fmtAxis(v) })));
      });
      g.append(svg("text", { x: x + bw / 2, y: H - padB + 14, "text-anchor": "middle", class: "axis", text: d.slice(5) }));
    });
    models.forEach((m, mi) => {
      const x = padL + (mi % 3) * 200, y = H + 10 + 18 * Math.floor(mi / 3);
      g.append(svg("rect", { x, y: y - 10, width: 12, height: 12, fill: palette[mi % palette.length] }));
      g.append(svg("text", { x: x + 16, y, class: "axis", text: m }));
    });
    container.replaceChildren(g);
  }
  function fmtAxis(v) { return v >= 1e6 ? (v / 1e6).toFixed(1) + "M" : v >= 1e3 ? (v / 1e3).toFixed(1) + "k" : v < 1 && v > 0 ? v.toFixed(4) : String(Math.round(v * 100) / 100); }
  function usagePage() {
    const since = document.getElementById("u-since"), until = document.getElementById("u-until");
    const fTenant = document.getElementById("f-tenant");
    if (fTenant && tenant) fTenant.value = tenant;
    const d0 = new Date(Date.now() - 13 * 864e5);
    since.value = params.get("since") || d0.toISOString().slice(0, 10);
    until.value = params.get("until") || new Date().toISOString().slice(0, 10);
    async function load() {
      try {
        const q = "?since=" + enc(since.value) + "&until=" + enc(until.value);
        const u = await api("GET", "/v1/usage" + q);
        barChart(document.getElementById("chart-tokens"), u.usage, r => r.tokens.total, "Tokens by day, stacked by model");
        barChart(document.getElementById("chart-cost"), u.usage, r => r.cost, "Cost in USD by day, stacked by model");
        const frag = document.createDocumentFragment();
        for (const r of u.usage) frag.append(el("tr", {}, el("td", { text: r.day }), el("td", { text: r.model }), el("td", { class: "num", text: fmtInt(r.calls) }),
          el("td", { class: "num", text: fmtInt(r.tokens.input) }), el("td", { class: "num", text: fmtInt(r.tokens.output) }), el("td", { class: "num", text: fmtCost(r.cost) })));
        frag.append(el("tr", { class: "total" }, el("th", { scope: "row", text: "Total" }), el("td"), el("td", { class: "num", text: fmtInt(u.total.calls) }),
          el("td", { class: "num", text: fmtInt(u.total.tokens.input) }), el("td", { class: "num", text: fmtInt(u.total.tokens.output) }), el("td", { class: "num", text: fmtCost(u.total.cost) })));
        document.querySelector("#usage-table tbody").replaceChildren(frag);
        body.dataset.loaded = "true";
      } catch (e) { showError("Reading usage failed: " + e.message); }
    }
    document.getElementById("usage-filters").addEventListener("submit", ev => {
      ev.preventDefault();
      const u = new URL(location.href);
      u.searchParams.set("since", since.value); u.searchParams.set("until", until.value);
      if (fTenant) { if (fTenant.value) u.searchParams.set("tenant", fTenant.value); else u.searchParams.delete("tenant"); }
      location.href = u.toString();
    });
    load();
  }

  // ---- approvals page ------------------------------------------------------
  // GET /v1/approvals?status=pending lists the projector's read model
  // (services/projector/internal/store.Approval: session, toolCallId, tool,
  // arguments, requestedAt, expiresAt); commands approve {toolCallId,
  // arguments?} and deny {toolCallId, reason} (docs/approvals.md).
  function approvalsPage() {
    const list = document.getElementById("approvals");
    const state = document.getElementById("approvals-state");
    async function load() {
      try {
        const out = await api("GET", "/v1/approvals?status=pending");
        const items = out.approvals || [];
        state.textContent = items.length ? items.length + " pending" : "Nothing is waiting for approval.";
        const frag = document.createDocumentFragment();
        for (const a of items) frag.append(item(a));
        list.replaceChildren(frag);
        body.dataset.loaded = "true";
      } catch (e) {
        state.textContent = e.status === 404 ? "This gateway serves no approvals API." : "";
        if (e.status !== 404) showError("Reading approvals failed: " + e.message);
      }
    }
    function item(a) {
      const sid = a.session;
      const li = el("li", { class: "card approval", "data-tool-call": a.toolCallId },
        el("h2", {}, el("a", { href: "/sessions/" + enc(sid) + tenantQuery(), text: sid }), " · " + a.tool),
        el("p", { class: "muted", text: (a.requestedAt ? "asked " + fmtTime(a.requestedAt) : "") + (a.expiresAt ? " · expires " + fmtTime(a.expiresAt) : "") }));
      const argsId = "args-" + a.toolCallId, reasonId = "reason-" + a.toolCallId;
      if (!canAct) { li.append(el("pre", { class: "args", text: pretty(a.arguments) })); return li; }
      const args = el("textarea", { id: argsId, rows: 6, class: "args" }); args.value = pretty(a.arguments);
      const reason = el("input", { id: reasonId, placeholder: "why not" });
      const cmd = async c => {
        try { await api("POST", "/v1/sessions/" + enc(sid) + "/commands?wait=applied", c); li.remove(); load(); } catch (e) { showError(c.type + " refused: " + e.message); }
      };
      li.append(el("label", { for: argsId, text: "Arguments (edit to approve changed ones)" }), args,
        el("div", { class: "row" },
          el("button", { type: "button", "data-action": "approve", text: "Approve", onclick: () => {
            const c = { type: "approve", toolCallId: a.toolCallId };
            if (args.value.trim() !== pretty(a.arguments).trim()) {
              try { c.arguments = JSON.parse(args.value); } catch (e) { showError("The arguments are not JSON: " + e.message); return; }
            }
            cmd(c);
          } }),
          el("label", { for: reasonId, text: "Reason" }), reason,
          el("button", { type: "button", class: "danger", "data-action": "deny", text: "Deny", onclick: () => {
            if (!reason.value.trim()) { reason.focus(); showError("A denial needs a reason."); return; }
            cmd({ type: "deny", toolCallId: a.toolCallId, reason: reason.value.trim() });
          } })));
      return li;
    }
    load();
    setInterval(() => { if (!document.hidden) load(); }, 3000);
  }

  switch (page) {
    case "sessions": sessionsPage(); break;
    case "session": sessionPage(); break;
    case "usage": usagePage(); break;
    case "approvals": approvalsPage(); break;
  }
})();
