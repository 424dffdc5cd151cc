package dropin

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestResourceForMatchesTheGeneratedInformers reads every generated
// informer of the client-go in the module graph
// (informers/<group>/<version>/<type>.go), takes the GVR it hands to
// InformerName.WithResource and the type it informs on, and requires
// resourceFor of that type to give the same GVR: NewInformerFunc's
// informers are then named in their metrics as client-go's factory names
// its own.
func TestResourceForMatchesTheGeneratedInformers(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/client-go").Output()
	require.NoError(t, err)
	dir := filepath.Join(strings.TrimSpace(string(out)), "informers")
	files, err := filepath.Glob(filepath.Join(dir, "*", "*", "*.go"))
	require.NoError(t, err)
	gvrRE := regexp.MustCompile(`gvr := schema.GroupVersionResource\{Group: "([^"]*)", Version: "([^"]*)", Resource: "([^"]*)"\}`)
	typeRE := regexp.MustCompile(`cache\.NewTypedSharedIndexInformer\[\*\w+\.(\w+)\]`)
	checked := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		g, ty := gvrRE.FindSubmatch(src), typeRE.FindSubmatch(src)
		if g == nil || ty == nil {
			continue
		}
		want := schema.GroupVersionResource{Group: string(g[1]), Version: string(g[2]), Resource: string(g[3])}
		obj, err := scheme.Scheme.New(want.GroupVersion().WithKind(string(ty[1])))
		require.NoError(t, err, f)
		if got := resourceFor(obj); got != want {
			t.Errorf("%s: %v, want %v", filepath.Base(f), got.Resource, want.Resource)
		}
		checked++
	}
	require.Greater(t, checked, 50, "the generated informers were found and read")
}
