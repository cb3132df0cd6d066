package stack

import (
	"context"
	"sync"
)

// mapping is what a local event source mapping of either kind (a stream
// event's subscription, a queue event's) keeps of its life: the context
// its poller and invocations run in, the channel closed once the poller
// stopped, and the function's handler, which a later OnStream or OnQueue
// replaces while the poller runs.
type mapping[H any] struct {
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	hmu     sync.Mutex
	handler H
}

// start gives the mapping its context (a child of parent) and handler.
func (m *mapping[H]) start(parent context.Context, h H) {
	m.ctx, m.cancel = context.WithCancel(parent)
	m.done = make(chan struct{})
	m.handler = h
}

func (m *mapping[H]) setHandler(h H) {
	m.hmu.Lock()
	defer m.hmu.Unlock()
	m.handler = h
}

func (m *mapping[H]) currentHandler() H {
	m.hmu.Lock()
	defer m.hmu.Unlock()
	return m.handler
}

// stop ends the poller and waits for it (and what it runs).
func (m *mapping[H]) stop() {
	m.cancel()
	<-m.done
}

// reregister applies a later registration to a function's running
// mappings: remove (a nil handler) stops them, else h replaces their
// handler and they keep their positions.
func reregister[H any, M interface {
	stop()
	setHandler(H)
}](running []M, h H, remove bool) {
	for _, m := range running {
		if remove {
			m.stop()
		} else {
			m.setHandler(h)
		}
	}
}
