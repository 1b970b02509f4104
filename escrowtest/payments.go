package escrowtest

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
)

// Payment terms of the emulator (see the package comment).
const (
	cardFeePPM       = 30_000 // credit_card and paypal add 3 % to the buyer's total
	cardLimit  cents = 10_000_00
)

// buyerTotal is what the buyer pays in: every schedule entry the buyer pays and the
// buyer's share of the fees.
func buyerTotal(tx *transaction) cents {
	f := tx.flowsOf(tx.party(roleBuyer).account)
	return f.pays + f.fees
}

// paymentOptions lists how the buyer may pay: wire transfer always; credit card up to
// 10,000.00 (above it once the buyer is verified); PayPal in usd and euro up to
// 10,000.00; POLi in aud. Card and PayPal totals carry a 3 % payment fee.
func (e *Emulator) paymentOptions(tx *transaction) ([]wireAvailableMethod, []wireConditionalMethod) {
	total := buyerTotal(tx)
	withFee := number(total + applyRate(total, cardFeePPM, 1_000_000))
	available := []wireAvailableMethod{{Type: "wire_transfer", Total: number(total), Currency: tx.currency}}
	conditional := []wireConditionalMethod{}
	if total <= cardLimit || e.st.accounts[tx.party(roleBuyer).account].verifiedPersonal {
		available = append(available, wireAvailableMethod{Type: "credit_card", Total: withFee, Currency: tx.currency})
	} else {
		conditional = append(conditional, wireConditionalMethod{Type: "credit_card", Total: withFee, Conditions: []string{"verification_required"}})
	}
	if total <= cardLimit && (tx.currency == "usd" || tx.currency == "euro") {
		available = append(available, wireAvailableMethod{Type: "paypal", Total: withFee, Currency: tx.currency})
	}
	if tx.currency == "aud" {
		available = append(available, wireAvailableMethod{Type: "poli", Total: number(total), Currency: tx.currency})
	}
	return available, conditional
}

// buyerTransaction finds the transaction for a payment endpoint, whose caller, or the
// party named in As-Customer, must be the buyer.
func (e *Emulator) buyerTransaction(req *request) (*transaction, error) {
	tx, err := e.transactionFor(req)
	if err != nil {
		return nil, err
	}
	who, err := e.actorFor(req, tx)
	if err != nil {
		return nil, err
	}
	if !tx.hasRole(who.account.id, roleBuyer) {
		return nil, forbidden("only the buyer pays transaction %d", tx.id)
	}
	return tx, nil
}

// paymentMethods serves GET /transaction/{id}/payment_methods.
func (e *Emulator) paymentMethods(req *request) (response, error) {
	tx, err := e.buyerTransaction(req)
	if err != nil {
		return response{}, err
	}
	available, conditional := e.paymentOptions(tx)
	return success(wirePaymentMethods{
		AvailablePaymentMethods:              available,
		ConditionallyAvailablePaymentMethods: conditional,
		TotalWithoutPaymentFee:               buyerTotal(tx).String(),
	}), nil
}

// readyToPay refuses payment steps before every party agrees or after funding.
func readyToPay(tx *transaction, action string) error {
	if tx.isClosed() || !tx.allAgreed() || tx.funded {
		return invalidState(action, tx.phase(), 0, "cannot %s: transaction %d is %s", action, tx.id, tx.phase())
	}
	return nil
}

// choosePaymentMethod serves POST /transaction/{id}/payment_methods/{payment_method_name}
// for the methods paid on the provider's website: the answer is a landing page on the
// emulator's host. (POST .../wire_transfer is markWireSent.)
func (e *Emulator) choosePaymentMethod(req *request) (response, error) {
	tx, err := e.buyerTransaction(req)
	if err != nil {
		return response{}, err
	}
	name := req.params["payment_method_name"]
	if !slices.Contains([]string{"credit_card", "paypal", "poli"}, name) {
		return response{}, notFound("no payment method %q: use credit_card, paypal, poli or wire_transfer", name)
	}
	o, err := decodeObject(req.body)
	if err != nil {
		return response{}, err
	}
	returnURL := o.httpURL("return_url")
	if err := o.errs.orNil(); err != nil {
		return response{}, err
	}
	if err := readyToPay(tx, "choose_payment_method"); err != nil {
		return response{}, err
	}
	available, _ := e.paymentOptions(tx)
	if !slices.ContainsFunc(available, func(m wireAvailableMethod) bool { return m.Type == name }) {
		return response{}, newError(http.StatusBadRequest, "payment_method_unavailable", "%s is not available for transaction %d", name, tx.id)
	}
	tx.paymentMethod = name
	page := emulatorURL(req.Request, fmt.Sprintf("/pages/checkout/%d/%s", tx.id, name))
	if returnURL != "" {
		page += "?return_url=" + url.QueryEscape(returnURL)
	}
	return success(wireLandingPage{LandingPage: page}), nil
}

// wireDetails serves GET /transaction/{id}/payment_methods/wire_transfer. The details
// differ per transaction, as the spec warns they may.
func (e *Emulator) wireDetails(req *request) (response, error) {
	tx, err := e.buyerTransaction(req)
	if err != nil {
		return response{}, err
	}
	address := wireAddress{Line1: "1 Emulator Way", City: "San Francisco", State: "CA", Country: "US", PostCode: "94105"}
	return success(wireWireDetails{
		BankName:               "Escrowtest Bank",
		BankAddress:            "1 Emulator Way, San Francisco, CA 94105, US",
		StructuredBankAddress:  address,
		RoutingNumber:          "121000248",
		SwiftCode:              "ESCTUS66",
		CreditAccountName:      "Escrowtest Trust Account",
		CreditAccountNumber:    fmt.Sprintf("99%010d", tx.id),
		AdditionalInstructions: fmt.Sprintf("Quote transaction %d in the wire reference.", tx.id),
	}), nil
}

// markWireSent serves POST /transaction/{id}/payment_methods/wire_transfer: the buyer
// reports a wire started at the bank. It answers with the transaction, like an action.
func (e *Emulator) markWireSent(req *request) (response, error) {
	tx, err := e.buyerTransaction(req)
	if err != nil {
		return response{}, err
	}
	if err := readyToPay(tx, "wire_transfer"); err != nil {
		return response{}, err
	}
	if tx.wireSent {
		return response{}, invalidState("wire_transfer", tx.phase(), 0, "a wire transfer is already reported for transaction %d", tx.id)
	}
	tx.paymentMethod, tx.wireSent = "wire_transfer", true
	e.emit(tx, "payment_sent", 0, tx.party(roleBuyer).account, "wire_transfer")
	return success(e.render(tx, req.caller)), nil
}
