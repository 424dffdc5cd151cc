// Package hassynced is workshop exercise 05-processor/2-hassynced.
//
// # HasSynced twice
//
// Kind: predict. Minutes: 10. Needs: none. Practises: docs/05-processor.md, "HasSynced: the informer's and a handler's".
//
// 20 pods exist. Chapter 5's shared informer (on the RealFIFO, its
// default) gets one handler whose OnAdd sleeps 10 ms, and is started, in a
// testing/synctest bubble (fake time: kit.StartInformer with InProcess).
// The checker polls informer.HasSynced() and registration.HasSynced() (the
// value AddEventHandler returned) every millisecond until both are true.
// Predict:
//
//   - FirstTrue: which turns true first, "informer" or "registration";
//   - RegistrationAtMS: how many milliseconds of fake time after the
//     informer was started registration.HasSynced() first returns true
//     (to the nearest 10);
//   - WaitFor: which one a controller should wait for before starting its
//     workers, if the workers rely on what the handler did with the
//     initial list (the checker verifies your choice: when it is true,
//     every initial OnAdd has returned).
package hassynced

var (
	FirstTrue        = "informer"     // the cache has the list once the queue has handed it over
	RegistrationAtMS = 200            // after the handler's 20 initial OnAdds, one after another, 10 ms each
	WaitFor          = "registration" // true only when this handler's initial OnAdds have returned
)
