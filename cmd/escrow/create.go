package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	escrow "github.com/escrowkit/escrow-go"
)

// readJSONFile decodes the JSON document in file ("-": standard input) into v. Unknown
// fields are refused: in a file written by hand they are typos the API would silently
// ignore.
func readJSONFile(file string, v any) error {
	var r io.Reader = os.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return usagef("--file: %v", err)
		}
		defer f.Close()
		r = f
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return usagef("--file %s: %v", file, err)
	}
	if dec.More() {
		return usagef("--file %s: more than one JSON value", file)
	}
	return nil
}

// createFlags are the flags that describe the common transaction: one item sold by a
// seller to a buyer.
type createFlags struct {
	file                           string
	buyer, seller                  string
	amount, itemType, title, descr string
	currency, reference            string
	inspectionDays                 int
}

// itemFlags are the flags that --file replaces.
var itemFlags = []string{"buyer", "seller", "amount", "type", "title", "description", "currency", "reference", "inspection-days"}

// request builds the creation body from the flags, or reads it from --file.
func (f *createFlags) request(fs *flag.FlagSet) (*escrow.CreateTransactionRequest, error) {
	if f.file != "" {
		return f.fromFile(fs)
	}
	if err := f.checkRequired(); err != nil {
		return nil, err
	}
	amount, err := escrow.ParseAmount(f.amount)
	if err != nil || amount.IsNegative() || amount.IsZero() {
		return nil, usagef("--amount: %q is not a positive sum with at most two decimals", f.amount)
	}
	if f.inspectionDays < 0 {
		return nil, usagef("--inspection-days must not be negative: give a whole number of days, or 0 for the default of 3")
	}
	descr := f.descr
	if descr == "" {
		descr = f.title
	}
	return &escrow.CreateTransactionRequest{
		// The API refuses "USD"; a person typing it means "usd".
		Currency:    escrow.Currency(strings.ToLower(f.currency)),
		Description: descr,
		Reference:   f.reference,
		Parties:     []escrow.PartyInput{{Role: escrow.RoleBuyer, Customer: f.buyer}, {Role: escrow.RoleSeller, Customer: f.seller}},
		Items: []escrow.ItemInput{{
			Title: f.title, Type: escrow.ItemType(f.itemType), Quantity: 1,
			InspectionPeriod: escrow.Days(f.inspectionDays),
			Schedule:         []escrow.ScheduleInput{{Amount: amount, PayerCustomer: f.buyer, BeneficiaryCustomer: f.seller}},
		}},
	}, nil
}

// fromFile reads the whole creation body from --file, which no item flag may accompany.
func (f *createFlags) fromFile(fs *flag.FlagSet) (*escrow.CreateTransactionRequest, error) {
	for _, name := range itemFlags {
		if isSet(fs, name) {
			return nil, usagef("--file and --%s cannot be used together: the file holds the whole transaction", name)
		}
	}
	req := &escrow.CreateTransactionRequest{}
	return req, readJSONFile(f.file, req)
}

// checkRequired refuses flags that leave out what a transaction needs, naming all that is
// missing at once.
func (f *createFlags) checkRequired() error {
	var missing []string
	for _, m := range []struct{ flag, value string }{{"buyer", f.buyer}, {"seller", f.seller}, {"amount", f.amount}, {"title", f.title}} {
		if m.value == "" {
			missing = append(missing, "--"+m.flag)
		}
	}
	if len(missing) > 0 {
		return usagef("missing %s (or give the whole transaction with --file)", strings.Join(missing, ", "))
	}
	return nil
}

// runTransactionsCreate is "escrow transactions create": from flags for one item between
// a buyer and a seller, or from a JSON file for anything else.
func runTransactionsCreate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow transactions create"
	var f createFlags
	var quiet bool
	var req *escrow.CreateTransactionRequest
	var fs *flag.FlagSet
	return apiCommand(ctx, name, name+" (--file F | --buyer email --seller email --amount n --title t [--type t] [--description d] [--currency c] [--reference r] [--inspection-days n])\n\n"+
		"The flags describe one item the seller sells to the buyer; either may be \"me\", the account.\n"+
		"--file takes the API's creation body as JSON (\"-\" reads standard input), for anything else.", args, stdout, stderr, false,
		func(set *flag.FlagSet) {
			fs = set
			fs.StringVar(&f.file, "file", "", "read the creation body, as JSON, from `file` (\"-\": standard input)")
			fs.StringVar(&f.buyer, "buyer", "", "the buyer's `email`")
			fs.StringVar(&f.seller, "seller", "", "the seller's `email`")
			fs.StringVar(&f.amount, "amount", "", "the item's price, such as 250.00 (`amount`)")
			fs.StringVar(&f.title, "title", "", "the item's `title`")
			fs.StringVar(&f.itemType, "type", string(escrow.ItemGeneralMerchandise), "the item's `type`: general_merchandise, domain_name, motor_vehicle, milestone, …")
			fs.StringVar(&f.descr, "description", "", "the transaction's `description` (default the title)")
			fs.StringVar(&f.currency, "currency", string(escrow.USD), "`currency`: usd, aud, euro, gbp or cad")
			fs.StringVar(&f.reference, "reference", "", "your own `reference`, unique among your transactions; it also makes a retried create safe")
			fs.IntVar(&f.inspectionDays, "inspection-days", 0, "the buyer's inspection period in `days` (default the API's, 3 days)")
			fs.BoolVar(&quiet, "quiet", false, "print the new transaction's id alone, for scripts: ID=$(escrow transactions create … --quiet)")
		},
		func(positional []string) (err error) {
			if err = want()(positional); err == nil {
				req, err = f.request(fs)
			}
			return err
		},
		func(ctx context.Context, client *escrow.Client, opts []escrow.RequestOption) (any, func(io.Writer), error) {
			tx, err := client.Transactions.Create(ctx, req, opts...)
			return tx, func(w io.Writer) {
				if quiet {
					fmt.Fprintln(w, tx.ID)
					return
				}
				fmt.Fprintf(w, "created transaction %d.\n\n", tx.ID)
				printTransaction(w, tx)
			}, err
		})
}
