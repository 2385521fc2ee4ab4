package v1alpha1

import (
	"maps"
	"strings"
)

// MetadefWriteRules are Glance's policy rules for creating, updating and
// deleting metadata definitions (glance/policies/metadef.py): the base
// rule metadef_admin, then every rule that is "rule:metadef_admin" by
// default.
var MetadefWriteRules = []string{
	"metadef_admin",
	"add_metadef_namespace", "modify_metadef_namespace", "delete_metadef_namespace",
	"add_metadef_object", "modify_metadef_object", "delete_metadef_object",
	"add_metadef_resource_type_association", "remove_metadef_resource_type_association",
	"add_metadef_property", "modify_metadef_property", "remove_metadef_property",
	"add_metadef_tag", "add_metadef_tags", "modify_metadef_tag", "delete_metadef_tag", "delete_metadef_tags",
}

// glanceBaseRules are the rules Glance defines that the metadef write
// rules reach, in a release (glance/policies/base.py and metadef.py):
// metadef_admin is "role:admin" up to 2023.2 and "rule:context_is_admin"
// since 2024.1; service_api exists since 2024.2.
func glanceBaseRules(release string) map[string]string {
	rules := map[string]string{
		"default":          "",
		"context_is_admin": "role:admin",
		"metadef_default":  "",
		"metadef_admin":    "role:admin",
	}
	if ReleaseAtLeast(release, 2024, 1) {
		rules["metadef_admin"] = "rule:context_is_admin"
	}
	if ReleaseAtLeast(release, 2024, 2) {
		rules["service_api"] = "role:service or role:admin"
	}
	for _, name := range MetadefWriteRules[1:] {
		rules[name] = "rule:metadef_admin"
	}
	return rules
}

// OpenedMetadefRules are the metadef write rules that policy overrides let
// a caller without the admin role pass in a release, in MetadefWriteRules
// order. Each rule is judged as oslo.policy would, for every caller that
// lacks the admin role: a check that depends on who the caller is (a
// project or user match) is taken as passable, so the answer errs on
// "opened".
func OpenedMetadefRules(release string, overrides map[string]string) []string {
	rules := glanceBaseRules(release)
	maps.Copy(rules, overrides)
	var opened []string
	for _, name := range MetadefWriteRules {
		if evalRule(name, rules, 0).canPass {
			opened = append(opened, name)
		}
	}
	return opened
}

// policyVerdict is what a check can come to for a caller without the
// admin role.
type policyVerdict struct{ canPass, canFail bool }

var (
	pass    = policyVerdict{true, false}
	fail    = policyVerdict{false, true}
	unknown = policyVerdict{true, true}
)

// evalRule judges a rule by name; a name nobody defined falls back to the
// "default" rule, as oslo.policy's Rules do.
func evalRule(name string, rules map[string]string, depth int) policyVerdict {
	if depth > 16 {
		return unknown
	}
	check, ok := rules[name]
	if !ok {
		if check, ok = rules["default"]; !ok {
			return fail
		}
	}
	return evalCheckString(check, rules, depth+1)
}

// evalCheckString parses oslo.policy's check-string language: checks
// "kind:match", "@", "!", joined by "and", "or", "not" and parentheses;
// "and" binds tighter than "or". The empty string always passes; a string
// that does not parse never does.
func evalCheckString(s string, rules map[string]string, depth int) policyVerdict {
	p := &policyParser{toks: tokenizePolicy(s), rules: rules, depth: depth}
	if len(p.toks) == 0 {
		return pass
	}
	v := p.or()
	if p.pos != len(p.toks) {
		return fail
	}
	return v
}

// tokenizePolicy splits as oslo.policy does: on white space, with the
// parentheses that open or close a word as tokens of their own (the
// "%(project_id)s" inside a word stays whole).
func tokenizePolicy(s string) []string {
	var toks []string
	for _, w := range strings.Fields(s) {
		trimmed := strings.TrimLeft(w, "(")
		for range len(w) - len(trimmed) {
			toks = append(toks, "(")
		}
		core := strings.TrimRight(trimmed, ")")
		if core != "" {
			toks = append(toks, core)
		}
		for range len(trimmed) - len(core) {
			toks = append(toks, ")")
		}
	}
	return toks
}

type policyParser struct {
	toks  []string
	pos   int
	rules map[string]string
	depth int
}

func (p *policyParser) peek() string {
	if p.pos < len(p.toks) {
		return strings.ToLower(p.toks[p.pos])
	}
	return ""
}

func (p *policyParser) or() policyVerdict {
	v := p.and()
	for p.peek() == "or" {
		p.pos++
		w := p.and()
		v = policyVerdict{v.canPass || w.canPass, v.canFail && w.canFail}
	}
	return v
}

func (p *policyParser) and() policyVerdict {
	v := p.not()
	for p.peek() == "and" {
		p.pos++
		w := p.not()
		v = policyVerdict{v.canPass && w.canPass, v.canFail || w.canFail}
	}
	return v
}

func (p *policyParser) not() policyVerdict {
	if p.peek() == "not" {
		p.pos++
		v := p.not()
		return policyVerdict{v.canFail, v.canPass}
	}
	return p.atom()
}

func (p *policyParser) atom() policyVerdict {
	switch p.peek() {
	case "", ")", "and", "or":
		p.pos = len(p.toks) + 1 // a check is missing: the string does not parse
		return fail
	case "(":
		p.pos++
		v := p.or()
		if p.peek() != ")" {
			p.pos = len(p.toks) + 1
			return fail
		}
		p.pos++
		return v
	}
	p.pos++
	return p.check(p.toks[p.pos-1])
}

// check judges one check for a caller without the admin role.
func (p *policyParser) check(tok string) policyVerdict {
	switch tok {
	case "@":
		return pass
	case "!":
		return fail
	}
	kind, match, ok := strings.Cut(tok, ":")
	if !ok {
		return fail
	}
	switch strings.ToLower(kind) {
	case "role":
		if strings.EqualFold(match, "admin") {
			return fail
		}
	case "is_admin":
		if strings.EqualFold(match, "true") {
			return fail
		}
	case "rule":
		return evalRule(match, p.rules, p.depth)
	}
	return unknown
}
