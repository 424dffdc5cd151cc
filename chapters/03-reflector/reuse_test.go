package reflector

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
)

// reusingStore is a ReusingStore that logs, in one sequence with the
// source's page requests, each object offered to ReuseRelisted, and the
// flags each Replace was given. It "reuses" the pods whose name is in
// reuse, handing back the object it keeps for that name.
type reusingStore struct {
	store.Store
	mu       sync.Mutex
	log      *[]string
	reuse    map[string]any
	replaced [][]any
	flags    [][]bool
	flagged  []bool // whether each Replace's context carried flags at all
}

func (s *reusingStore) ReuseRelisted(obj any) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := obj.(*corev1.Pod).Name
	*s.log = append(*s.log, "offer "+name)
	if kept, ok := s.reuse[name]; ok {
		return kept, true
	}
	return obj, false
}

func (s *reusingStore) AddWithContext(_ context.Context, obj any) error    { return s.Add(obj) }
func (s *reusingStore) UpdateWithContext(_ context.Context, obj any) error { return s.Update(obj) }
func (s *reusingStore) DeleteWithContext(_ context.Context, obj any) error { return s.Delete(obj) }
func (s *reusingStore) ResyncWithContext(context.Context) error            { return nil }
func (s *reusingStore) ReplaceWithContext(ctx context.Context, list []any, rv string) error {
	s.mu.Lock()
	s.replaced = append(s.replaced, list)
	s.flags = append(s.flags, PreparedFrom(ctx))
	_, flagged := ctx.Value(preparedKey{}).([]bool)
	s.flagged = append(s.flagged, flagged)
	s.mu.Unlock()
	return s.Replace(list, rv)
}

var _ ReusingStore = &reusingStore{}

func namedPod(i int) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("p", i), ResourceVersion: "5"}}
}

// pagedPods is a ListerWatcher of 2*pages pods in pages of two (continue
// token: the next page's number), which logs each page it is asked for
// through logf.
func pagedPods(pages int, logf func(string)) *ListWatch {
	return &ListWatch{
		ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
			page := 0
			if o.Continue != "" {
				fmt.Sscan(o.Continue, &page)
			}
			logf(fmt.Sprint("page ", page))
			list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}}
			for i := 2 * page; i < 2*page+2; i++ {
				list.Items = append(list.Items, *namedPod(i))
			}
			if page < pages-1 {
				list.Continue = fmt.Sprint(page + 1)
			}
			return list, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}
}

