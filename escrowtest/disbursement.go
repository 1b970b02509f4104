package escrowtest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

var (
	clearingSystemCodes = []string{"ATBLZ", "AUBSB", "BRSTN", "CACPA", "CHBCC", "DEBLZ", "ESNCC", "GBDSC", "INFSC", "ITNCC", "NZNCC", "USABA"}
	countryPattern      = regexp.MustCompile(`^[A-Za-z]{2}$`)
)

// disbursementTypes are the method types a customer can be paid by (spec Endpoints rule
// 4): residents of the USA ach or wire_transfer, others wire_transfer_international.
func disbursementTypes(country string) []string {
	if country == "US" {
		return []string{"ach", "wire_transfer"}
	}
	return []string{"wire_transfer_international"}
}

// requiredMethodFields are the details each method type needs.
var requiredMethodFields = map[string][]string{
	"ach":                         {"account_name", "account_type", "bank_aba_routing_number", "bank_account_number", "bank_name"},
	"wire_transfer":               {"account_name", "bank_name", "bank_swift_code"},
	"wire_transfer_international": {"account_name", "bank_name", "bank_swift_code"},
}

// parseMethod reads full disbursement method details, whose type must be one of types.
// "wire" is read as "wire_transfer", the name the spec also lists.
func parseMethod(o object, types []string, currency string) *wireDisbursementMethod {
	m := &wireDisbursementMethod{Type: methodType(o, types), Currency: currency}
	if o.has("currency") {
		m.Currency = o.oneOf("currency", currencies...)
	}
	for key, dst := range map[string]*string{
		"account_name": &m.AccountName, "account_type": &m.AccountType,
		"bank_aba_routing_number": &m.BankABARoutingNumber, "bank_account_number": &m.BankAccountNumber,
		"bank_branch_number": &m.BankBranchNumber, "bank_iban": &m.BankIBAN, "bank_name": &m.BankName,
		"bank_swift_code": &m.BankSwiftCode, "bank_sort_code": &m.BankSortCode,
		"international_routing_code": &m.InternationalRoutingCode,
		"additional_information":     &m.AdditionalInformation, "member_id": &m.MemberID,
	} {
		*dst = o.str(key)
	}
	m.ClearingSystemCode = o.oneOf("clearing_system_code", clearingSystemCodes...)
	m.BankAddress = parseAddress(o, "bank_address")
	m.BeneficiaryAddress = parseAddress(o, "beneficiary_address")
	if ib, ok := o.child("intermediary_bank"); ok {
		m.IntermediaryBank = parseIntermediaryBank(ib)
	}
	for _, ib := range o.elements("intermediary_banks") {
		m.IntermediaryBanks = append(m.IntermediaryBanks, *parseIntermediaryBank(ib))
	}
	requireMethodFields(o, m)
	return m
}

// methodType reads a method's type, which must be one of types; "" when it is refused,
// since its required details would only repeat the point.
func methodType(o object, types []string) string {
	typ := o.str("type")
	if typ == "wire" {
		typ = "wire_transfer"
	}
	if o.required("type") && typ != "" && !slices.Contains(types, typ) {
		o.fail("type", fmt.Sprintf("%q is not available to this customer: use %s", typ, strings.Join(types, " or ")))
		return ""
	}
	return typ
}

// requireMethodFields reports the details the method's type needs and o lacks.
func requireMethodFields(o object, m *wireDisbursementMethod) {
	for _, key := range requiredMethodFields[m.Type] {
		if o.str(key) == "" {
			o.fail(key, "is required for "+m.Type)
		}
	}
	if strings.HasPrefix(m.Type, "wire_transfer") && m.BankAccountNumber == "" && m.BankIBAN == "" && m.InternationalRoutingCode == "" {
		o.fail("bank_account_number", "a wire transfer needs bank_account_number, bank_iban or international_routing_code")
	}
}

func parseIntermediaryBank(o object) *wireIntermediaryBank {
	return &wireIntermediaryBank{
		ClearingSystemCode: o.oneOf("clearing_system_code", clearingSystemCodes...),
		BankAddress:        parseAddress(o, "bank_address"),
		BankName:           o.str("bank_name"), BankAccountNumber: o.str("bank_account_number"),
		BankSwiftCode: o.str("bank_swift_code"), MemberID: o.str("member_id"),
		BankABARoutingNumber: o.str("bank_aba_routing_number"),
	}
}

// parseAddress reads the address held by key, or returns nil when there is none.
func parseAddress(parent object, key string) *wireAddress {
	o, ok := parent.child(key)
	if !ok {
		return nil
	}
	a := &wireAddress{
		Line1: o.str("line1"), Line2: o.str("line2"), City: o.str("city"), State: o.str("state"),
		Country: strings.ToUpper(o.str("country")), PostCode: o.str("post_code"),
	}
	if a.Country != "" && !countryPattern.MatchString(a.Country) {
		o.fail("country", "must be an ISO 3166-1 alpha-2 country code such as US")
		a.Country = ""
	}
	return a
}

// payeeTransaction finds the transaction of a disbursement endpoint and the party it acts
// for: the caller as seller or broker.
func (e *Emulator) payeeTransaction(req *request) (*transaction, *party, error) {
	tx, err := e.transactionFor(req)
	if err != nil {
		return nil, nil, err
	}
	for _, role := range []string{roleSeller, roleBroker} {
		if tx.hasRole(req.caller.id, role) {
			return tx, tx.party(role), nil
		}
	}
	return nil, nil, forbidden("only the seller and the broker are paid out of transaction %d", tx.id)
}

