package mlir

import "github.com/ptoasm/ptoasm/asm"

// checkNames reports a value defined while a value of the same name is in
// scope, as MLIR's own parser does (OperationParser::addDefinition in
// llvm-project's mlir/lib/AsmParser/Parser.cpp: "redefinition of SSA value",
// the note "previously defined here"), so ptoas refuses such a file. The
// lowering binds names in one map per function, so without this the later
// definition replaced the earlier for every use after it: a duplicated line
// `%c32 = arith.constant 16 : index` re-sized every view of 32 rows, exit 0.
//
// A region opens a scope: a value defined in it is gone at its `}`, so
// sibling regions (an scf.if's two branches) may reuse a name, as MLIR's
// printer does, while a nested region may not reuse a name of the regions
// around it. The function's arguments and the `%iv = ...` and
// `iter_args(%a = ...)` bindings of an op are its first region's.
func (l *lowerer) checkNames(fi *funcInfo) {
	if fi.body == nil {
		return
	}
	s := &nameScopes{l: l}
	var args []Arg
	for _, a := range fi.args {
		args = append(args, Arg{Name: a.Name, Span: a.Span})
	}
	s.region(fi.body, args)
}

type nameScopes struct {
	l      *lowerer
	scopes []map[string]asm.Span
}

func (s *nameScopes) define(name string, sp asm.Span) {
	for _, sc := range s.scopes {
		if prev, ok := sc[name]; ok {
			s.l.errs.Add(sp, "redefinition of SSA value %s", name).Note(prev, "previously defined here")
			return
		}
	}
	s.scopes[len(s.scopes)-1][name] = sp
}

// region checks r, whose entry block binds bound.
func (s *nameScopes) region(r *Region, bound []Arg) {
	s.scopes = append(s.scopes, map[string]asm.Span{})
	for _, a := range bound {
		s.define(a.Name, a.Span)
	}
	for _, b := range r.Blocks {
		for _, a := range b.Args {
			s.define(a.Name, a.Span)
		}
		for _, op := range b.Ops {
			s.op(op)
		}
	}
	s.scopes = s.scopes[:len(s.scopes)-1]
}

func (s *nameScopes) op(op *Op) {
	if len(op.Regions) > 0 {
		var bound []Arg
		for i, t := range op.Toks {
			if t.Kind == KRegion {
				break
			}
			if t.Kind == KValue && i+1 < len(op.Toks) && op.Toks[i+1].is("=") {
				bound = append(bound, Arg{Name: t.Text, Span: t.Span})
			}
		}
		for i, r := range op.Regions {
			if i > 0 {
				bound = nil
			}
			s.region(r, bound)
		}
	}
	for _, r := range op.Results {
		s.define(r.Name, r.Span)
	}
}
