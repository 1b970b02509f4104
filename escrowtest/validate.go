package escrowtest

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Values the spec names (part 2). Currencies are lowercase: the live API refuses "USD".
var (
	currencies = []string{"aud", "cad", "euro", "gbp", "usd"}
	feeTypes   = []string{"cheque_disbursement", "creditcard_deposit", feeEscrow, "paypal_deposit", "wire_disbursement"}
	// feePayerRole is who must pay each non-escrow fee type (fee rule 4).
	feePayerRole = map[string]string{
		"paypal_deposit": roleBuyer, "creditcard_deposit": roleBuyer,
		"cheque_disbursement": roleSeller, "wire_disbursement": roleSeller,
	}
	motorVehicleCategories = []string{
		"airplanes", "automobiles_cars_and_trucks", "boats", "motorcycles", "other_motor_vehicles",
	}
	merchandiseCategories = []string{
		"adult_material", "alcohol_and_wine", "antiques", "appliances", "arts_and_crafts",
		"automobiles_cars_and_trucks", "automotive_or_industrial_parts", "beauty_and_health",
		"books_and_magazines", "business_and_internet", "cigarettes_and_tobacco",
		"clothing_and_accessories", "collectibles", "computer_hardware_and_software", "cosmetics",
		"cryptocurrency", "financial_instruments", "fine_art", "furniture", "fx_and_currency",
		"gambling_and_casino_games", "heavy_equipment_and_machinery", "home_and_garden",
		"jewellery_and_watches", "movies_and_music", "other_merchandise", "phamacuticals",
		"social_media_accounts", "sports_and_recreation", "tickets_and_events",
		"tools_and_hardware", "toys_and_hobbies", "video_games_and_consoles", "weapons_and_firearms",
	}
	// generalMerchandiseCategories are the spec's list less business_and_internet, which
	// the live API refused on a general_merchandise item (422, "This is not a valid
	// category for a general_merchandise item") though the docs list it; domain names with
	// content and milestones keep it, as nothing shows it refused there.
	generalMerchandiseCategories = slices.DeleteFunc(slices.Clone(merchandiseCategories), func(c string) bool {
		return c == "business_and_internet"
	})
)

// itemTypeRule is everything the emulator knows about one item type (spec part 2,
// "Item-type rules" and the fields' notes); every rule on items reads its row of
// itemTypeRules rather than naming types.
type itemTypeRule struct {
	name string
	// transferable: the goods of a transaction (spec part 2); one transferable type per
	// transaction; ship, receive and the rest act on them.
	transferable bool
	// schedules: several schedule entries, each with a required due_date; other types
	// take one entry and no due_date.
	schedules bool
	// categories allowed; none when empty. withContent: only with
	// extra_attributes.with_content (domain names with content).
	categories  []string
	withContent bool
	// payers may pay the item, and beneficiary receives it (roles).
	payers      []string
	beneficiary string
	// escrowFee: the item pays an escrow fee and takes fee entries.
	escrowFee bool
	// feeSurchargePercent is added to the tier rate (see fees.go).
	feeSurchargePercent int64
	// only lists the fields of its creation shape, when it is restricted (broker_fee).
	only []string
	// visibility: the item takes a visibility object.
	visibility bool
	// partnerOnly: only approved partners may add it.
	partnerOnly bool
	// domain: ship and ship_return need shipping_information.authorization_type.
	domain bool
	// perItem: transactions of this type act one item at a time, and their items may
	// have different inspection periods.
	perItem bool
	// attributes are the extra_attributes only this type takes; required those it needs.
	attributes, required []string
}

