//go:build !fieldsv1string

package dropin_test

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/informer-anatomy/informer-anatomy/dropin"
)

// With ShareFieldsV1, managedFields' FieldsV1 bytes are shared too, where
// two objects' entries hold the same bytes (here the scheduler's, the same
// in every pod it scheduled): one copy, which a handler must then never
// write to.
func ExampleNewStringTable() {
	table := dropin.NewStringTable(dropin.StringTableOptions{ShareFieldsV1: true, MaxBytes: 1 << 20})
	var pods []*corev1.Pod
	for _, name := range []string{"web-1", "web-2"} {
		var p corev1.Pod
		doc := `{"metadata":{"name":"` + name + `","namespace":"shop","managedFields":[{"manager":"kube-scheduler",` +
			`"operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{}}}}]}}`
		if err := json.Unmarshal([]byte(doc), &p); err != nil {
			panic(err)
		}
		if _, err := table.Transform(&p); err != nil {
			panic(err)
		}
		pods = append(pods, &p)
	}
	a, b := pods[0].ManagedFields[0].FieldsV1.GetRawBytes(), pods[1].ManagedFields[0].FieldsV1.GetRawBytes()
	fmt.Println("one copy of the FieldsV1:", &a[0] == &b[0])
	// Output:
	// one copy of the FieldsV1: true
}
