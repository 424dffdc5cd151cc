//go:build fieldsv1string

package dropin

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// fieldsV1_locked does nothing under apimachinery's fieldsv1string build
// tag: FieldsV1 is a unique.Handle[string] there, kept once already.
func (t *StringTable) fieldsV1_locked(*metav1.FieldsV1) {}
