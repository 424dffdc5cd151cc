package demoproc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"
)

var build struct {
	once sync.Once
	bin  string
	err  error
}

// Build compiles cmd/trace-demo of the module that contains the current
// directory (a test runs in its package's directory) and returns the
// binary's path. It builds once per process; the binary lives in a
// directory of [os.TempDir] named after the module's root, so a later test
// process (each workshop checker is one) gets an up-to-date binary from the
// go command without linking it again. A failed build's error carries the
// compiler's output; the process keeps that answer.
func Build() (string, error) {
	build.once.Do(func() { build.bin, build.err = buildTraceDemo() })
	return build.bin, build.err
}

func buildTraceDemo() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("cannot find the module (go env GOMOD: %q, %v): run this inside the checkout", gomod, err)
	}
	return BuildAt(filepath.Dir(gomod))
}

// BuildAt builds cmd/trace-demo of the module at root where [Build]
// builds it for a test run inside that module, and returns its path: a
// program that is about to start many test processes that each call
// Build (the workshop's selfcheck, whose live-view checkers run side by
// side) builds it once first, so that each of them finds it up to date
// instead of all linking it at once.
func BuildAt(root string) (string, error) {
	sum := sha256.Sum256([]byte(root))
	bin := filepath.Join(os.TempDir(), "informer-anatomy-trace-demo-"+hex.EncodeToString(sum[:6]), "trace-demo")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/trace-demo")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/trace-demo: %v\n%s", err, out)
	}
	return bin, nil
}

// Proc is a running `trace-demo --ui` started by [Start].
type Proc struct {
	// URL is the live view's address as the demo printed it, ending in "/".
	URL string

	args    []string
	timeout time.Duration
	cmd     *exec.Cmd
	out     LockedBuffer
	done    chan struct{} // closed when the process has ended
	waitErr error         // cmd.Wait's answer; read after done is closed

	stopOnce sync.Once
	code     int
	stopErr  error
}

// urlRe finds the line the live view prints once it listens
// (demo/liveview/session.go).
var urlRe = regexp.MustCompile(`live view: (http://\S+)`)

// Start runs bin (from [Build]) as `trace-demo --ui --ui-addr 127.0.0.1:0`
// followed by args, with its standard output and error in one buffer
// ([Proc.Output]), and waits up to timeout for the URL it prints. A demo
// that cannot start, ends before printing its URL, or prints none within
// timeout (it is killed) is an error that quotes its output. The caller
// stops the demo it got ([Proc.Stop]); timeout also bounds that wait.
func Start(timeout time.Duration, bin string, args ...string) (*Proc, error) {
	p := &Proc{
		args:    append([]string{"--ui", "--ui-addr", "127.0.0.1:0"}, args...),
		timeout: timeout,
		done:    make(chan struct{}),
	}
	p.cmd = exec.Command(bin, p.args...)
	// The same *LockedBuffer for both: os/exec then hands the child one
	// pipe, so the output keeps the order the demo wrote it in.
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", bin, err)
	}
	go func() { p.waitErr = p.cmd.Wait(); close(p.done) }()

	deadline := time.After(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if m := urlRe.FindStringSubmatch(p.out.String()); m != nil {
			p.URL = m[1]
			return p, nil
		}
		select {
		case <-p.done:
			// The URL may be the last thing it wrote before exiting.
			if m := urlRe.FindStringSubmatch(p.out.String()); m != nil {
				p.URL = m[1]
				return p, nil
			}
			return nil, fmt.Errorf("%s ended before printing its live view URL (%v):\n%s", p, p.waitErr, p.out.String())
		case <-deadline:
			_ = p.cmd.Process.Kill()
			<-p.done
			return nil, fmt.Errorf("%s printed no live view URL within %v:\n%s", p, timeout, p.out.String())
		case <-tick.C:
		}
	}
}

// String is the command line, as "trace-demo --ui ...", for messages.
func (p *Proc) String() string {
	return "trace-demo " + strings.Join(p.args, " ")
}

// Output is everything the demo has written so far to its standard output
// and error, interleaved as written.
func (p *Proc) Output() string {
	return p.out.String()
}

// Done is closed when the demo has ended, whether by itself or stopped.
func (p *Proc) Done() <-chan struct{} {
	return p.done
}

// ErrEnded is wrapped by the error of [Proc.Stop] when the demo had already
// ended before it was interrupted: the live view is meant to run until
// Ctrl-C, so that is news for the test.
var ErrEnded = errors.New("trace-demo had ended before the interrupt")

// Stop sends the demo an interrupt, as Ctrl-C does, waits for it to end and
// returns its exit code (-1 if a signal ended it). It returns an error, and
// kills the demo if it still runs, when the demo had already ended
// ([ErrEnded]), could not be interrupted (Windows cannot send one), or did
// not end within Start's timeout. Only the first call acts; later calls
// return the same answer.
func (p *Proc) Stop() (int, error) {
	p.stopOnce.Do(func() { p.code, p.stopErr = p.stop() })
	return p.code, p.stopErr
}

func (p *Proc) stop() (int, error) {
	select {
	case <-p.done:
		return p.exitCode(), fmt.Errorf("%w (%v)", ErrEnded, p.waitErr)
	default:
	}
	// Where no interrupt can be sent (Windows), Signal says so.
	if err := p.cmd.Process.Signal(os.Interrupt); errors.Is(err, os.ErrProcessDone) {
		<-p.done
		return p.exitCode(), fmt.Errorf("%w (%v)", ErrEnded, p.waitErr)
	} else if err != nil {
		_ = p.cmd.Process.Kill()
		<-p.done
		return p.exitCode(), fmt.Errorf("cannot interrupt %s (%v): killed it", p, err)
	}
	select {
	case <-p.done:
	case <-time.After(p.timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return p.exitCode(), fmt.Errorf("%s did not end within %v of the interrupt: killed it", p, p.timeout)
	}
	var exit *exec.ExitError
	if p.waitErr != nil && !errors.As(p.waitErr, &exit) {
		return p.exitCode(), p.waitErr
	}
	return p.exitCode(), nil
}

// exitCode is the ended process's exit code; call it after done is closed.
func (p *Proc) exitCode() int {
	return p.cmd.ProcessState.ExitCode()
}

// LockedBuffer is a [bytes.Buffer] that one goroutine (or a child process,
// through os/exec's copying goroutine) writes while another reads it. The
// zero value is an empty buffer ready to use.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p, as [bytes.Buffer.Write].
func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns a copy of everything written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
