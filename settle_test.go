package escrow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

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
		{"the caller's, paying another beneficiary", strings.Replace(own, `"beneficiary_customer": "`+seller+`"`, `"beneficiary_customer": "mallory@evil.test"`, 1), "payment 0 of its item 0"},
		{"the caller's, paid by another payer", strings.Replace(own, `"payer_customer": "me", "beneficiary_customer"`, `"payer_customer": "mallory@evil.test", "beneficiary_customer"`, 1), "payment 0 of its item 0"},
		{"the caller's, with a payment to another added", strings.Replace(own, `"status": {"secured": false}}`,
			`"status": {"secured": false}}, {"amount": "1.00", "payer_customer": "me", "beneficiary_customer": "mallory@evil.test"}`, 1), "its item 0"},
		{"the caller's, for another good", strings.Replace(own, `"2014 Toyota Prius"`, `"2015 Toyota Prius"`, 1), "its item 0"},
		{"with a party the request did not name", strings.Replace(own, `{"id": 14, "role": "partner", "customer": "me", "agreed": true}`,
			`{"id": 14, "role": "partner", "customer": "me", "agreed": true}, {"id": 15, "role": "inspector", "customer": "mallory@evil.test"}`, 1), "inspector the request did not name"},
		{"with its buyer shown blank", strings.Replace(own, `"role": "buyer", "customer": "me"`, `"role": "buyer", "customer": ""`, 1), "buyer is not the request's"},
		{"the caller's, with an item to another added", strings.Replace(own, `"unknown_future_field": {"nested": [1, 2, 3]}
    }`, `"unknown_future_field": {"nested": [1, 2, 3]}
    }, {"id": 1004, "type": "broker_fee", "schedule": [{"amount": "500.00", "payer_customer": "me", "beneficiary_customer": "mallory@evil.test"}]}`, 1), "it has 4 items, the request 3"},
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

// settleWith runs one covered write against a mock where the write answers writes in turn
// and the state read answers reads in turn; it returns the call's result, the number of
// writes and reads sent, and the call's error.
func settleWith(t *testing.T, opts []Option, writeMethod, writePath string, writes []httpmock.Responder, readPath string, reads []httpmock.Responder,
	call func(c *Client) (any, error)) (got any, nWrites, nReads int, err error) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t, opts...)
		var w, r recorder
		mt.RegisterResponder(writeMethod, testBase+writePath, w.then(sequence(writes...)))
		mt.RegisterResponder("GET", testBase+readPath, r.then(sequence(reads...)))
		got, err = call(c)
		nWrites, nReads = w.count(), r.count()
	})
	return got, nWrites, nReads, err
}

// TestSettleStopsAtTheRetryBound: a write that fails ambiguously and reads back as not
// performed is sent again only while retries are left: with WithMaxRetries(0) it is sent
// once, with 1 twice, and then the last failure is the answer, known not performed (no
// outcome unknown), not a third request.
func TestSettleStopsAtTheRetryBound(t *testing.T) {
	dropped := fail(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})
	for retries := range 3 {
		_, writes, _, err := settleWith(t, []Option{WithMaxRetries(retries)}, "PATCH", "transaction/77", []httpmock.Responder{dropped},
			"transaction/77", []httpmock.Responder{respond(200, carSaleAsRendered(77))},
			func(c *Client) (any, error) {
				return c.Transactions.Ship(context.Background(), 77, nil, AsCustomer(seller))
			})
		var te *TransportError
		if errors.Is(err, ErrOutcomeUnknown) || !errors.As(err, &te) || te.OutcomeUnknown || te.Attempts != retries+1 ||
			!strings.Contains(err.Error(), "not performed") || !strings.Contains(err.Error(), "no retries are left") {
			t.Errorf("WithMaxRetries(%d): err = %v, want the last failure, known not performed, once the retries ran out", retries, err)
		}
		if writes != retries+1 {
			t.Errorf("WithMaxRetries(%d): %d writes sent, want %d", retries, writes, retries+1)
		}
	}
}

// TestPlainRefusalIsNotReadBack: a write refused outright (a 400 with nothing ambiguous
// before it) is the caller's answer as it is: the state is not read, and an effect that
// shows there (someone else's) does not turn the refusal into a success.
func TestPlainRefusalIsNotReadBack(t *testing.T) {
	got, writes, reads, err := settleWith(t, nil, "PATCH", "transaction/77", []httpmock.Responder{respond(400, `{"error":"invalid_state"}`)},
		"transaction/77", []httpmock.Responder{respond(200, shippedTx(77))},
		func(c *Client) (any, error) {
			return c.Transactions.Ship(context.Background(), 77, nil, AsCustomer(seller))
		})
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 400 || errors.Is(err, ErrOutcomeUnknown) {
		t.Errorf("got %v, %v; want the 400 itself", got, err)
	}
	if writes != 1 || reads != 0 {
		t.Errorf("%d writes and %d reads, want 1 and 0", writes, reads)
	}
}

