package scale

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/informer-anatomy/informer-anatomy/internal/cputime"
	"github.com/informer-anatomy/informer-anatomy/internal/scalegen"
)

func TestZZProf(t *testing.T) {
	pods := envInt(t, "P_PODS", 20000)
	ups := envInt(t, "P_UPDATES", 40000)
	path := scalegen.PagedList
	if os.Getenv("P_PATH") == "watch" {
		path = scalegen.WatchList
	}
	phase := os.Getenv("P_PHASE") // sync or updates
	for _, lib := range Libraries {
		if os.Getenv("P_LIB") != "" && os.Getenv("P_LIB") != lib.Name {
			continue
		}
		ctx := context.Background()
		gen := scalegen.NewGenerator(1)
		src := scalegen.NewSource(gen, pods, path)
		inf := lib.New(src)
		hs := make([]*scalegen.Counter, Handlers)
		for k := range hs {
			hs[k] = &scalegen.Counter{}
			inf.AddEventHandler(hs[k])
		}
		runCtx, stop := context.WithCancel(ctx)
		f, _ := os.Create("/tmp/prof/" + lib.Name + "-" + phase + ".pprof")
		if phase == "sync" {
			pprof.StartCPUProfile(f)
		}
		cpu0 := cputime.Process()
		start := time.Now()
		go inf.RunWithContext(runCtx)
		for !inf.HasSynced() {
			time.Sleep(time.Millisecond)
		}
		sync := time.Since(start)
		scpu := cputime.Process() - cpu0
		if phase == "sync" {
			pprof.StopCPUProfile()
		}
		waitAll(ctx, hs, int64(pods), "x")
		runtime.GC()
		if phase == "updates" {
			pprof.StartCPUProfile(f)
		}
		cpu0 = cputime.Process()
		for k := range ups {
			src.Update(k % pods)
		}
		waitAll(ctx, hs, int64(pods+ups), "y")
		cpu := cputime.Process() - cpu0
		if phase == "updates" {
			pprof.StopCPUProfile()
		}
		f.Close()
		t.Logf("%s: sync %v (cpu %v), cpu/update %v", lib.Name, sync, scpu, cpu/time.Duration(ups))
		stop()
	}
}
