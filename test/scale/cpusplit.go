package scale

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// The steady state's CPU time is taken apart by a CPU profile of the same
// window: the profiler samples each thread on its own CPU time (setitimer
// per thread on Linux), so the shares it reports hold on a loaded machine,
// where a difference of two whole-process readings does not.

// cpuShares are the CPU profile's samples of one window, counted by who
// spent them.
type cpuShares struct {
	// Source: the source's watch goroutine generating and sending each
	// change, and the driver recording it (a decoder's work, paid alike).
	Source int
	// GC: the garbage collector's own goroutines (background marking,
	// sweeping, scavenging); assists stay with the goroutine that
	// allocated.
	GC int
	// Own: the rest, the informer's goroutines and the scheduler's work
	// of handing changes between them.
	Own int
}

func (c cpuShares) total() int { return c.Source + c.GC + c.Own }

// profileShares runs f under the CPU profiler, sampling hz times a second
// of CPU (0: the profiler's 100), and counts its samples. ok is false, and
// f still runs, if another CPU profile is already running (go test
// -cpuprofile).
//
// save, if not empty, is a file the profile is written to as well, for
// go tool pprof.
func profileShares(hz int, save string, f func() error) (shares cpuShares, ok bool, err error) {
	var buf bytes.Buffer
	if hz > 0 {
		// The rate must be set before StartCPUProfile, which then cannot
		// set its own and says so on stderr ("runtime: cannot set cpu
		// profile rate until previous profile has finished"): expected.
		// The samples are counted, not timed, so the period the profile
		// states does not matter here.
		runtime.SetCPUProfileRate(hz)
	}
	if err := pprof.StartCPUProfile(&buf); err != nil {
		if hz > 0 {
			runtime.SetCPUProfileRate(0)
		}
		return shares, false, f()
	}
	err = f()
	pprof.StopCPUProfile()
	if err != nil {
		return shares, false, err
	}
	if save != "" {
		if err := os.WriteFile(save, buf.Bytes(), 0o644); err != nil {
			return shares, false, fmt.Errorf("saving the window's profile: %w", err)
		}
	}
	shares, err = countShares(buf.Bytes(), sourceFrames, gcFrames)
	return shares, err == nil, err
}

// The functions whose samples are the source's and the GC's.
var (
	// The heap sampler (scalegen.StartHeapSampler's goroutine, reading
	// runtime/metrics every 2 ms through the window) is the harness's, not
	// the informer's: it is counted with the source, the driver's side.
	sourceFrames = []string{"scalegen.(*sourceWatch).run", "scalegen.(*Source).Update", "scalegen.StartHeapSampler"}
	gcFrames     = []string{"runtime.gcBgMarkWorker", "runtime.bgsweep", "runtime.bgscavenge"}
)

// countShares reads a gzipped pprof profile (runtime/pprof's CPU profile:
// perftools.profiles.Profile, profile.proto) and counts each sample once,
// by the first of its frames whose function name contains one of source
// or of gc; a sample with neither is the informer's own.
func countShares(gz []byte, source, gc []string) (cpuShares, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return cpuShares{}, fmt.Errorf("the CPU profile: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return cpuShares{}, fmt.Errorf("the CPU profile: %w", err)
	}
	var (
		samples   [][]uint64              // each sample's location ids
		counts    []int64                 // each sample's count (its first value)
		locFuncs  = map[uint64][]uint64{} // location id → function ids
		funcNames = map[uint64]int64{}    // function id → string index
		strs      []string
	)
	err = eachField(raw, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case 2: // sample
			var locs []uint64
			var first int64 = -1
			err := eachField(v, func(n protowire.Number, t protowire.Type, b []byte, x uint64) error {
				switch n {
				case 1:
					return eachVarint(t, b, x, func(u uint64) { locs = append(locs, u) })
				case 2:
					return eachVarint(t, b, x, func(u uint64) {
						if first < 0 {
							first = int64(u)
						}
					})
				}
				return nil
			})
			samples, counts = append(samples, locs), append(counts, max(first, 0))
			return err
		case 4: // location
			var id uint64
			var fns []uint64
			err := eachField(v, func(n protowire.Number, t protowire.Type, b []byte, x uint64) error {
				switch n {
				case 1:
					id = x
				case 4: // line
					return eachField(b, func(n protowire.Number, _ protowire.Type, _ []byte, x uint64) error {
						if n == 1 {
							fns = append(fns, x)
						}
						return nil
					})
				}
				return nil
			})
			locFuncs[id] = fns
			return err
		case 5: // function
			var id uint64
			var name int64
			err := eachField(v, func(n protowire.Number, _ protowire.Type, _ []byte, x uint64) error {
				switch n {
				case 1:
					id = x
				case 2:
					name = int64(x)
				}
				return nil
			})
			funcNames[id] = name
			return err
		case 6: // string_table
			strs = append(strs, string(v))
		}
		return nil
	})
	if err != nil {
		return cpuShares{}, fmt.Errorf("the CPU profile: %w", err)
	}
	name := func(fn uint64) string {
		if i, ok := funcNames[fn]; ok && i >= 0 && int(i) < len(strs) {
			return strs[i]
		}
		return ""
	}
	var shares cpuShares
	for k, locs := range samples {
		class := &shares.Own
	frames:
		for _, loc := range locs {
			for _, fn := range locFuncs[loc] {
				n := name(fn)
				if hasAny(n, source) {
					class = &shares.Source
					break frames
				}
				if hasAny(n, gc) {
					class = &shares.GC
					break frames
				}
			}
		}
		*class += int(counts[k])
	}
	return shares, nil
}

func hasAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// eachField calls f for each field of the protobuf message b: its number,
// wire type, bytes (length-delimited fields) and value (varints).
func eachField(b []byte, f func(protowire.Number, protowire.Type, []byte, uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// eachVarint calls f for each value of a repeated varint field, packed
// (one length-delimited field) or not (one field per value).
func eachVarint(typ protowire.Type, b []byte, x uint64, f func(uint64)) error {
	if typ == protowire.VarintType {
		f(x)
		return nil
	}
	for len(b) > 0 {
		u, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		f(u)
		b = b[n:]
	}
	return nil
}
