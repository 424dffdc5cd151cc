// Package filtering is workshop exercise 05-processor/4-filtering.
//
// # Filtering
//
// Kind: predict. Minutes: 5. Needs: none. Practises: docs/05-processor.md, "Handler rules".
//
// A kit.Recorder is wrapped in a FilteringResourceEventHandler that passes
// pods labelled tier=web. The wrapper is told, in this order:
//
//	OnAdd(p tier=web)
//	OnUpdate(p tier=web → p tier=db)
//	OnUpdate(p tier=db → p tier=db, another annotation)
//	OnUpdate(p tier=db → p tier=web)
//	OnDelete(p tier=web)
//
// Predict the calls the Recorder gets, as Call.String values ("add
// default/p", "update default/p", "delete default/p"). The checker runs
// chapter 5's wrapper and client-go's.
package filtering

// Calls is your prediction.
var Calls = []string{
	"add default/p",    // passes the filter
	"delete default/p", // stops passing: to the handler it is gone
	// db → db: neither side passes, nothing
	"add default/p",    // starts passing again: new to the handler
	"delete default/p", // passes, deleted
}