// itemTypeRules is the table of item types, in the spec's order.
var itemTypeRules = []itemTypeRule{
	{name: itemDomainName, transferable: true, categories: merchandiseCategories, withContent: true,
		payers: []string{roleBuyer}, beneficiary: roleSeller, escrowFee: true, domain: true, attributes: []string{"with_content"}},
	{name: itemDomainNameHolding, transferable: true, schedules: true,
		payers: []string{roleBuyer}, beneficiary: roleSeller, escrowFee: true, domain: true},
	{name: itemGeneralMerchandise, transferable: true, categories: generalMerchandiseCategories,
		payers: []string{roleBuyer}, beneficiary: roleSeller, escrowFee: true},
	{name: itemMilestone, transferable: true, schedules: true, categories: merchandiseCategories,
		payers: []string{roleBuyer}, beneficiary: roleSeller, escrowFee: true, feeSurchargePercent: milestoneSurchargePercent, perItem: true},
	{name: itemMotorVehicle, transferable: true, categories: motorVehicleCategories,
		payers: []string{roleBuyer}, beneficiary: roleSeller, escrowFee: true,
		attributes: []string{"vin", "odometer", "year", "make", "model", "title_collection", "lien_holder_payoff"}, required: []string{"year"}},
	{name: itemBrokerFee, payers: []string{roleBuyer, roleSeller}, beneficiary: roleBroker, visibility: true,
		only: []string{"type", "visibility", "schedule"}},
	{name: itemPartnerFee, payers: []string{roleBuyer, roleSeller}, beneficiary: rolePartner, partnerOnly: true},
	{name: itemShippingFee, payers: []string{roleBuyer}, beneficiary: roleSeller, escrowFee: true},
}

// itemTypes are the item type names.
var itemTypes = func() []string {
	var names []string
	for _, r := range itemTypeRules {
		names = append(names, r.name)
	}
	return names
}()

// itemRule returns the row of an item type; the zero rule (nothing allowed) for an
// unknown or missing type, whose error is reported on "type".
func itemRule(typ string) itemTypeRule {
	for _, r := range itemTypeRules {
		if r.name == typ {
			return r
		}
	}
	return itemTypeRule{}
}

// Limits of the emulator where the spec gives none (see the package comment).
const (
	day                     = 24 * 60 * 60 // seconds
	defaultInspectionPeriod = 3 * day
	maxInspectionPeriod     = 365 * day
	maxItems                = 100
	maxScheduleEntries      = 100
	maxQuantity             = 1_000_000
)

// draft is a transaction creation body that passed validation. Customers are lowercase
// e-mail addresses, "me" already replaced by the creator's.
type draft struct {
	currency, description, reference string
	parties                          []draftParty
	items                            []draftItem
}

type draftParty struct {
	role, email string
	hiddenFrom  []string
}

type draftItem struct {
	title, description, typ, category string
	inspection, quantity              int64
	extra                             extraAttributes
	schedule                          []draftSchedule
	fees                              []draftFee
	hiddenFrom                        []string
	hasVisibility                     bool
}

type draftSchedule struct {
	amount             cents
	payer, beneficiary string
	due                time.Time
}

type draftFee struct {
	typ, payer string
	halves     int
}

// creation validates a transaction creation body (spec parts 1, 2 and 7 and the API
// notes), reporting every failing field in errs at its path.
type creation struct {
	creator *account
	errs    fieldErrors
	roles   map[string]string // party e-mail → role, for valid parties
	hidden  map[string]bool   // e-mails some party is hidden from
	// listed holds every e-mail a party entry names, valid or not: references to a
	// party whose entry failed are not reported again.
	listed map[string]bool
}

// hasRole reports whether a valid party holds role.
func (c *creation) hasRole(role string) bool {
	for _, r := range c.roles {
		if r == role {
			return true
		}
	}
	return false
}

// parseCreation validates a creation body and returns the draft; the draft is usable
// only when o.errs stays empty.
func parseCreation(o object, creator *account, minimumFee cents) draft {
	c := &creation{creator: creator, errs: o.errs, roles: map[string]string{}, hidden: map[string]bool{}, listed: map[string]bool{}}
	d := draft{reference: o.str("reference")}
	if o.required("currency") {
		d.currency = o.str("currency")
		if d.currency != "" && !slices.Contains(currencies, d.currency) {
			o.fail("currency", fmt.Sprintf("%q is not a supported currency: use one of %s, in lowercase", d.currency, strings.Join(currencies, ", ")))
		}
	}
	o.required("description")
	d.description = o.text("description")
	d.parties = c.parties(o)
	d.items = c.items(o)
	if len(c.errs) == 0 {
		c.minimumEscrowFee(d, minimumFee)
	}
	return d
}