// TestEffectOfAnotherRoleIsNotTheActors: the buyer ships (as the client's own account,
// which is the buyer, or through a partner acting for a buyer), gets a 502, and the item
// reads as shipped: the seller's doing, not the buyer's, so the outcome is unknown. The
// actor is a party, in another role than the action's.
func TestEffectOfAnotherRoleIsNotTheActors(t *testing.T) {
	const buyer = "bob+buyer/ops@test.escrow.com"
	withBuyer := func(doc string) string {
		return strings.Replace(doc, `"role": "buyer", "customer": "me"`, `"role": "buyer", "customer": "`+buyer+`"`, 1)
	}
	for _, tt := range []struct {
		name string
		read string
		opts []RequestOption
	}{
		{"the client is the buyer", shippedTx(77), nil},
		{"a partner acting for the buyer", withBuyer(shippedTx(77)), []RequestOption{AsCustomer(buyer)}},
		{"a partner acting for the buyer, who is also the broker", strings.Replace(withBuyer(shippedTx(77)), "broker@test.escrow.com", buyer, 1), []RequestOption{AsCustomer(buyer)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, writes, _, err := settleWith(t, nil, "PATCH", "transaction/77", []httpmock.Responder{respond(502, `{}`)},
				"transaction/77", []httpmock.Responder{respond(200, tt.read)},
				func(c *Client) (any, error) { return c.Transactions.Ship(context.Background(), 77, nil, tt.opts...) })
			if !errors.Is(err, ErrOutcomeUnknown) || writes != 1 {
				t.Errorf("got %v, %v after %d writes; want an unknown outcome after 1: the shipping is not the buyer's", got, err, writes)
			}
		})
	}
}

// twoGoods is carSale with a second goods item (its shipping fee made general merchandise)
// whose shipped flag is given; the first item's is shipped1.
func twoGoods(shipped1, shipped2 bool) string {
	doc := strings.Replace(carSaleAsRendered(77), `"type": "shipping_fee"`, `"type": "general_merchandise"`, 1)
	doc = strings.Replace(doc, `"shipped": false`, fmt.Sprintf(`"shipped": %v`, shipped1), 1)
	return strings.Replace(doc, `"fees": [],
      "status": {}`, fmt.Sprintf(`"fees": [], "status": {"shipped": %v}`, shipped2), 1)
}

// TestWholeTransactionActionMustShowOnEveryGoodsItem: a ship of the whole transaction that
// reads back shipped on one goods item of two is not done (nor provably absent): the
// outcome is unknown. Shipped on both, it is done; on neither, it is sent again.
func TestWholeTransactionActionMustShowOnEveryGoodsItem(t *testing.T) {
	if !strings.Contains(twoGoods(true, false), `"status": {"shipped": false}`) {
		t.Fatal("the fixture lost its second goods item's status")
	}
	for _, tt := range []struct {
		name           string
		read           string
		wantUnknown    bool
		wantWrites     int
		wantReasonPart string
	}{
		{"shipped on the first of two", twoGoods(true, false), true, 1, "shows on 1 items and not on 1"},
		{"shipped on the second of two", twoGoods(false, true), true, 1, "shows on 1 items and not on 1"},
		{"shipped on both", twoGoods(true, true), false, 1, ""},
		{"shipped on neither", twoGoods(false, false), false, 2, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, writes, _, err := settleWith(t, nil, "PATCH", "transaction/77", []httpmock.Responder{respond(502, `{}`), respond(200, twoGoods(true, true))},
				"transaction/77", []httpmock.Responder{respond(200, tt.read)},
				func(c *Client) (any, error) {
					return c.Transactions.Ship(context.Background(), 77, nil, AsCustomer(seller))
				})
			var ou *OutcomeUnknownError
			if tt.wantUnknown != errors.As(err, &ou) || (!tt.wantUnknown && err != nil) {
				t.Errorf("got %v, %v; want unknown: %v", got, err, tt.wantUnknown)
			}
			if ou != nil && !strings.Contains(ou.Reason, tt.wantReasonPart) {
				t.Errorf("reason %q, want it to say %q", ou.Reason, tt.wantReasonPart)
			}
			if writes != tt.wantWrites {
				t.Errorf("%d writes, want %d", writes, tt.wantWrites)
			}
		})
	}
}

// TestWebhookSettledToTheNewestRegistration: after an ambiguous Create, the URL is listed
// twice (registered before, and by this write), among other registrations: the webhook
// handed back is the newest, so that deleting it later removes this registration and not
// the older one.
func TestWebhookSettledToTheNewestRegistration(t *testing.T) {
	const url = "https://hooks.test/escrow?secret=a%2Fb"
	list := `{"webhooks":[{"id":4,"url":"` + url + `"},{"id":7,"url":"https://hooks.test/other"},{"id":12,"url":"` + url + `"},{"id":15,"url":"https://hooks.test/third"}]}`
	got, writes, _, err := settleWith(t, nil, "POST", "customer/me/webhook", []httpmock.Responder{respond(503, `{}`)},
		"customer/me/webhook", []httpmock.Responder{respond(200, list)},
		func(c *Client) (any, error) { return c.Webhooks.Create(context.Background(), Me, url) })
	w, _ := got.(*Webhook)
	if err != nil || w == nil || w.ID != 12 || w.URL != url || writes != 1 {
		t.Errorf("got %+v, %v after %d writes; want webhook 12 (the newest with the URL) after 1", got, err, writes)
	}
}

