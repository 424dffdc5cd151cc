//go:build fieldsv1string

package dropin

import (
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fieldsV1Interned: under the fieldsv1string build tag apimachinery keeps
// every FieldsV1 once (a unique.Handle[string]).
const fieldsV1Interned = true

// rawData is where f's string is: the handle's one copy.
func rawData(f *metav1.FieldsV1) unsafe.Pointer {
	return unsafe.Pointer(unsafe.StringData(f.GetRawString()))
}
