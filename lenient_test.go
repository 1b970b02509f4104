package escrow

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// Answers whose shape the spec does not show decode in every plausible form.
func TestUndocumentedShapesDecodeLeniently(t *testing.T) {
	var docs IdentificationDocuments
	for _, b := range []string{`[{"type": "passport", "country": "AU"}]`, `{"identification_documents": [{"type": "passport", "country": "AU"}]}`, `{"documents": [{"type": "passport", "country": "AU"}]}`} {
		docs = IdentificationDocuments{}
		if err := json.Unmarshal([]byte(b), &docs); err != nil || len(docs.IdentificationDocuments) != 1 || docs.IdentificationDocuments[0].Country != "AU" {
			t.Errorf("%s: %+v %v", b, docs, err)
		}
	}
	for _, b := range []string{`7`, `{"count": 7}`} {
		var c ReportsCount
		if err := json.Unmarshal([]byte(b), &c); err != nil || c.Count != 7 {
			t.Errorf("ReportsCount %s: %+v %v", b, c, err)
		}
	}
	var r Reports
	if err := json.Unmarshal([]byte(`[{"task_id": "t1", "status": "done"}]`), &r); err != nil || r.Reports[0].TaskID != "t1" || string(r.Raw) == "" {
		t.Errorf("Reports from a list: %+v %v", r, err)
	}
	var tl Timeline
	if err := json.Unmarshal([]byte(`{"warnings": [], "timeline_entries": [{"event": "ship"}]}`), &tl); err != nil || len(tl.Entries) != 1 || tl.Entries[0].Event != "ship" {
		t.Errorf("a named list must win over another list: %+v %v", tl, err)
	}
	if err := json.Unmarshal([]byte(`{"a": [1], "b": [2]}`), &tl); err == nil {
		t.Error("an object with two unnamed lists decoded without error")
	}
	var created CreatedReport
	if err := json.Unmarshal([]byte(`{"task_id": "r-9", "sort_by": "id", "transactions": [{"id": 4}]}`), &created); err != nil ||
		created.TaskID != "r-9" || created.SortBy != "id" || created.Transactions[0].ID != 4 {
		t.Errorf("CreatedReport: %+v %v", created, err)
	}
}

func TestCustomerCreateWithAnEmptyAnswer(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder("POST", testBase+"customer", respond(201, ``))
	cu, err := c.Customers.Create(context.Background(), &CreateCustomerRequest{Email: "new@example.com"})
	if err != nil || cu.Email != "new@example.com" {
		t.Fatalf("Create = %+v, %v", cu, err)
	}
}

func TestSubCentQueryAmountIsRefused(t *testing.T) {
	c, mt := setup(t)
	var rec recorder
	mt.RegisterNoResponder(rec.then(respond(200, `{}`)))
	min := decodedAmount(t, "99.994") // only a response can carry sub-cent digits
	_, err := c.Partner.Transactions(context.Background(), &PartnerTransactionsOptions{MinAmount: &min})
	if !errors.Is(err, ErrInvalidAmount) || !errors.Is(err, ErrInvalidArgument) || rec.count() != 0 {
		t.Fatalf("err = %v after %d requests", err, rec.count())
	}
}
