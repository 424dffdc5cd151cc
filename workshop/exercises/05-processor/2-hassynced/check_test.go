//go:build workshop

package hassynced

import (
	"testing"
	"testing/synctest"
	"time"

	processor "github.com/informer-anatomy/informer-anatomy/chapters/05-processor"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit"
)

func TestPredictions(t *testing.T) {
	srv := kit.StartServer(t)
	kit.CreatePods(t, srv, "p", 20)
	first := ""
	callsWhen := map[string]int{}
	var registrationAt time.Duration
	synctest.Test(t, func(t *testing.T) {
		rec := &kit.Recorder{Delay: 10 * time.Millisecond}
		start := time.Now()
		inf := kit.StartInformer(t, srv, kit.InformerOptions{Queue: processor.RealFIFOQueue, NoWait: true, InProcess: true}, rec)
		reg := inf.Registrations[0]
		for {
			i, r := inf.HasSynced(), reg.HasSynced()
			n := rec.Len()
			if i && callsWhen["informer"] == 0 {
				callsWhen["informer"] = n + 1 // +1: 0 means "not yet"
			}
			if r && callsWhen["registration"] == 0 {
				callsWhen["registration"] = n + 1
				registrationAt = time.Since(start)
			}
			switch {
			case first != "":
			case i && !r:
				first = "informer"
			case r && !i:
				first = "registration"
			case r && i:
				first = "both at once"
			}
			if i && r {
				break
			}
			if time.Since(start) > time.Minute {
				t.Fatal("the informer and its handler did not sync within a minute of fake time")
			}
			time.Sleep(time.Millisecond)
		}
		inf.Stop()
	})
	switch {
	case FirstTrue != "informer" && FirstTrue != "registration":
		t.Errorf("FirstTrue: you predicted %q; write one of the two answers the doc comment names", FirstTrue)
	case first != FirstTrue:
		t.Errorf("FirstTrue: you predicted %q, not the HasSynced that turned true first", FirstTrue)
	}
	if ms := int((registrationAt + 5*time.Millisecond) / (10 * time.Millisecond) * 10); ms != RegistrationAtMS {
		t.Errorf("RegistrationAtMS: you predicted %d, not when the registration's HasSynced turned true: what must have happened first, and how long does each part take?", RegistrationAtMS)
	}
	switch n := callsWhen[WaitFor] - 1; {
	case WaitFor != "informer" && WaitFor != "registration":
		t.Errorf("WaitFor: you wrote %q; write one of the two answers the doc comment names", WaitFor)
	case n < 20:
		t.Errorf("WaitFor: when that HasSynced turned true, the handler had returned from only %d of its 20 initial OnAdds", n)
	}
}
