// Package main generates the tables of the documentation from the SDK's route table
// (endpoints.go) and action table (actions.go): the table in each service's doc comment
// (the first indented block of the comment on "type XService service"), the README's
// "Every endpoint" table (between its routes:begin and routes:end markers), and what a
// partner may do As-Customer, in AsCustomer's doc comment and the README (ascustomer:begin
// and ascustomer:end). Run it with go generate in the module root; its test fails when
// what is on disk differs from what it would write, as go-github's tools/metadata does for
// its operations.
//
// The columns come from [escrow.Routes] and [escrow.Actions]; which SDK methods call a
// route comes from the source: a method of a service that names the route's row
// (routeGetTransaction), or, when it names none, the methods of its own service it calls
// (Agree calls Act).
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	escrow "github.com/escrowkit/escrow-go"
)

// row is one route with what the generated tables show of it.
type row struct {
	escrow.Route
	name    string   // the Go variable: routeGetTransaction
	service string   // the service type whose table lists it: TransactionsService
	methods []string // the service's methods that call it, in source order
}

// source is what the generator reads of the SDK's source.
type source struct {
	// rows maps a route's String() to the variable that defines it in endpoints.go.
	rows map[string]string
	// methods are the exported methods of the services, in source order.
	methods []method
}

// method is one exported method of a service.
type method struct {
	service, name string
	routes        []string // route variables it names
	calls         []string // methods of its own service it calls
}

// edit is one file the tables rewrite, and how.
type edit struct {
	file    string
	rewrite func([]byte) ([]byte, error)
}

// generate returns the files under root that the tables rewrite, with their new contents,
// whether or not they changed.
func generate(root string) (map[string][]byte, error) {
	src, err := readSource(root)
	if err != nil {
		return nil, err
	}
	rows, err := tableRows(src)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range edits(rows) {
		path := filepath.Join(root, e.file)
		b, err := os.ReadFile(path)
		if err == nil {
			b, err = e.rewrite(b)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.file, err)
		}
		out[path] = b
	}
	return out, nil
}

// edits are the rewrites: each service's file, AsCustomer's doc, the README.
func edits(rows []row) []edit {
	var out []edit
	for _, file := range serviceFiles(rows) {
		out = append(out, edit{file.name, func(b []byte) ([]byte, error) {
			var err error
			for _, svc := range file.services {
				if b, err = replaceDocBlock(b, "type "+svc+" service", serviceBlock(rows, svc)); err != nil {
					return nil, err
				}
			}
			return b, nil
		}})
	}
	return append(out,
		edit{"client.go", func(b []byte) ([]byte, error) {
			return replaceDocBlock(b, "func AsCustomer(", asCustomerBlock(rows))
		}},
		edit{"README.md", func(b []byte) ([]byte, error) {
			b, err := replaceBetween(b, readmeBegin, readmeEnd, readmeTable(rows))
			if err != nil {
				return nil, err
			}
			return replaceBetween(b, asCustomerBegin, asCustomerEnd, asCustomerList(rows))
		}},
	)
}

// readSource parses the SDK's non-test files.
func readSource(root string) (*source, error) {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(root, "*.go"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	src := &source{rows: map[string]string{}}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		src.readRows(f)
		src.readMethods(f)
	}
	src.keepRowNames()
	return src, nil
}

// keepRowNames drops from each method's routes the names that are no row.
func (s *source) keepRowNames() {
	rows := map[string]bool{}
	for _, name := range s.rows {
		rows[name] = true
	}
	for i := range s.methods {
		s.methods[i].routes = slices.DeleteFunc(s.methods[i].routes, func(n string) bool { return !rows[n] })
	}
}

// readRows records every package-level variable initialised with a Route literal.
func (s *source) readRows(f *ast.File) {
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Values) != len(spec.Names) {
			return true
		}
		for i, v := range spec.Values {
			if r, ok := routeLiteral(v); ok {
				s.rows[r.String()] = spec.Names[i].Name
			}
		}
		return false
	})
}

