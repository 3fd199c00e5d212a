package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/yaml"
)

// render installs the chart client-only with the values file (empty: the
// defaults) and returns every manifest, hooks included.
func render(t *testing.T, valuesFile string) []string {
	t.Helper()
	ch, err := loader.Load("..")
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	vals := map[string]any{}
	if valuesFile != "" {
		if vals, err = chartutil.ReadValuesFile(valuesFile); err != nil {
			t.Fatalf("%s: %v", valuesFile, err)
		}
	}
	return renderValues(t, ch, vals)
}

func renderValues(t *testing.T, ch *chart.Chart, vals map[string]any) []string {
	t.Helper()
	docs, err := tryRender(ch, vals)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return docs
}

// tryRender is renderValues for values the chart may refuse.
func tryRender(ch *chart.Chart, vals map[string]any) ([]string, error) {
	inst := action.NewInstall(&action.Configuration{})
	inst.DryRun = true
	inst.ClientOnly = true
	inst.Replace = true
	inst.ReleaseName = "prod"
	inst.Namespace = "cairn"
	inst.KubeVersion = &chartutil.KubeVersion{Version: "v1.31.0", Major: "1", Minor: "31"}
	rel, err := inst.Run(ch, vals)
	if err != nil {
		return nil, err
	}
	var docs []string
	all := rel.Manifest
	for _, h := range rel.Hooks {
		all += "\n---\n" + h.Manifest
	}
	for _, d := range strings.Split(all, "\n---") {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, d)
		}
	}
	return docs, nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// decodeStrict converts a YAML manifest to JSON and decodes it into a value
// of its kind's type, refusing unknown fields.
func decodeStrict(doc string) (any, typeMeta, error) {
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		return nil, typeMeta{}, fmt.Errorf("not YAML: %w", err)
	}
	var tm typeMeta
	if err := json.Unmarshal(js, &tm); err != nil {
		return nil, tm, err
	}
	newObj, ok := kinds[tm.APIVersion+"/"+tm.Kind]
	if !ok {
		return nil, tm, fmt.Errorf("unknown kind %s %s", tm.APIVersion, tm.Kind)
	}
	obj := newObj()
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(obj); err != nil {
		return nil, tm, fmt.Errorf("%s %s: %w", tm.Kind, tm.Metadata.Name, err)
	}
	return obj, tm, nil
}

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
}
