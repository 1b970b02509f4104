package escrowtest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

const maxWebhooks = 20 // per customer

// customerFor resolves {customer_id} on the endpoints of a customer's own settings: "me"
// or the caller's id. Another customer's settings answer 403, an unknown id 404.
func (e *Emulator) customerFor(req *request) (*account, error) {
	a, err := e.customerByRef(req.params["customer_id"], req.caller)
	if err != nil {
		return nil, err
	}
	if a != req.caller {
		return nil, forbidden("customer %d's settings belong to that customer", a.id)
	}
	return a, nil
}

// customerInput is customerFor for the settings endpoints that take a body: it also
// decodes the body.
func (e *Emulator) customerInput(req *request) (*account, object, error) {
	a, err := e.customerFor(req)
	if err != nil {
		return nil, object{}, err
	}
	o, err := decodeObject(req.body)
	return a, o, err
}

// customerByRef finds the customer a path names: "me" or an id.
func (e *Emulator) customerByRef(ref string, caller *account) (*account, error) {
	if ref == "me" {
		return caller, nil
	}
	id, err := strconv.ParseInt(ref, 10, 64)
	if a := e.st.accounts[id]; err == nil && a != nil {
		return a, nil
	}
	return nil, notFound("no customer %q", ref)
}

// A partner sees a customer's profile only through its own relationship with that
// customer (relatedTo): the partner created the account (with POST /customer, or by
// naming a new address in one of its transactions), or the customer itself (not the
// partner As-Customer) agreed to one of the partner's transactions. Naming an existing
// customer in a transaction creates no relationship, or any partner could read any
// customer's name, phone and address by naming them in a throwaway transaction. A party
// of the partner's transactions who is not related is shown without its profile
// (partyView).

// relatedTo reports whether the customer is the partner's, as above.
func (e *Emulator) relatedTo(partner, a *account) bool {
	if a.id == partner.id || a.createdBy == partner.id {
		return a.id != partner.id
	}
	for _, tx := range e.st.txOrder {
		if !tx.hasRole(partner.id, rolePartner) {
			continue
		}
		for _, p := range tx.partiesOf(a.id) {
			if p.selfAgreed {
				return true
			}
		}
	}
	return false
}

// partyOf reports whether the customer is a party of one of the partner's transactions.
func (e *Emulator) partyOf(partner, a *account) bool {
	for _, tx := range e.st.txOrder {
		if tx.hasRole(partner.id, rolePartner) && tx.isParty(a.id) {
			return true
		}
	}
	return false
}

// customersOf returns the partner's customers (relatedTo), by id. It reads each
// transaction once rather than once per account.
func (e *Emulator) customersOf(partner *account) []*account {
	agreed := e.agreedWithPartner(partner.id)
	var out []*account
	for _, a := range e.st.accounts {
		if a.id != partner.id && (a.createdBy == partner.id || agreed[a.id]) {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b *account) int { return int(a.id - b.id) })
	return out
}

// agreedWithPartner maps each party to the partner's transactions to whether it agreed to
// one of them itself.
func (e *Emulator) agreedWithPartner(partnerID int64) map[int64]bool {
	agreed := map[int64]bool{}
	for _, tx := range e.st.txOrder {
		if !tx.hasRole(partnerID, rolePartner) {
			continue
		}
		for _, p := range tx.parties {
			agreed[p.account] = agreed[p.account] || p.selfAgreed
		}
	}
	return agreed
}

// customerView says how much of a customer a reader sees.
type customerView int

const (
	partyView   customerView = iota // id, e-mail, username and verification; no profile
	partnerView                     // the profile too
	ownView                         // also webhooks and saved disbursement methods
)

// renderCustomer renders a customer as a reader sees it. Every field the live API
// returns is present, empty when unknown, as the live API does.
// renderProfile fills in what a customer's profile says about it.
func renderProfile(w *wireCustomer, p customerProfile) {
	w.FirstName, w.MiddleName, w.LastName, w.PhoneNumber = p.firstName, p.middleName, p.lastName, p.phone
	if name := strings.TrimSpace(p.firstName + " " + p.lastName); name != "" {
		w.DisplayName = name
	}
	for dst, src := range map[*wireAddress]*wireAddress{&w.Address: p.address, &w.ShippingAddress: p.shippingAddress, &w.Company.Address: p.companyAddress} {
		if src != nil {
			*dst = *src
		}
	}
	w.Company.CompanyName = p.companyName
	if !p.dateOfBirth.IsZero() {
		w.DateOfBirth = p.dateOfBirth.Format("2006-01-02T15:04:05") // as the live API writes it
	}
	if p.taxNumbers != nil {
		w.TaxNumbers = p.taxNumbers
	}
}

