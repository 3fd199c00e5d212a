package sandbox

// WarmChildren is how many children wait ready for bash calls.
func WarmChildren(s *Sandbox) int {
	if s.pool == nil {
		return 0
	}
	return len(s.pool.ready)
}

// PoolSize is how many the pool keeps ready.
const PoolSize = poolSize

// WarmPIDs are the process ids of the children waiting ready.
func WarmPIDs(s *Sandbox) []int {
	var pids []int
	for range len(s.pool.ready) {
		w := <-s.pool.ready
		pids = append(pids, w.cmd.Process.Pid)
		s.pool.ready <- w
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
