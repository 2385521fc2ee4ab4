package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"strings"

	provenancev1 "github.com/in-toto/attestation/go/predicates/provenance/v1"
	intoto "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

const (
	// PredicateSLSAProvenance is SLSA's provenance v1 predicate type.
	PredicateSLSAProvenance = "https://slsa.dev/provenance/v1"
	// BuildType names how hack/image.sh builds: binaries first, then the
	// top-level Dockerfile's stage for every platform, no RUN step.
	BuildType = "https://github.com/c5c3/glance-krm/hack/image.sh@v1"
	source    = "git+https://github.com/c5c3/glance-krm"
)

// provenance is the in-toto statement of an index: SLSA v1 provenance
// naming the commit, the build's parameters, and every executable the
// images hold with its digest.
func provenance(o options, idx *index, arches []string, contents []content) (map[string]any, error) {
	var platforms []any
	for _, a := range arches {
		platforms = append(platforms, "linux/"+a)
	}
	external, err := structpb.NewStruct(map[string]any{
		"source":    source + "@" + o.commit,
		"target":    o.target(),
		"platforms": platforms,
	})
	if err != nil {
		return nil, err
	}
	goVersions := map[string]bool{}
	deps := []*intoto.ResourceDescriptor{{Uri: source, Digest: map[string]string{"gitCommit": o.commit}}}
	for _, c := range contents {
		d := &intoto.ResourceDescriptor{Name: c.path + " (linux/" + c.arch + ")", Digest: map[string]string{"sha256": c.sha256}}
		if c.build != nil {
			goVersions[c.build.GoVersion] = true
			v := c.build.Main.Version
			if v == "" || v == "(devel)" {
				v = o.commit
			}
			d.Uri = "pkg:golang/" + c.build.Main.Path + "@" + v
		} else {
			d.Uri = o.purls[c.path+"@"+c.arch]
		}
		deps = append(deps, d)
	}
	var gos []any
	for v := range goVersions {
		gos = append(gos, v)
	}
	sort.Slice(gos, func(i, j int) bool { return gos[i].(string) < gos[j].(string) })
	internal, err := structpb.NewStruct(map[string]any{
		"buildFlags":      o.buildFlags,
		"goVersions":      gos,
		"sourceDateEpoch": fmt.Sprint(o.epoch),
		"sourceTreeDirty": o.dirty,
	})
	if err != nil {
		return nil, err
	}
	p := &provenancev1.Provenance{
		BuildDefinition: &provenancev1.BuildDefinition{
			BuildType: BuildType, ExternalParameters: external, InternalParameters: internal, ResolvedDependencies: deps,
		},
		RunDetails: &provenancev1.RunDetails{
			Builder:  &provenancev1.Builder{Id: o.builder, Version: map[string]string{"attest": runtime.Version()}},
			Metadata: &provenancev1.BuildMetadata{FinishedOn: timestamppb.New(o.created())},
		},
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("the provenance does not validate: %w", err)
	}
	predicate, err := toStruct(p)
	if err != nil {
		return nil, err
	}
	st := &intoto.Statement{
		Type: intoto.StatementTypeUri,
		Subject: []*intoto.ResourceDescriptor{{Name: o.image,
			Digest: map[string]string{strings.ToLower(idx.digest.Algorithm): idx.digest.Hex}}},
		PredicateType: PredicateSLSAProvenance,
		Predicate:     predicate,
	}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("the statement does not validate: %w", err)
	}
	b, err := protojson.Marshal(st)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

func toStruct(m proto.Message) (*structpb.Struct, error) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	s := &structpb.Struct{}
	return s, protojson.Unmarshal(b, s)
}