func renderCustomer(a *account, seen customerView) wireCustomer {
	username, _, _ := strings.Cut(a.email, "@")
	status := func(verified bool) wireVerificationState {
		if verified {
			return wireVerificationState{Status: "verified"}
		}
		return wireVerificationState{Status: "not_verified"}
	}
	w := wireCustomer{
		ID: a.id, Email: a.email, Username: username, DisplayName: username, TaxNumbers: []wireTaxNumber{},
		ElectronicVerification: wireElectronicVerification{DocumentsSupported: []string{}},
		// The person verified the address when they took the account up: it has a
		// password or a key, which accounts created by POST /customer or for a
		// transaction party lack until then.
		CustomerEmailVerification: wireCustomerEmailVerification{Verified: a.passwordHash != nil || len(a.keys) > 0},
		Verification: wireVerification{
			Personal: status(a.verifiedPersonal), Company: status(a.verifiedCompany),
			Extended: wireVerificationState{Status: "not_required"},
		},
	}
	if seen == partyView {
		return w
	}
	renderProfile(&w, a.profile)
	if seen == ownView {
		w.DisbursementMethods = a.methods
		for _, h := range a.webhooks {
			w.Webhooks = append(w.Webhooks, wireWebhook{ID: h.id, URL: h.url})
		}
	}
	return w
}

// getCustomer serves GET /customer/{customer_id}: the caller in full; for an approved
// partner, its customers with their profile and the other parties of its transactions
// without; 403 otherwise.
func (e *Emulator) getCustomer(req *request) (response, error) {
	a, err := e.customerByRef(req.params["customer_id"], req.caller)
	if err != nil {
		return response{}, err
	}
	switch {
	case a == req.caller:
		return success(renderCustomer(a, ownView)), nil
	case req.caller.partner && e.relatedTo(req.caller, a):
		return success(renderCustomer(a, partnerView)), nil
	case req.caller.partner && e.partyOf(req.caller, a):
		return success(renderCustomer(a, partyView)), nil
	}
	return response{}, forbidden("no access to customer %d", a.id)
}

// updateCustomer serves PATCH /customer/{customer_id} with the spec's "Customer patch
// shape" (plus date_of_birth and tax_numbers, which the SDK sends). Spec part 4,
// customer rule 3: once an account exists, API integrations can no
// longer supply its information. So a customer patches its own account ("me" or its own
// id) and nobody else's, not even the partner that created it: 403 for another existing
// customer, 404 for an unknown id. Fields given replace the stored ones (an address
// whole, identification_documents as a list); email and id cannot change (422); other
// fields are ignored, as on creation.
func (e *Emulator) updateCustomer(req *request) (response, error) {
	a, err := e.customerByRef(req.params["customer_id"], req.caller)
	if err != nil {
		return response{}, err
	}
	if a != req.caller {
		return response{}, forbidden("customer %d's information can no longer be supplied through the API: once an account exists, only its owner changes it", a.id)
	}
	o, err := decodeObject(req.body)
	if err != nil {
		return response{}, err
	}
	unchangeable(o, a)
	p := a.profile
	updateProfile(o, &p)
	taxNumbers := parseTaxNumbers(o)
	if err := o.errs.orNil(); err != nil {
		return response{}, err
	}
	if o.has("tax_numbers") {
		p.taxNumbers = []wireTaxNumber{}
		for _, tn := range taxNumbers {
			tn.ID = next(&e.st.ids.taxNumber)
			p.taxNumbers = append(p.taxNumbers, tn)
		}
	}
	a.profile = p
	return success(renderCustomer(a, ownView)), nil
}

// unchangeable refuses changes of what identifies the account.
func unchangeable(o object, a *account) {
	if o.has("email") && !strings.EqualFold(o.str("email"), a.email) {
		o.fail("email", "cannot be changed through the API")
	}
	if id, ok := o.integer("id", 1, 1<<62); ok && id != a.id {
		o.fail("id", "cannot be changed")
	}
}