// A paged LIST's items are offered to ReuseRelisted as each page arrives,
// in order, and the next page is asked for at most one page ahead: page
// k+2 only once page k's items have all been offered, so no more than two
// pages are held beyond the cache. The Replace gets what ReuseRelisted
// returned, with its flags.
func TestListOffersEachPageToTheStoreAsItArrives(t *testing.T) {
	var log []string
	kept := namedPod(1)
	s := &reusingStore{Store: store.NewStore(store.MetaNamespaceKeyFunc), log: &log, reuse: map[string]any{"p1": kept}}
	lw := pagedPods(4, func(line string) { s.mu.Lock(); log = append(log, line); s.mu.Unlock() })
	r := NewReflectorWithOptions(lw, &corev1.Pod{}, s, ReflectorOptions{UseWatchList: new(false)})
	r.WatchListPageSize = 2
	require.NoError(t, r.list(context.Background()))

	at := map[string]int{}
	var offers []string
	for k, line := range log {
		at[line] = k
		if name, ok := strings.CutPrefix(line, "offer "); ok {
			offers = append(offers, name)
		}
	}
	require.Len(t, log, 4+8, "four pages asked for once each, eight pods offered: %v", log)
	assert.Equal(t, []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"}, offers, "offered in the list's order")
	for page := range 4 {
		first, last := fmt.Sprint("offer p", 2*page), fmt.Sprint("offer p", 2*page+1)
		assert.Less(t, at[fmt.Sprint("page ", page)], at[first], "page %d is asked for before its items are offered: %v", page, log)
		if page+2 < 4 {
			assert.Less(t, at[last], at[fmt.Sprint("page ", page+2)], "page %d is asked for only once page %d was offered: %v", page+2, page, log)
		}
	}
	require.Len(t, s.replaced, 1, "one Replace")
	assert.Len(t, s.replaced[0], 8)
	assert.Same(t, kept, s.replaced[0][1], "the Replace gets what ReuseRelisted returned")
	assert.Equal(t, []bool{false, true, false, false, false, false, false, false}, s.flags[0], "and which entries it prepared")
}

// blockingStore holds ReuseRelisted of the first object until release is
// closed, and says whether release came in time.
type blockingStore struct {
	reusingStore
	release chan struct{}
	once    sync.Once
	inTime  bool
}

func (s *blockingStore) ReuseRelisted(obj any) (any, bool) {
	s.once.Do(func() {
		select {
		case <-s.release:
			s.inTime = true
		case <-time.After(10 * time.Second):
		}
	})
	return s.reusingStore.ReuseRelisted(obj)
}

// The next page is asked for while the store still works on the page
// before: the client's work on a page overlaps the next round trip. Here
// the store holds the first page until the second has been asked for;
// asking page by page (upstream's pager, and ours before) would wait out
// the store's ten seconds instead.
func TestListAsksForTheNextPageWhileTheStoreTakesThisOne(t *testing.T) {
	var log []string
	s := &blockingStore{reusingStore: reusingStore{Store: store.NewStore(store.MetaNamespaceKeyFunc), log: &log}, release: make(chan struct{})}
	var once sync.Once
	lw := pagedPods(3, func(line string) {
		if line == "page 1" {
			once.Do(func() { close(s.release) })
		}
	})
	r := NewReflectorWithOptions(lw, &corev1.Pod{}, s, ReflectorOptions{UseWatchList: new(false)})
	r.WatchListPageSize = 2
	require.NoError(t, r.list(context.Background()))
	assert.True(t, s.inTime, "page 1 was asked for while page 0 was being taken")
	require.Len(t, s.replaced, 1)
	assert.Len(t, s.replaced[0], 6)
}

// A ListerWatcher that panics on a later page: the panic reaches the
// reflector's own goroutine (as upstream's list re-raises its pager
// goroutine's panic), not a goroutine nobody recovers on.
func TestListRaisesAPagesPanicOnTheCallersGoroutine(t *testing.T) {
	var log []string
	s := &reusingStore{Store: store.NewStore(store.MetaNamespaceKeyFunc), log: &log}
	lw := pagedPods(3, func(line string) {
		if line == "page 1" {
			panic("the source broke on page 1")
		}
	})
	r := NewReflectorWithOptions(lw, &corev1.Pod{}, s, ReflectorOptions{UseWatchList: new(false)})
	r.WatchListPageSize = 2
	assert.PanicsWithValue(t, "the source broke on page 1", func() { _ = r.list(context.Background()) })
	assert.Empty(t, s.replaced, "nothing replaced")
}

// A page that fails drops the pages before it: nothing reaches Replace.
func TestListThatFailsMidwayReplacesNothing(t *testing.T) {
	var log []string
	s := &reusingStore{Store: store.NewStore(store.MetaNamespaceKeyFunc), log: &log}
	lw := &ListWatch{
		ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
			if o.Continue != "" {
				return nil, fmt.Errorf("page 2 failed")
			}
			return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5", Continue: "1"}, Items: []corev1.Pod{*namedPod(0)}}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}
	r := NewReflectorWithOptions(lw, &corev1.Pod{}, s, ReflectorOptions{UseWatchList: new(false)})
	r.WatchListPageSize = 1
	require.ErrorContains(t, r.list(context.Background()), "page 2 failed")
	assert.Equal(t, []string{"offer p0"}, log, "the first page was offered as it came")
	assert.Empty(t, s.replaced, "but nothing was replaced")
}

// A streamed object is offered after the temporary store's transform, and
// the bookmark's Replace carries the flags.
func TestWatchListOffersEachObjectAfterTheTransform(t *testing.T) {
	var log []string
	kept := namedPod(0)
	s := &transformingReusingStore{reusingStore: reusingStore{Store: store.NewStore(store.MetaNamespaceKeyFunc), log: &log, reuse: map[string]any{"p0": kept}}}
	w := watch.NewFake()
	lw := &ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return nil, fmt.Errorf("this source only streams")
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return w, nil },
	}
	r := NewReflectorWithOptions(lw, &corev1.Pod{}, s, ReflectorOptions{UseWatchList: new(true)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.RunWithContext(ctx) }()
	w.Add(namedPod(0))
	w.Add(namedPod(1))
	w.Action(watch.Bookmark, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "6",
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
	w.Add(namedPod(2)) // returns once the reflector took it: the Replace is done
	cancel()
	<-done

	assert.Equal(t, []string{"transform p0", "offer p0", "transform p1", "offer p1"}, log[:4])
	require.Len(t, s.replaced, 1)
	assert.Same(t, kept, s.replaced[0][0])
	assert.Equal(t, []bool{true, false}, s.flags[0])
}

type transformingReusingStore struct{ reusingStore }

func (s *transformingReusingStore) Transformer() store.TransformFunc {
	return func(obj any) (any, error) {
		s.mu.Lock()
		*s.log = append(*s.log, "transform "+obj.(*corev1.Pod).Name)
		s.mu.Unlock()
		return obj, nil
	}
}

// A store that is not a ReusingStore gets the list as listed, and no flags.
func TestListToAPlainStoreCarriesNoFlags(t *testing.T) {
	var log []string
	s := &reusingStore{Store: store.NewStore(store.MetaNamespaceKeyFunc), log: &log}
	plain := &plainContextStore{s}
	lw := &ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}, Items: []corev1.Pod{*namedPod(0)}}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}
	r := NewReflectorWithOptions(lw, &corev1.Pod{}, plain, ReflectorOptions{UseWatchList: new(false)})
	require.NoError(t, r.list(context.Background()))
	assert.Empty(t, log, "nothing offered")
	require.Len(t, s.flagged, 1)
	assert.False(t, s.flagged[0], "no flags in the Replace's context")
}

// plainContextStore hides ReuseRelisted.
type plainContextStore struct{ s *reusingStore }

func (p *plainContextStore) Add(obj any) error                   { return p.s.Add(obj) }
func (p *plainContextStore) Update(obj any) error                { return p.s.Update(obj) }
func (p *plainContextStore) Delete(obj any) error                { return p.s.Delete(obj) }
func (p *plainContextStore) Replace(list []any, rv string) error { return p.s.Replace(list, rv) }
func (p *plainContextStore) Resync() error                       { return nil }
func (p *plainContextStore) AddWithContext(ctx context.Context, obj any) error {
	return p.s.AddWithContext(ctx, obj)
}
func (p *plainContextStore) UpdateWithContext(ctx context.Context, obj any) error {
	return p.s.UpdateWithContext(ctx, obj)
}
func (p *plainContextStore) DeleteWithContext(ctx context.Context, obj any) error {
	return p.s.DeleteWithContext(ctx, obj)
}
func (p *plainContextStore) ReplaceWithContext(ctx context.Context, list []any, rv string) error {
	return p.s.ReplaceWithContext(ctx, list, rv)
}
func (p *plainContextStore) ResyncWithContext(ctx context.Context) error { return nil }
