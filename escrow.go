// Package escrow is a typed client for the escrow transaction API (version 2017-09-01).
//
// A [Client] carries one account's credentials and exposes the API's resources as services,
// in the manner of go-github: [Client.Transactions], [Client.Customers], [Client.Partner] and
// [Client.Webhooks]. Every method takes a [context.Context] first and returns a typed result or
// a typed error.
//
//	client, err := escrow.NewClient("partner@example.com", apiKey, escrow.WithSandbox())
//	if err != nil {
//		return err
//	}
//	tx, err := client.Transactions.Create(ctx, &escrow.CreateTransactionRequest{
//		Currency:    escrow.USD,
//		Description: "1962 Fender Stratocaster",
//		Reference:   "order-1042", // makes Create safe to retry: see below
//		Parties: []escrow.PartyInput{
//			{Role: escrow.RoleBuyer, Customer: escrow.Me},
//			{Role: escrow.RoleSeller, Customer: "seller@example.com"},
//		},
//		Items: []escrow.ItemInput{{
//			Title:            "Stratocaster",
//			Type:             escrow.ItemGeneralMerchandise,
//			InspectionPeriod: escrow.Days(3),
//			Quantity:         1,
//			Schedule: []escrow.ScheduleInput{{
//				Amount:              escrow.MustAmount("9500.00"),
//				PayerCustomer:       escrow.Me,
//				BeneficiaryCustomer: "seller@example.com",
//			}},
//		}},
//	})
//
// # Money and time
//
// Amounts are [Amount] values: exact decimals that travel as JSON numbers on requests and
// are decoded from either numbers or strings, as the live API sends both. [ParseAmount]
// refuses what is not a sum of cents; arithmetic returns Amounts. Timestamps are
// [Timestamp] values that accept every form the API has been seen to send.
//
// # State and totals
//
// The API names no transaction state; [Transaction.State] derives one from the flags every
// reader sees (awaiting agreement, awaiting payment, funded, shipped, in inspection,
// accepted, returning, in dispute, disbursed, complete, cancelled), with the predicates
// [Transaction.AllAgreed], [Transaction.Funded], [Transaction.Completed] and
// [Transaction.Cancelled], and [Transaction.Totals] says what each party pays, receives and
// nets. [Transaction.NextSteps] says who must do what for the transaction to move on
// ("seller@example.com selects a disbursement method"), including the step a
// stalled payout waits on. They are the one place these facts are derived.
//
// # Beyond the typed methods
//
// [Client.Do] sends any request, such as an endpoint this package does not know yet,
// through the same pipeline as every method. [WithResponse] shows a call's status,
// rate-limit headers and request id.
//
// # Errors
//
// A response outside 2xx becomes an [*APIError]; one that carries the API's validation shape
// becomes a [*ValidationError] whose [ValidationError.Fields] name the offending fields
// ("items[0].schedule[1].amount"). Statuses are matched with [errors.Is] against
// [ErrUnauthorized], [ErrForbidden], [ErrNotFound] and [ErrRateLimited]. A request that got no
// answer is a [*TransportError], whose OutcomeUnknown says whether it may have taken effect.
// Credentials never appear in any error, log line or panic.
//
// # Retries and rate limits
//
// The client retries what is safe to retry and nothing else: a 429 always (the request was
// refused, not performed); 5xx answers and network failures only for GET and DELETE; POST
// and PATCH only when the request provably never left the machine (DNS, dial or TLS
// handshake failure). Waits use capped full-jitter backoff, honour Retry-After and
// RateLimit-Reset up to [WithMaxWait], and end at once when the context does. The client
// remembers each endpoint's RateLimit-Remaining and holds calls back instead of spending them
// on a certain 429. [TransactionsService.Create] with a Reference looks the reference up after
// an ambiguous failure, so one reference never yields two transactions.
//
// # Acting for another party
//
// An approved partner passes [AsCustomer] to act for a buyer or seller:
//
//	tx, err := client.Transactions.Agree(ctx, id, escrow.AsCustomer("buyer@example.com"))
//
// # Testing
//
// Package escrowtest is a stateful emulator of the whole API. Point a client at it with
// [WithBaseURL] and [WithHTTPClient] to run real lifecycles without the network.
package escrow

// APIVersion is the date-named interface version this package speaks.
const APIVersion = "2017-09-01"

// Base URLs of the two environments. Both include the version segment and end in "/".
const (
	ProductionURL = "https://api.escrow.com/" + APIVersion + "/"
	SandboxURL    = "https://api.escrow-sandbox.com/" + APIVersion + "/"
)

// Version is the version of this SDK, sent in the User-Agent header.
const Version = "0.1.0"

// The value sets below are open string types: the API says its sets "may be extended", so a
// value this package does not know decodes and round-trips unchanged.

// Currency is the currency of a transaction or disbursement method. Always lowercase.
type Currency string

// Currencies named by the API (the first three) and offered by its clients (GBP, CAD).
// The euro's code on the wire is "euro", not "eur".
const (
	USD Currency = "usd"
	AUD Currency = "aud"
	EUR Currency = "euro"
	GBP Currency = "gbp"
	CAD Currency = "cad"
)

