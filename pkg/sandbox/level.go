package sandbox

import "fmt"

// Level is how strictly a toolrunner confines its tool calls.
type Level int

const (
	// Required confines every call with every layer the package knows, and
	// [New] refuses to start where the kernel lacks one, naming it.
	Required Level = iota
	// BestEffort applies the layers the kernel offers and logs the rest as
	// missing.
	BestEffort
	// Off runs tools unconfined, as processes of the toolrunner; a warning is
	// logged at every start.
	Off
)

// Levels lists the levels by name, as flags and metrics spell them.
var Levels = []Level{Required, BestEffort, Off}

func (l Level) String() string {
	switch l {
	case Required:
		return "required"
	case BestEffort:
		return "best-effort"
	case Off:
		return "off"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// ParseLevel reads a level as [Level.String] spells it.
func ParseLevel(s string) (Level, error) {
	for _, l := range Levels {
		if l.String() == s {
			return l, nil
		}
	}
	return 0, fmt.Errorf("sandbox level %q: one of required, best-effort, off expected", s)
}