// defaultMinimumEscrowFee is the smallest escrow fee a transaction may carry unless
// WithMinimumEscrowFee says otherwise; the package comment gives the figure's sources.
const defaultMinimumEscrowFee cents = 25_00

// minimumEscrowFee refuses a transaction whose buyer pays less than its escrow fee, or
// than the minimum fee, as the live API refused a 15.00 sale: the fee would eat the sale.
func (c *creation) minimumEscrowFee(d draft, minimum cents) {
	var buyer string
	for _, p := range d.parties {
		if p.role == roleBuyer {
			buyer = p.email
		}
	}
	var pays, fee cents
	for _, it := range d.items {
		var amount cents
		for _, s := range it.schedule {
			amount += s.amount
			if s.payer == buyer {
				pays += s.amount
			}
		}
		if itemRule(it.typ).escrowFee {
			fee += escrowFee(amount, it.typ)
		}
	}
	if least := max(fee, minimum); pays < least {
		// The live API's words first, whole, as clients match them; then the figures.
		c.errs.add(fmt.Sprintf("The amount paid by the buyer must be at least the amount of the escrow fee: the buyer pays %s, the escrow fee is %s", pays, least), "items", "all")
	}
}

// customer resolves a customer reference: "me" is the creator.
func (c *creation) customer(ref string) string {
	if ref == "me" {
		return c.creator.email
	}
	return strings.ToLower(ref)
}

func (c *creation) parties(o object) []draftParty {
	if _, isList := o.fields["parties"].([]any); !isList {
		// Without a list of parties every reference to one would fail too: say it once.
		o.required("parties")
		o.list("parties")
		c.listed = nil
		return nil
	}
	var parties []draftParty
	for _, po := range o.elements("parties") {
		parties = append(parties, c.party(po))
	}
	c.requireBuyerAndSeller(parties)
	for i, p := range parties {
		c.visibility(i, p)
	}
	return parties
}

// party validates one party entry, and notes the role of a valid one.
func (c *creation) party(po object) draftParty {
	po.flat = true // the spec reports parties as a list of messages per index
	p := draftParty{role: c.partyRole(po), email: c.partyCustomer(po)}
	if vis, ok := po.child("visibility"); ok {
		for _, ref := range vis.stringList("hidden_from") {
			p.hiddenFrom = append(p.hiddenFrom, c.customer(ref))
		}
	}
	if p.role != "" && p.email != "" {
		c.roles[p.email] = p.role
	}
	return p
}

// requireBuyerAndSeller reports a buyer or a seller missing from the parties.
func (c *creation) requireBuyerAndSeller(parties []draftParty) {
	for _, role := range []string{roleBuyer, roleSeller} {
		// A party entry that claims the role and was refused for its address has its own
		// error; the missing role follows from it and is not reported beside it.
		claimed := slices.ContainsFunc(parties, func(p draftParty) bool { return p.role == role })
		if !c.hasRole(role) && !claimed {
			c.errs.add(fmt.Sprintf("a transaction must have exactly one %s", role), "parties", "all")
		}
	}
}

// partyRole validates a party's role; it is "" when the role is refused.
func (c *creation) partyRole(po object) string {
	role := po.str("role")
	switch {
	case !po.required("role") || role == "":
	case role == rolePartner:
		po.fail("role", "the partner is the customer who creates the transaction and is not listed")
	case !slices.Contains([]string{roleBuyer, roleSeller, roleBroker}, role):
		po.fail("role", "must be one of buyer, seller, broker")
	case c.hasRole(role):
		po.failSelf(fmt.Sprintf("a transaction has at most one %s", role))
	default:
		return role
	}
	return ""
}

// partyCustomer validates a party's customer reference and returns its e-mail address, ""
// when the reference is refused.
func (c *creation) partyCustomer(po object) string {
	ref := po.str("customer")
	if !po.required("customer") || ref == "" {
		return ""
	}
	email := c.customer(ref)
	c.listed[email] = true
	switch {
	case ref != "me" && !validEmail(ref):
		po.fail("customer", fmt.Sprintf("%q is not an e-mail address or \"me\"", ref))
	case c.roles[email] != "":
		po.fail("customer", fmt.Sprintf("%s is already the %s", ref, c.roles[email]))
	default:
		return email
	}
	return ""
}