// routeLiteral reads the method and template of a Route{Method: http.MethodX, Template: "…"} literal.
func routeLiteral(e ast.Expr) (escrow.Route, bool) {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return escrow.Route{}, false
	}
	if id, ok := lit.Type.(*ast.Ident); !ok || id.Name != "Route" {
		return escrow.Route{}, false
	}
	var r escrow.Route
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok { // rows are keyed literals
			readField(&r, fmt.Sprint(kv.Key), kv.Value)
		}
	}
	return r, r.Method != "" && r.Template != ""
}

// readField reads the Method (http.MethodX) or Template ("…") of a Route literal.
func readField(r *escrow.Route, key string, v ast.Expr) {
	sel, _ := v.(*ast.SelectorExpr)
	bl, _ := v.(*ast.BasicLit)
	switch {
	case key == "Method" && sel != nil:
		r.Method = strings.ToUpper(strings.TrimPrefix(sel.Sel.Name, "Method"))
	case key == "Template" && bl != nil:
		r.Template, _ = strconv.Unquote(bl.Value)
	}
}

// readMethods records the exported methods of the services with the routes they name and
// the methods of their own service they call.
func (s *source) readMethods(f *ast.File) {
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || !fn.Name.IsExported() || fn.Body == nil {
			continue
		}
		svc, recv := receiver(fn)
		if !strings.HasSuffix(svc, "Service") {
			continue
		}
		m := method{service: svc, name: fn.Name.Name}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			m.read(n, recv)
			return true
		})
		s.methods = append(s.methods, m)
	}
}

// read records a node of the method's body: a name that may be a row, or a call of
// another method on the receiver recv.
func (m *method) read(n ast.Node, recv string) {
	switch n := n.(type) {
	case *ast.Ident:
		if strings.HasPrefix(n.Name, "route") && !slices.Contains(m.routes, n.Name) {
			m.routes = append(m.routes, n.Name)
		}
	case *ast.SelectorExpr:
		if exportedOn(n, recv) {
			m.calls = append(m.calls, n.Sel.Name)
		}
	}
}

// exportedOn reports whether sel selects an exported name of the receiver named recv.
func exportedOn(sel *ast.SelectorExpr, recv string) bool {
	x, ok := sel.X.(*ast.Ident)
	return ok && recv != "" && x.Name == recv && sel.Sel.IsExported()
}

// receiver returns the type and the name of a method's receiver.
func receiver(fn *ast.FuncDecl) (typ, name string) {
	field := fn.Recv.List[0]
	t := field.Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	id, ok := t.(*ast.Ident)
	if !ok {
		return "", ""
	}
	if len(field.Names) > 0 {
		name = field.Names[0].Name
	}
	return id.Name, name
}

// routesOf returns the route variables a method calls: those it names, or else those of
// the methods of its service that it calls.
func (s *source) routesOf(m method, seen map[string]bool) []string {
	if len(m.routes) > 0 {
		return m.routes
	}
	var out []string
	for _, callee := range m.calls {
		key := m.service + "." + callee
		if seen[key] {
			continue
		}
		seen[key] = true
		for _, c := range s.methods {
			if c.service == m.service && c.name == callee {
				out = append(out, s.routesOf(c, seen)...)
			}
		}
	}
	return out
}

// tableRows joins the route table with the source: every row of escrow.Routes is a
// variable of endpoints.go and the reverse, and each gets the methods that call it.
func tableRows(src *source) ([]row, error) {
	rows, err := routeRows(src)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		rows[i].addCallers(src)
	}
	adoptUncalled(rows)
	return rows, nil
}

// routeRows pairs every row of escrow.Routes with its variable of endpoints.go, refusing a
// row without one, a variable listed twice, and a variable not listed.
func routeRows(src *source) ([]row, error) {
	var rows []row
	listed := map[string]bool{}
	for _, r := range escrow.Routes() {
		name, ok := src.rows[r.String()]
		if !ok {
			return nil, fmt.Errorf("route %s is in the table but no variable of endpoints.go defines it", r)
		}
		if listed[name] {
			return nil, fmt.Errorf("route %s (%s) is listed twice in the route table", r, name)
		}
		listed[name] = true
		rows = append(rows, row{Route: r, name: name})
	}
	for key, name := range src.rows {
		if !listed[name] {
			return nil, fmt.Errorf("%s (%s) is defined in endpoints.go but not listed in routeTable", name, key)
		}
	}
	return rows, nil
}

