package escrowtest

import (
	"net/http"
	"slices"
	"testing"
)

func TestParseCents(t *testing.T) {
	tests := []struct {
		in   string
		want cents
		ok   bool
	}{
		{"1000", 100000, true},
		{"1000.0", 100000, true},
		{"1000.00", 100000, true},
		{"1000.000", 100000, true},
		{"0.01", 1, true},
		{"1e3", 100000, true},
		{"1.5E+2", 15000, true},
		{"12345e-2", 12345, true},
		{"1000000000.00", 100000000000, true},
		{"1000000000.01", 0, false},
		{"1e12", 0, false},
		{"1e999", 0, false},
		{"0", 0, false},
		{"0.00", 0, false},
		{"-5", 0, false},
		{"0.001", 0, false},
		{"10.005", 0, false},
		{"0.30000000000000004", 0, false},
		{"1/3", 0, false},
		{" 10", 0, false},
		{"", 0, false},
		{"ten", 0, false},
		{"1e-999", 0, false},
	}
	for _, tc := range tests {
		got, err := parseCents(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseCents(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestCentsString(t *testing.T) {
	for c, want := range map[cents]string{0: "0.00", 5: "0.05", 3250: "32.50", 100000: "1000.00", -1788: "-17.88"} {
		if got := c.String(); got != want {
			t.Errorf("%d: %q, want %q", c, got, want)
		}
	}
}

func TestEscrowFeeTable(t *testing.T) {
	tests := []struct {
		name   string
		amount cents
		typ    string
		want   cents
	}{
		// The three fees observed on the live API (API-NOTES).
		{"observed domain sale", 1000_00, itemDomainName, 32_50},
		{"observed merchandise", 95000_00, itemGeneralMerchandise, 845_50},
		{"observed milestone", 500_00, itemMilestone, 17_88},
		// The tiers and their floors.
		{"first tier", 100_00, itemGeneralMerchandise, 3_25},
		{"top of the first tier", 5000_00, itemGeneralMerchandise, 162_50},
		{"second tier floor", 5000_01, itemGeneralMerchandise, 162_50},
		{"second tier", 20000_00, itemGeneralMerchandise, 320_00},
		{"top of the second tier", 50000_00, itemGeneralMerchandise, 800_00},
		{"third tier floor", 60000_00, itemGeneralMerchandise, 800_00},
		{"fourth tier", 2_000_000_00, itemMotorVehicle, 12000_00},
		{"rounding half up", 1_01, itemGeneralMerchandise, 3},
		{"largest amount", maxAmount, itemGeneralMerchandise, 6_000_000_00},
	}
	for _, tc := range tests {
		if got := escrowFee(tc.amount, tc.typ); got != tc.want {
			t.Errorf("%s: escrowFee(%s, %s) = %s, want %s", tc.name, tc.amount, tc.typ, got, tc.want)
		}
	}
	// A larger amount never costs less.
	var last cents
	for a := cents(1); a <= 2_000_000_00; a += 997_13 {
		if f := escrowFee(a, itemGeneralMerchandise); f < last {
			t.Fatalf("fee of %s is %s, less than %s for a smaller amount", a, f, last)
		} else {
			last = f
		}
	}
}

func TestSplitFee(t *testing.T) {
	tests := []struct {
		fee    cents
		halves []int
		want   []cents
	}{
		{3250, []int{2}, []cents{3250}},
		{3250, []int{1, 1}, []cents{1625, 1625}},
		{1789, []int{1, 1}, []cents{895, 894}},
		{1, []int{1, 1}, []cents{1, 0}},
	}
	for _, tc := range tests {
		if got := splitFee(tc.fee, tc.halves); !slices.Equal(got, tc.want) {
			t.Errorf("splitFee(%s, %v) = %v, want %v", tc.fee, tc.halves, got, tc.want)
		}
	}
}

// TestObservedFeesOverHTTP creates the three transactions whose fees the API notes record
// and reads the fees back as two-decimal strings.
func TestObservedFeesOverHTTP(t *testing.T) {
	w := newWorld(t)
	ms := set(milestones(), "items", []any{milestoneItem("Only", 500)})
	gm := set(merchandise(), "items.0.schedule.0.amount", 95000)
	for _, tc := range []struct {
		c    *client
		body body
		want string
	}{
		{w.s, domain(), "32.50"},
		{w.b, gm, "845.50"},
		{w.b, ms, "17.88"},
	} {
		r := tc.c.must(http.StatusCreated, http.MethodPost, "transaction", tc.body)
		if got := r.str("items.0.fees.0.amount"); got != tc.want {
			t.Errorf("%s fee = %q, want %q", r.str("items.0.type"), got, tc.want)
		}
	}
}

func TestFeeSplitBetweenPayers(t *testing.T) {
	w := newWorld(t)
	b := set(merchandise(), "items.0.schedule.0.amount", 550.5) // fee 17.89: an odd cent
	b = set(b, "items.0.fees", []any{
		body{"type": "escrow", "payer_customer": "seller@example.com", "split": 0.5},
		body{"type": "escrow", "payer_customer": "me", "split": 0.5},
		body{"type": "paypal_deposit", "payer_customer": "buyer@example.com"},
	})
	r := w.b.must(http.StatusCreated, http.MethodPost, "transaction", b)
	want := []any{
		map[string]any{"type": "escrow", "payer_customer": "seller@example.com", "split": "0.5", "amount": "8.95", "amount_without_taxes": "8.95"},
		map[string]any{"type": "escrow", "payer_customer": "buyer@example.com", "split": "0.5", "amount": "8.94", "amount_without_taxes": "8.94"},
		map[string]any{"type": "paypal_deposit", "payer_customer": "buyer@example.com", "amount": "0.00", "amount_without_taxes": "0.00"},
	}
	if got := r.list("items.0.fees"); !jsonEqual(got, want) {
		t.Errorf("fees = %v\nwant %v", got, want)
	}
}

// TestFeeItemsCarryNoFees: partner_fee items take no fees list, and neither fee item type is
// charged an escrow fee of its own.
func TestFeeItemsCarryNoFees(t *testing.T) {
	w := newWorld(t)
	b := withFeeItem(partnered(), "partner_fee", "me", 20)
	r := w.p.must(http.StatusCreated, http.MethodPost, "transaction", b)
	if fees := r.list("items.1.fees"); len(fees) != 0 {
		t.Errorf("partner fee item charged fees %v", fees)
	}
	k := w.k.must(http.StatusCreated, http.MethodPost, "transaction", brokered())
	if fees := k.list("items.1.fees"); len(fees) != 0 {
		t.Errorf("broker fee item charged fees %v", fees)
	}
	// The list is refused whole: its entries, wrong as they are, are not judged one by one.
	set(b, "items.1.fees", []any{body{"type": "escrow", "payer_customer": "buyer@example.com", "split": 0.5}, body{"type": "bogus"}})
	if got := w.p.must(http.StatusUnprocessableEntity, http.MethodPost, "transaction", b).errorPaths(); !slices.Equal(got, []string{"items.1.fees"}) {
		t.Errorf("fees on a partner_fee item: errors at %v, want only items.1.fees", got)
	}
}