// parseTaxNumbers reads the tax numbers of an update, without their ids.
func parseTaxNumbers(o object) []wireTaxNumber {
	var taxNumbers []wireTaxNumber
	for _, tn := range o.elements("tax_numbers") {
		tn.required("type")
		tn.required("number")
		taxNumbers = append(taxNumbers, wireTaxNumber{Type: tn.text("type"), Number: tn.text("number")})
	}
	return taxNumbers
}

// updateProfile changes the fields of p that o names, tax numbers aside (they take ids,
// given only once the whole update is valid).
func updateProfile(o object, p *customerProfile) {
	for key, dst := range map[string]*string{"first_name": &p.firstName, "middle_name": &p.middleName, "last_name": &p.lastName, "phone_number": &p.phone} {
		if o.has(key) {
			*dst = o.str(key)
		}
	}
	if o.has("address") {
		p.address = parseAddress(o, "address")
	}
	if o.has("shipping_address") {
		p.shippingAddress = parseAddress(o, "shipping_address")
	}
	if c, ok := o.child("company"); ok {
		updateCompany(c, p)
	}
	if o.has("identification_documents") {
		p.identificationDocuments = parseIdentificationDocuments(o)
	}
	if dob, ok := o.timestamp("date_of_birth"); ok {
		p.dateOfBirth = dob
	}
}

// updateCompany changes the company fields of p that the company object c names.
func updateCompany(c object, p *customerProfile) {
	if c.has("company_name") {
		p.companyName = c.str("company_name")
	}
	if c.has("address") {
		p.companyAddress = parseAddress(c, "address")
	}
}

// parseIdentificationDocuments reads a list of CustomerCountryIdentification.
func parseIdentificationDocuments(o object) []wireIdentificationDocument {
	docs := []wireIdentificationDocument{}
	for _, d := range o.elements("identification_documents") {
		country := strings.ToUpper(d.str("country"))
		if country != "" && !countryPattern.MatchString(country) {
			d.fail("country", "must be an ISO 3166-1 alpha-2 country code such as US")
		}
		docs = append(docs, wireIdentificationDocument{
			Type: d.str("type"), Field: d.str("field"), Value: d.str("value"),
			Country: country, DateRemovedUTC: d.str("date_removed_utc"),
		})
	}
	return docs
}

// createCustomer serves POST /customer: an account for a new e-mail address, created
// without credentials (the person would set a password from an e-mail). An e-mail that
// already has an account answers 403.
func (e *Emulator) createCustomer(req *request) (response, error) {
	o, err := decodeObject(req.body)
	if err != nil {
		return response{}, err
	}
	email := o.email("email")
	if err := o.errs.orNil(); err != nil {
		return response{}, err
	}
	if e.st.accountByEmail(email) != nil {
		return response{}, forbidden("an account already exists for %s; its details can no longer be supplied through the API", email)
	}
	profile := customerProfile{
		firstName: o.str("first_name"), middleName: o.str("middle_name"), lastName: o.str("last_name"),
		phone: o.str("phone_number"), address: parseAddress(o, "address"),
	}
	if o.has("identification_documents") {
		profile.identificationDocuments = parseIdentificationDocuments(o)
	}
	var methods []*wireDisbursementMethod
	for _, m := range o.elements("disbursement_methods") {
		methods = append(methods, parseMethod(m, disbursementTypes(countryOf(profile.address)), "usd"))
	}
	if err := o.errs.orNil(); err != nil {
		return response{}, err
	}
	a := e.st.ensureAccount(email, e.now)
	a.createdBy, a.profile = req.caller.id, profile
	for _, m := range methods {
		m.ID = next(&e.st.ids.method)
		a.methods = append(a.methods, m)
	}
	return success(renderCustomer(a, ownView)), nil
}

// identificationDocuments serves GET /customer/{customer_id}/identification-documents.
func (e *Emulator) identificationDocuments(req *request) (response, error) {
	a, err := e.customerFor(req)
	if err != nil {
		return response{}, err
	}
	docs := a.profile.identificationDocuments
	if docs == nil {
		docs = []wireIdentificationDocument{}
	}
	return success(wireIdentificationDocuments{IdentificationDocuments: docs}), nil
}

