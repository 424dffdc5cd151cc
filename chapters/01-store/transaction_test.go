package store

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kcache "k8s.io/client-go/tools/cache"
)

// noMeta is an object with no metadata: no KeyFunc can key it, so a
// transaction carrying it must be reported and skipped.
type noMeta struct{ N int }

// TestOracleTransactionRandomBatches sends the same seeded random batches
// (adds, updates, deletes of present and absent keys, deletes by ExplicitKey,
// objects that cannot be keyed) to client-go's cache.Transaction and to ours,
// with single writes and Replaces in between so batches meet varied contents.
// After every step contents, every index, the store's resourceVersion and the
// TransactionError (applied indices, total, each error's text) must match.
func TestOracleTransactionRandomBatches(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			runTransactionOracle(t, seed, 1000)
		})
	}
}

func runTransactionOracle(t *testing.T, seed uint64, steps int) {
	g := &podGen{r: rand.New(rand.NewPCG(seed, 7))}
	ours := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc, "node": byNode, "secret": bySecret})
	theirs := kcache.NewIndexer(kcache.MetaNamespaceKeyFunc, kcache.Indexers{
		kcache.NamespaceIndex: kcache.MetaNamespaceIndexFunc, "node": byNode, "secret": bySecret})
	ourTxn, theirTxn := ours.(TransactionStore), theirs.(kcache.TransactionStore)
	var partial, clean int

	for step := range steps {
		var desc string
		switch op := g.r.IntN(100); {
		case op < 80:
			n := g.r.IntN(25)
			var mine []Transaction
			var theirsTxns []kcache.Transaction
			for range n {
				var obj any
				var typ TransactionType
				switch k := g.r.IntN(100); {
				case k < 35:
					obj, typ = g.pod(), TransactionTypeAdd
				case k < 65:
					obj, typ = g.pod(), TransactionTypeUpdate
				case k < 85:
					obj, typ = g.pod(), TransactionTypeDelete
				case k < 92:
					p := g.pod()
					key, _ := MetaNamespaceKeyFunc(p)
					obj, typ = ExplicitKey(key), TransactionTypeDelete
				default:
					obj = noMeta{g.r.IntN(10)}
					typ = []TransactionType{TransactionTypeAdd, TransactionTypeUpdate, TransactionTypeDelete}[g.r.IntN(3)]
				}
				mine = append(mine, Transaction{Object: obj, Type: typ})
				theirObj := obj
				if k, ok := obj.(ExplicitKey); ok {
					theirObj = kcache.ExplicitKey(k) // each side knows only its own ExplicitKey type
				}
				theirsTxns = append(theirsTxns, kcache.Transaction{Object: theirObj, Type: kcache.TransactionType(typ)})
			}
			desc = fmt.Sprintf("Transaction of %d", n)
			errO, errT := ourTxn.Transaction(mine...), theirTxn.Transaction(theirsTxns...)
			requireSameTransactionError(t, step, errO, errT)
			if errO != nil {
				partial++
			} else if n > 0 {
				clean++
			}
		case op < 90:
			p := g.pod()
			desc = "Update " + p.Name
			requireSameError(t, step, desc, ours.Update(p), theirs.Update(p))
		case op < 95:
			p := g.pod()
			desc = "Delete " + p.Name
			requireSameError(t, step, desc, ours.Delete(p), theirs.Delete(p))
		default:
			list := make([]any, g.r.IntN(30))
			for j := range list {
				list[j] = g.pod()
			}
			rv := strconv.Itoa(g.rv)
			desc = "Replace"
			requireSameError(t, step, desc, ours.Replace(list, rv), theirs.Replace(list, rv))
		}
		compareIndexers(t, step, desc, g, ours, theirs)
		if t.Failed() {
			return
		}
		if step%50 == 0 {
			checkIndexInvariant(t, ours.(*cache).cacheStorage.(*threadSafeMap))
		}
	}
	// The run must have exercised both outcomes, or it proves less than it says.
	require.Positive(t, partial, "no batch had a key error")
	require.Positive(t, clean, "no batch was fully applied")
}

func requireSameTransactionError(t *testing.T, step int, ours *TransactionError, theirs *kcache.TransactionError) {
	t.Helper()
	if (ours == nil) != (theirs == nil) {
		t.Fatalf("step %d: TransactionError ours=%v theirs=%v", step, ours, theirs)
	}
	if ours == nil {
		return
	}
	if !slices.Equal(ours.SuccessfulIndices, theirs.SuccessfulIndices) || ours.TotalTransactions != theirs.TotalTransactions {
		t.Fatalf("step %d: applied %v of %d, client-go applied %v of %d", step,
			ours.SuccessfulIndices, ours.TotalTransactions, theirs.SuccessfulIndices, theirs.TotalTransactions)
	}
	if len(ours.Errors) != len(theirs.Errors) {
		t.Fatalf("step %d: %d errors, client-go %d", step, len(ours.Errors), len(theirs.Errors))
	}
	for i := range ours.Errors {
		if ours.Errors[i].Error() != theirs.Errors[i].Error() {
			t.Fatalf("step %d error %d:\n ours:   %v\n theirs: %v", step, i, ours.Errors[i], theirs.Errors[i])
		}
	}
}

