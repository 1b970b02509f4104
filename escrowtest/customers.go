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

// customersOf returns the partner's customers, by id: the parties of the transactions it
// is the partner of, and the customers it created with POST /customer.
func (e *Emulator) customersOf(partner *account) []*account {
	ids := map[int64]bool{}
	for _, tx := range e.st.txOrder {
		if tx.hasRole(partner.id, rolePartner) {
			for _, p := range tx.parties {
				ids[p.account] = true
			}
		}
	}
	var out []*account
	for _, a := range e.st.accounts {
		if a.id != partner.id && (ids[a.id] || a.createdBy == partner.id) {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b *account) int { return int(a.id - b.id) })
	return out
}

// renderCustomer renders a customer; own is true for the customer themself, who also
// sees their webhooks and saved disbursement methods.
func renderCustomer(a *account, own bool) wireCustomer {
	username, _, _ := strings.Cut(a.email, "@")
	display := strings.TrimSpace(a.profile.firstName + " " + a.profile.lastName)
	if display == "" {
		display = username
	}
	status := func(verified bool) wireVerificationState {
		if verified {
			return wireVerificationState{Status: "verified"}
		}
		return wireVerificationState{Status: "not_verified"}
	}
	w := wireCustomer{
		ID: a.id, Email: a.email, FirstName: a.profile.firstName, MiddleName: a.profile.middleName,
		LastName: a.profile.lastName, Username: username, DisplayName: display,
		PhoneNumber: a.profile.phone, Address: a.profile.address, TaxNumbers: []wireTaxNumber{},
		Verification: wireVerification{Personal: status(a.verifiedPersonal), Company: status(a.verifiedCompany)},
	}
	if own {
		w.DisbursementMethods = a.methods
		for _, h := range a.webhooks {
			w.Webhooks = append(w.Webhooks, wireWebhook{ID: h.id, URL: h.url})
		}
	}
	return w
}

// getCustomer serves GET /customer/{customer_id}: the caller, or a customer of the
// partner calling.
func (e *Emulator) getCustomer(req *request) (response, error) {
	a, err := e.customerByRef(req.params["customer_id"], req.caller)
	if err != nil {
		return response{}, err
	}
	if a == req.caller {
		return success(renderCustomer(a, true)), nil
	}
	if req.caller.partner && slices.Contains(e.customersOf(req.caller), a) {
		return success(renderCustomer(a, false)), nil
	}
	return response{}, forbidden("no access to customer %d", a.id)
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
	for _, d := range o.elements("identification_documents") {
		profile.identificationDocuments = append(profile.identificationDocuments, wireIdentificationDocument{
			Type: d.str("type"), Field: d.str("field"), Value: d.str("value"),
			Country: d.str("country"), DateRemovedUTC: d.str("date_removed_utc"),
		})
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
	return success(renderCustomer(a, true)), nil
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
