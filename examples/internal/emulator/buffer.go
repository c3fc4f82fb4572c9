package emulator

import (
	"bytes"
	"sync"
)

// Buffer collects an emulator's output (see [Config.Output]), which the
// emulator's process pipes write while the test reads it. Its zero value is
// empty and ready.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
