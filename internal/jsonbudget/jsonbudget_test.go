package jsonbudget

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type item struct {
	ID    int64    `json:"id"`
	Title string   `json:"title"`
	Pad   [30]byte `json:"-"` // makes an element cost what a real item does
}

type page struct {
	Items []item `json:"items"`
}

// list is {"items":[unit,unit,...]} of about size bytes.
func list(unit string, size int) []byte {
	n := size / (len(unit) + 1)
	return []byte(`{"items":[` + strings.TrimSuffix(strings.Repeat(unit+",", n), ",") + `]}`)
}

// TestCheckRefusesEmptyElementsThatCostMoreThanTheirBytes: a list of "{}" costs each
// element's size in memory for 3 bytes of JSON; past the budget it is ErrBudget.
func TestCheckRefusesEmptyElementsThatCostMoreThanTheirBytes(t *testing.T) {
	body := list(`{}`, 1<<20)
	if err := Check(body, &page{}); !errors.Is(err, ErrBudget) {
		t.Fatalf("1 MiB of empty items: %v, want ErrBudget", err)
	}
}

// TestCheckPassesHonestElements: elements carrying their data cost about their bytes and
// pass, at the same size.
func TestCheckPassesHonestElements(t *testing.T) {
	body := list(`{"id":123456,"title":"a laptop, used, in its box, with the charger"}`, 1<<20)
	if err := Check(body, &page{}); err != nil {
		t.Fatalf("1 MiB of honest items: %v", err)
	}
	var p page
	if err := json.Unmarshal(body, &p); err != nil || len(p.Items) == 0 {
		t.Fatalf("the test document does not decode: %v", err)
	}
}

// TestCheckLeavesSmallDocumentsAlone: under freeBytes nothing is walked, so even a
// malformed small document is left to encoding/json to refuse.
func TestCheckLeavesSmallDocumentsAlone(t *testing.T) {
	if err := Check([]byte(`{"items":[{},{},`), &page{}); err != nil {
		t.Fatalf("a small document: %v", err)
	}
	if err := Check(list(`{}`, 1<<20), nil); err != nil {
		t.Fatalf("nothing to decode into: %v", err)
	}
}

// TestCheckIgnoresUnknownMembers: members the type lacks cost nothing, since the decoder
// skips them; the same list under a known name is refused.
func TestCheckIgnoresUnknownMembers(t *testing.T) {
	body := []byte(strings.Replace(string(list(`{}`, 1<<20)), `"items"`, `"other"`, 1))
	if err := Check(body, &page{}); err != nil {
		t.Fatalf("an unknown member: %v", err)
	}
	upper := []byte(strings.Replace(string(list(`{}`, 1<<20)), `"items"`, `"ITEMS"`, 1))
	if err := Check(upper, &page{}); !errors.Is(err, ErrBudget) {
		t.Fatalf("the member named in another case, which encoding/json matches: %v, want ErrBudget", err)
	}
}

// TestCheckRefusesDeepNesting: nesting beyond maxNesting is ErrBudget, whatever the type.
func TestCheckRefusesDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1)
	body := []byte(`{"pad":"` + strings.Repeat("x", freeBytes) + `","deep":` + deep + `}`)
	var out map[string]any
	if err := Check(body, &out); !errors.Is(err, ErrBudget) {
		t.Fatalf("nested %d deep: %v, want ErrBudget", maxNesting+1, err)
	}
}

// TestCheckReportsMalformedDocuments: a large document cut short is an error, not a pass.
func TestCheckReportsMalformedDocuments(t *testing.T) {
	body := list(`{"id":1,"title":"x"}`, 1<<20)
	if err := Check(body[:len(body)-2], &page{}); err == nil || errors.Is(err, ErrBudget) {
		t.Fatalf("a document cut short: %v, want a syntax error", err)
	}
}

// TestTopLevelList: the list under the first key present, the last of duplicates, the
// only list of an object, a bare list as it is, null without any list, and an error when
// several lists leave it ambiguous.
func TestTopLevelList(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		keys []string
		want string
		err  error
	}{
		{`{"a":[1],"b":[2]}`, []string{"b", "a"}, `[2]`, nil},
		{`{"a":[1],"a":[3]}`, []string{"a"}, `[3]`, nil},
		{`{"n":1,"x":[4, 5]}`, []string{"a"}, `[4, 5]`, nil},
		{` [6]`, []string{"a"}, ` [6]`, nil},
		{`{"n":1}`, []string{"a"}, `null`, nil},
		{`{"x":[1],"y":[2]}`, []string{"a"}, ``, ErrSeveralLists},
		{`{"a":[1]`, []string{"a"}, ``, nil},
	} {
		got, err := TopLevelList([]byte(tc.doc), tc.keys)
		switch {
		case tc.want == "" && tc.err == nil:
			if err == nil {
				t.Errorf("%s: got %s, want a syntax error", tc.doc, got)
			}
		case tc.err != nil:
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: %v, want %v", tc.doc, err, tc.err)
			}
		case err != nil || string(got) != tc.want:
			t.Errorf("%s by %v: %s, %v; want %s", tc.doc, tc.keys, got, err, tc.want)
		}
	}
}
