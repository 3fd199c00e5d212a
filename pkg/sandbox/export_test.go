package sandbox

// WarmChildren is how many children wait ready for bash calls.
func WarmChildren(s *Sandbox) int {
	if s.pool == nil {
		return 0
	}
	return len(s.pool.ready)
}

// WarmToolChildren is how many children wait ready for file tool calls.
func WarmToolChildren(s *Sandbox) int {
	if s.tools == nil {
		return 0
	}
	return len(s.tools.ready)
}

// PoolSize is how many the pool keeps ready.
const PoolSize = poolSize

// WarmPIDs are the process ids of the children waiting ready for bash
// calls, or with tool for file tool calls.
func WarmPIDs(s *Sandbox, tool bool) []int {
	p := s.pool
	if tool {
		p = s.tools
	}
	var pids []int
	for range len(p.ready) {
		w := <-p.ready
		pids = append(pids, w.cmd.Process.Pid)
		p.ready <- w
	}
	return pids
}

// ProxySocket is the path of the allowed-hosts proxy's socket ("" without one).
func ProxySocket(s *Sandbox) string {
	if s.proxy == nil {
		return ""
	}
	return s.proxy.ln.Addr().String()
}

// SetProbe makes New see what f returns instead of probing the kernel,
// until restore runs.
func SetProbe(f func() Features) (restore func()) {
	probe = f
	return func() { probe = Probe }
}
