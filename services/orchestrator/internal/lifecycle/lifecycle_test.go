package lifecycle

import (
	"errors"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"sync"
	"testing"
)

var all = []State{Loading, Idle, Running, Settling, Waiting, Shrunk, HandingOver, Evicted}

// want is the table as the package doc and the orchestrator need it,
// written out once more so that a change to either is a decision.
var want = map[[2]State]bool{
	{Loading, Idle}: true, {Loading, Running}: true, {Loading, HandingOver}: true, {Loading, Evicted}: true,
	{Idle, Running}: true, {Idle, Shrunk}: true, {Idle, HandingOver}: true, {Idle, Evicted}: true,
	{Running, Settling}: true, {Running, Idle}: true, {Running, HandingOver}: true, {Running, Evicted}: true,
	{Settling, Idle}: true, {Settling, HandingOver}: true, {Settling, Evicted}: true,
	{Shrunk, Idle}: true, {Shrunk, HandingOver}: true, {Shrunk, Evicted}: true,
	{HandingOver, Evicted}: true,
	// approvals: a run parks and resumes; a waiting session shrinks and leaves
	{Loading, Waiting}: true, {Running, Waiting}: true, {Waiting, Running}: true, {Waiting, Shrunk}: true,
	{Shrunk, Waiting}: true, {Waiting, HandingOver}: true, {Waiting, Evicted}: true,
}

// machineAt returns a Machine in state s.
func machineAt(s State) *Machine {
	m := &Machine{}
	m.s.Store(int32(s))
	return m
}

// TestEveryLegalTransition: each move of the table is made, and To reports
// the state it left.
func TestEveryLegalTransition(t *testing.T) {
	for e := range want {
		m := machineAt(e[0])
		left, err := m.To(e[1])
		if err != nil || left != e[0] || m.State() != e[1] {
			t.Errorf("To %s from %s: left %s, now %s, err %v", e[1], e[0], left, m.State(), err)
		}
		m = machineAt(e[0])
		if moved, err := m.Move(e[0], e[1]); !moved || err != nil || m.State() != e[1] {
			t.Errorf("Move %s → %s: moved %v, now %s, err %v", e[0], e[1], moved, m.State(), err)
		}
	}
}

// TestEveryIllegalTransitionRefused: every other pair, self-moves and
// moves between idle and waiting included, fails with an error naming both states and
// changes nothing.
func TestEveryIllegalTransitionRefused(t *testing.T) {
	n := 0
	for _, from := range all {
		for _, to := range all {
			if want[[2]State{from, to}] {
				continue
			}
			n++
			m := machineAt(from)
			_, err := m.To(to)
			var te *TransitionError
			if !errors.As(err, &te) || te.From != from || te.To != to || m.State() != from {
				t.Errorf("To %s from %s: err %v, now %s", to, from, err, m.State())
				continue
			}
			if msg := err.Error(); !strings.Contains(msg, "from "+from.String()+" to "+to.String()) {
				t.Errorf("error %q does not name %s → %s", msg, from, to)
			}
			for _, cur := range all {
				m := machineAt(cur)
				if moved, err := m.Move(from, to); moved || !errors.As(err, &te) || m.State() != cur {
					t.Errorf("Move %s → %s in %s: moved %v, err %v, now %s", from, to, cur, moved, err, m.State())
				}
			}
		}
	}
	if n != len(all)*len(all)-len(want) {
		t.Fatalf("%d illegal pairs checked", n)
	}
	for _, s := range []State{Idle, Settling} {
		if Legal(s, Waiting) || Legal(Waiting, s) {
			t.Errorf("only a run parks and only an answer resumes, yet %s ↔ waiting is legal", s)
		}
	}
	if Legal(-1, Idle) || Legal(Idle, numStates) {
		t.Error("a state out of range is legal")
	}
}

