package bubble

import (
	"bytes"
	"runtime"
	"strconv"
)

// marker is what the runtime writes in a goroutine's header line when the
// goroutine is in a bubble (runtime/traceback.go goroutineheader:
// "goroutine 7 [running, synctest bubble 1]:").
var marker = []byte(", synctest bubble ")

// ID is the id of the synctest bubble the calling goroutine runs in, or 0
// outside any bubble. It costs one runtime.Stack of the caller's frame, a
// couple of microseconds (BenchmarkID): call it when an object is made and
// once per read of many objects, not per operation.
//
// The standard library answers this only to itself (internal/synctest's
// IsInBubble), so ID reads the header line runtime.Stack writes. If a Go
// release changed that line, ID would answer 0 everywhere and the
// registry would read every object, as before this package:
// TestIDInsideABubble fails then, so the change is seen when the
// toolchain is updated.
func ID() uint64 {
	var buf [256]byte
	line := buf[:runtime.Stack(buf[:], false)]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	i := bytes.Index(line, marker)
	if i < 0 {
		return 0
	}
	digits := line[i+len(marker):]
	end := 0
	for end < len(digits) && digits[end] >= '0' && digits[end] <= '9' {
		end++
	}
	id, err := strconv.ParseUint(string(digits[:end]), 10, 64)
	if err != nil {
		// Marked as in a bubble but unreadable: a bubble that is not
		// 0, so that the object is read by nobody else.
		return ^uint64(0)
	}
	return id
}