// Role is a party's role in a transaction.
type Role string

// Party roles. The partner role is assigned by the API to the customer who creates the
// transaction; it is never given at creation.
const (
	RoleBuyer   Role = "buyer"
	RoleSeller  Role = "seller"
	RoleBroker  Role = "broker"
	RolePartner Role = "partner"
)

// ItemType is the kind of an item. Only one transferable type may appear per transaction.
type ItemType string

// Item types. The first five are transferable; the fee types are not.
const (
	ItemDomainName         ItemType = "domain_name"
	ItemDomainNameHolding  ItemType = "domain_name_holding"
	ItemGeneralMerchandise ItemType = "general_merchandise"
	ItemMilestone          ItemType = "milestone"
	ItemMotorVehicle       ItemType = "motor_vehicle"
	ItemBrokerFee          ItemType = "broker_fee"
	ItemPartnerFee         ItemType = "partner_fee"
	ItemShippingFee        ItemType = "shipping_fee"
)

// Transferable reports whether items of this type change hands (as opposed to fee items).
func (t ItemType) Transferable() bool {
	switch t {
	case ItemDomainName, ItemDomainNameHolding, ItemGeneralMerchandise, ItemMilestone, ItemMotorVehicle:
		return true
	}
	return false
}

// Category classifies an item. Which categories apply depends on the item type.
type Category string

// Categories of motor_vehicle items.
const (
	CategoryAutomobilesCarsAndTrucks Category = "automobiles_cars_and_trucks"
	CategoryBoats                    Category = "boats"
	CategoryMotorcycles              Category = "motorcycles"
	CategoryAirplanes                Category = "airplanes"
	CategoryOtherMotorVehicles       Category = "other_motor_vehicles"
)

// Categories of general_merchandise, milestone and domain_name (with content) items.
// CategoryAutomobilesCarsAndTrucks also belongs to this list.
const (
	CategoryAdultMaterial               Category = "adult_material"
	CategoryAlcoholAndWine              Category = "alcohol_and_wine"
	CategoryAntiques                    Category = "antiques"
	CategoryAppliances                  Category = "appliances"
	CategoryArtsAndCrafts               Category = "arts_and_crafts"
	CategoryAutomotiveOrIndustrialParts Category = "automotive_or_industrial_parts"
	CategoryBeautyAndHealth             Category = "beauty_and_health"
	CategoryBooksAndMagazines           Category = "books_and_magazines"
	CategoryBusinessAndInternet         Category = "business_and_internet"
	CategoryCigarettesAndTobacco        Category = "cigarettes_and_tobacco"
	CategoryClothingAndAccessories      Category = "clothing_and_accessories"
	CategoryCollectibles                Category = "collectibles"
	CategoryComputerHardwareAndSoftware Category = "computer_hardware_and_software"
	CategoryCosmetics                   Category = "cosmetics"
	CategoryCryptocurrency              Category = "cryptocurrency"
	CategoryFinancialInstruments        Category = "financial_instruments"
	CategoryFineArt                     Category = "fine_art"
	CategoryFurniture                   Category = "furniture"
	CategoryFXAndCurrency               Category = "fx_and_currency"
	CategoryGamblingAndCasinoGames      Category = "gambling_and_casino_games"
	CategoryHeavyEquipmentAndMachinery  Category = "heavy_equipment_and_machinery"
	CategoryHomeAndGarden               Category = "home_and_garden"
	CategoryJewelleryAndWatches         Category = "jewellery_and_watches"
	CategoryMoviesAndMusic              Category = "movies_and_music"
	CategoryOtherMerchandise            Category = "other_merchandise"
	CategoryPharmaceuticals             Category = "phamacuticals" // sic: the API's spelling
	CategorySocialMediaAccounts         Category = "social_media_accounts"
	CategorySportsAndRecreation         Category = "sports_and_recreation"
	CategoryTicketsAndEvents            Category = "tickets_and_events"
	CategoryToolsAndHardware            Category = "tools_and_hardware"
	CategoryToysAndHobbies              Category = "toys_and_hobbies"
	CategoryVideoGamesAndConsoles       Category = "video_games_and_consoles"
	CategoryWeaponsAndFirearms          Category = "weapons_and_firearms"
)

// FeeType is the kind of a fee entry on an item.
type FeeType string

// Fee types.
const (
	FeeEscrow             FeeType = "escrow"
	FeeChequeDisbursement FeeType = "cheque_disbursement"
	FeeWireDisbursement   FeeType = "wire_disbursement"
	FeePaypalDeposit      FeeType = "paypal_deposit"
	FeeCreditCardDeposit  FeeType = "creditcard_deposit"
)

// Action is a state change requested with PATCH on a transaction or an item.
type Action string

// Actions the API accepts. The spec lists the first seven; the live API also takes accept,
// accept_return and cancel.
const (
	ActionAgree         Action = "agree"
	ActionShip          Action = "ship"
	ActionReceive       Action = "receive"
	ActionReject        Action = "reject"
	ActionShipReturn    Action = "ship_return"
	ActionReceiveReturn Action = "receive_return"
	ActionRejectReturn  Action = "reject_return"
	ActionAccept        Action = "accept"
	ActionAcceptReturn  Action = "accept_return"
	ActionCancel        Action = "cancel"
)

