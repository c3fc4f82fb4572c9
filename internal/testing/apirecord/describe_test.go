package apirecord

import (
	"fmt"
	"go/types"
	"slices"
	"strings"
)

// describe returns the record of pkg's exported API: a sorted line per
// identifier, each starting with its identity (see identity).
func describe(pkg *types.Package, deprecated map[string]bool) []string {
	w := writer{pkg: pkg}
	var out []string
	add := func(name, line string) {
		if deprecated[name] {
			line += " // deprecated"
		}
		out = append(out, line)
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			add(name, fmt.Sprintf("const %s %s = %s", name, w.typ(obj.Type()), obj.Val().ExactString()))
		case *types.Var:
			add(name, fmt.Sprintf("var %s %s", name, w.typ(obj.Type())))
		case *types.Func:
			sig := obj.Type().(*types.Signature)
			add(name, fmt.Sprintf("func %s%s%s", name, w.typeParams(sig.TypeParams()), w.signature(sig)))
		case *types.TypeName:
			out = append(out, w.typeName(obj, deprecated)...)
		}
	}
	slices.Sort(out)
	return out
}

// typeName describes an exported type: the type, its exported fields or
// interface methods, and its exported methods.
func (w writer) typeName(obj *types.TypeName, deprecated map[string]bool) []string {
	name := obj.Name()
	mark := func(key, line string) string {
		if deprecated[key] {
			return line + " // deprecated"
		}
		return line
	}
	named, isNamed := obj.Type().(*types.Named)
	if obj.IsAlias() || !isNamed {
		return []string{mark(name, fmt.Sprintf("type %s = %s", name, w.typ(obj.Type())))}
	}
	var out []string
	under := named.Underlying()
	kind := w.typ(under)
	switch u := under.(type) {
	case *types.Struct:
		kind = "struct"
	case *types.Interface:
		if u.IsMethodSet() {
			kind = "interface" // its methods follow; a constraint's type set stays written out
		}
	}
	out = append(out, mark(name, fmt.Sprintf("type %s%s %s", name, w.typeParams(named.TypeParams()), kind)))
	switch u := under.(type) {
	case *types.Struct:
		for i := range u.NumFields() {
			f := u.Field(i)
			if !f.Exported() {
				continue
			}
			line := fmt.Sprintf("field %s.%s %s", name, f.Name(), w.typ(f.Type()))
			if f.Embedded() {
				line += ", embedded"
			}
			out = append(out, mark(name+"."+f.Name(), line))
		}
	case *types.Interface:
		for i := range u.NumMethods() {
			m := u.Method(i)
			if m.Exported() {
				out = append(out, mark(name+"."+m.Name(), fmt.Sprintf("imethod %s.%s%s", name, m.Name(), w.signature(m.Type().(*types.Signature)))))
			}
		}
		return out
	}
	// Methods, promoted ones included: the value receiver's set, and the
	// pointer's beyond it.
	values := types.NewMethodSet(named)
	pointers := types.NewMethodSet(types.NewPointer(named))
	for i := range pointers.Len() {
		m := pointers.At(i).Obj().(*types.Func)
		if !m.Exported() {
			continue
		}
		recv := "*" + name
		if values.Lookup(m.Pkg(), m.Name()) != nil {
			recv = name
		}
		out = append(out, mark(name+"."+m.Name(), fmt.Sprintf("method (%s) %s%s", recv, m.Name(), w.signature(m.Type().(*types.Signature)))))
	}
	return out
}

// identity is the part of a record's line that names the identifier:
// "func New", "method (*Store) Acquire", "field Options.Table". Two lines
// with one identity and different text are a change.
func identity(line string) string {
	fields := strings.SplitN(line, " ", 4)
	n := 2
	if fields[0] == "method" {
		n = 3
	}
	if len(fields) < n {
		return line
	}
	id := strings.Join(fields[:n], " ")
	if i := strings.IndexAny(fields[n-1], "(["); i >= 0 {
		id = strings.Join(fields[:n-1], " ") + " " + fields[n-1][:i]
	}
	return id
}

// diff names what differs between the recorded lines and the code's.
func diff(recorded, code []string) []string {
	was := map[string]string{}
	for _, l := range recorded {
		was[identity(l)] = l
	}
	is := map[string]string{}
	for _, l := range code {
		is[identity(l)] = l
	}
	var out []string
	for id, l := range is {
		old, ok := was[id]
		switch {
		case !ok:
			out = append(out, "added:   "+l)
		case old != l:
			out = append(out, "changed: "+old+"\n\t     to: "+l)
		}
	}
	for id, l := range was {
		if _, ok := is[id]; !ok {
			out = append(out, "removed: "+l)
		}
	}
	slices.Sort(out)
	return out
}

// writer writes types as the record shows them: without parameter names,
// the package's own names unqualified, the standard library's by package
// name, others by import path.
type writer struct{ pkg *types.Package }

func (w writer) qualify(p *types.Package) string {
	switch {
	case p == nil || p == w.pkg:
		return ""
	case !strings.Contains(strings.Split(p.Path(), "/")[0], "."):
		return p.Name()
	}
	return p.Path()
}

func (w writer) typ(t types.Type) string {
	switch t := t.(type) {
	case *types.Pointer:
		return "*" + w.typ(t.Elem())
	case *types.Slice:
		return "[]" + w.typ(t.Elem())
	case *types.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), w.typ(t.Elem()))
	case *types.Map:
		return "map[" + w.typ(t.Key()) + "]" + w.typ(t.Elem())
	case *types.Chan:
		prefix := map[types.ChanDir]string{types.SendRecv: "chan ", types.SendOnly: "chan<- ", types.RecvOnly: "<-chan "}[t.Dir()]
		return prefix + w.typ(t.Elem())
	case *types.Signature:
		return "func" + w.signature(t)
	case *types.Named:
		name := t.Obj().Name()
		if q := w.qualify(t.Obj().Pkg()); q != "" {
			name = q + "." + name
		}
		if args := t.TypeArgs(); args.Len() > 0 {
			var as []string
			for i := range args.Len() {
				as = append(as, w.typ(args.At(i)))
			}
			name += "[" + strings.Join(as, ", ") + "]"
		}
		return name
	}
	return types.TypeString(t, w.qualify)
}

func (w writer) typeParams(tps *types.TypeParamList) string {
	if tps.Len() == 0 {
		return ""
	}
	var ps []string
	for i := range tps.Len() {
		ps = append(ps, tps.At(i).Obj().Name()+" "+w.typ(tps.At(i).Constraint()))
	}
	return "[" + strings.Join(ps, ", ") + "]"
}

// signature writes sig's parameters and results, without names or
// receiver.
func (w writer) signature(sig *types.Signature) string {
	var ps []string
	for i := range sig.Params().Len() {
		t := sig.Params().At(i).Type()
		if sig.Variadic() && i == sig.Params().Len()-1 {
			ps = append(ps, "..."+w.typ(t.(*types.Slice).Elem()))
			continue
		}
		ps = append(ps, w.typ(t))
	}
	s := "(" + strings.Join(ps, ", ") + ")"
	var rs []string
	for i := range sig.Results().Len() {
		rs = append(rs, w.typ(sig.Results().At(i).Type()))
	}
	switch len(rs) {
	case 0:
	case 1:
		s += " " + rs[0]
	default:
		s += " (" + strings.Join(rs, ", ") + ")"
	}
	return s
}
