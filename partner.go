package escrow

// PartnerService holds the endpoints only approved partners may call (spec part 4,
// "Partner endpoints").
type PartnerService service