func renderKey(k *apiKey, full string) wireAPIKey {
	return wireAPIKey{ID: k.id, Name: k.name, Key: full, DateCreated: formatTime(k.created), IsActive: k.active, LastFourCharacters: k.lastFour}
}

// listAPIKeys serves GET /customer/{customer_id}/api_key: keys by last four characters.
func (e *Emulator) listAPIKeys(req *request) (response, error) {
	a, err := e.customerFor(req)
	if err != nil {
		return response{}, err
	}
	out := wireAPIKeys{APIKeys: []wireAPIKey{}}
	for _, k := range a.keys {
		out.APIKeys = append(out.APIKeys, renderKey(k, ""))
	}
	return success(out), nil
}

// createAPIKey serves POST /customer/{customer_id}/api_key {"name"}, an emulator
// extension (the live API creates keys in the account settings): the answer is the only
// one that holds the full key.
func (e *Emulator) createAPIKey(req *request) (response, error) {
	a, o, err := e.customerInput(req)
	if err != nil {
		return response{}, err
	}
	o.required("name")
	name := o.text("name")
	if len(a.keys) >= maxAPIKeys {
		o.fail("name", fmt.Sprintf("a customer may have at most %d API keys", maxAPIKeys))
	}
	if err := o.errs.orNil(); err != nil {
		return response{}, err
	}
	k, full := e.st.issueKey(a, name, e.now)
	return success(renderKey(k, full)), nil
}

// updateAPIKey serves PATCH /customer/{customer_id}/api_key/{key_id}: name and is_active.
func (e *Emulator) updateAPIKey(req *request) (response, error) {
	a, o, err := e.customerInput(req)
	if err != nil {
		return response{}, err
	}
	id, err := req.id("key_id")
	if err != nil {
		return response{}, err
	}
	i := slices.IndexFunc(a.keys, func(k *apiKey) bool { return k.id == id })
	if i < 0 {
		return response{}, notFound("no API key %d", id)
	}
	name, active := o.text("name"), o.boolean("is_active")
	if err := o.errs.orNil(); err != nil {
		return response{}, err
	}
	k := a.keys[i]
	if o.has("name") {
		k.name = name
	}
	if o.has("is_active") {
		k.active = active
	}
	return success(renderKey(k, "")), nil
}

// listWebhooks serves GET /customer/{customer_id}/webhook.
func (e *Emulator) listWebhooks(req *request) (response, error) {
	a, err := e.customerFor(req)
	if err != nil {
		return response{}, err
	}
	out := wireWebhooks{Webhooks: []wireWebhook{}}
	for _, h := range a.webhooks {
		out.Webhooks = append(out.Webhooks, wireWebhook{ID: h.id, URL: h.url})
	}
	return success(out), nil
}

// createWebhook serves POST /customer/{customer_id}/webhook {"url"}.
func (e *Emulator) createWebhook(req *request) (response, error) {
	a, o, err := e.customerInput(req)
	if err != nil {
		return response{}, err
	}
	o.required("url")
	raw := o.httpURL("url")
	if len(a.webhooks) >= maxWebhooks {
		o.fail("url", fmt.Sprintf("a customer may register at most %d webhooks", maxWebhooks))
	}
	if err := o.errs.orNil(); err != nil {
		return response{}, err
	}
	h := &webhook{id: next(&e.st.ids.webhook), url: raw}
	a.webhooks = append(a.webhooks, h)
	return success(wireWebhook{ID: h.id, URL: h.url}), nil
}

// deleteWebhook serves DELETE /customer/{customer_id}/webhook/{webhook_id}: 204.
func (e *Emulator) deleteWebhook(req *request) (response, error) {
	a, err := e.customerFor(req)
	if err != nil {
		return response{}, err
	}
	id, err := req.id("webhook_id")
	if err != nil {
		return response{}, err
	}
	i := slices.IndexFunc(a.webhooks, func(h *webhook) bool { return h.id == id })
	if i < 0 {
		return response{}, notFound("no webhook %d", id)
	}
	a.webhooks = slices.Delete(a.webhooks, i, i+1)
	return response{status: http.StatusNoContent}, nil
}
