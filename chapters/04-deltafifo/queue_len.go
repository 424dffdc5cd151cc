package deltafifo

// Len is how many keys are queued now. A live view reads it to show the
// queue filling during a relist and draining behind HandleDeltas.
//
// Ours: client-go's DeltaFIFO (delta_fifo.go) exposes its depth only to
// its metrics provider, not as a method. Read-only; it takes the read lock
// for the length only, so a reader never holds up Pop for long.
func (f *DeltaFIFO) Len() int {
	f.lock.RLock()
	defer f.lock.RUnlock()
	return len(f.queue)
}

// Len is how many entries are queued now; an atomic relist (ReplacedAll)
// or resync (SyncAll) is one entry, however many objects it carries.
//
// Ours: client-go's RealFIFO (the_real_fifo.go) has no such method (its
// depth goes to the metrics provider). Read-only.
func (f *RealFIFO) Len() int {
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.len_locked()
}
