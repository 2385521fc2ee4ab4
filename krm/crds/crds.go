// Package crds holds the CustomResourceDefinitions that controller-gen
// generates from the markers in krm/v1alpha1 (make generate). They are
// committed, and embedded here so tests can install them on a real API
// server without reading files by relative path.
package crds

import "embed"

// FS holds one YAML file per CRD.
//
//go:embed *.yaml
var FS embed.FS

// JSON holds the same CRDs as JSON (json/<crd>.json, written by make
// generate), which the function's validator decodes six times faster.
//
//go:embed json/*.json
var JSON embed.FS
