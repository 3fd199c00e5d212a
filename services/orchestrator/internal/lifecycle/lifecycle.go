package lifecycle

import (
	"fmt"
	"sync/atomic"
)

// State is where an actor is in its life. The zero State is Loading.
type State int32

// The states, in the order of the package doc.
const (
	Loading State = iota
	Idle
	Running
	Settling
	Waiting // a run's batch waits for approvals or sub-agents (DESIGN §11, §13)
	Shrunk
	HandingOver
	Evicted

	numStates = iota
)

var names = [numStates]string{"loading", "idle", "running", "settling", "waiting", "shrunk", "handing over", "evicted"}

// String returns the state's name as the package doc writes it.
func (s State) String() string {
	if s < 0 || s >= numStates {
		return fmt.Sprintf("state(%d)", int32(s))
	}
	return names[s]
}

// Busy reports whether a run is in progress: running, settling or waiting.
func (s State) Busy() bool { return s == Running || s == Settling || s == Waiting }

// edges is the transition table: edges[from] lists the states from may
// move to. The package doc shows the same lines (a test checks it).
var edges = [numStates][]State{
	Loading:     {Idle, Running, Waiting, HandingOver, Evicted},
	Idle:        {Running, Shrunk, HandingOver, Evicted},
	Running:     {Settling, Idle, Waiting, HandingOver, Evicted},
	Settling:    {Idle, HandingOver, Evicted},
	Waiting:     {Running, Shrunk, HandingOver, Evicted},
	Shrunk:      {Idle, Waiting, HandingOver, Evicted},
	HandingOver: {Evicted},
	Evicted:     {},
}

// legal[from][to] is edges as a matrix.
var legal = func() (m [numStates][numStates]bool) {
	for from, tos := range edges {
		for _, to := range tos {
			m[from][to] = true
		}
	}
	return m
}()

// Legal reports whether the table allows from → to.
func Legal(from, to State) bool {
	return from >= 0 && from < numStates && to >= 0 && to < numStates && legal[from][to]
}

// TransitionError is a move the table does not allow.
type TransitionError struct {
	From, To State
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("lifecycle: no transition from %s to %s", e.From, e.To)
}

// Machine holds one actor's state. The zero Machine is Loading.
type Machine struct {
	s atomic.Int32
}

// State returns the current state.
func (m *Machine) State() State { return State(m.s.Load()) }

// To moves to next from the current state and returns the state it left.
// It fails with a *TransitionError, changing nothing, if the table does
// not allow the move.
func (m *Machine) To(next State) (State, error) {
	for {
		cur := m.State()
		if !Legal(cur, next) {
			return cur, &TransitionError{From: cur, To: next}
		}
		if m.s.CompareAndSwap(int32(cur), int32(next)) {
			return cur, nil
		}
	}
}

// Move moves from → to if the state is from, and reports whether it moved.
// It fails with a *TransitionError, changing nothing, if the table does
// not allow from → to, whatever the state.
func (m *Machine) Move(from, to State) (bool, error) {
	if !Legal(from, to) {
		return false, &TransitionError{From: from, To: to}
	}
	return m.s.CompareAndSwap(int32(from), int32(to)), nil
}
