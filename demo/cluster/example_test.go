package cluster_test

import (
	"fmt"

	"github.com/informer-anatomy/informer-anatomy/demo/cluster"
)

// --resource takes a name the demo knows or group/version/resource.
func ExampleParseResource() {
	for _, s := range []string{"deployments", "v1/pods", "example.com/v1/widgets", "widgets"} {
		gvr, err := cluster.ParseResource(s)
		if err != nil {
			fmt.Println("error:", err != nil)
			continue
		}
		fmt.Println(gvr.Group+"/"+gvr.Version, gvr.Resource)
	}
	// Output:
	// apps/v1 deployments
	// /v1 pods
	// example.com/v1 widgets
	// error: true
}
