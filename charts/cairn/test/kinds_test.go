package test

import (
	kedav1alpha1 "github.com/kedacore/keda/v2/apis/keda/v1alpha1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// kinds are the types the chart may render, by apiVersion/kind.
var kinds = map[string]func() any{
	"apps/v1/Deployment":                      func() any { return &appsv1.Deployment{} },
	"v1/Service":                              func() any { return &corev1.Service{} },
	"v1/Secret":                               func() any { return &corev1.Secret{} },
	"v1/PersistentVolumeClaim":                func() any { return &corev1.PersistentVolumeClaim{} },
	"batch/v1/Job":                            func() any { return &batchv1.Job{} },
	"policy/v1/PodDisruptionBudget":           func() any { return &policyv1.PodDisruptionBudget{} },
	"networking.k8s.io/v1/NetworkPolicy":      func() any { return &networkingv1.NetworkPolicy{} },
	"keda.sh/v1alpha1/ScaledObject":           func() any { return &kedav1alpha1.ScaledObject{} },
	"monitoring.coreos.com/v1/ServiceMonitor": func() any { return &monitoringv1.ServiceMonitor{} },
}