// TestDisbursementDetailsMustMatchInEveryField: new details are selected, the write drops,
// and the method read back as selected differs from them in one field only: it is the old
// account, not the caller's, so the details are sent again. Read back equal in every
// field, the write is done.
func TestDisbursementDetailsMustMatchInEveryField(t *testing.T) {
	want := DisbursementMethod{Type: "wire_transfer", Currency: USD, AccountName: "Acme Ltd", AccountType: "checking",
		BankABARoutingNumber: "026009593", BankAccountNumber: "000123456789", BankBranchNumber: "042", BankIBAN: "DE89370400440532013000",
		BankName: "New Bank", BankSwiftCode: "COBADEFFXXX", BankSortCode: "40-47-84", InternationalRoutingCode: "IRC9",
		AdditionalInformation: "ref 7", ClearingSystemCode: "fedwire", MemberID: "M1"}
	changes := map[string]func(m *DisbursementMethod){
		"type": func(m *DisbursementMethod) { m.Type = "ach" }, "currency": func(m *DisbursementMethod) { m.Currency = "euro" },
		"account name": func(m *DisbursementMethod) { m.AccountName = "Acme Old" }, "account type": func(m *DisbursementMethod) { m.AccountType = "savings" },
		"ABA routing number":         func(m *DisbursementMethod) { m.BankABARoutingNumber = "021000021" },
		"account number":             func(m *DisbursementMethod) { m.BankAccountNumber = "000999999999" },
		"branch number":              func(m *DisbursementMethod) { m.BankBranchNumber = "043" },
		"IBAN":                       func(m *DisbursementMethod) { m.BankIBAN = "GB29NWBK60161331926819" },
		"bank name":                  func(m *DisbursementMethod) { m.BankName = "Old Bank" },
		"SWIFT code":                 func(m *DisbursementMethod) { m.BankSwiftCode = "NWBKGB2LXXX" },
		"sort code":                  func(m *DisbursementMethod) { m.BankSortCode = "60-16-13" },
		"international routing code": func(m *DisbursementMethod) { m.InternationalRoutingCode = "IRC1" },
		"additional information":     func(m *DisbursementMethod) { m.AdditionalInformation = "ref 6" },
		"clearing system code":       func(m *DisbursementMethod) { m.ClearingSystemCode = "chaps" },
		"member id":                  func(m *DisbursementMethod) { m.MemberID = "M0" },
		"nothing":                    func(*DisbursementMethod) {},
	}
	dropped := fail(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			old := want
			old.ID = 9
			change(&old)
			sel, _ := json.Marshal(map[string]any{"selected_disbursement_method": old})
			again, _ := json.Marshal(map[string]any{"selected_disbursement_method": want})
			_, writes, _, err := settleWith(t, nil, "PATCH", "transaction/77/disbursement_methods", []httpmock.Responder{dropped, respond(200, string(again))},
				"transaction/77/disbursement_methods", []httpmock.Responder{respond(200, string(sel))},
				func(c *Client) (any, error) {
					m := want
					return c.Transactions.SelectDisbursementMethod(context.Background(), 77, &m)
				})
			wantWrites := 2
			if name == "nothing" {
				wantWrites = 1
			}
			if err != nil || writes != wantWrites {
				t.Errorf("%v after %d writes; want the write settled after %d", err, writes, wantWrites)
			}
		})
	}
}

// TestRefusalAfterAPartialEffectIsUnknown: a ship fails with a 502, reads back as not
// shipped and is sent again, the second attempt is refused, and the transaction now reads
// shipped on one of its two goods: the first attempt may have done part of it, so the
// caller gets an unknown outcome saying so, not the refusal (which would tell it nothing
// was done).
func TestRefusalAfterAPartialEffectIsUnknown(t *testing.T) {
	got, writes, reads, err := settleWith(t, nil, "PATCH", "transaction/77", []httpmock.Responder{respond(502, `{}`), respond(400, `{"error":"invalid_state"}`)},
		"transaction/77", []httpmock.Responder{respond(200, twoGoods(false, false)), respond(200, twoGoods(true, false))},
		func(c *Client) (any, error) {
			return c.Transactions.Ship(context.Background(), 77, nil, AsCustomer(seller))
		})
	var ou *OutcomeUnknownError
	if !errors.As(err, &ou) || !strings.Contains(ou.Reason, "shows on 1 items and not on 1") {
		t.Fatalf("got %v, %v; want an unknown outcome saying the ship shows on one item of two", got, err)
	}
	if writes != 2 || reads != 2 {
		t.Errorf("%d writes and %d reads, want 2 and 2", writes, reads)
	}
}

// TestItemActionOnAnItemNotReadIsUnknown: an action on an item fails with a 502 and the
// transaction read back has no such item: nothing says whether it was done, so the
// outcome is unknown, neither a success nor a second request.
func TestItemActionOnAnItemNotReadIsUnknown(t *testing.T) {
	got, writes, _, err := settleWith(t, nil, "PATCH", "transaction/77/item/4242", []httpmock.Responder{respond(502, `{}`), respond(200, shippedTx(77))},
		"transaction/77", []httpmock.Responder{respond(200, carSaleAsRendered(77))},
		func(c *Client) (any, error) {
			return c.Transactions.ActOnItem(context.Background(), 77, 4242, &ActionRequest{Action: ActionShip}, AsCustomer(seller))
		})
	var ou *OutcomeUnknownError
	if !errors.As(err, &ou) || !strings.Contains(ou.Reason, "no item the action applies to was read") || writes != 1 {
		t.Errorf("got %v, %v after %d writes; want an unknown outcome after 1: the item was not read", got, err, writes)
	}
}

// TestItemActionOnAFeeItemReachesItsRefusal: a ship of the shipping-fee item (which the
// API never ships) fails with a 502; the item reads as not shipped, so the ship is sent
// again and the API's refusal reaches the caller, who learns the action is wrong rather
// than that its outcome is unknown.
func TestItemActionOnAFeeItemReachesItsRefusal(t *testing.T) {
	got, writes, _, err := settleWith(t, nil, "PATCH", "transaction/77/item/1002", []httpmock.Responder{respond(502, `{}`), respond(400, `{"error":"invalid_state"}`)},
		"transaction/77", []httpmock.Responder{respond(200, carSaleAsRendered(77))},
		func(c *Client) (any, error) {
			return c.Transactions.ActOnItem(context.Background(), 77, 1002, &ActionRequest{Action: ActionShip}, AsCustomer(seller))
		})
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 400 || errors.Is(err, ErrOutcomeUnknown) || writes != 2 {
		t.Errorf("got %v, %v after %d writes; want the 400 itself after 2", got, err, writes)
	}
}

