package kit

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	store "github.com/informer-anatomy/informer-anatomy/chapters/01-store"
	"github.com/informer-anatomy/informer-anatomy/internal/apiserver"
)

// RecordingStore is a chapter-1 store that records the calls a reflector
// makes on it: "Add default/a", "Update default/a", "Delete default/a",
// "Replace default/a default/b" (the listed keys, sorted) and "Resync".
type RecordingStore struct {
	store.Store

	mu    sync.Mutex
	calls []string
}

// NewRecordingStore returns an empty RecordingStore keyed by namespace/name.
func NewRecordingStore() *RecordingStore {
	return &RecordingStore{Store: store.NewStore(store.MetaNamespaceKeyFunc)}
}

func (s *RecordingStore) record(c string) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
}

// Add records and adds.
func (s *RecordingStore) Add(obj any) error { s.record("Add " + nameOf(obj)); return s.Store.Add(obj) }

// Update records and updates.
func (s *RecordingStore) Update(obj any) error {
	s.record("Update " + nameOf(obj))
	return s.Store.Update(obj)
}

// Delete records and deletes.
func (s *RecordingStore) Delete(obj any) error {
	s.record("Delete " + nameOf(obj))
	return s.Store.Delete(obj)
}

// Replace records the listed keys and replaces.
func (s *RecordingStore) Replace(list []any, rv string) error {
	keys := make([]string, 0, len(list))
	for _, o := range list {
		keys = append(keys, nameOf(o))
	}
	slices.Sort(keys)
	s.record(strings.TrimSpace("Replace " + strings.Join(keys, " ")))
	return s.Store.Replace(list, rv)
}

// Resync records.
func (s *RecordingStore) Resync() error { s.record("Resync"); return nil }

// Calls returns the calls so far.
func (s *RecordingStore) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Requests describes srv's recorded requests for resource ("pods"; ""
// for all) as "list rv=0 limit=500" or "watch rv=42"; a watch that streams
// the initial state (sendInitialEvents=true) reads "watch rv= stream", an
// injected fault's status is appended ("watch rv=42 fault=403"), and so is
// a request the server refused itself ("watch rv= stream refused=422", a
// server that cannot stream). Each resourceVersion
// is shown through rename, which may map server RVs to names that do not
// depend on the run (e.g. "S" for the first list's); nil shows them as
// they are.
func Requests(srv *apiserver.Server, resource string, rename func(rv string) string) []string {
	var out []string
	for _, r := range srv.Requests() {
		if r.Verb != "list" && r.Verb != "watch" || resource != "" && r.Resource != resource {
			continue
		}
		rv := r.Query.Get("resourceVersion")
		if rename != nil {
			rv = rename(rv)
		}
		s := fmt.Sprintf("%s rv=%s", r.Verb, rv)
		if r.IsWatchList() {
			s += " stream"
		}
		if l := r.Query.Get("limit"); l != "" {
			s += " limit=" + l
		}
		if r.Fault != 0 {
			s += fmt.Sprintf(" fault=%d", r.Fault)
		}
		if r.Refused != 0 {
			s += fmt.Sprintf(" refused=%d", r.Refused)
		}
		out = append(out, s)
	}
	return out
}

// RenameRVs is a rename for [Requests] in the words the exercises use: ""
// and "0" as they are, each resourceVersion that names holds as its name
// (e.g. the initial state's as "S"), and any other as "later".
func RenameRVs(names map[string]string) func(rv string) string {
	return func(rv string) string {
		if rv == "" || rv == "0" {
			return rv
		}
		if n, ok := names[rv]; ok {
			return n
		}
		return "later"
	}
}
