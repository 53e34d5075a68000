package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// create posts ops new ConfigMaps of Size bytes.
func (r *runner) create(ctx context.Context, run string) (Result, error) {
	ops, ns := r.o.ops("create"), r.o.Namespace
	path := configMapsPath(ns)
	res := r.measure(ctx, r.result("create", r.o.Concurrency, ops), func(ctx context.Context, _, i int) error {
		// Built per request (a few microseconds) so that a long run does
		// not hold every body in memory.
		body := configMap(ns, fmt.Sprintf("c-%s-%d", run, i), run, "", r.payload, "")
		_, err := r.c.do(ctx, "POST", path, body, http.StatusCreated)
		return err
	})
	return res, ctx.Err()
}

// getObjects is how many ConfigMaps get reads in turn.
const getObjects = 100

// get reads existing ConfigMaps by name.
func (r *runner) get(ctx context.Context, run string) (Result, error) {
	ops := r.o.ops("get")
	n := min(getObjects, ops)
	prefix := "g-" + run
	if err := r.seed(ctx, run, prefix, n, nil); err != nil {
		return Result{}, err
	}
	base := configMapsPath(r.o.Namespace) + "/"
	paths := make([]string, n)
	for i := range paths {
		paths[i] = base + fmt.Sprintf("%s-%d", prefix, i)
	}
	res := r.measure(ctx, r.result("get", r.o.Concurrency, ops), func(ctx context.Context, _, i int) error {
		_, err := r.c.do(ctx, "GET", paths[i%n], nil, http.StatusOK)
		return err
	})
	return res, ctx.Err()
}

// list reads the ListMatching of ListObjects ConfigMaps that carry the
// matching label, PageSize at a time; one operation is the whole list.
func (r *runner) list(ctx context.Context, run string) (Result, error) {
	ops := r.o.ops("list")
	total, matching := r.o.ListObjects, r.o.ListMatching
	// Matching objects are spread through the key range, so a server that
	// scans does not find them all at the start.
	every := total / matching
	isMatch := func(i int) bool { return i%every == 0 && i/every < matching }
	if err := r.seed(ctx, run, "l-"+run, total, func(i int) string {
		if isMatch(i) {
			return "match"
		}
		return "other"
	}); err != nil {
		return Result{}, err
	}
	sel := url.QueryEscape(runLabel + "=" + run + "," + groupLabel + "=match")
	base := configMapsPath(r.o.Namespace) + "?labelSelector=" + sel
	if r.o.PageSize > 0 {
		base += "&limit=" + strconv.Itoa(r.o.PageSize)
	}
	conc := r.o.Concurrency
	if r.o.ListConcurrency > 0 {
		conc = r.o.ListConcurrency
	}
	res := r.measure(ctx, r.result("list", conc, ops), func(ctx context.Context, _, _ int) error {
		n, err := r.listAll(ctx, base)
		if err == nil && n != matching {
			err = fmt.Errorf("list returned %d objects, want %d", n, matching)
		}
		return err
	})
	return res, ctx.Err()
}

// listAll follows continue tokens to the end and counts the items.
func (r *runner) listAll(ctx context.Context, base string) (int, error) {
	n, cont := 0, ""
	for {
		p := base
		if cont != "" {
			p += "&continue=" + url.QueryEscape(cont)
		}
		b, err := r.c.do(ctx, "GET", p, nil, http.StatusOK)
		if err != nil {
			return n, err
		}
		var l listMeta
		if err := json.Unmarshal(b, &l); err != nil {
			return n, fmt.Errorf("decoding the list: %w", err)
		}
		n += len(l.Items)
		if cont = l.Metadata.Continue; cont == "" {
			return n, nil
		}
	}
}

// update replaces ConfigMaps, each worker its own object on the
// resourceVersion its last write returned, so no update conflicts.
func (r *runner) update(ctx context.Context, run string) (Result, error) {
	ops := r.o.ops("update")
	res := r.result("update", r.o.Concurrency, ops)
	objs, err := r.seedOwned(ctx, run, "u-"+run, res.Concurrency)
	if err != nil {
		return Result{}, err
	}
	res = r.measure(ctx, res, func(ctx context.Context, w, i int) error {
		return objs[w].update(ctx, r, i)
	})
	return res, ctx.Err()
}

// owned is a ConfigMap one worker writes, with its last resourceVersion.
type owned struct {
	name, path, run, rv string
}

func (r *runner) seedOwned(ctx context.Context, run, prefix string, n int) ([]*owned, error) {
	if err := r.seed(ctx, run, prefix, n, nil); err != nil {
		return nil, err
	}
	objs := make([]*owned, n)
	for i := range objs {
		name := fmt.Sprintf("%s-%d", prefix, i)
		objs[i] = &owned{name: name, path: configMapsPath(r.o.Namespace) + "/" + name, run: run}
		b, err := r.c.do(ctx, "GET", objs[i].path, nil, http.StatusOK)
		if err != nil {
			return nil, err
		}
		var m objectMeta
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		objs[i].rv = m.Metadata.ResourceVersion
	}
	return objs, nil
}

func (o *owned) update(ctx context.Context, r *runner, i int) error {
	// The payload changes on each write (its first bytes carry i), so
	// every update is a real change.
	p := strconv.Itoa(i) + r.payload[min(len(r.payload), len(strconv.Itoa(i))):]
	b, err := r.c.do(ctx, "PUT", o.path, configMap(r.o.Namespace, o.name, o.run, "", p, o.rv), http.StatusOK)
	if err != nil {
		return err
	}
	var m objectMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	o.rv = m.Metadata.ResourceVersion
	return nil
}

// mixed interleaves, per ten operations, one create, two updates, one
// list of the first hundred of the run's objects and six gets.
func (r *runner) mixed(ctx context.Context, run string) (Result, error) {
	ops := r.o.ops("mixed")
	res := r.result("mixed", r.o.Concurrency, ops)
	objs, err := r.seedOwned(ctx, run, "m-"+run, res.Concurrency)
	if err != nil {
		return Result{}, err
	}
	ns := r.o.Namespace
	path := configMapsPath(ns)
	listPath := path + "?limit=100&labelSelector=" + url.QueryEscape(runLabel+"="+run)
	res = r.measure(ctx, res, func(ctx context.Context, w, i int) error {
		switch i % 10 {
		case 0:
			_, err := r.c.do(ctx, "POST", path, configMap(ns, fmt.Sprintf("mc-%s-%d", run, i), run, "", r.payload, ""), http.StatusCreated)
			return err
		case 1, 2:
			return objs[w].update(ctx, r, i)
		case 3:
			_, err := r.c.do(ctx, "GET", listPath, nil, http.StatusOK)
			return err
		default:
			_, err := r.c.do(ctx, "GET", objs[i%len(objs)].path, nil, http.StatusOK)
			return err
		}
	})
	return res, ctx.Err()
}