// TestSettledActionIsTheActorsInAnyOfItsRoles: the seller, also the deal's broker, ships
// through a partner, gets a 502, and the goods read as shipped: the shipping is the
// seller's own, so the ship is done, not sent again nor unknown.
func TestSettledActionIsTheActorsInAnyOfItsRoles(t *testing.T) {
	read := strings.Replace(shippedTx(77), "broker@test.escrow.com", seller, 1)
	got, writes, _, err := settleWith(t, nil, "PATCH", "transaction/77", []httpmock.Responder{respond(502, `{}`)},
		"transaction/77", []httpmock.Responder{respond(200, read)},
		func(c *Client) (any, error) {
			return c.Transactions.Ship(context.Background(), 77, nil, AsCustomer(seller))
		})
	if err != nil || writes != 1 {
		t.Errorf("got %v, %v after %d writes; want the ship settled as done after 1", got, err, writes)
	}
}

// TestSettledActionIsJudgedForTheCustomerItWasSentAs: given AsCustomer twice, the write is
// sent as the last one named (the seller), and settling judges the effect as that
// customer's: a 502 and the goods shipped is the seller's ship done. Judged for the first
// (the buyer), it would be an unknown outcome for a ship that was done.
func TestSettledActionIsJudgedForTheCustomerItWasSentAs(t *testing.T) {
	const buyer = "bob+buyer/ops@test.escrow.com"
	read := strings.Replace(shippedTx(77), `"role": "buyer", "customer": "me"`, `"role": "buyer", "customer": "`+buyer+`"`, 1)
	var sentAs string
	got, writes, _, err := settleWith(t, nil, "PATCH", "transaction/77",
		[]httpmock.Responder{func(req *http.Request) (*http.Response, error) {
			sentAs = req.Header.Get("As-Customer")
			return respond(502, `{}`)(req)
		}},
		"transaction/77", []httpmock.Responder{respond(200, read)},
		func(c *Client) (any, error) {
			return c.Transactions.Ship(context.Background(), 77, nil, AsCustomer(buyer), AsCustomer(seller))
		})
	if sentAs != seller {
		t.Fatalf("the write was sent As-Customer %q, want %q", sentAs, seller)
	}
	if err != nil || writes != 1 {
		t.Errorf("got %v, %v after %d writes; want the seller's ship settled as done after 1", got, err, writes)
	}
}

// fundedTx is carSale with every payment secured.
func fundedTx(id int64) string {
	return strings.ReplaceAll(carSaleAsRendered(id), `"secured": false`, `"secured": true`)
}

// TestPaymentWritesOnAClosedChoiceAreUnknown: choosing a payment method or marking a wire
// sent fails with a 502, and the transaction reads as funded or cancelled: the choice no
// longer shows (and the timeline shows no wire), so the outcome is unknown. Sending the
// write again would ask a funded deal to be paid twice, or a cancelled one to be paid.
func TestPaymentWritesOnAClosedChoiceAreUnknown(t *testing.T) {
	cancelled := strings.Replace(carSaleAsRendered(77), `"is_cancelled": false`, `"is_cancelled": true`, 1)
	for _, read := range []struct{ name, doc string }{{"funded", fundedTx(77)}, {"cancelled", cancelled}} {
		for _, w := range []struct {
			name, method, path string
			call               func(c *Client) (any, error)
		}{
			{"choose a payment method", "POST", "transaction/77/payment_methods/credit_card", func(c *Client) (any, error) {
				return c.Transactions.ChoosePaymentMethod(context.Background(), 77, PaymentCreditCard, nil)
			}},
			{"mark a wire sent", "POST", "transaction/77/payment_methods/wire_transfer", func(c *Client) (any, error) {
				return c.Transactions.MarkWireSent(context.Background(), 77)
			}},
		} {
			t.Run(w.name+", "+read.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					c, mt := setup(t)
					var writes recorder
					mt.RegisterResponder(w.method, testBase+w.path, writes.then(sequence(respond(502, `{}`), respond(200, `{"landing_page":"https://pay.test/77"}`))))
					mt.RegisterResponder("GET", testBase+"transaction/77", respond(200, read.doc))
					mt.RegisterResponder("GET", testBase+"transaction/77/timeline-entries", respond(200, `{"timeline_entries":[{"event":"create"}]}`))
					got, err := w.call(c)
					if !errors.Is(err, ErrOutcomeUnknown) || writes.count() != 1 {
						t.Errorf("got %v, %v after %d writes; want an unknown outcome after 1", got, err, writes.count())
					}
				})
			})
		}
	}
}

// TestDisbursementSelectionReadWithNoneSelectedIsSentAgain: a saved method is selected,
// the write fails with a 502, and the methods read back have none selected: the write was
// not performed and is sent again.
func TestDisbursementSelectionReadWithNoneSelectedIsSentAgain(t *testing.T) {
	got, writes, _, err := settleWith(t, nil, "PATCH", "transaction/77/disbursement_methods",
		[]httpmock.Responder{respond(502, `{}`), respond(200, `{"selected_disbursement_method":{"id":9,"type":"ach"}}`)},
		"transaction/77/disbursement_methods", []httpmock.Responder{respond(200, `{"selected_disbursement_method":null}`)},
		func(c *Client) (any, error) {
			return c.Transactions.SelectDisbursementMethod(context.Background(), 77, &DisbursementMethod{ID: 9})
		})
	if err != nil || writes != 2 {
		t.Errorf("got %v, %v after %d writes; want the method selected on the second", got, err, writes)
	}
}

