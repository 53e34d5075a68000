package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kpipe/kpipe/internal/testserver"
)

// kvInput is one operation on one ConfigMap.
type kvInput struct {
	op    string // create, update, delete, get
	key   string
	value string // create and update
	// precondition is the resourceVersion an update requires, "" for none.
	precondition string
}

// kvOutput is what the server answered.
type kvOutput struct {
	result string // ok, notFound, exists, conflict
	value  string // get
	rv     string // create, update, get
}

// kvState is one key as the model sees it.
type kvState struct {
	exists bool
	value  string
	rv     string
}

// kvModel is a register per key with kube's write semantics: create fails
// on an existing object, update and delete on a missing one, an update
// whose resourceVersion precondition is stale conflicts, and every
// successful write and read carries the object's resourceVersion.
var kvModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(kvInput).key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		var out [][]porcupine.Operation
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() any { return kvState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(kvState), input.(kvInput), output.(kvOutput)
		switch in.op {
		case "get":
			if out.result == "notFound" {
				return !s.exists, s
			}
			return s.exists && out.value == s.value && out.rv == s.rv, s
		case "create":
			if out.result == "exists" {
				return s.exists, s
			}
			return !s.exists && out.result == "ok", kvState{exists: true, value: in.value, rv: out.rv}
		case "update":
			switch out.result {
			case "notFound":
				return !s.exists, s
			case "conflict":
				return s.exists && in.precondition != "" && in.precondition != s.rv, s
			case "ok":
				ok := s.exists && (in.precondition == "" || in.precondition == s.rv) && out.rv != s.rv
				return ok, kvState{exists: true, value: in.value, rv: out.rv}
			}
		case "delete":
			if out.result == "notFound" {
				return !s.exists, s
			}
			return s.exists && out.result == "ok", kvState{}
		}
		return false, s
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(kvInput), output.(kvOutput)
		return fmt.Sprintf("%s(%s, %q, rv=%q) -> %s %q rv=%s", in.op, in.key, in.value, in.precondition, out.result, out.value, out.rv)
	},
}

// A concurrent history of creates, updates (plain and conditional),
// deletes and gets on a few keys through kpipe is linearizable.
func TestLinearizableHistory(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	cs := fastClient(t, ts)
	namespace(t, cs, "linear")
	history, unknown := recordHistory(t, cs, "linear", 8, 40, []string{"a", "b", "c"})
	if unknown > 0 {
		t.Errorf("%d operations got no definite answer with no fault injected", unknown)
	}
	res, info := porcupine.CheckOperationsVerbose(kvModel, history, time.Minute)
	switch res {
	case porcupine.Ok:
		t.Logf("%d operations on 3 keys from 8 clients: linearizable", len(history))
	case porcupine.Illegal:
		// The first partial linearization of each partition is enough to read.
		for _, part := range info.PartialLinearizationsOperations() {
			if len(part) == 0 {
				continue
			}
			for _, op := range part[0] {
				t.Logf("  %s", kvModel.DescribeOperation(op.Input, op.Output))
			}
		}
		t.Fatalf("the history of %d operations is not linearizable (longest partial linearizations above)", len(history))
	default:
		t.Fatalf("the check did not finish: %v", res)
	}
}

// recordHistory runs clients × opsEach random operations on keys and
// returns the history, with the count of operations that got no definite
// answer (left out of the history).
func recordHistory(t *testing.T, cs kubernetes.Interface, ns string, clients, opsEach int, keys []string) ([]porcupine.Operation, int) {
	t.Helper()
	cms := cs.CoreV1().ConfigMaps(ns)
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	var mu sync.Mutex
	var history []porcupine.Operation
	unknown := 0
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 42))
			seen := map[string]string{} // key -> last resourceVersion this client saw
			for i := 0; i < opsEach; i++ {
				key := keys[rng.IntN(len(keys))]
				in := kvInput{key: key, value: fmt.Sprintf("c%d-%d", c, i)}
				var out kvOutput
				var err error
				ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
				call := now()
				switch r := rng.IntN(10); {
				case r < 3:
					in.op, in.value = "get", ""
					var cm *corev1.ConfigMap
					if cm, err = cms.Get(ctx, key, metav1.GetOptions{}); err == nil {
						out = kvOutput{result: "ok", value: cm.Data["v"], rv: cm.ResourceVersion}
					}
				case r < 5:
					in.op = "create"
					var cm *corev1.ConfigMap
					if cm, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key}, Data: map[string]string{"v": in.value}}, metav1.CreateOptions{}); err == nil {
						out = kvOutput{result: "ok", rv: cm.ResourceVersion}
					}
				case r < 8:
					in.op = "update"
					if r == 7 {
						in.precondition = seen[key]
					}
					var cm *corev1.ConfigMap
					if cm, err = cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key, ResourceVersion: in.precondition}, Data: map[string]string{"v": in.value}}, metav1.UpdateOptions{}); err == nil {
						out = kvOutput{result: "ok", rv: cm.ResourceVersion}
					}
				default:
					in.op, in.value = "delete", ""
					if err = cms.Delete(ctx, key, metav1.DeleteOptions{}); err == nil {
						out = kvOutput{result: "ok"}
					}
				}
				ret := now()
				cancel()
				switch {
				case err == nil:
				case apierrors.IsNotFound(err):
					out = kvOutput{result: "notFound"}
				case apierrors.IsAlreadyExists(err):
					out = kvOutput{result: "exists"}
				case apierrors.IsConflict(err):
					out = kvOutput{result: "conflict"}
				default:
					t.Logf("%s %s: %v", in.op, key, err)
					mu.Lock()
					unknown++
					mu.Unlock()
					continue
				}
				if out.rv != "" {
					seen[key] = out.rv
				}
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return history, unknown
}

// The model refuses a stale read, so the check above can fail.
func TestKVModelRefusesStaleRead(t *testing.T) {
	history := []porcupine.Operation{
		{ClientId: 0, Input: kvInput{op: "create", key: "a", value: "1"}, Call: 0, Output: kvOutput{result: "ok", rv: "5"}, Return: 10},
		{ClientId: 0, Input: kvInput{op: "update", key: "a", value: "2"}, Call: 20, Output: kvOutput{result: "ok", rv: "6"}, Return: 30},
		{ClientId: 1, Input: kvInput{op: "get", key: "a"}, Call: 40, Output: kvOutput{result: "ok", value: "1", rv: "5"}, Return: 50},
	}
	if porcupine.CheckOperations(kvModel, history) {
		t.Error("a read of the old value after the update returned was accepted")
	}
	history[2].Call = 25 // concurrent with the update: either value is fine
	if !porcupine.CheckOperations(kvModel, history) {
		t.Error("a read concurrent with the update was refused")
	}
}