// addCallers gives the row the methods that call its route, and their service.
func (r *row) addCallers(src *source) {
	for _, m := range src.methods {
		if slices.Contains(src.routesOf(m, map[string]bool{}), r.name) {
			r.service = m.service
			r.methods = append(r.methods, m.name)
		}
	}
}

// adoptUncalled puts a route no method calls (one reached with Client.Do) in the table of
// the service whose route shares the longest part of its template.
func adoptUncalled(rows []row) {
	for i := range rows {
		if rows[i].service != "" {
			continue
		}
		best := -1
		for _, o := range rows {
			if o.service == "" {
				continue
			}
			if n := commonPrefix(rows[i].Template, o.Template); n > best {
				best, rows[i].service = n, o.service
			}
		}
	}
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// serviceFile is a file that declares service types.
type serviceFile struct {
	name     string
	services []string
}

// serviceFiles names the file of each service: transactions.go for TransactionsService.
func serviceFiles(rows []row) []serviceFile {
	var out []serviceFile
	for _, r := range rows {
		name := strings.ToLower(strings.TrimSuffix(r.service, "Service")) + ".go"
		i := slices.IndexFunc(out, func(f serviceFile) bool { return f.name == name })
		if i < 0 {
			out = append(out, serviceFile{name: name})
			i = len(out) - 1
		}
		if !slices.Contains(out[i].services, r.service) {
			out[i].services = append(out[i].services, r.service)
		}
	}
	return out
}

// docWidth is how wide a generated doc-comment line may grow before its methods wrap.
const docWidth = 100

// serviceBlock renders a service's route table as the lines of a doc comment's code
// block: method, template, the methods that call it; "(As-Customer)" where an approved
// partner may act for a customer.
func serviceBlock(rows []row, service string) []string {
	var mine []row
	wMethod, wTemplate := 0, 0
	for _, r := range rows {
		if r.service == service {
			mine = append(mine, r)
			wMethod, wTemplate = max(wMethod, len(r.Method)), max(wTemplate, len(r.Template))
		}
	}
	var lines []string
	for _, r := range mine {
		head := fmt.Sprintf("//\t%-*s %-*s  ", wMethod, r.Method, wTemplate, r.Template)
		words := commaSeparated(r.methods)
		if len(words) == 0 {
			words = []string{"Client.Do"}
		}
		if r.AsCustomer() {
			words = append(words, "(As-Customer)")
		}
		lines = append(lines, wrap(head, words)...)
	}
	return lines
}

// wrap lays words out after head, continuing under the first word when a line would pass
// docWidth.
func wrap(head string, words []string) []string {
	indent := "//\t" + strings.Repeat(" ", len(head)-len("//\t"))
	var lines []string
	line := head
	for i, w := range words {
		if i > 0 && len(line)+1+len(w) > docWidth {
			lines = append(lines, line)
			line = indent + w
			continue
		}
		if i > 0 {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

// replaceDocBlock replaces the first code block of the doc comment on the declaration
// whose line starts with decl with lines.
func replaceDocBlock(b []byte, decl string, lines []string) ([]byte, error) {
	src := strings.Split(string(b), "\n")
	at := slices.IndexFunc(src, func(l string) bool { return strings.HasPrefix(l, decl) })
	if at < 0 {
		return nil, fmt.Errorf("no line %q", decl)
	}
	start, end := docBlock(src, at)
	if start == end {
		return nil, fmt.Errorf("the doc comment of %q has no indented block for the table", decl)
	}
	out := slices.Concat(src[:start], lines, src[end:])
	return []byte(strings.Join(out, "\n")), nil
}

// docBlock finds the first indented block of the doc comment above line at: its lines are
// src[start:end], none when start == end.
func docBlock(src []string, at int) (start, end int) {
	top := at
	for top > 0 && strings.HasPrefix(src[top-1], "//") {
		top--
	}
	start = top
	for start < at && !strings.HasPrefix(src[start], "//\t") {
		start++
	}
	end = start
	for end < at && strings.HasPrefix(src[end], "//\t") {
		end++
	}
	return start, end
}

// asCustomerBlock renders what a partner may do As-Customer as a doc comment's code block:
// the delegable actions, those that are not, and the routes.
func asCustomerBlock(rows []row) []string {
	yes, no := delegation()
	lines := slices.Concat(
		wrap("//\tactions        ", commaSeparated(yes)),
		wrap("//\tnot delegable  ", commaSeparated(no)),
	)
	head := "//\troutes         "
	for _, r := range rows {
		if r.AsCustomer() {
			lines = append(lines, head+r.Method+" "+r.Template)
			head = "//\t               "
		}
	}
	return lines
}

// asCustomerList renders the same for the README.
func asCustomerList(rows []row) []string {
	yes, no := delegation()
	var routes []string
	for _, r := range rows {
		if r.AsCustomer() {
			routes = append(routes, r.Method+" "+r.Template)
		}
	}
	return []string{
		"- actions: " + codeList(yes),
		"- not delegable: " + codeList(no),
		"- routes: " + codeList(routes),
	}
}

// delegation splits the action table into the actions a partner may perform for a party
// and the others.
func delegation() (yes, no []string) {
	for _, a := range escrow.Actions() {
		if a.Delegable() {
			yes = append(yes, string(a))
		} else {
			no = append(no, string(a))
		}
	}
	return yes, no
}

// commaSeparated adds a comma to every word but the last.
func commaSeparated(words []string) []string {
	out := slices.Clone(words)
	for i := range len(out) - 1 {
		out[i] += ","
	}
	return out
}

// codeList renders words as `a`, `b`.
func codeList(words []string) string {
	return "`" + strings.Join(words, "`, `") + "`"
}

// The README's markers around what is generated.
const (
	asCustomerBegin = "<!-- ascustomer:begin: generated from actions.go and endpoints.go by go generate; do not edit -->"
	asCustomerEnd   = "<!-- ascustomer:end -->"
)

// The README's markers around the generated table.
const (
	readmeBegin = "<!-- routes:begin: generated from endpoints.go by go generate; do not edit -->"
	readmeEnd   = "<!-- routes:end -->"
)

// readmeTable renders the README's "Every endpoint" table.
func readmeTable(rows []row) []string {
	lines := []string{
		"| Method | Path | SDK | As-Customer | After an ambiguous failure, the client | Answer cap |",
		"|---|---|---|---|---|---|",
	}
	for _, r := range rows {
		lines = append(lines, fmt.Sprintf("| %s | %s | %s | %s | %s | %s |",
			r.Method, r.Template, sdkCell(r), yes(r.AsCustomer()), orDash(r.Settles()), mib(r.MaxBody())))
	}
	return lines
}

// sdkCell names the methods that call a route: the first with its service, as
// `Transactions.Act`, `Agree`.
func sdkCell(r row) string {
	if len(r.methods) == 0 {
		cell := "`Client.Do`"
		if r.Note() != "" {
			cell += " (" + r.Note() + ")"
		}
		return cell
	}
	names := make([]string, len(r.methods))
	for i, m := range r.methods {
		names[i] = "`" + m + "`"
	}
	names[0] = "`" + strings.TrimSuffix(r.service, "Service") + "." + r.methods[0] + "`"
	return strings.Join(names, ", ")
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return ""
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func mib(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }

// replaceBetween replaces the lines between the begin and end marker lines.
func replaceBetween(b []byte, begin, end string, lines []string) ([]byte, error) {
	src := strings.Split(string(b), "\n")
	i, j := slices.Index(src, begin), slices.Index(src, end)
	if i < 0 || j < i {
		return nil, fmt.Errorf("no lines %q … %q", begin, end)
	}
	out := slices.Concat(src[:i+1], lines, src[j:])
	return []byte(strings.Join(out, "\n")), nil
}

// stale returns the files whose contents differ from what generate would write.
func stale(files map[string][]byte) ([]string, error) {
	var out []string
	for path, want := range files {
		got, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(got, want) {
			out = append(out, path)
		}
	}
	slices.Sort(out)
	return out, nil
}