// TestDisbursementDetailTheServerFilledInStillMatches: new wire details are selected
// without a bank name, the write drops, and the method read back is them with the bank's
// name filled in by the server: it is the caller's, and the write is done, not sent again.
func TestDisbursementDetailTheServerFilledInStillMatches(t *testing.T) {
	dropped := fail(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})
	got, writes, _, err := settleWith(t, nil, "PATCH", "transaction/77/disbursement_methods",
		[]httpmock.Responder{dropped, respond(200, `{}`)},
		"transaction/77/disbursement_methods", []httpmock.Responder{respond(200,
			`{"selected_disbursement_method":{"id":10,"type":"wire_transfer","bank_iban":"DE89370400440532013000","bank_name":"Commerzbank"}}`)},
		func(c *Client) (any, error) {
			return c.Transactions.SelectDisbursementMethod(context.Background(), 77, &DisbursementMethod{Type: "wire_transfer", BankIBAN: "DE89370400440532013000"})
		})
	m, _ := got.(*DisbursementMethods)
	if err != nil || writes != 1 || m == nil || m.SelectedDisbursementMethod == nil || m.SelectedDisbursementMethod.ID != 10 {
		t.Errorf("got %+v, %v after %d writes; want method 10 settled after 1", got, err, writes)
	}
}

// createFound runs Create(req, opts...) against a first attempt answered with a 502 and a
// lookup by reference that finds doc.
func createFound(t *testing.T, req *CreateTransactionRequest, doc string, opts ...RequestOption) (*Transaction, error) {
	t.Helper()
	c, posts, _ := createTest(t, []httpmock.Responder{respond(502, `{}`)}, []httpmock.Responder{respond(200, doc)})
	tx, err := c.Transactions.Create(context.Background(), req, opts...)
	if n := posts.count(); n != 1 {
		t.Errorf("%d creates sent, want 1", n)
	}
	return tx, err
}

// TestCreateNeverTakesADealBetweenOthersItCannotShowItMade: a partner creates a deal
// between two customers (itself no party to it), the create fails with a 502, and the
// reference finds a deal between the same two, for the same goods, that shows no partner
// party: nothing says the caller created it (the buyer could have, under the same
// reference), so it is not taken for the caller's.
func TestCreateNeverTakesADealBetweenOthersItCannotShowItMade(t *testing.T) {
	const alice = "alice/a+b=c@test.escrow.com"
	req := carSale()
	req.Parties[0].Customer = alice
	for i := range req.Items {
		for j := range req.Items[i].Schedule {
			if req.Items[i].Schedule[j].PayerCustomer == "me" {
				req.Items[i].Schedule[j].PayerCustomer = alice
			}
		}
	}
	doc := strings.NewReplacer(`,
    {"id": 14, "role": "partner", "customer": "me", "agreed": true}`, "",
		`"customer": "me"`, `"customer": "`+alice+`"`, `"payer_customer": "me"`, `"payer_customer": "`+alice+`"`).Replace(carSaleAsRendered(77))
	if strings.Contains(doc, `"partner"`) || strings.Contains(doc, `"me"`) {
		t.Fatal("the fixture still shows the caller")
	}
	tx, err := createFound(t, req, doc)
	var ou *OutcomeUnknownError
	if tx != nil || !errors.As(err, &ou) || !strings.Contains(ou.Reason, "neither created it nor is the party") {
		t.Errorf("Create = %v, %v; want no transaction and an unknown outcome: the caller did not create it", tx, err)
	}
}

// TestCreateForACustomerTakesItsOwnNamedByAddress: a partner creates a deal for a
// customer (AsCustomer) naming that customer "me"; the create fails with a 502 and the
// deal found names the customer by address: that is the request's deal, taken as created.
// The same deal with another buyer is not.
func TestCreateForACustomerTakesItsOwnNamedByAddress(t *testing.T) {
	const alice = "alice/a+b=c@test.escrow.com"
	asAlice := strings.NewReplacer(`"role": "buyer", "customer": "me"`, `"role": "buyer", "customer": "`+alice+`"`,
		`"payer_customer": "me"`, `"payer_customer": "`+alice+`"`).Replace(carSaleAsRendered(77))
	tx, err := createFound(t, carSale(), asAlice, AsCustomer(alice))
	if err != nil || tx == nil || tx.ID != 77 {
		t.Errorf("Create = %v, %v; want transaction 77, the customer's own", tx, err)
	}
	other := strings.ReplaceAll(asAlice, alice, "mallory@evil.test")
	tx, err = createFound(t, carSale(), other, AsCustomer(alice))
	if tx != nil || !errors.Is(err, ErrOutcomeUnknown) {
		t.Errorf("Create = %v, %v; want no transaction: its buyer is not the customer", tx, err)
	}
}

// TestCreateTakesItsOwnWithATitleTheRequestLeftOut: the request leaves the broker fee
// item untitled, the create fails with a 502, and the deal found gives that item a title
// of the server's: a title the request did not set is not compared, and the deal is taken.
func TestCreateTakesItsOwnWithATitleTheRequestLeftOut(t *testing.T) {
	doc := strings.Replace(carSaleAsRendered(77), `"id": 1003,`, `"id": 1003, "title": "Broker fee",`, 1)
	tx, err := createFound(t, carSale(), doc)
	if err != nil || tx == nil || tx.Items[2].Title != "Broker fee" {
		t.Errorf("Create = %v, %v; want transaction 77 with its broker fee titled", tx, err)
	}
}