func TestTransactionPartialFailureAppliesTheRest(t *testing.T) {
	idx := newPodIndexer()
	require.NoError(t, idx.Add(pod("ns", "gone", "1", "n1")))
	txns := []Transaction{
		{Object: pod("ns", "a", "2", "n1"), Type: TransactionTypeAdd},
		{Object: noMeta{1}, Type: TransactionTypeAdd},
		{Object: pod("ns", "gone", "3", "n1"), Type: TransactionTypeDelete},
		{Object: pod("ns", "b", "4", "n2"), Type: "Upsert"},
		{Object: pod("ns", "a", "5", "n2"), Type: TransactionTypeUpdate},
	}
	err := idx.(TransactionStore).Transaction(txns...)
	require.NotNil(t, err)
	assert.Equal(t, []int{0, 2, 4}, err.SuccessfulIndices)
	assert.Equal(t, 5, err.TotalTransactions)
	require.Len(t, err.Errors, 2)
	var keyErr KeyError
	assert.ErrorAs(t, err.Errors[0], &keyErr)
	assert.Equal(t, noMeta{1}, keyErr.Obj)
	assert.ErrorContains(t, err.Errors[1], `unknown type "Upsert"`)
	assert.ErrorContains(t, err, "2 of 5 store transactions not applied")

	assert.Equal(t, []string{"ns/a"}, idx.ListKeys())
	got, _, _ := idx.GetByKey("ns/a")
	assert.Equal(t, "5", got.(*corev1.Pod).ResourceVersion)
	keys, _ := idx.IndexKeys("node", "n2")
	assert.Equal(t, []string{"ns/a"}, keys)
	keys, _ = idx.IndexKeys("node", "n1")
	assert.Empty(t, keys)
	assert.Equal(t, "5", idx.LastStoreSyncResourceVersion())
	checkIndexInvariant(t, idx.(*cache).cacheStorage.(*threadSafeMap))
}

// The last transaction decides the store's resourceVersion, a Delete's
// included; one with no metadata leaves it alone, even if earlier ones had
// some. That differs from the same writes made one by one, and is upstream's
// rule (the oracle test checks it against client-go too).
func TestTransactionResourceVersionIsTheLastObjects(t *testing.T) {
	idx := newPodIndexer()
	txn := idx.(TransactionStore)
	require.Nil(t, txn.Transaction(
		Transaction{Object: pod("ns", "a", "7", "n1"), Type: TransactionTypeAdd},
		Transaction{Object: pod("ns", "a", "6", "n1"), Type: TransactionTypeDelete},
	))
	assert.Equal(t, "6", idx.LastStoreSyncResourceVersion())
	require.Nil(t, txn.Transaction(
		Transaction{Object: pod("ns", "b", "9", "n1"), Type: TransactionTypeAdd},
		Transaction{Object: ExplicitKey("ns/b"), Type: TransactionTypeDelete},
	))
	assert.Equal(t, "6", idx.LastStoreSyncResourceVersion())
	assert.Empty(t, idx.ListKeys())
	require.Nil(t, txn.Transaction())
	assert.Equal(t, "6", idx.LastStoreSyncResourceVersion())
}

// TestTransactionIsAtomicForReaders is meant for -race. A writer flips ten
// keys between two states, a whole batch at a time: every key at the same
// generation, or every key deleted. Readers of List, an index and
// ListIndexFuncValues must only ever see one generation and all ten keys, or
// nothing: a mix means they saw a batch half applied. Applying the batch as
// ten separate writes fails this test.
func TestTransactionIsAtomicForReaders(t *testing.T) {
	const keys, batches = 10, 1500
	gen := func(obj any) ([]string, error) { return []string{obj.(*corev1.Pod).ResourceVersion}, nil }
	idx := NewIndexer(MetaNamespaceKeyFunc, Indexers{"gen": gen, NamespaceIndex: MetaNamespaceIndexFunc})
	txn := idx.(TransactionStore)

	stop := make(chan struct{})
	var readers sync.WaitGroup
	var seen sync.Map
	for r := range 2 {
		readers.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				var problem string
				switch n % 3 {
				case 0:
					items := idx.List()
					rvs := map[string]bool{}
					for _, it := range items {
						rvs[it.(*corev1.Pod).ResourceVersion] = true
					}
					if (len(items) != 0 && len(items) != keys) || len(rvs) > 1 {
						problem = fmt.Sprintf("List: %d items, generations %v", len(items), rvs)
					}
					seen.Store(len(items), true)
				case 1:
					if vals := idx.ListIndexFuncValues("gen"); len(vals) > 1 {
						problem = fmt.Sprintf("gen index holds %v", vals)
					}
				case 2:
					if ks, _ := idx.IndexKeys(NamespaceIndex, "ns"); len(ks) != 0 && len(ks) != keys {
						problem = fmt.Sprintf("namespace index holds %d keys", len(ks))
					}
				}
				if problem != "" {
					t.Errorf("reader %d saw a half-applied batch: %s", r, problem)
					return
				}
			}
		})
	}
	for b := range batches {
		txns := make([]Transaction, keys)
		for k := range keys {
			typ := TransactionTypeUpdate
			if b%3 == 2 {
				typ = TransactionTypeDelete
			}
			txns[k] = Transaction{Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
				Namespace: "ns", Name: "p" + strconv.Itoa(k), ResourceVersion: strconv.Itoa(b)}}, Type: typ}
		}
		require.Nil(t, txn.Transaction(txns...))
	}
	close(stop)
	readers.Wait()
	// Both states must have been observed, or the readers proved nothing.
	_, sawFull := seen.Load(keys)
	_, sawEmpty := seen.Load(0)
	assert.True(t, sawFull && sawEmpty, "readers never saw both the full and the empty state")
	checkIndexInvariant(t, idx.(*cache).cacheStorage.(*threadSafeMap))
}
