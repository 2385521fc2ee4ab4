package wire

import (
	"fmt"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/fn/glancekrm/ynode"
)

// errNoContainers: a generated pod template always has its containers;
// this names the object if one did not.
const errNoContainers = "%s %s has no containers"

// Deployment wires a generated Deployment exactly as a hand-written
// one.
func (w Wiring) Deployment(d any) (*fn.KubeObject, error) {
	obj, err := ynode.Object(d)
	if err != nil {
		return nil, err
	}
	name := obj.GetName()
	rn := obj.MoveToResourceNode()
	why, errs := w.Workload(rn)
	if len(errs) > 0 || why != "" {
		return nil, fmt.Errorf("wiring the generated Deployment %s: %v %s", name, errs, why)
	}
	return fn.MoveToKubeObject(rn), nil
}

// JobPod gives a generated Job's or CronJob's pod the config volume,
// the credentials volumes and the credentials init container, mounted
// into its one container as into glance-api.
func (w Wiring) JobPod(obj *fn.KubeObject, err error) (*fn.KubeObject, error) {
	if err != nil {
		return nil, err
	}
	kind, name := obj.GetKind(), obj.GetName()
	rn := obj.MoveToResourceNode()
	path := []string{"spec", "template", "spec"}
	if kind == "CronJob" {
		path = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	}
	pod, err := rn.Pipe(yaml.Lookup(path...))
	if err != nil {
		return nil, err
	}
	list, err := pod.Pipe(yaml.Lookup("containers"))
	if err != nil || list == nil {
		return nil, fmt.Errorf(errNoContainers, kind, name)
	}
	cs, err := list.Elements()
	if err != nil || len(cs) == 0 {
		return nil, fmt.Errorf(errNoContainers, kind, name)
	}
	c := cs[0]
	if err := w.setVolumes(pod, nil); err != nil {
		return nil, err
	}
	if err := setInitContainer(pod, w.initContainer(w.CredentialsImage)); err != nil {
		return nil, err
	}
	if err := setMounts(c, nil, ConfigDirs); err != nil {
		return nil, err
	}
	return fn.MoveToKubeObject(rn), nil
}
