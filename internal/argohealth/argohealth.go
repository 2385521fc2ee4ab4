// Package argohealth runs an Argo CD health check (a health.lua of Argo
// CD's resource_customizations layout) the way Argo CD's application
// controller does (argo-cd util/lua): a gopher-lua state with only the
// package, base and table libraries unless openLibs (Argo CD opens every
// library for its built-in scripts, and for a script of argocd-cm only
// with resource.customizations.useOpenLibs), the object as the global
// obj, a deadline of one second, and the table the script returns read
// as a health status. Argo CD also opens a safe subset of os (time,
// date); the scripts here use none of it and the harness leaves it out,
// so a script that did would fail here first.
package argohealth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	lua "github.com/yuin/gopher-lua"
	luajson "layeh.com/gopher-json"
)

// Status is Argo CD's health status: what a script returns.
type Status struct {
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
}

// statuses are the codes Argo CD accepts from a script; any other is
// Unknown.
var statuses = map[string]bool{"Unknown": true, "Progressing": true, "Suspended": true, "Healthy": true, "Degraded": true, "Missing": true}

// Evaluate runs script on obj.
func Evaluate(script string, obj map[string]any, openLibs bool) (Status, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: !openLibs})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return Status{}, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)

	// The object as JSON decodes it (every number a float64): what
	// gopher-json turns into Lua values, as Argo CD's own conversion does
	// with a live object's integers.
	raw, err := json.Marshal(obj)
	if err != nil {
		return Status{}, err
	}
	var plain any
	if err := json.Unmarshal(raw, &plain); err != nil {
		return Status{}, err
	}
	l.SetGlobal("obj", luajson.DecodeValue(l, plain))
	if err := l.DoString(script); err != nil {
		return Status{}, err
	}
	ret := l.Get(-1)
	switch ret.Type() {
	case lua.LTNil:
		return Status{}, nil
	case lua.LTTable:
	default:
		return Status{}, fmt.Errorf("expect table output from Lua script, not %s", ret.Type())
	}
	out, err := luajson.Encode(ret)
	if err != nil {
		return Status{}, err
	}
	var s Status
	if err := json.Unmarshal(out, &s); err != nil {
		// An empty table encodes as an array: no status.
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Value == "array" {
			return Status{}, nil
		}
		return Status{}, err
	}
	if !statuses[s.Status] {
		return Status{Status: "Unknown", Message: "Lua returned an invalid health status"}, nil
	}
	return s, nil
}
