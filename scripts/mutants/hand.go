package main

// The hand-mutant classes: the edits a reviewer hunting for untested behaviour makes by hand,
// which token mutants (gremlins) and statement removal do not make. Each is named for what it
// breaks:
//
//   - eq     FIELD_DROPPED: one comparison of an equality chain made always true (a field
//            left out of a comparison: `a.X == b.X && a.Y == b.Y` loses `a.Y == b.Y`), or
//            of an inequality chain made always false; slices.Equal and the like count;
//   - cond   CHECK_DROPPED: any other operand of && or || dropped the same way (a role or
//            ownership check, a guard, one condition of several);
//   - table  TABLE_ENTRY_REMOVED: one entry of a map or slice literal of two or more left
//            out (a row of a table of actions, routes, rates);
//   - bound  BOUND_PLUS_ONE, BOUND_MINUS_ONE: the bound of an ordered comparison moved by
//            one, where the bound is a named limit (max…, limit, retries, pages, depth,
//            lease, …) or an integer literal other than 0 and 1;
//   - const  CONSTANT_DOUBLED, CONSTANT_HALVED: a numeric constant or package-level numeric
//            variable (a lease, a cap, a depth, a timeout) doubled or halved;
//   - scan   SCAN_REVERSED: a loop made to walk the other way (a counting loop run down
//            instead of up and the reverse, a range over a slice run from its end, and
//            slices.Backward made forward).
//
// Like the statement removal, each mutant is one edit; a reversed range also appends a small
// generic helper to the file. An edit the compiler refuses (a range over a map reversed, a
// bound added to a string) is NOT VIABLE and left out of the score.

import (
	"go/ast"
	"go/token"
	"regexp"
	"strings"
)

// handOps are the operator names of the hand classes, for -ops.
var handOps = []string{"eq", "cond", "table", "bound", "const", "scan"}

// handKinds are the kinds the hand classes make: a results line of one of them is a hand
// mutant in the table.
var handKinds = map[string]bool{
	"FIELD_DROPPED": true, "CHECK_DROPPED": true, "TABLE_ENTRY_REMOVED": true,
	"BOUND_PLUS_ONE": true, "BOUND_MINUS_ONE": true,
	"CONSTANT_DOUBLED": true, "CONSTANT_HALVED": true, "SCAN_REVERSED": true,
}

// boundName is a name that reads as a limit: a bound moved by one there is a reviewer's
// first suspect.
var boundName = regexp.MustCompile(`(?i)max|min|limit|cap|bound|depth|retr|page|attempt|lease|ttl|timeout|budget|size|window`)

// backwardHelper is appended to a file whose range loop is reversed. It needs no import.
const backwardHelper = `

func mutantsBackward[S ~[]E, E any](s S) func(func(int, E) bool) {
	return func(yield func(int, E) bool) {
		for i := len(s) - 1; i >= 0; i-- {
			if !yield(i, s[i]) {
				return
			}
		}
	}
}
`

// hand adds the hand-class mutants of one parsed file.
func hand(fset *token.FileSet, f *ast.File, src []byte, on map[string]bool, add func(n ast.Node, kind, repl string), addSpan func(start, end, at token.Pos, kind, repl, extra string)) {
	text := func(n ast.Node) string {
		return string(src[fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset])
	}
	if on["const"] {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
				continue
			}
			for _, s := range g.Specs {
				for _, v := range s.(*ast.ValueSpec).Values {
					if numeric(v) {
						add(v, "CONSTANT_DOUBLED", "("+text(v)+") * 2")
						add(v, "CONSTANT_HALVED", "("+text(v)+") / 2")
					}
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			// Constants are the const class's, whole; their parts are nobody else's.
			return n.Tok != token.CONST
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				dropped := map[token.Token]string{token.LAND: "true", token.LOR: "false"}[n.Op]
				for _, operand := range []ast.Expr{n.X, n.Y} {
					if b, ok := ast.Unparen(operand).(*ast.BinaryExpr); ok && b.Op == n.Op {
						continue // a link of the same chain: its operands are its own
					}
					switch {
					case isEquality(operand, n.Op) && on["eq"]:
						add(operand, "FIELD_DROPPED", dropped)
					case !isEquality(operand, n.Op) && on["cond"]:
						add(operand, "CHECK_DROPPED", dropped)
					}
				}
			}
			if on["bound"] {
				switch n.Op {
				case token.LSS, token.LEQ, token.GTR, token.GEQ:
					for _, side := range []ast.Expr{n.Y, n.X} {
						if isBound(side) {
							add(side, "BOUND_PLUS_ONE", "("+text(side)+" + 1)")
							add(side, "BOUND_MINUS_ONE", "("+text(side)+" - 1)")
							break
						}
					}
				}
			}
		case *ast.CompositeLit:
			if on["table"] && isTable(n) {
				for i, e := range n.Elts {
					// An entry goes with the comma after it; the last with the comma before.
					start, end := e.Pos(), e.End()
					if i+1 < len(n.Elts) {
						end = n.Elts[i+1].Pos()
					} else {
						start = n.Elts[i-1].End()
					}
					addSpan(start, end, e.Pos(), "TABLE_ENTRY_REMOVED", "", "")
				}
			}
		case *ast.ForStmt:
			if on["scan"] {
				reverseFor(n, text, addSpan)
			}
		case *ast.RangeStmt:
			if on["scan"] {
				reverseRange(n, text, add, addSpan)
			}
		}
		return true
	})
}

