// Package test validates the cairn Helm chart without a cluster: it renders
// the chart with the Helm SDK (helm.sh/helm/v3, client-only install) for the
// default, production and minimal values, and strictly decodes every manifest
// into the official Kubernetes API types (k8s.io/api), KEDA's ScaledObject
// and prometheus-operator's ServiceMonitor, failing on unknown fields and
// unknown kinds; it checks each service's Deployment, probes, metrics
// Service and PodDisruptionBudget, and runs the SDK's `helm lint` (which
// does not evaluate `fail`: the render tests check what the chart refuses).
// It is its own module so the main module stays lean; run it with
// `make chart-test`.
package test
