package escrowtest_test

import (
	"context"
	"time"

	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	escrow "github.com/escrowkit/escrow-go"
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

// A sale whose seller never chose how to be paid out stops after the inspection period,
// accepted and paid out 0.00; NextSteps says why, so that a test can fail with the reason.
func ExampleEmulator_NextSteps() {
	ctx := context.Background()
	srv := escrowtest.NewServer()
	defer srv.Close()
	buyer, seller := srv.AddCustomer("buyer@example.com"), srv.AddCustomer("seller@example.com")
	asBuyer, _ := escrow.NewClient(buyer.Email, buyer.APIKey, escrow.WithEmulator(srv))
	asSeller, _ := escrow.NewClient(seller.Email, seller.APIKey, escrow.WithEmulator(srv))

	tx, err := asBuyer.Transactions.Create(ctx, &escrow.CreateTransactionRequest{
		Currency: escrow.USD, Description: "A road bike",
		Parties: []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: escrow.Me}, {Role: escrow.RoleSeller, Customer: seller.Email}},
		Items: []escrow.ItemInput{{Title: "Road bike", Type: escrow.ItemGeneralMerchandise, InspectionPeriod: escrow.Days(3),
			Schedule: []escrow.ScheduleInput{{Amount: escrow.MustAmount("1500.00"), PayerCustomer: escrow.Me, BeneficiaryCustomer: seller.Email}}}},
	})
	if err != nil {
		panic(err)
	}
	asSeller.Transactions.Agree(ctx, tx.ID)
	srv.ApprovePayment(tx.ID)
	asSeller.Transactions.Ship(ctx, tx.ID, nil)
	asBuyer.Transactions.Receive(ctx, tx.ID)
	srv.Advance(72 * time.Hour) // the inspection period ends: the bike is accepted

	p, _ := srv.NextSteps(tx.ID)
	fmt.Println("state:", p.State)
	for _, s := range p.Steps {
		fmt.Println("next:", s)
	}
	for _, u := range p.Unpaid {
		fmt.Printf("unpaid: %s to %s: %s\n", u.Amount, u.Customer, u.Reason)
	}

	// The SDK reads the same from the transaction, as any party sees it.
	tx, _ = asBuyer.Transactions.Get(ctx, tx.ID)
	fmt.Printf("the SDK reads: %s: %s\n", tx.State(), tx.NextSteps())
	// Output:
	// state: accepted
	// next: seller@example.com selects a disbursement method
	// unpaid: 1500.00 to seller@example.com: no disbursement method selected
	// the SDK reads: accepted: seller@example.com selects a disbursement method
}
