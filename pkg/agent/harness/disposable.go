package harness

// Disposable reports whether the harness is idle with nothing of its own to
// lose: no queued steering, follow-up or next-turn message and no held
// write. Such a harness may be dropped and a new one built with [New] from
// the same session and configuration: everything else it knew comes back
// from the session (an idle session's owner does this to stay small).
func (h *Harness) Disposable() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mu.phase == PhaseIdle && len(h.mu.steer) == 0 && len(h.mu.follow) == 0 &&
		len(h.mu.next) == 0 && len(h.mu.held) == 0
}