// visibility checks the parties the i-th party hides from, once every party is known.
func (c *creation) visibility(i int, p draftParty) {
	if p.hiddenFrom == nil {
		return
	}
	if !c.hasRole(roleBroker) {
		c.errs.add("visibility: is allowed only in a transaction with a broker", "parties", index(i))
	}
	for _, h := range p.hiddenFrom {
		if (c.roles[h] == "" && !c.partyFailed(h)) || h == p.email {
			c.errs.add(fmt.Sprintf("visibility: %s is not another party of the transaction", h), "parties", index(i))
		}
		c.hidden[h] = true
	}
}

func (c *creation) items(o object) []draftItem {
	if !o.required("items") {
		return nil
	}
	objs := o.elements("items")
	if len(objs) > maxItems {
		o.fail("items", fmt.Sprintf("must hold at most %d items", maxItems))
		return nil
	}
	var items []draftItem
	for _, io := range objs {
		items = append(items, c.item(io))
	}
	c.crossItemRules(items)
	return items
}

// item validates one item on its own; crossItemRules compares items with each other.
func (c *creation) item(o object) draftItem {
	it := draftItem{typ: o.str("type"), title: o.str("title"), description: o.str("description"), quantity: 1}
	if o.required("type") && it.typ != "" && !slices.Contains(itemTypes, it.typ) {
		o.fail("type", "must be one of "+strings.Join(itemTypes, ", "))
		it.typ = ""
	}
	rule := itemRule(it.typ)
	onlyFields(o, rule, it.typ)
	if q, ok := o.integer("quantity", 1, maxQuantity); ok {
		it.quantity = q
	}
	it.extra = c.extraAttributes(o, it.typ)
	it.category = c.category(o, it.typ, it.extra.withContent)
	it.inspection = c.inspectionPeriod(o, it.typ)
	it.schedule = c.schedule(o, it.typ)
	it.fees = c.fees(o, it.typ)
	it.hasVisibility, it.hiddenFrom = c.itemVisibility(o, rule)
	if rule.partnerOnly && !c.creator.partner {
		o.fail("type", it.typ+" items may be added by approved partners only")
	}
	return it
}

// onlyFields refuses the fields an item type does not take: the creation shape of a
// broker fee is only type, visibility and schedule.
func onlyFields(o object, rule itemTypeRule, typ string) {
	if rule.only == nil {
		return
	}
	for _, key := range []string{"title", "description", "category", "inspection_period", "quantity", "fees", "extra_attributes"} {
		if o.has(key) && !slices.Contains(rule.only, key) {
			o.fail(key, "is not allowed on "+typ+" items")
		}
	}
}

// itemVisibility reads an item's visibility: whether it has one, and whom it hides from.
func (c *creation) itemVisibility(o object, rule itemTypeRule) (has bool, hiddenFrom []string) {
	vis, ok := o.child("visibility")
	if !ok {
		return false, nil
	}
	if !rule.visibility {
		o.fail("visibility", "is allowed on broker_fee items only")
	}
	for _, ref := range vis.stringList("hidden_from") {
		hiddenFrom = append(hiddenFrom, c.customer(ref))
	}
	return true, hiddenFrom
}

func (c *creation) category(o object, typ string, withContent bool) string {
	cat := o.str("category")
	if cat == "" || typ == "" {
		return ""
	}
	rule := itemRule(typ)
	allowed := rule.categories
	switch {
	case allowed == nil:
		o.fail("category", fmt.Sprintf("is not allowed on %s items", typ))
		return ""
	case rule.withContent && !withContent:
		o.fail("category", fmt.Sprintf("applies to %s items only with extra_attributes.with_content", typ))
		return ""
	}
	if !slices.Contains(allowed, cat) {
		// The live API's own words (see the package comment, "Categories").
		o.fail("category", fmt.Sprintf("This is not a valid category for a %s item", typ))
		return ""
	}
	return cat
}

func (c *creation) inspectionPeriod(o object, typ string) int64 {
	p, ok := o.integer("inspection_period", day, maxInspectionPeriod)
	switch {
	case ok && p%day != 0:
		o.fail("inspection_period", "must be a whole number of days, in seconds (a multiple of 86400)")
	case ok:
		return p
	}
	if itemRule(typ).transferable {
		return defaultInspectionPeriod
	}
	return 0
}

