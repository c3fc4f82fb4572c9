package sim

import "fmt"

// tracer keeps the trace of a schedule, when asked: a line per step, with
// the simulated time and the invocation. Off, it costs a nil check.
type tracer struct {
	w     *world
	lines []string
}

func (t *tracer) log(inv *invocation, format string, args ...any) {
	if t == nil {
		return
	}
	line := fmt.Sprintf("%10s ", t.w.at(t.w.s.now))
	if inv != nil {
		line += fmt.Sprintf("%-8s ", inv.id)
	} else {
		line += "         "
	}
	t.lines = append(t.lines, line+fmt.Sprintf(format, args...))
}