// TestMoveOnlyFromItsState: Move does nothing when the state is not from,
// as when agent_end comes after the actor moved on.
func TestMoveOnlyFromItsState(t *testing.T) {
	m := machineAt(Idle)
	if moved, err := m.Move(Running, Settling); moved || err != nil || m.State() != Idle {
		t.Fatalf("Move running → settling in idle: moved %v, err %v, now %s", moved, err, m.State())
	}
}

// TestZeroIsLoading: a new actor starts loading.
func TestZeroIsLoading(t *testing.T) {
	var m Machine
	if m.State() != Loading {
		t.Fatalf("zero Machine is %s", m.State())
	}
}

// TestRaceWithSettle: the actor handing over while the run goroutine
// settles ends in handing over, whichever goes first.
func TestRaceWithSettle(t *testing.T) {
	for range 200 {
		m := machineAt(Running)
		var wg sync.WaitGroup
		wg.Go(func() {
			if _, err := m.Move(Running, Settling); err != nil {
				t.Error(err)
			}
		})
		if _, err := m.To(HandingOver); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if m.State() != HandingOver {
			t.Fatalf("state %s, want handing over", m.State())
		}
	}
}

// TestBusy: the states in which a run is in progress.
func TestBusy(t *testing.T) {
	var busy []State
	for _, s := range all {
		if s.Busy() {
			busy = append(busy, s)
		}
	}
	if !slices.Equal(busy, []State{Running, Settling, Waiting}) {
		t.Fatalf("busy states %v", busy)
	}
}

// TestDocMatchesTable: the package doc's transition lines are the table,
// and every state has its line and its place in the diagram.
func TestDocMatchesTable(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Doc.Text()
	byName := map[string]State{}
	for _, s := range all {
		byName[s.String()] = s
	}
	got := map[[2]State]bool{}
	lines := map[State]bool{}
	for line := range strings.SplitSeq(doc, "\n") {
		from, tos, ok := strings.Cut(strings.TrimPrefix(line, "\t"), "→")
		if !ok || !strings.HasPrefix(line, "\t") || strings.ContainsAny(line, "─│▶") {
			continue
		}
		fs, ok := byName[strings.TrimSpace(from)]
		if !ok {
			t.Errorf("doc line %q: no state %q", line, strings.TrimSpace(from))
			continue
		}
		lines[fs] = true
		for to := range strings.SplitSeq(tos, ",") {
			if to = strings.TrimSpace(to); to == "" {
				continue
			}
			ts, ok := byName[to]
			if !ok {
				t.Errorf("doc line %q: no state %q", line, to)
			}
			got[[2]State{fs, ts}] = true
		}
	}
	for _, s := range all {
		if !lines[s] {
			t.Errorf("the doc has no transition line for %s", s)
		}
		if !strings.Contains(doc, "  - "+s.String()+":") {
			t.Errorf("the doc does not describe %s", s)
		}
	}
	for from, tos := range edges {
		for _, to := range tos {
			if !got[[2]State{State(from), to}] {
				t.Errorf("the table has %s → %s; the doc does not", State(from), to)
			}
			delete(got, [2]State{State(from), to})
		}
	}
	for e := range got {
		t.Errorf("the doc has %s → %s; the table does not", e[0], e[1])
	}
	for e := range want {
		if !Legal(e[0], e[1]) {
			t.Errorf("%s → %s is needed and not in the table", e[0], e[1])
		}
	}
}

// BenchmarkSettle is what agent_end costs the run goroutine: one move
// running → settling (before the machine, one atomic.Bool store).
func BenchmarkSettle(b *testing.B) {
	var m Machine
	for b.Loop() {
		m.s.Store(int32(Running))
		if _, err := m.Move(Running, Settling); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkState is what reading the state costs (the actor reads it
// where it read its flags).
func BenchmarkState(b *testing.B) {
	var m Machine
	n := 0
	for b.Loop() {
		if m.State().Busy() {
			n++
		}
	}
	_ = n
}
