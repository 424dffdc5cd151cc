//go:build amd64 || arm64

package handlerctx

// currentG returns the address of the runtime's descriptor of the calling
// goroutine (goroutine_amd64.s, goroutine_arm64.s): a few instructions,
// no call into the runtime.
func currentG() uintptr

// goroutineKey tells the calling goroutine from every other goroutine
// alive at the same moment. The runtime reuses a descriptor for a new
// goroutine only after the old one has exited, so a registration must end
// before its goroutine exits (see the package doc).
func goroutineKey() uintptr { return currentG() }

// keepEmpty: a goroutine's emptied registrations stay in its shard's map.
// Descriptors are reused, so the map holds at most one entry per
// goroutine the process has had running at once.
const keepEmpty = true