// TestUnknownOutcomeMatchesNoOtherFailure: a ship fails with a 502 and the read that should
// settle it is answered 404: the outcome is unknown, and the error matches
// ErrOutcomeUnknown only. A caller that drops a deal on errors.Is(err, ErrNotFound), or
// gives up on ErrForbidden, would otherwise act on a ship that may have been performed.
func TestUnknownOutcomeMatchesNoOtherFailure(t *testing.T) {
	_, writes, reads, err := settleWith(t, nil, "PATCH", "transaction/77", []httpmock.Responder{respond(502, `{}`)},
		"transaction/77", []httpmock.Responder{respond(404, `{"error":"not_found"}`)},
		func(c *Client) (any, error) {
			return c.Transactions.Ship(context.Background(), 77, nil, AsCustomer(seller))
		})
	if !errors.Is(err, ErrOutcomeUnknown) || writes != 1 || reads != 1 {
		t.Fatalf("%v after %d writes and %d reads; want an unknown outcome after 1 and 1", err, writes, reads)
	}
	for _, other := range []error{ErrNotFound, ErrForbidden, ErrUnauthorized, ErrRateLimited, ErrInvalidArgument, ErrMalformedResponse, context.Canceled} {
		if errors.Is(err, other) {
			t.Errorf("%v matches %v", err, other)
		}
	}
}

// TestContextEndedAtAnAmbiguousFailureReadsNothing: the caller's context ends while a ship
// fails with a 502: the client sends nothing more, not even the read (a transport of the
// caller's would still carry it), and the outcome is unknown because the context ended,
// not because a read failed.
func TestContextEndedAtAnAmbiguousFailureReadsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var w, r recorder
		mt.RegisterResponder("PATCH", testBase+"transaction/77", w.then(func(req *http.Request) (*http.Response, error) {
			cancel()
			return respond(502, `{}`)(req)
		}))
		mt.RegisterResponder("GET", testBase+"transaction/77", r.then(respond(200, shippedTx(77))))
		got, err := c.Transactions.Ship(ctx, 77, nil, AsCustomer(seller))
		var ou *OutcomeUnknownError
		if got != nil || !errors.As(err, &ou) || !strings.Contains(ou.Reason, "context ended before the state could be read") {
			t.Errorf("got %v, %v; want an unknown outcome because the context ended", got, err)
		}
		if w.count() != 1 || r.count() != 0 {
			t.Errorf("%d writes and %d reads, want 1 and 0", w.count(), r.count())
		}
	})
}

// resentShip runs a ship, as the seller, that drops, reads back as not shipped, is sent
// again after its backoff, fails with a 502 and then reads back shipped: settled on the
// second attempt.
func resentShip(t *testing.T, opts ...Option) (writes []time.Time, err error) {
	t.Helper()
	dropped := fail(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t, opts...)
		var mu sync.Mutex
		mt.RegisterResponder("PATCH", testBase+"transaction/77", func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			writes = append(writes, time.Now())
			mu.Unlock()
			return sequence(dropped, respond(502, `{}`))(req)
		})
		mt.RegisterResponder("GET", testBase+"transaction/77", sequence(respond(200, carSaleAsRendered(77)), respond(200, shippedTx(77))))
		_, err = c.Transactions.Ship(context.Background(), 77, nil, AsCustomer(seller))
	})
	return writes, err
}

// TestWriteReadBackAsNotPerformedWaitsItsBackoff: a write read back as not performed is
// sent again only after the client's backoff (its first step, 250 ms, with the test's
// jitter at its ceiling), so a struggling server is not hit again at once; and a context
// that ends during that wait stops the write there, not performed (as the read showed),
// instead of sending it again.
func TestWriteReadBackAsNotPerformedWaitsItsBackoff(t *testing.T) {
	writes, err := resentShip(t)
	if err != nil || len(writes) != 2 {
		t.Fatalf("%v after %d writes; want the ship settled on the second", err, len(writes))
	}
	if gap := writes[1].Sub(writes[0]); gap < defaultBaseWait {
		t.Errorf("sent again %v after the first attempt, want at least the backoff of %v", gap, defaultBaseWait)
	}

	dropped := fail(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t)
		ctx, cancel := context.WithTimeout(context.Background(), defaultBaseWait/2)
		defer cancel()
		var w recorder
		mt.RegisterResponder("PATCH", testBase+"transaction/77", w.then(sequence(dropped, respond(200, shippedTx(77)))))
		mt.RegisterResponder("GET", testBase+"transaction/77", respond(200, carSaleAsRendered(77)))
		got, err := c.Transactions.Ship(ctx, 77, nil, AsCustomer(seller))
		if got != nil || errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, context.DeadlineExceeded) ||
			!strings.Contains(err.Error(), "context ended before sending again") || w.count() != 1 {
			t.Errorf("got %v, %v after %d writes; want it not performed after 1: the context ended in the wait", got, err, w.count())
		}
	})
}

// TestSettlingIsLogged: with a logger, a write read back as not performed and sent again,
// then read back as done, logs both steps at Info with the write's method, route and
// attempt, and no credential: an operator sees why one call sent a write twice.
func TestSettlingIsLogged(t *testing.T) {
	var logs bytes.Buffer
	if _, err := resentShip(t, WithLogger(slog.New(slog.NewJSONHandler(&logs, nil)))); err != nil {
		t.Fatal(err)
	}
	mustContainNone(t, "the log", logs.String())
	type line struct {
		Level, Msg, Method, Path string
		Attempt                  int
	}
	var got []line
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var ln line
		if err := json.Unmarshal([]byte(l), &ln); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if strings.Contains(ln.Msg, "settled") {
			got = append(got, ln)
		}
	}
	want := []line{
		{"INFO", "escrow: write settled: not performed, sending again", "PATCH", "transaction/{id}", 1},
		{"INFO", "escrow: write settled: its effect is there", "PATCH", "transaction/{id}", 2},
	}
	if !slices.Equal(got, want) {
		t.Errorf("settling logged %+v, want %+v\nlog:\n%s", got, want, logs.String())
	}
}

