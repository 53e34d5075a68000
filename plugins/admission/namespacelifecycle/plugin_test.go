package namespacelifecycle

import (
	"fmt"
	"testing"
	"time"
)

func TestRecentlyDeleted(t *testing.T) {
	var d recentlyDeleted
	now := time.Now()
	if d.has("a", now) {
		t.Fatal("empty set has a")
	}
	d.add("a", now)
	if !d.has("a", now.Add(forceLiveLookupTTL-time.Second)) {
		t.Fatal("a forgotten within the TTL")
	}
	if d.has("a", now.Add(forceLiveLookupTTL+time.Second)) {
		t.Fatal("a remembered after the TTL")
	}
	for i := 0; i < 3*maxDeleted; i++ {
		d.add(fmt.Sprint(i), now)
	}
	if n := len(d.names); n > maxDeleted {
		t.Fatalf("%d names, bound %d", n, maxDeleted)
	}
}
