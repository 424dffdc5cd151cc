package testutil_test

import (
	"context"
	"go/ast"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/informer-anatomy/informer-anatomy/internal/testutil"
)

func tomb(c string) bool    { return strings.HasPrefix(c, "delete-tombstone ") }
func initial(c string) bool { return strings.HasSuffix(c, " initial=true") }

// A run is sorted only within itself and only for the kinds given; a run
// of one kind ends where a call of another kind begins.
func TestSortRunsSortsEachRunOnItsOwn(t *testing.T) {
	calls := []string{"add b initial=true", "add a initial=true", "update x", "delete-tombstone d", "delete-tombstone c", "add z initial=true", "delete-tombstone b"}
	assert.Equal(t, []string{"add b initial=true", "add a initial=true", "update x", "delete-tombstone c", "delete-tombstone d", "add z initial=true", "delete-tombstone b"},
		testutil.SortRuns(calls, tomb))
	assert.Equal(t, []string{"add a initial=true", "add b initial=true", "update x", "delete-tombstone c", "delete-tombstone d", "add z initial=true", "delete-tombstone b"},
		testutil.SortRuns(calls, tomb, initial))
	assert.Equal(t, "add b initial=true", calls[0], "the input is left as it was")
	assert.Equal(t, calls, testutil.SortRuns(calls), "no kind, no change")
}

func TestWaitForSaysWhetherTheConditionCameTrue(t *testing.T) {
	var n atomic.Int32
	assert.True(t, testutil.WaitFor(func() bool { return n.Add(1) == 3 }))
	assert.Equal(t, int32(3), n.Load(), "polled until true, not after")
}

func TestRefusingListerWatcherRecordsTheGapsBetweenAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &testutil.RefusingListerWatcher{}
		var returned bool
		testutil.RunFor(10*time.Second, func(ctx context.Context) {
			defer func() { returned = true }()
			for {
				// One attempt: a refused stream, then a refused LIST at once.
				_, werr := lw.WatchWithContext(ctx, metav1.ListOptions{})
				_, lerr := lw.List(metav1.ListOptions{})
				require.Error(t, werr)
				require.Error(t, lerr)
				select {
				case <-ctx.Done():
					return
				case <-time.After(3 * time.Second):
				}
			}
		})
		assert.True(t, returned, "RunFor waits for run to return")
		assert.Equal(t, []time.Duration{3 * time.Second, 3 * time.Second, 3 * time.Second}, lw.Gaps(),
			"attempts at 0, 3, 6 and 9s; the LIST right after each WATCH is no gap")
	})
}

func TestWaitForLinesNamesTheLineThatCalledWaitFor(t *testing.T) {
	lines := testutil.WaitForLines(t, cache.WaitFor)
	var msgs []string
	for _, l := range lines {
		msgs = append(msgs, l.Msg)
		assert.Zero(t, l.Line, "client-go's %q names its caller", l.Msg)
	}
	assert.Equal(t, []string{"Waiting", "Done waiting", "Timed out waiting"}, msgs)
}

func TestQueueMetricsKeepWhatClientGosQueueReports(t *testing.T) {
	m := &testutil.QueueMetrics{}
	// A name, or client-go's queue reports to no provider.
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "testutil", MetricsProvider: m})
	defer q.ShutDown()
	q.Add("a")
	q.Add("a") // merged: no add counted
	item, _ := q.Get()
	q.Done(item)
	q.AddAfter("b", time.Hour)
	adds, latency, work := m.Read()
	assert.Equal(t, 1, adds)
	assert.Len(t, latency, 1)
	assert.Len(t, work, 1)
	assert.Equal(t, 1, m.Retries())
}

// StringConsts finds internal/tracing's names, literal and converted alike,
// and leaves out what is not an exported string constant.
func TestStringConstsReadsAPackagesNames(t *testing.T) {
	got := testutil.StringConsts(t, filepath.Join("..", "tracing"))
	if got["SpanHandleDeltas"] != "HandleDeltas" {
		t.Errorf("SpanHandleDeltas: %q", got["SpanHandleDeltas"])
	}
	if got["KeyObjectKey"] == "" {
		t.Errorf("KeyObjectKey (an attribute.Key conversion) not found: %v", got)
	}
	for name := range got {
		if !ast.IsExported(name) {
			t.Errorf("unexported %s returned", name)
		}
	}
}
