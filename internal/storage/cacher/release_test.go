package cacher

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// The release comes once, after the caches are filled, and never when
// the server stops first.
func TestReleaseWhenFilled(t *testing.T) {
	var filled atomic.Bool
	var released atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		releaseWhen(context.Background(), filled.Load, func() { released.Add(1) }, time.Millisecond)
	}()
	time.Sleep(20 * time.Millisecond)
	if n := released.Load(); n != 0 {
		t.Fatalf("released %d times before the caches were filled", n)
	}
	filled.Store(true)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("no release after the caches were filled")
	}
	if n := released.Load(); n != 1 {
		t.Fatalf("released %d times, want once", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	releaseWhen(ctx, func() bool { return false }, func() { t.Fatal("released for caches never filled") }, time.Millisecond)
}

// ReleaseAfterFill waits for real caches: it returns once they are filled.
func TestReleaseAfterFill(t *testing.T) {
	_, a := newPair(t)
	_, b := newPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ReleaseAfterFill(ctx, []*Cacher{a, b})
	if ctx.Err() != nil || !a.Ready() || !b.Ready() {
		t.Fatalf("returned with ctx %v, ready %v %v", ctx.Err(), a.Ready(), b.Ready())
	}
}
