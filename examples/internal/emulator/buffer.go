package emulator

import (
	"bytes"
	"context"
	"sync"
)

// Buffer collects an emulator's output (see [Config.Output]), which the
// emulator's process pipes write while the test reads it. Its zero value is
// empty and ready.
type Buffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	grew chan struct{} // closed by the next Write; nil: nobody waits
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.grew != nil {
		close(b.grew)
		b.grew = nil
	}
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Await waits until what was written so far satisfies done, and returns
// it; or returns what there is and ctx's error when ctx ends first. A
// function's output reaches the buffer through a pipe, after its
// response may have reached the caller: a test that reads a line the
// function printed waits for it.
func (b *Buffer) Await(ctx context.Context, done func(output string) bool) (string, error) {
	for {
		b.mu.Lock()
		out := b.buf.String()
		if done(out) {
			b.mu.Unlock()
			return out, nil
		}
		if b.grew == nil {
			b.grew = make(chan struct{})
		}
		grew := b.grew
		b.mu.Unlock()
		select {
		case <-grew:
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
}
