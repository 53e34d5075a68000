package server

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// objectCountInterval is how often apiserver_storage_objects is refreshed,
// as kube's object count tracker does.
const objectCountInterval = time.Minute

// countObjects keeps apiserver_storage_objects{resource} current.
func (s *Server) countObjects(ctx context.Context) {
	t := time.NewTicker(objectCountInterval)
	defer t.Stop()
	for {
		for _, res := range s.resources.All() {
			if st, ok := res.Store.(interface {
				UpdateObjectCount(context.Context) (int64, error)
			}); ok {
				if _, err := st.UpdateObjectCount(ctx); err != nil && ctx.Err() == nil {
					s.log.Debug("counting objects", zap.String("resource", res.Name), zap.Error(err))
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
