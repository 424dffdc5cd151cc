package demoproc_test

import (
	"fmt"
	"os/exec"
	"runtime"

	"github.com/informer-anatomy/informer-anatomy/demo/demoproc"
)

// A LockedBuffer takes a child process's output, which os/exec copies in
// on a goroutine of its own, and may be read while that goes on.
func ExampleLockedBuffer() {
	var out demoproc.LockedBuffer
	cmd := exec.Command("go", "env", "GOOS")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.String() == runtime.GOOS+"\n")
	// Output: true
}
