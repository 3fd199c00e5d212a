package telemetry_test

import (
	"errors"
	"testing"

	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/prometheus/client_golang/prometheus"
)

// The process registry holds the runtime's series and refuses a name twice:
// the same collector again, or another collector exporting the same name.
func TestRegistryRefusesANameTwice(t *testing.T) {
	reg := telemetry.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "cairn_test_total", Help: "A test counter."})
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	var are prometheus.AlreadyRegisteredError
	if err := reg.Register(c); !errors.As(err, &are) {
		t.Fatalf("the same collector twice: got %v, want AlreadyRegisteredError", err)
	}
	other := prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_test_total", Help: "Another help."})
	if err := reg.Register(other); err == nil {
		t.Fatal("a second collector exporting cairn_test_total was accepted")
	}
	if err := reg.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "go_goroutines", Help: "x"})); err == nil {
		t.Fatal("go_goroutines registered twice: the runtime collector is not in the registry")
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range fams {
		if seen[f.GetName()] {
			t.Errorf("%s gathered twice", f.GetName())
		}
		seen[f.GetName()] = true
	}
	for _, name := range []string{"cairn_test_total", "go_goroutines", "process_start_time_seconds"} {
		if !seen[name] {
			t.Errorf("no %s in the registry", name)
		}
	}
}
