package sqlview

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// Statements go-mysql-server takes minutes to plan (15 nested scalar
// subqueries: 30 s for 14, 2.6 times as long per level; its analyzer
// reanalyzes the nesting at every level) stop planning when their context
// ends, with the context's error as ERROR 1317, instead of planning on for
// nobody. (Nested derived tables plan mostly out of the rule's reach:
// checkSubqueryDepth bounds them.)
func TestPlanningStopsWithItsContext(t *testing.T) {
	e, s := newFixtureEngine(t)
	scalar := "SELECT 1"
	for range 15 {
		scalar = fmt.Sprintf("SELECT (%s) AS x", scalar)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := engineAnswer(ctx, e, s, scalar)
		done <- err
	}()
	select {
	case err := <-done:
		var ge *Error
		if !errors.As(err, &ge) || ge.Code != 1317 || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("got %v (context: %v), want ERROR 1317 once the context ended", err, ctx.Err())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("planning went on a minute after its context ended")
	}
}
