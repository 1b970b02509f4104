package escrowtest

// feeTier says that an item whose amount is at most upTo pays ratePPM parts per million of
// its whole amount as escrow fee (a flat rate for the tier, not a marginal one).
type feeTier struct {
	upTo    cents
	ratePPM int64
}

// feeTiers is the emulator's escrow fee table; the package comment explains it. It
// reproduces the three fees observed on the live API: 1000.00 → 32.50 (3.25 %),
// 95000.00 → 845.50 (0.89 %) and, with the milestone surcharge, 500.00 → 17.88.
var feeTiers = []feeTier{
	{upTo: 5_000_00, ratePPM: 32_500},    // 3.25 %
	{upTo: 50_000_00, ratePPM: 16_000},   // 1.60 %
	{upTo: 1_000_000_00, ratePPM: 8_900}, // 0.89 %
	{upTo: maxAmount, ratePPM: 6_000},    // 0.60 %
}

// milestoneSurchargePercent is added to the tier rate of milestone items, which the
// provider administers one milestone at a time.
const milestoneSurchargePercent = 10

// escrowFee returns the whole escrow fee of one item of the given type and amount (the sum
// of its schedule, at most maxAmount). A tier never charges less than the top of the tier below, so a larger
// amount never costs a smaller fee. Fee-free item types are filtered out by the caller.
func escrowFee(amount cents, itemType string) cents {
	surcharge := 100 + itemRule(itemType).feeSurchargePercent
	rate := func(c cents, ppm int64) cents { return applyRate(c, ppm*surcharge, 1_000_000*100) }
	var floor cents
	for _, t := range feeTiers {
		if amount <= t.upTo {
			return max(rate(amount, t.ratePPM), floor)
		}
		floor = rate(t.upTo, t.ratePPM)
	}
	return floor
}

// splitFee shares a fee between payers by halves (2 = the whole fee, 1 = half). The first
// payer takes the odd cent, so the shares always add up to the fee.
func splitFee(fee cents, halves []int) []cents {
	shares := make([]cents, len(halves))
	var given cents
	for i, h := range halves {
		if i == len(halves)-1 {
			shares[i] = fee - given
			break
		}
		shares[i] = (fee*cents(h) + 1) / 2
		given += shares[i]
	}
	return shares
}