// numeric reports whether an expression is built of numeric literals, names and operators
// only, with a literal among them: 30 * time.Second, 1 << 20, 64, but not iota or "x".
func numeric(e ast.Expr) bool {
	lit, ok := false, true
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case nil:
		case *ast.BasicLit:
			if n.Kind == token.INT || n.Kind == token.FLOAT {
				lit = true
			} else {
				ok = false
			}
		case *ast.Ident:
			if n.Name == "iota" {
				ok = false
			}
		case *ast.BinaryExpr, *ast.ParenExpr, *ast.SelectorExpr, *ast.UnaryExpr:
		case *ast.CallExpr: // a conversion such as time.Duration(5): its argument decides
		default:
			ok = false
		}
		return ok
	})
	return ok && lit
}

// isEquality reports whether an operand of a chain compares something for (in)equality: ==
// in an && chain, != in an || chain, or an Equal function's call (negated in an || chain).
func isEquality(e ast.Expr, chain token.Token) bool {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.NOT && chain == token.LOR {
		e = ast.Unparen(u.X)
		if c, ok := e.(*ast.CallExpr); ok {
			return isEqualCall(c)
		}
		return false
	}
	switch e := e.(type) {
	case *ast.BinaryExpr:
		return (e.Op == token.EQL && chain == token.LAND) || (e.Op == token.NEQ && chain == token.LOR)
	case *ast.CallExpr:
		return chain == token.LAND && isEqualCall(e)
	}
	return false
}

func isEqualCall(c *ast.CallExpr) bool {
	var name string
	switch f := c.Fun.(type) {
	case *ast.SelectorExpr:
		name = f.Sel.Name
	case *ast.Ident:
		name = f.Name
	}
	return strings.HasSuffix(name, "Equal") || name == "EqualFold" || name == "DeepEqual"
}

// isBound reports whether a comparison's side is a bound worth moving: a named limit or an
// integer literal other than 0 and 1 (which are mostly emptiness tests).
func isBound(e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		return e.Kind == token.INT && e.Value != "0" && e.Value != "1"
	case *ast.Ident:
		return boundName.MatchString(e.Name)
	case *ast.SelectorExpr:
		return boundName.MatchString(e.Sel.Name)
	}
	return false
}

// isTable reports whether a composite literal is a table: a map or slice literal, or a
// literal of a named type keyed by string literals, with two entries or more.
func isTable(c *ast.CompositeLit) bool {
	if len(c.Elts) < 2 {
		return false
	}
	switch c.Type.(type) {
	case *ast.MapType, *ast.ArrayType:
		return true
	case nil:
		return false
	}
	for _, e := range c.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return false
		}
		if b, ok := kv.Key.(*ast.BasicLit); !ok || b.Kind != token.STRING {
			return false
		}
	}
	return true
}

// reverseFor turns a counting loop around: `for i := A; i < B; i++` becomes
// `for i := B - 1; i >= A; i--`, and `for i := A; i >= B; i--` becomes
// `for i := B; i <= A; i++`.
func reverseFor(n *ast.ForStmt, text func(ast.Node) string, addSpan func(start, end, at token.Pos, kind, repl, extra string)) {
	init, ok := n.Init.(*ast.AssignStmt)
	if !ok || len(init.Lhs) != 1 || len(init.Rhs) != 1 || init.Tok != token.DEFINE {
		return
	}
	v, ok := init.Lhs[0].(*ast.Ident)
	cond, ok2 := n.Cond.(*ast.BinaryExpr)
	post, ok3 := n.Post.(*ast.IncDecStmt)
	if !ok || !ok2 || !ok3 {
		return
	}
	if x, ok := cond.X.(*ast.Ident); !ok || x.Name != v.Name {
		return
	}
	if x, ok := post.X.(*ast.Ident); !ok || x.Name != v.Name {
		return
	}
	a, b := text(init.Rhs[0]), text(cond.Y)
	var header string
	switch {
	case post.Tok == token.INC && cond.Op == token.LSS:
		header = v.Name + " := (" + b + ") - 1; " + v.Name + " >= " + a + "; " + v.Name + "--"
	case post.Tok == token.INC && cond.Op == token.LEQ:
		header = v.Name + " := " + b + "; " + v.Name + " >= " + a + "; " + v.Name + "--"
	case post.Tok == token.DEC && cond.Op == token.GEQ:
		header = v.Name + " := " + b + "; " + v.Name + " <= " + a + "; " + v.Name + "++"
	case post.Tok == token.DEC && cond.Op == token.GTR:
		header = v.Name + " := (" + b + ") + 1; " + v.Name + " <= " + a + "; " + v.Name + "++"
	default:
		return
	}
	addSpan(n.Init.Pos(), n.Post.End(), n.Pos(), "SCAN_REVERSED", header, "")
}

// reverseRange makes a range over a slice start from its end (a helper appended to the file
// does the walking), and a range over slices.Backward go forward.
func reverseRange(n *ast.RangeStmt, text func(ast.Node) string, add func(n ast.Node, kind, repl string), addSpan func(start, end, at token.Pos, kind, repl, extra string)) {
	x := ast.Unparen(n.X)
	if c, ok := x.(*ast.CallExpr); ok {
		if s, ok := c.Fun.(*ast.SelectorExpr); ok && len(c.Args) == 1 {
			if pkg, ok := s.X.(*ast.Ident); ok && pkg.Name == "slices" && s.Sel.Name == "Backward" {
				add(s.Sel, "SCAN_REVERSED", "All")
			}
		}
		return // another function's sequence, or a conversion: its order is its own
	}
	switch x := x.(type) {
	case *ast.BasicLit: // a range over an integer or a string
		return
	case *ast.CompositeLit:
		if _, ok := x.Type.(*ast.MapType); ok {
			return
		}
	}
	addSpan(n.X.Pos(), n.X.End(), n.Pos(), "SCAN_REVERSED", "mutantsBackward("+text(n.X)+")", backwardHelper)
}
