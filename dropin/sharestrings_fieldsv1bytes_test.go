//go:build !fieldsv1string

package dropin

import (
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fieldsV1Interned says whether apimachinery keeps every FieldsV1 once by
// itself (its fieldsv1string build tag): not in this build.
const fieldsV1Interned = false

// rawData is where f's bytes are (GetRawBytes returns the field itself in
// this build).
func rawData(f *metav1.FieldsV1) unsafe.Pointer {
	return unsafe.Pointer(unsafe.SliceData(f.GetRawBytes()))
}
