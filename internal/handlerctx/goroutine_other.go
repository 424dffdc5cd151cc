//go:build !amd64 && !arm64

package handlerctx

import (
	"bytes"
	"runtime"
	"strconv"
)

var goroutinePrefix = []byte("goroutine ")

// goroutineKey, on an architecture without goroutine_<arch>.s, is the
// goroutine's id from the first line runtime.Stack writes ("goroutine 123
// [running]:"): about a microsecond, where the assembly takes a few
// nanoseconds. amd64 and arm64, where the project is built and measured,
// never come here.
func goroutineKey() uintptr {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, goroutinePrefix)
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("handlerctx: cannot read the goroutine id from runtime.Stack: " + err.Error())
	}
	return uintptr(id)
}

// keepEmpty: ids are never reused, so an emptied entry goes.
const keepEmpty = false
