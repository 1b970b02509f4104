package escrow

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/jarcoal/httpmock"
)

// carSaleAsRendered is carSale as the API renders it to its creator (testdata's
// transaction.json, whose partner party is "me"), under the given id.
func carSaleAsRendered(id int64) string {
	b, err := readFile("transaction.json")
	if err != nil {
		panic(err)
	}
	return strings.Replace(b, `"id": 29292`, fmt.Sprintf(`"id": %d`, id), 1)
}

// shipped is carSale after the seller shipped: its goods item shows shipped.
func shippedTx(id int64) string {
	return strings.Replace(carSaleAsRendered(id), `"shipped": false`, `"shipped": true`, 1)
}

const seller = "keanu.reaves@test.escrow.com"

// TestCreateNeverTakesAnotherTransactionFoundByReference: after one 502, the lookup by
// reference finds a transaction under the same reference that is not the request's. On
// main, Create returned it as the caller's, even one made by an attacker naming the
// caller as buyer, for 9999.00 to the attacker.
func TestCreateNeverTakesAnotherTransactionFoundByReference(t *testing.T) {
	own := carSaleAsRendered(77)
	for _, tt := range []struct {
		name, found, why string
	}{
		{"an attacker's, naming the caller as buyer", strings.NewReplacer(
			`{"id": 14, "role": "partner", "customer": "me", "agreed": true}`, `{"id": 14, "role": "partner", "customer": "mallory@evil.test", "agreed": true}`,
			`"95000.00"`, `"9999.00"`, seller, "mallory@evil.test").Replace(own), "another customer created it"},
		{"the caller's, for another amount", strings.Replace(own, `"95000.00"`, `"9999.00"`, 1), "payment 0 of its item 0"},
		{"the caller's, in another currency", strings.Replace(own, `"currency": "usd"`, `"currency": "euro"`, 1), "currency"},
		{"the caller's, to another seller", strings.ReplaceAll(own, seller, "mallory@evil.test"), "seller"},
		{"without its shipping item", strings.Replace(own, `"type": "shipping_fee"`, `"type": "broker_fee"`, 1), "item 1"},
		{"nobody the caller created or is", strings.NewReplacer(`"customer": "me"`, `"customer": "someone@else.test"`, `"payer_customer": "me"`, `"payer_customer": "someone@else.test"`).Replace(own), "created it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _, _ := createTest(t, []httpmock.Responder{respond(502, `{}`)}, []httpmock.Responder{respond(200, tt.found)})
			tx, err := c.Transactions.Create(context.Background(), carSale())
			var ou *OutcomeUnknownError
			var ae *APIError
			if tx != nil || !errors.As(err, &ou) || !errors.Is(err, ErrOutcomeUnknown) || !errors.As(err, &ae) || ae.StatusCode != 502 {
				t.Fatalf("Create = %v, %v; want no transaction and an *OutcomeUnknownError wrapping the 502", tx, err)
			}
			if !strings.Contains(ou.Reason, tt.why) {
				t.Errorf("reason %q does not say %q", ou.Reason, tt.why)
			}
		})
	}
}

// settleCase is one covered write whose first attempt fails in a way that may have
// performed it. On main each of them returned that failure to the caller.
type settleCase struct {
	name string
	// write is the route and answers of the write; read those of the state read after it.
	writeMethod, writePath string
	writes                 []httpmock.Responder
	readMethod, readPath   string
	reads                  []httpmock.Responder
	call                   func(c *Client) (any, error)
	wantWrites             int
	wantUnknown            bool
}