// callLog is an Observer that keeps every call that ended.
type callLog struct {
	mu    sync.Mutex
	calls []Call
}

func (l *callLog) CallStart(ctx context.Context, _ *Call) context.Context { return ctx }

func (l *callLog) CallEnd(_ context.Context, c *Call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, *c)
}

// TestObserverSeesAWriteSentAgainAsARetry: a write read back as not performed and sent
// again is one call of two attempts whose retry says why (not performed) and how long it
// waited: a dashboard of retries counts it, and its reason is not taken for a 5xx retry.
func TestObserverSeesAWriteSentAgainAsARetry(t *testing.T) {
	var obs callLog
	if _, err := resentShip(t, WithObserver(&obs)); err != nil {
		t.Fatal(err)
	}
	var write *Call
	for i := range obs.calls {
		if obs.calls[i].Method == "PATCH" {
			write = &obs.calls[i]
		}
	}
	if write == nil || write.Attempts != 2 || len(write.SettlingReads) != 2 {
		t.Fatalf("observed %+v; want the ship as one call of two attempts and two reads", obs.calls)
	}
	if a, b := write.SettlingReads[0].Outcome, write.SettlingReads[1].Outcome; a != SettleAbsent || b != SettlePresent {
		t.Errorf("settling reads found %s, then %s; want absent (sent again), then present", a, b)
	}
	if len(write.Retries) != 1 || write.Retries[0].Reason != RetryNotPerformed || write.Retries[0].Wait != defaultBaseWait {
		t.Errorf("retries %+v; want one, not performed, after %v", write.Retries, defaultBaseWait)
	}
}

// asSeller is carSale as the API renders it to a client that is its seller: the buyer,
// listed first, is someone else who has agreed; the client has not.
func asSeller(id int64) string {
	return strings.NewReplacer(`"role": "buyer", "customer": "me", "agreed": true`, `"role": "buyer", "customer": "ann/o+b=n@test.escrow.com", "agreed": true`,
		`"role": "seller", "customer": "`+seller+`"`, `"role": "seller", "customer": "me"`).Replace(carSaleAsRendered(id))
}

// TestAgreeReadBackIsTheClientsOwnParty: the client, the deal's seller, agrees; the write
// fails with a 503 and the deal reads back with its buyer (listed first) agreed and the
// seller not: the client's agreement was not performed, and it is sent again. Taken for
// the client's, the seller would never agree and the deal never start.
func TestAgreeReadBackIsTheClientsOwnParty(t *testing.T) {
	if !strings.Contains(asSeller(77), `"role": "seller", "customer": "me", "agreed": false`) {
		t.Fatal("the fixture lost its seller")
	}
	agreed := strings.Replace(asSeller(77), `"customer": "me", "agreed": false`, `"customer": "me", "agreed": true`, 1)
	got, writes, _, err := settleWith(t, nil, "PATCH", "transaction/77", []httpmock.Responder{respond(503, `{}`), respond(200, agreed)},
		"transaction/77", []httpmock.Responder{respond(200, asSeller(77))},
		func(c *Client) (any, error) { return c.Transactions.Agree(context.Background(), 77) })
	if err != nil || writes != 2 {
		t.Errorf("got %v, %v after %d writes; want the agreement sent again and done", got, err, writes)
	}
}

// TestAgreeForACustomerNotAmongThePartiesIsUnknown: a partner agrees for a customer the
// deal read back does not name: nothing tells whether that customer agreed, so the outcome
// is unknown (not a crash, nor a second agreement).
func TestAgreeForACustomerNotAmongThePartiesIsUnknown(t *testing.T) {
	got, writes, _, err := settleWith(t, nil, "PATCH", "transaction/77", []httpmock.Responder{respond(502, `{}`)},
		"transaction/77", []httpmock.Responder{respond(200, carSaleAsRendered(77))},
		func(c *Client) (any, error) {
			return c.Transactions.Agree(context.Background(), 77, AsCustomer("carol/x+y=z@test.escrow.com"))
		})
	var ou *OutcomeUnknownError
	if !errors.As(err, &ou) || !strings.Contains(ou.Reason, "not among the parties") || writes != 1 {
		t.Errorf("got %v, %v after %d writes; want an unknown outcome after 1", got, err, writes)
	}
}

// TestWireMarkWithTheTransactionUnreadableIsUnknown: marking a wire sent fails with a 502,
// the timeline shows no wire, and the transaction (to see whether it is still unfunded)
// cannot be read: the outcome is unknown, neither a crash nor the mark sent again.
func TestWireMarkWithTheTransactionUnreadableIsUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t)
		var w recorder
		mt.RegisterResponder("POST", testBase+"transaction/77/payment_methods/wire_transfer", w.then(sequence(respond(502, `{}`), respond(200, `{}`))))
		mt.RegisterResponder("GET", testBase+"transaction/77/timeline-entries", respond(200, `{"timeline_entries":[{"event":"create"}]}`))
		mt.RegisterResponder("GET", testBase+"transaction/77", respond(403, `{"error":"forbidden"}`))
		got, err := c.Transactions.MarkWireSent(context.Background(), 77)
		var ou *OutcomeUnknownError
		if got != nil || !errors.As(err, &ou) || !strings.Contains(ou.Reason, "reading the state failed") || w.count() != 1 {
			t.Errorf("got %v, %v after %d writes; want an unknown outcome after 1", got, err, w.count())
		}
	})
}

