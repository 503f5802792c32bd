package profiling

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
)

// scheduler takes periodic snapshots of nodes (schedule_snapshots), one
// goroutine per node, until unscheduled or the server shuts down.
type scheduler struct {
	log *zap.Logger
	// timeout bounds one capture.
	timeout time.Duration

	mu   sync.Mutex
	jobs map[int64]context.CancelFunc
	wg   sync.WaitGroup
}

func newScheduler(log *zap.Logger, timeout time.Duration) *scheduler {
	return &scheduler{log: log, timeout: timeout, jobs: map[int64]context.CancelFunc{}}
}

// start (re)schedules capture of node every interval; the first capture
// happens one interval from now.
func (s *scheduler) start(node int64, every time.Duration, capture func(context.Context) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cancel, ok := s.jobs[node]; ok {
		cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.jobs[node] = cancel
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		log := s.log.With(zap.Int64("node", node), zap.Duration("every", every))
		log.Info("snapshot schedule started")
		for {
			select {
			case <-ctx.Done():
				log.Info("snapshot schedule stopped")
				return
			case <-t.C:
			}
			cctx, ccancel := context.WithTimeout(ctx, s.timeout)
			start := time.Now()
			err := capture(cctx)
			ccancel()
			if err != nil && ctx.Err() == nil {
				log.Warn("scheduled snapshot failed", zap.Error(err))
				continue
			}
			log.Debug("scheduled snapshot", zap.Duration("duration", time.Since(start)))
		}
	}()
}

// stop ends a node's schedule; false when it had none.
func (s *scheduler) stop(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	cancel, ok := s.jobs[id]
	if ok {
		cancel()
		delete(s.jobs, id)
	}
	return ok
}

// close stops every schedule and waits for running captures.
func (s *scheduler) close() {
	s.mu.Lock()
	for id, cancel := range s.jobs {
		cancel()
		delete(s.jobs, id)
	}
	s.mu.Unlock()
	s.wg.Wait()
}
