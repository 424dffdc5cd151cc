//go:build !fieldsv1string

package dropin

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// fieldsV1_locked shares f's bytes (see StringTableOptions.ShareFieldsV1).
// It must write f.Raw itself: SetRawBytes copies what it is given.
func (t *StringTable) fieldsV1_locked(f *metav1.FieldsV1) {
	//lint:ignore SA1019 sharing the bytes needs the field; the accessors copy
	t.raw_locked(&f.Raw)
}
