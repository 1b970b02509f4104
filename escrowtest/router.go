package escrowtest

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// versionRoot is the path every API route sits under: the spec's version segment.
const versionRoot = "/2017-09-01"

// handler serves one route. It runs with the emulator's lock held and returns the answer,
// or an error that is an *apiError or fieldErrors.
type handler func(e *Emulator, req *request) (response, error)

// route is one endpoint of the API. The emulator routes by itself rather than through
// http.ServeMux because it needs the route's template before handling (rate limits and
// faults are counted per endpoint) and answers unknown routes and methods in JSON.
type route struct {
	method  string
	pattern string // below versionRoot, e.g. "/transaction/{id}"
	handle  handler
	// delegable routes accept the As-Customer header; every other route refuses it.
	delegable bool
	segments  []string
}

// endpoint names the route as faults and rate limits do: "GET /transaction/{id}".
func (r *route) endpoint() string { return r.method + " " + r.pattern }

type router struct{ routes []*route }

func newRouter(routes ...*route) *router {
	for _, r := range routes {
		r.segments = strings.Split(strings.TrimPrefix(r.pattern, "/"), "/")
	}
	return &router{routes: routes}
}

// match finds the route of a method and an escaped path. When the path is served for
// other methods only, it returns no route and the methods allowed. Literal segments win
// over parameters, so /payment_methods/wire_transfer is not read as a method name.
func (rt *router) match(method, escapedPath string) (best *route, params map[string]string, allowed []string) {
	rest, ok := strings.CutPrefix(escapedPath, versionRoot+"/")
	if !ok {
		return nil, nil, nil
	}
	segments := strings.Split(rest, "/")
	bestScore := -1
	for _, r := range rt.routes {
		p, score, ok := r.bind(segments)
		if !ok {
			continue
		}
		if r.method != method {
			if !slices.Contains(allowed, r.method) {
				allowed = append(allowed, r.method)
			}
			continue
		}
		if score > bestScore {
			best, params, bestScore = r, p, score
		}
	}
	if best != nil {
		return best, params, nil
	}
	slices.Sort(allowed)
	return nil, nil, allowed
}

// bind matches path segments against the route's pattern, returning the parameters and
// how many segments matched literally.
func (r *route) bind(segments []string) (map[string]string, int, bool) {
	if len(segments) != len(r.segments) {
		return nil, 0, false
	}
	params := map[string]string{}
	literal := 0
	for i, want := range r.segments {
		got, err := url.PathUnescape(segments[i])
		if err != nil || got == "" {
			return nil, 0, false
		}
		if name, ok := strings.CutPrefix(want, "{"); ok {
			params[strings.TrimSuffix(name, "}")] = got
			continue
		}
		if got != want {
			return nil, 0, false
		}
		literal++
	}
	return params, literal, true
}

var paramPattern = regexp.MustCompile(`\{[^}]*\}`)

// normalizeEndpoint lets "GET /transaction/{transaction_id}", "get /2017-09-01/transaction/{id}"
// and "GET /transaction/{id}" name the same endpoint: parameter names, the version root and
// the method's case do not matter.
func normalizeEndpoint(s string) string {
	method, path, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok {
		return strings.TrimSpace(s)
	}
	path = strings.TrimPrefix(strings.TrimSpace(path), versionRoot)
	return strings.ToUpper(method) + " " + paramPattern.ReplaceAllString(path, "{}")
}