func (c *creation) extraAttributes(o object, typ string) extraAttributes {
	eo, ok := o.child("extra_attributes")
	if !ok {
		eo = object{errs: c.errs, path: append(slices.Clone(o.path), "extra_attributes")}
	}
	rule := itemRule(typ)
	x := readAttributes(eo, rule)
	for _, key := range rule.required {
		if !eo.has(key) {
			eo.fail(key, "is required for "+typ+" items")
		}
	}
	return x
}

// readAttributes reads the extra attributes an item of the rule's type takes, reporting
// those it does not.
func readAttributes(eo object, rule itemTypeRule) extraAttributes {
	var x extraAttributes
	onlyOn := func(key string) bool { return takesAttribute(eo, rule, key) }
	if onlyOn("with_content") {
		x.withContent = eo.looseBoolean("with_content")
	}
	eo.looseBoolean("concierge") // accepted, and always returned as false
	for key, dst := range map[string]*string{"vin": &x.vin, "odometer": &x.odometer, "make": &x.make, "model": &x.model} {
		if onlyOn(key) {
			*dst = eo.str(key)
		}
	}
	for key, dst := range map[string]*bool{"title_collection": &x.titleCollection, "lien_holder_payoff": &x.lienHolderPayoff} {
		if onlyOn(key) {
			*dst = eo.looseBoolean(key)
		}
	}
	if onlyOn("year") {
		x.year, _ = eo.integer("year", 1886, 2100)
	}
	return x
}

// takesAttribute reports whether an item of the rule's type takes the extra attribute,
// reporting it in eo when not.
func takesAttribute(eo object, rule itemTypeRule, key string) bool {
	if slices.Contains(rule.attributes, key) {
		return true
	}
	if eo.has(key) {
		for _, r := range itemTypeRules {
			if slices.Contains(r.attributes, key) {
				eo.fail(key, "applies to "+r.name+" items only")
			}
		}
	}
	return false
}

// scheduleEntry validates one schedule entry; multi says the item takes several, with
// due dates.
func (c *creation) scheduleEntry(so object, multi bool, payers []string, beneficiary string) draftSchedule {
	s := draftSchedule{}
	if so.required("amount") {
		s.amount, _ = so.amount("amount")
	}
	s.payer = c.partyRef(so, "payer_customer", payers...)
	s.beneficiary = c.partyRef(so, "beneficiary_customer", beneficiary)
	switch {
	case multi && so.required("due_date"):
		s.due, _ = so.timestamp("due_date")
	case !multi && so.has("due_date"):
		so.fail("due_date", "is allowed on milestone and domain_name_holding items only")
	}
	return s
}

func (c *creation) schedule(o object, typ string) []draftSchedule {
	if !o.required("schedule") {
		return nil
	}
	if o.isEmptyList("schedule") {
		o.fail("schedule", "must hold at least one entry")
	}
	entries := o.elements("schedule")
	multi := itemRule(typ).schedules
	if len(entries) > 1 && !multi {
		c.errs.add("only milestone and domain_name_holding items may have several schedule entries", append(slices.Clone(o.path), "schedule", "all")...)
	}
	if len(entries) > maxScheduleEntries {
		c.errs.add(fmt.Sprintf("must hold at most %d entries", maxScheduleEntries), append(slices.Clone(o.path), "schedule", "all")...)
		return nil
	}
	payers, beneficiary := scheduleRoles(typ)
	var out []draftSchedule
	var total cents
	for _, so := range entries {
		s := c.scheduleEntry(so, multi, payers, beneficiary)
		total += s.amount
		out = append(out, s)
	}
	if total > maxAmount {
		c.errs.add(fmt.Sprintf("the schedule must total at most %s", maxAmount), append(slices.Clone(o.path), "schedule", "all")...)
	}
	return out
}

// partyFailed reports whether a reference names a party whose entry was reported, or
// whether there were no parties to refer to.
func (c *creation) partyFailed(email string) bool {
	return c.listed == nil || c.listed[email] && c.roles[email] == ""
}

