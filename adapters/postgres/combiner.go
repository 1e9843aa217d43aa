package postgres

import (
	"slices"
	"sync"
)

// combiner groups concurrent calls without a goroutine of its own: a call
// joins the queue and, when fewer than max groups are running, runs a group
// of everything queued itself; a group that finishes with calls queued
// meanwhile hands them to a new goroutine as the next group. So a lone call
// runs at once, and under load each statement carries every call that
// arrived while the previous ones ran. run must answer every call it is
// given.
type combiner[C any] struct {
	max, maxBatch int
	run           func([]C)

	mu       sync.Mutex
	queue    []C
	inflight int
}

// add queues c and, if a group may start, runs one (which includes c) on
// the caller's goroutine.
func (b *combiner[C]) add(c C) {
	b.mu.Lock()
	b.queue = append(b.queue, c)
	if b.inflight >= b.max {
		b.mu.Unlock()
		return
	}
	b.inflight++
	group := b.take()
	b.mu.Unlock()
	b.run(group)
	if next := b.next(); next != nil {
		go b.loop(next)
	}
}

// loop runs groups until the queue is empty.
func (b *combiner[C]) loop(group []C) {
	for group != nil {
		b.run(group)
		group = b.next()
	}
}

// next takes the next group, or ends this runner's turn when nothing is
// queued.
func (b *combiner[C]) next() []C {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		b.inflight--
		return nil
	}
	return b.take()
}

// take removes up to maxBatch calls from the queue; b.mu is held.
func (b *combiner[C]) take() []C {
	n := min(len(b.queue), b.maxBatch)
	group := slices.Clone(b.queue[:n])
	clear(b.queue[:n])
	b.queue = b.queue[n:]
	if len(b.queue) == 0 {
		b.queue = b.queue[:0:0]
	}
	return group
}