// beneficiaryTotal is what a party receives from the transaction, less what it pays out of
// its proceeds: its fees and the schedule entries it pays (a seller's broker commission).
func beneficiaryTotal(tx *transaction, accountID int64) cents {
	f := tx.flowsOf(accountID)
	return max(f.receives-f.pays-f.fees, 0)
}

// methodsView renders DisbursementMethods for a customer; tx is nil for the customer's
// own listing, whose totals are 0.
func (e *Emulator) methodsView(a *account, tx *transaction, selected int64) wireDisbursementMethods {
	types := disbursementTypes(a.country())
	out := wireDisbursementMethods{
		AvailableDisbursementMethods: []wireAvailableMethod{},
		SavedDisbursementMethods:     []*wireDisbursementMethod{},
		AvailableCurrencies:          currencies,
	}
	var total cents
	if tx != nil {
		total, out.AvailableCurrencies = beneficiaryTotal(tx, a.id), []string{tx.currency}
	}
	for _, t := range types {
		out.AvailableDisbursementMethods = append(out.AvailableDisbursementMethods, wireAvailableMethod{Type: t, Total: number(total)})
	}
	for _, m := range a.methods {
		if tx == nil || slices.Contains(types, m.Type) {
			out.SavedDisbursementMethods = append(out.SavedDisbursementMethods, m)
		}
		if m.ID == selected {
			out.SelectedDisbursementMethod = m
		}
	}
	return out
}

// disbursementMethods serves GET /transaction/{id}/disbursement_methods.
func (e *Emulator) disbursementMethods(req *request) (response, error) {
	tx, p, err := e.payeeTransaction(req)
	if err != nil {
		return response{}, err
	}
	return success(e.methodsView(req.caller, tx, p.method)), nil
}

// selectDisbursementMethod serves PATCH and POST /transaction/{id}/disbursement_methods,
// which behave alike: {"id": n} selects a saved method; full details add a method, save
// it and select it. Funds already due are disbursed at once.
func (e *Emulator) selectDisbursementMethod(req *request) (response, error) {
	tx, p, err := e.payeeTransaction(req)
	if err != nil {
		return response{}, err
	}
	o, err := decodeObject(req.body)
	if err != nil {
		return response{}, err
	}
	chosen := requestedMethod(o, req.caller, tx.currency)
	if err := o.errs.orNil(); err != nil {
		return response{}, err
	}
	if err := e.selectMethod(tx, p, req.caller, chosen); err != nil {
		return response{}, err
	}
	return success(e.methodsView(req.caller, tx, p.method)), nil
}

// selectMethod makes a method the party's, saving it first when it is new, and disburses
// what is due at once.
func (e *Emulator) selectMethod(tx *transaction, p *party, a *account, chosen *wireDisbursementMethod) error {
	if tx.cancelled || disbursedTo(tx, a.id) {
		return invalidState("select_disbursement_method", tx.phase(), 0, "the disbursement method of transaction %d can no longer change: funds are disbursed or the transaction is cancelled", tx.id)
	}
	if chosen.ID == 0 {
		chosen.ID = next(&e.st.ids.method)
		a.methods = append(a.methods, chosen)
	}
	p.method = chosen.ID
	e.settleMoney(tx, false)
	return nil
}

// requestedMethod reads the method a request selects for customer a: a saved one by
// {"id": n}, or the full details of a new one in the transaction's currency.
func requestedMethod(o object, a *account, currency string) *wireDisbursementMethod {
	types := disbursementTypes(a.country())
	if o.has("id") && len(o.fields) == 1 {
		return savedMethod(o, a, types)
	}
	return parseMethod(o, types, currency)
}

// savedMethod reads {"id": n}: one of the customer's saved methods, applicable here.
func savedMethod(o object, a *account, types []string) *wireDisbursementMethod {
	id, ok := o.integer("id", 1, 1<<62)
	if !ok {
		return nil
	}
	i := slices.IndexFunc(a.methods, func(m *wireDisbursementMethod) bool { return m.ID == id })
	switch {
	case i < 0:
		o.fail("id", fmt.Sprintf("no saved disbursement method %d", id))
	case !slices.Contains(types, a.methods[i].Type):
		o.fail("id", fmt.Sprintf("saved method %d (%s) is not applicable to this transaction", id, a.methods[i].Type))
	default:
		return a.methods[i]
	}
	return nil
}

// disbursedTo reports whether any funds of the transaction went to the account.
func disbursedTo(tx *transaction, accountID int64) bool {
	for _, it := range tx.items {
		for _, s := range it.schedule {
			if s.beneficiary == accountID && s.disbursed {
				return true
			}
		}
	}
	return false
}

// customerDisbursementMethods serves GET /customer/{customer_id}/disbursement_methods.
func (e *Emulator) customerDisbursementMethods(req *request) (response, error) {
	a, err := e.customerFor(req)
	if err != nil {
		return response{}, err
	}
	return success(e.methodsView(a, nil, 0)), nil
}

// customerDisbursementMethod serves GET /customer/{customer_id}/disbursement_methods/{disbursement_id}.
func (e *Emulator) customerDisbursementMethod(req *request) (response, error) {
	a, err := e.customerFor(req)
	if err != nil {
		return response{}, err
	}
	id, err := req.id("disbursement_id")
	if err != nil {
		return response{}, err
	}
	for _, m := range a.methods {
		if m.ID == id {
			return success(m), nil
		}
	}
	return response{}, notFound("no disbursement method %d", id)
}