// scheduleRoles says who pays for and who receives each kind of item.
func scheduleRoles(typ string) (payers []string, beneficiary string) {
	r := itemRule(typ)
	if r.name == "" {
		return []string{roleBuyer}, roleSeller // an invalid type, already reported
	}
	return r.payers, r.beneficiary
}

// partyRef reads a customer reference that must name a party holding one of roles; the
// partner role is the creator's.
func (c *creation) partyRef(o object, key string, roles ...string) string {
	ref := o.str(key)
	if !o.required(key) || ref == "" {
		return ""
	}
	email := c.customer(ref)
	role := c.refRole(email, roles)
	switch {
	case role == "" && c.partyFailed(email):
	case role == "":
		o.fail(key, fmt.Sprintf("%s is not a party of the transaction", ref))
	case !slices.Contains(roles, role):
		o.fail(key, fmt.Sprintf("must be the %s, not the %s", strings.Join(roles, " or the "), role))
	default:
		return email
	}
	return ""
}

// refRole is the role of the party an e-mail address names, "" when none; the creator is
// the partner when roles take one.
func (c *creation) refRole(email string, roles []string) string {
	if slices.Contains(roles, rolePartner) && email == c.creator.email {
		return rolePartner
	}
	return c.roles[email]
}

// fee validates one fee entry; an escrow fee's halves are its share in halves (2 when
// unsplit, 0 when its split was refused).
func (c *creation) fee(fo object) draftFee {
	f := draftFee{typ: fo.oneOf("type", feeTypes...)}
	fo.required("type")
	if fo.has("amount") {
		fo.fail("amount", "must not be given at creation: the service computes it")
	}
	f.payer = c.feePayer(fo, f.typ)
	switch {
	case f.typ == feeEscrow:
		f.halves = 2
		if fo.has("split") {
			f.halves = c.split(fo)
		}
	case fo.has("split"):
		fo.fail("split", "applies to escrow fees only")
	}
	return f
}

// feesAllowed reports whether an item of the type takes fee entries, reporting them when
// not.
func feesAllowed(o object, typ string) bool {
	rule := itemRule(typ)
	if typ == "" || rule.escrowFee {
		return true
	}
	if rule.only == nil { // a restricted creation shape has reported it already
		o.fail("fees", "is not allowed on "+typ+" items")
	}
	return false
}

func (c *creation) fees(o object, typ string) []draftFee {
	if !o.has("fees") {
		return nil
	}
	if !feesAllowed(o, typ) {
		return nil
	}
	var fees []draftFee
	for _, fo := range o.elements("fees") {
		fees = append(fees, c.fee(fo))
	}
	if halves, ok := escrowHalves(fees); len(fees) > 0 && ok && halves != 2 {
		c.errs.add("the splits of the escrow fee must sum to 1.0", append(slices.Clone(o.path), "fees", "all")...)
	}
	return fees
}

// escrowHalves sums the shares of the escrow fee entries, in halves; ok is false when a
// split was refused, which is reported already.
func escrowHalves(fees []draftFee) (halves int, ok bool) {
	for _, f := range fees {
		if f.typ != feeEscrow {
			continue
		}
		if f.halves == 0 {
			return 0, false
		}
		halves += f.halves
	}
	return halves, true
}

// split reads an escrow fee split: 0.5 or 1, as a number or a string. It returns halves.
func (c *creation) split(o object) int {
	switch v, _ := o.amount("split"); v {
	case 50:
		return 1
	case 100:
		return 2
	}
	o.fail("split", "must be 0.5 or 1")
	return 0
}

// noPartyPays reports a fee payer that is no party, unless its party entry was refused
// already.
func (c *creation) noPartyPays(o object, ref, email, typ string) {
	switch {
	case c.partyFailed(email):
	case email == c.creator.email && typ == feeEscrow:
		o.fail("payer_customer", "a partner cannot pay the escrow fee")
	default:
		o.fail("payer_customer", fmt.Sprintf("%s is not a party of the transaction", ref))
	}
}

