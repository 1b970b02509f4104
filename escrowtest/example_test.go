package escrowtest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/escrowkit/escrow-go/escrowtest"
)

// post sends a JSON body as a customer and decodes the answer.
func post(srv *escrowtest.Server, acct escrowtest.Account, method, path, body string) (int, map[string]any) {
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	req.SetBasicAuth(acct.Email, acct.APIKey)
	resp, err := srv.Client().Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

const sale = `{
	"currency": "usd", "description": "A domain name",
	"parties": [{"role": "buyer", "customer": "me"}, {"role": "seller", "customer": "seller@example.com"}],
	"items": [{"title": "example.org", "type": "domain_name", "inspection_period": 259200,
		"schedule": [{"amount": 1000.0, "payer_customer": "me", "beneficiary_customer": "seller@example.com"}]}]
}`

func ExampleNewServer() {
	srv := escrowtest.NewServer()
	defer srv.Close()
	buyer := srv.AddCustomer("buyer@example.com")

	status, tx := post(srv, buyer, http.MethodPost, "transaction", sale)
	items := tx["items"].([]any)
	fee := items[0].(map[string]any)["fees"].([]any)[0].(map[string]any)
	fmt.Println(status, tx["id"], fee["amount"])
	// Output: 201 200001 32.50
}

func ExampleEmulator_AddCustomer() {
	srv := escrowtest.NewServer()
	defer srv.Close()
	buyer := srv.AddCustomer("buyer@example.com")
	post(srv, buyer, http.MethodPost, "transaction", sale)

	// The seller's account was created for the transaction; AddCustomer gives it credentials.
	seller := srv.AddCustomer("seller@example.com")
	_, me := post(srv, seller, http.MethodGet, "customer/me", "")
	fmt.Println(seller.ID, me["email"], strings.Contains(seller.APIKey, "_"))
	// Output: 1002 seller@example.com true
}

func ExampleEmulator_ApprovePayment() {
	srv := escrowtest.NewServer()
	defer srv.Close()
	buyer, seller := srv.AddCustomer("buyer@example.com"), srv.AddCustomer("seller@example.com")
	_, tx := post(srv, buyer, http.MethodPost, "transaction", sale)
	id := int64(tx["id"].(float64))
	post(srv, seller, http.MethodPatch, fmt.Sprintf("transaction/%d", id), `{"action": "agree"}`)

	if err := srv.ApprovePayment(id); err != nil {
		fmt.Println(err)
	}
	_, tx = post(srv, seller, http.MethodGet, fmt.Sprintf("transaction/%d", id), "")
	schedule := tx["items"].([]any)[0].(map[string]any)["schedule"].([]any)[0].(map[string]any)
	fmt.Println(schedule["status"].(map[string]any)["secured"])

	// Funding twice is refused.
	fmt.Println(srv.ApprovePayment(id) != nil)
	// Output:
	// true
	// true
}
