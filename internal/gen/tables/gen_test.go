package main

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// root is the module root, where the route table and the generated tables live.
const root = "../../.."

// TestGeneratedTablesAreCurrent fails when a service's doc table, the README's endpoint
// table or the As-Customer lists (AsCustomer's doc, the README) differ from what the route
// and action tables generate: run go generate in the module root.
func TestGeneratedTablesAreCurrent(t *testing.T) {
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	changed, err := stale(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range changed {
		t.Errorf("%s is stale: run go generate in the module root", filepath.Base(path))
	}
	if len(files) != 6 {
		t.Errorf("generated %d files, want the four service files, client.go and README.md", len(files))
	}
}

// TestEveryRowHasACaller: every route is called by a method of a service, or is a
// route the SDK leaves to Client.Do and says why in its note.
func TestEveryRowHasACaller(t *testing.T) {
	src, err := readSource(root)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := tableRows(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if len(r.methods) == 0 && r.Note() == "" {
			t.Errorf("%s (%s): no method calls it and its note does not say why", r.name, r.Route)
		}
	}
}

// TestTableRowsRefusesAnUnlistedRow: a Route variable of endpoints.go that the table
// (routeTable) does not list is refused, so no row is left out of the docs and the
// contract test.
func TestTableRowsRefusesAnUnlistedRow(t *testing.T) {
	src, err := readSource(root)
	if err != nil {
		t.Fatal(err)
	}
	src.rows["GET /widget/{id}"] = "routeGetWidget"
	if _, err := tableRows(src); err == nil || !strings.Contains(err.Error(), "routeGetWidget") {
		t.Errorf("tableRows with an unlisted row = %v, want an error naming it", err)
	}
	delete(src.rows, "GET /widget/{id}")
	delete(src.rows, "GET /transaction/{id}")
	if _, err := tableRows(src); err == nil || !strings.Contains(err.Error(), "GET /transaction/{id}") {
		t.Errorf("tableRows with a listed route no variable defines = %v, want an error naming it", err)
	}
}

// TestMethodsInheritTheRoutesOfTheMethodsTheyCall: Agree names no row but calls Act, so it
// is listed under Act's route; Create names its own row and is not listed under
// GetByReference, which it also calls.
func TestMethodsInheritTheRoutesOfTheMethodsTheyCall(t *testing.T) {
	const code = `package escrow
var routeAct = Route{Method: http.MethodPatch, Template: "/transaction/{id}"}
var routeGet = Route{Method: http.MethodGet, Template: "/transaction/reference/{reference}"}
var routeCreate = Route{Method: http.MethodPost, Template: "/transaction"}
func (s *TransactionsService) Act() { s.client.send(call{route: routeAct}) }
func (s *TransactionsService) Agree() { s.Act() }
func (s *TransactionsService) GetByReference() { _ = routeGet }
func (s *TransactionsService) Create() { _ = routeCreate; s.GetByReference() }
`
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", code, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	src := &source{rows: map[string]string{}}
	src.readRows(f)
	src.readMethods(f)
	src.keepRowNames()
	callers := map[string][]string{}
	for _, m := range src.methods {
		for _, r := range src.routesOf(m, map[string]bool{}) {
			callers[r] = append(callers[r], m.name)
		}
	}
	for route, want := range map[string][]string{"routeAct": {"Act", "Agree"}, "routeGet": {"GetByReference"}, "routeCreate": {"Create"}} {
		if !slices.Equal(callers[route], want) {
			t.Errorf("%s is called by %v, want %v", route, callers[route], want)
		}
	}
	if len(src.rows) != 3 {
		t.Errorf("read %d rows, want 3: %v", len(src.rows), src.rows)
	}
}