func (c *creation) feePayer(o object, typ string) string {
	ref := o.str("payer_customer")
	if !o.required("payer_customer") || ref == "" {
		return ""
	}
	email := c.customer(ref)
	role := c.roles[email]
	switch {
	case role == "":
		c.noPartyPays(o, ref, email, typ)
	case feePayerRole[typ] != "" && feePayerRole[typ] != role:
		o.fail("payer_customer", fmt.Sprintf("%s fees are paid by the %s", typ, feePayerRole[typ]))
	default:
		return email
	}
	return ""
}

// crossItemRules applies the rules that compare items with each other and with the
// parties; each failure is reported on the item that breaks it.
func (c *creation) crossItemRules(items []draftItem) {
	var agreed itemAgreement
	for i := range items {
		c.sameGoods(&agreed, i, items[i])
		if itemRule(items[i].typ).visibility {
			c.brokerFeeRules(&agreed, i, &items[i])
		}
	}
	if agreed.goodsType == "" {
		c.errs.add("a transaction needs an item of type domain_name, domain_name_holding, general_merchandise, milestone or motor_vehicle", "items", "all")
	}
}

// itemAgreement is what the items of one transaction must agree on, as the first item
// that states it says.
type itemAgreement struct {
	goodsType  string
	inspection int64
	fees       []draftFee
	feesSeen   bool
	brokerVis  *draftItem
}

// itemErr reports msg about the i-th item, at path under it.
func (c *creation) itemErr(i int, msg string, path ...string) {
	c.errs.add(msg, append([]string{"items", index(i)}, path...)...)
}

// sameGoods checks that a transferable item agrees with the others on the goods' type,
// inspection period and fee schedule.
func (c *creation) sameGoods(a *itemAgreement, i int, it draftItem) {
	if !transferable(it.typ) {
		return
	}
	switch {
	case a.goodsType == "":
		a.goodsType = it.typ
	case it.typ != a.goodsType:
		c.itemErr(i, fmt.Sprintf("%s items cannot be mixed with %s items: one transferable item type per transaction", it.typ, a.goodsType), "type")
	}
	if !itemRule(it.typ).perItem {
		c.sameInspection(a, i, it)
	}
	c.sameFees(a, i, it)
}

// sameInspection checks that an item's inspection period is the other goods'.
func (c *creation) sameInspection(a *itemAgreement, i int, it draftItem) {
	switch {
	case a.inspection == 0:
		a.inspection = it.inspection
	case it.inspection != a.inspection:
		c.itemErr(i, fmt.Sprintf("must match the other items' inspection period (%d)", a.inspection), "inspection_period")
	}
}

// sameFees checks that an item's fee schedule is the other goods'. Fee rule 3 is about the
// goods: the provider's e-commerce plugins put fee entries on the goods and none on the
// shipping_fee item, and the live API accepts that.
func (c *creation) sameFees(a *itemAgreement, i int, it draftItem) {
	switch {
	case !a.feesSeen:
		a.fees, a.feesSeen = it.fees, true
	case !slices.Equal(it.fees, a.fees):
		c.itemErr(i, "the fee schedule must be the same on every item", "fees", "all")
	}
}

// brokerFeeRules checks a broker_fee item: a broker party, one visibility for every such
// item, and a visibility the parties' own agrees with.
func (c *creation) brokerFeeRules(a *itemAgreement, i int, it *draftItem) {
	if !c.hasRole(roleBroker) {
		c.itemErr(i, "a broker_fee item needs a broker party", "type")
	}
	if a.brokerVis == nil {
		a.brokerVis = it
	} else if !sameSet(it.hiddenFrom, a.brokerVis.hiddenFrom) || it.hasVisibility != a.brokerVis.hasVisibility {
		c.itemErr(i, "every broker_fee item must carry the same visibility", "visibility")
	}
	for _, h := range it.hiddenFrom {
		if !c.hidden[h] {
			c.itemErr(i, fmt.Sprintf("%s must also be hidden in a party's visibility", h), "visibility")
		}
		// A fee concealed from the one who pays it would be taken from them unseen,
		// and their disbursement totals could not add up.
		if slices.ContainsFunc(it.schedule, func(s draftSchedule) bool { return s.payer == h }) {
			c.itemErr(i, fmt.Sprintf("%s pays this broker fee and cannot be hidden from it", h), "visibility")
		}
	}
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