// EventName names what happened in a webhook delivery.
type EventName string

// Events of the spec's table, then those seen on the live API beyond it.
const (
	EventCreate          EventName = "create"
	EventAgree           EventName = "agree"
	EventPaymentApproved EventName = "payment_approved"
	EventPaymentRejected EventName = "payment_rejected"
	EventShip            EventName = "ship"
	EventReceive         EventName = "receive"
	EventAccept          EventName = "accept"
	EventReject          EventName = "reject"
	EventShipReturn      EventName = "ship_return"
	EventReceiveReturn   EventName = "receive_return"
	EventAcceptReturn    EventName = "accept_return"
	EventRejectReturn    EventName = "reject_return"
	EventComplete        EventName = "complete"
	EventCancel          EventName = "cancel"

	EventPaymentSent                EventName = "payment_sent"
	EventPaymentReceived            EventName = "payment_received"
	EventPaymentRefunded            EventName = "payment_refunded"
	EventPaymentDisbursed           EventName = "payment_disbursed"
	EventPartyVerificationSubmitted EventName = "party_verification_submitted"
	EventPartyVerificationApproved  EventName = "party_verification_approved"
	EventPartyVerificationRejected  EventName = "party_verification_rejected"
	EventOfferAccepted              EventName = "offer_accepted"
	EventRefundResolved             EventName = "refund_resolved"
	EventRefundRejected             EventName = "refund_rejected"
)

// EventType is the kind of object an event is about.
type EventType string

// EventTypeTransaction is the only event type the API names.
const EventTypeTransaction EventType = "transaction"

// DisbursementMethodType is how the seller or broker is paid out. It determines the fee.
type DisbursementMethodType string

// Disbursement method types seen on the API.
const (
	DisbursementACH                       DisbursementMethodType = "ach"
	DisbursementWire                      DisbursementMethodType = "wire"
	DisbursementWireTransfer              DisbursementMethodType = "wire_transfer"
	DisbursementWireTransferInternational DisbursementMethodType = "wire_transfer_international"
)

// PaymentMethodType is how the buyer funds a transaction.
type PaymentMethodType string

// Payment method types seen on the API.
const (
	PaymentCreditCard                PaymentMethodType = "credit_card"
	PaymentPaypal                    PaymentMethodType = "paypal"
	PaymentWireTransfer              PaymentMethodType = "wire_transfer"
	PaymentPoli                      PaymentMethodType = "poli"
	PaymentInternationalWireTransfer PaymentMethodType = "international_wire_transfer"
)

// AuthorizationType is how a domain name is handed over when it ships.
type AuthorizationType string

// Domain authorization types.
const (
	AuthorizationPush             AuthorizationType = "push"
	AuthorizationCode             AuthorizationType = "authorization_code"
	AuthorizationUsernamePassword AuthorizationType = "username_password"
)

// VerificationStatus is the state of a customer's identity or company verification.
type VerificationStatus string

// Verification statuses seen on the API. VerificationCompanyVerified is a filter value of
// the partner customer listing.
const (
	VerificationVerified        VerificationStatus = "verified"
	VerificationNotVerified     VerificationStatus = "not_verified"
	VerificationNotRequired     VerificationStatus = "not_required"
	VerificationPending         VerificationStatus = "pending"
	VerificationCompanyVerified VerificationStatus = "company_verified"
)

// SortField is what a listing is sorted by.
type SortField string

// SortByID is the only sort field the API names.
const SortByID SortField = "id"

// SortDirection orders listings.
type SortDirection string

// Sort directions.
const (
	SortAsc  SortDirection = "asc"
	SortDesc SortDirection = "desc"
)

// TransactionStatus filters the partner transaction listing.
type TransactionStatus string

// Partner listing status filters.
const (
	StatusOngoing   TransactionStatus = "ongoing"
	StatusCompleted TransactionStatus = "completed"
)

// ClearingSystemCode identifies a national bank clearing system on a disbursement method.
type ClearingSystemCode string

// Clearing system codes named by the API.
const (
	ClearingATBLZ ClearingSystemCode = "ATBLZ"
	ClearingAUBSB ClearingSystemCode = "AUBSB"
	ClearingBRSTN ClearingSystemCode = "BRSTN"
	ClearingCACPA ClearingSystemCode = "CACPA"
	ClearingCHBCC ClearingSystemCode = "CHBCC"
	ClearingDEBLZ ClearingSystemCode = "DEBLZ"
	ClearingESNCC ClearingSystemCode = "ESNCC"
	ClearingGBDSC ClearingSystemCode = "GBDSC"
	ClearingINFSC ClearingSystemCode = "INFSC"
	ClearingITNCC ClearingSystemCode = "ITNCC"
	ClearingNZNCC ClearingSystemCode = "NZNCC"
	ClearingUSABA ClearingSystemCode = "USABA"
)
