package tools

import (
	"io"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/tool"
)

// stream collects a command's output and publishes snapshots of it as
// partial updates, the first at once and then at most one per interval.
type stream struct {
	mu    sync.Mutex
	out   tail          // guarded by mu
	dirty chan struct{} // capacity 1: output arrived since the last update
	stop  chan struct{} // closed when no more updates may be sent
}

// copy reads r to its end into the tail.
func (s *stream) copy(r io.Reader) {
	buf := make([]byte, 32*1024)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			s.mu.Lock()
			s.out.Write(buf[:n])
			s.mu.Unlock()
			select {
			case s.dirty <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// publish sends updates until stop is closed.
func (s *stream) publish(onUpdate func(tool.Result), every time.Duration) {
	for {
		select {
		case <-s.stop:
			return
		case <-s.dirty:
		}
		s.mu.Lock()
		text, tr := s.out.snapshot()
		s.mu.Unlock()
		d := BashDetails{}
		if tr.Truncated {
			d.Truncation = &tr
		}
		onUpdate(textResult(text, d))
		t := time.NewTimer(every)
		select {
		case <-s.stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
}