// TestObserverSeesAFailedSettlingRead: a write whose read-back fails (the transaction
// unreadable) is observed with that read as failed, not undetermined: the write's outcome
// is unknown because nothing could be read, not because the state was unclear.
func TestObserverSeesAFailedSettlingRead(t *testing.T) {
	var obs callLog
	synctest.Test(t, func(t *testing.T) {
		c, mt := setup(t, WithObserver(&obs))
		mt.RegisterResponder("POST", testBase+"transaction/77/payment_methods/wire_transfer", respond(502, `{}`))
		mt.RegisterResponder("GET", testBase+"transaction/77/timeline-entries", respond(200, `{"timeline_entries":[{"event":"create"}]}`))
		mt.RegisterResponder("GET", testBase+"transaction/77", respond(403, `{"error":"forbidden"}`))
		if _, err := c.Transactions.MarkWireSent(context.Background(), 77); !errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("MarkWireSent = %v, want an unknown outcome", err)
		}
	})
	for _, call := range obs.calls {
		if call.Method == "POST" {
			if len(call.SettlingReads) != 1 || call.SettlingReads[0].Outcome != SettleFailed {
				t.Errorf("the write's settling reads %+v; want one, failed", call.SettlingReads)
			}
			return
		}
	}
	t.Errorf("no write observed: %+v", obs.calls)
}

// TestSavedDisbursementMethodMustBeTheOneSelected: saved method 9 is selected, the write
// drops, and method 10 reads back as selected: the selection was not performed and is sent
// again. Taken as done, the payout would go to method 10's account.
func TestSavedDisbursementMethodMustBeTheOneSelected(t *testing.T) {
	dropped := fail(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET})
	got, writes, _, err := settleWith(t, nil, "PATCH", "transaction/77/disbursement_methods",
		[]httpmock.Responder{dropped, respond(200, `{"selected_disbursement_method":{"id":9,"type":"ach"}}`)},
		"transaction/77/disbursement_methods", []httpmock.Responder{respond(200, `{"selected_disbursement_method":{"id":10,"type":"ach"}}`)},
		func(c *Client) (any, error) {
			return c.Transactions.SelectDisbursementMethod(context.Background(), 77, &DisbursementMethod{ID: 9})
		})
	m, _ := got.(*DisbursementMethods)
	if err != nil || writes != 2 || m == nil || m.SelectedDisbursementMethod == nil || m.SelectedDisbursementMethod.ID != 9 {
		t.Errorf("got %+v, %v after %d writes; want method 9 selected by the second", got, err, writes)
	}
}

// TestCreateByAPartyTakesItsOwnWithoutAPartnerParty: the client creates a deal as its
// buyer, so the API lists no partner party (it makes only a creator who is no other party
// the partner); the create fails with a 502 and the reference finds the deal, its buyer
// shown as "me" or by the client's address: it is the caller's, taken as created, not an
// unknown outcome.
func TestCreateByAPartyTakesItsOwnWithoutAPartnerParty(t *testing.T) {
	noPartner := strings.Replace(carSaleAsRendered(77), `,
    {"id": 14, "role": "partner", "customer": "me", "agreed": true}`, "", 1)
	if strings.Contains(noPartner, `"partner"`) {
		t.Fatal("the fixture still has its partner party")
	}
	for _, buyer := range []string{"me", strings.ToUpper(testEmail)} {
		doc := strings.Replace(noPartner, `"role": "buyer", "customer": "me"`, `"role": "buyer", "customer": "`+buyer+`"`, 1)
		tx, err := createFound(t, carSale(), doc)
		if err != nil || tx == nil || tx.ID != 77 {
			t.Errorf("buyer shown as %q: Create = %v, %v; want transaction 77, the caller's own", buyer, tx, err)
		}
	}
}

// TestEveryAttemptAnswered503IsNotPerformed: a write every attempt of which the server
// answers 503, and every read shows not done, ends with the last answer, an *APIError 503
// saying it was not performed and how many times it was sent, not ErrOutcomeUnknown; the
// log numbers the attempts 1 to the last on the write's lines and the settling lines alike.
func TestEveryAttemptAnswered503IsNotPerformed(t *testing.T) {
	var logs bytes.Buffer
	unavailable := respond(503, `{"message": "Service Unavailable"}`)
	_, writes, reads, err := settleWith(t, []Option{WithMaxRetries(4), WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))},
		"PATCH", "transaction/77", []httpmock.Responder{unavailable, unavailable, unavailable, unavailable, unavailable},
		"transaction/77", []httpmock.Responder{respond(200, carSaleAsRendered(77))},
		func(c *Client) (any, error) {
			return c.Transactions.Ship(context.Background(), 77, nil, AsCustomer(seller))
		})
	var ae *APIError
	if errors.Is(err, ErrOutcomeUnknown) || !errors.As(err, &ae) || ae.StatusCode != 503 {
		t.Fatalf("err = %v, want the 503, not an unknown outcome", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "not performed") || !strings.Contains(msg, "sent 5 times") {
		t.Errorf("err = %q, want it said not performed, sent 5 times", msg)
	}
	if writes != 5 || reads != 5 {
		t.Errorf("%d writes and %d reads, want 5 of each", writes, reads)
	}
	var responses, settled []int
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var ln struct {
			Msg, Method string
			Attempt     int
		}
		if err := json.Unmarshal([]byte(l), &ln); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		switch {
		case ln.Method == "PATCH" && ln.Msg == "escrow: response":
			responses = append(responses, ln.Attempt)
		case strings.Contains(ln.Msg, "settled"):
			settled = append(settled, ln.Attempt)
		}
	}
	if want := []int{1, 2, 3, 4, 5}; !slices.Equal(responses, want) {
		t.Errorf("the PATCH responses logged attempts %v, want %v", responses, want)
	}
	if want := []int{1, 2, 3, 4}; !slices.Equal(settled, want) {
		t.Errorf("the settling lines logged attempts %v, want %v", settled, want)
	}
}