func TestWritesSettleThemselves(t *testing.T) {
	ctx := context.Background()
	ship := func(c *Client) (any, error) { return c.Transactions.Ship(ctx, 77, nil, AsCustomer(seller)) }
	agree := func(c *Client) (any, error) { return c.Transactions.Agree(ctx, 77, AsCustomer(seller)) }
	dropped := fail(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})
	txPath := "transaction/77"
	agreed := strings.Replace(carSaleAsRendered(77), `"customer": "`+seller+`", "agreed": false`, `"customer": "`+seller+`", "agreed": true`, 1)
	cases := []settleCase{
		{"ship: 502, and the read shows it shipped", "PATCH", txPath, []httpmock.Responder{respond(502, `{}`)},
			"GET", txPath, []httpmock.Responder{respond(200, shippedTx(77))}, ship, 1, false},
		{"ship: dropped, not shipped when read, sent again", "PATCH", txPath, []httpmock.Responder{dropped, respond(200, shippedTx(77))},
			"GET", txPath, []httpmock.Responder{respond(200, carSaleAsRendered(77))}, ship, 2, false},
		{"ship: absent, sent again, refused as already done, shipped when read", "PATCH", txPath,
			[]httpmock.Responder{respond(502, `{}`), respond(400, `{"error":"invalid_state"}`)},
			"GET", txPath, []httpmock.Responder{respond(200, carSaleAsRendered(77)), respond(200, shippedTx(77))}, ship, 2, false},
		{"ship: the state cannot be read", "PATCH", txPath, []httpmock.Responder{respond(502, `{}`)},
			"GET", txPath, []httpmock.Responder{respond(403, `{}`)}, ship, 1, true},
		{"ship: by a partner acting for the buyer, shipped: not the actor's", "PATCH", txPath, []httpmock.Responder{respond(502, `{}`)},
			"GET", txPath, []httpmock.Responder{respond(200, shippedTx(77))},
			func(c *Client) (any, error) { return c.Transactions.Ship(ctx, 77, nil, AsCustomer("me@nowhere.test")) }, 1, true},
		{"agree for the seller: 503, agreed when read", "PATCH", txPath, []httpmock.Responder{respond(503, `{}`)},
			"GET", txPath, []httpmock.Responder{respond(200, agreed)}, agree, 1, false},
		{"agree: 503, another party agreed but not the actor: sent again", "PATCH", txPath, []httpmock.Responder{respond(503, `{}`), respond(200, agreed)},
			"GET", txPath, []httpmock.Responder{respond(200, carSaleAsRendered(77))}, agree, 2, false},
		{"ship an item: 502, shipped when read", "PATCH", "transaction/77/item/1001", []httpmock.Responder{respond(502, `{}`)},
			"GET", txPath, []httpmock.Responder{respond(200, shippedTx(77))},
			func(c *Client) (any, error) {
				return c.Transactions.ActOnItem(ctx, 77, 1001, &ActionRequest{Action: ActionShip}, AsCustomer(seller))
			}, 1, false},
		{"cancel: dropped, cancelled when read", "PATCH", txPath, []httpmock.Responder{dropped},
			"GET", txPath, []httpmock.Responder{respond(200, strings.Replace(carSaleAsRendered(77), `"is_cancelled": false`, `"is_cancelled": true`, 1))},
			func(c *Client) (any, error) { return c.Transactions.Cancel(ctx, 77, "") }, 1, false},
		{"webhook: 503, registered when read", "POST", "customer/me/webhook", []httpmock.Responder{respond(503, `{}`)},
			"GET", "customer/me/webhook", []httpmock.Responder{respond(200, `{"webhooks":[{"id":4,"url":"https://hooks.test/a"}]}`)},
			func(c *Client) (any, error) { return c.Webhooks.Create(ctx, Me, "https://hooks.test/a") }, 1, false},
		{"webhook: dropped, absent when read, sent again", "POST", "customer/me/webhook", []httpmock.Responder{dropped, respond(200, `{"id":5,"url":"https://hooks.test/a"}`)},
			"GET", "customer/me/webhook", []httpmock.Responder{respond(200, `{"webhooks":[{"id":4,"url":"https://hooks.test/other"}]}`)},
			func(c *Client) (any, error) { return c.Webhooks.Create(ctx, Me, "https://hooks.test/a") }, 2, false},
		{"select a disbursement method: 502, selected when read", "PATCH", "transaction/77/disbursement_methods", []httpmock.Responder{respond(502, `{}`)},
			"GET", "transaction/77/disbursement_methods", []httpmock.Responder{respond(200, `{"selected_disbursement_method":{"id":9,"type":"ach"}}`)},
			func(c *Client) (any, error) {
				return c.Transactions.SelectDisbursementMethod(ctx, 77, &DisbursementMethod{ID: 9})
			}, 1, false},
		{"select new disbursement details: dropped, another selected: sent again", "PATCH", "transaction/77/disbursement_methods",
			[]httpmock.Responder{dropped, respond(200, `{"selected_disbursement_method":{"id":10,"type":"wire_transfer","bank_iban":"DE89"}}`)},
			"GET", "transaction/77/disbursement_methods", []httpmock.Responder{respond(200, `{"selected_disbursement_method":{"id":9,"type":"ach"}}`)},
			func(c *Client) (any, error) {
				return c.Transactions.SelectDisbursementMethod(ctx, 77, &DisbursementMethod{Type: "wire_transfer", BankIBAN: "DE89"})
			}, 2, false},
		{"mark a wire sent: 502, on the timeline when read", "POST", "transaction/77/payment_methods/wire_transfer", []httpmock.Responder{respond(502, `{}`)},
			"GET", "transaction/77/timeline-entries", []httpmock.Responder{respond(200, `{"timeline_entries":[{"event":"create"},{"event":"payment_sent"}]}`)},
			func(c *Client) (any, error) { return c.Transactions.MarkWireSent(ctx, 77) }, 1, false},
		{"choose a payment method: 502, unfunded when read: chosen again", "POST", "transaction/77/payment_methods/credit_card",
			[]httpmock.Responder{respond(502, `{}`), respond(200, `{"landing_page":"https://pay.test/77"}`)},
			"GET", txPath, []httpmock.Responder{respond(200, carSaleAsRendered(77))},
			func(c *Client) (any, error) {
				return c.Transactions.ChoosePaymentMethod(ctx, 77, PaymentCreditCard, nil)
			}, 2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, mt := setup(t)
				var writes recorder
				mt.RegisterResponder(tc.writeMethod, testBase+tc.writePath, writes.then(sequence(tc.writes...)))
				mt.RegisterResponder(tc.readMethod, testBase+tc.readPath, sequence(tc.reads...))
				// MarkWireSent answers with the transaction it reads once the wire shows.
				mt.RegisterResponder("GET", testBase+txPath, sequence(append(tc.reads, respond(200, carSaleAsRendered(77)))...))
				if tc.readPath != txPath {
					mt.RegisterResponder("GET", testBase+txPath, respond(200, carSaleAsRendered(77)))
				}
				got, err := tc.call(c)
				if tc.wantUnknown {
					var ou *OutcomeUnknownError
					if !errors.As(err, &ou) || !errors.Is(err, ErrOutcomeUnknown) {
						t.Errorf("got %v, %v; want an *OutcomeUnknownError", got, err)
					}
				} else if err != nil {
					t.Errorf("got error %v, want the write settled", err)
				}
				if n := writes.count(); n != tc.wantWrites {
					t.Errorf("%d writes sent, want %d", n, tc.wantWrites)
				}
			})
		})
	}
}
