package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// runTransactionsList is "escrow transactions list": every transaction, page after page.
func runTransactionsList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow transactions list"
	fs := newFlagSet(name, "escrow transactions list [--limit n] [--per-page n] [--asc] [api flags]", stderr)
	var api apiFlags
	api.register(fs, false)
	var lf listFlags
	fs.IntVar(&lf.limit, "limit", 0, "stop after `n` transactions (0: all)")
	fs.IntVar(&lf.perPage, "per-page", 50, "fetch `n` transactions per request (1 to 100)")
	fs.BoolVar(&lf.asc, "asc", false, "oldest first (default newest first)")
	if code, ok := parseNone(fs, name, args, stderr); !ok {
		return code
	}
	if lf.perPage < 1 || lf.perPage > 100 || lf.limit < 0 {
		return exitCode(stderr, name, usagef("--per-page must be from 1 to 100 (the API's page size) and --limit not negative (0: no limit)"))
	}
	client, release, err := api.connect(stderr)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	defer release()
	txs, err := lf.collect(ctx, client, api.requestOptions(), stderr)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	return api.print(stdout, stderr, name, txs, func(w io.Writer) { printTransactionList(w, txs) })
}

// listFlags are the flags of "escrow transactions list" that choose what it reads.
type listFlags struct {
	limit, perPage int
	asc            bool
}

// collect reads the transactions page after page, up to the limit, counting them on
// stderr as it goes.
func (lf listFlags) collect(ctx context.Context, client *escrow.Client, reqOpts []escrow.RequestOption, stderr io.Writer) ([]*escrow.Transaction, error) {
	opt := &escrow.ListTransactionsOptions{PerPage: lf.perPage, SortBy: "id", SortDirection: escrow.SortDesc}
	if lf.asc {
		opt.SortDirection = escrow.SortAsc
	}
	// Progress goes to a terminal only: a pipe or a log file gets the listing alone.
	progress := listProgress{w: stderr, on: isTerminal(stderr), every: lf.perPage}
	defer progress.clear()
	txs := []*escrow.Transaction{}
	for tx, err := range client.Transactions.All(ctx, opt, reqOpts...) {
		if err != nil {
			return nil, err
		}
		txs = append(txs, tx)
		progress.count(len(txs))
		if lf.limit > 0 && len(txs) == lf.limit {
			break
		}
	}
	return txs, nil
}

// listProgress counts the transactions read so far on one terminal line, after each page.
type listProgress struct {
	w     io.Writer
	on    bool // whether w is a terminal
	every int  // transactions per page
}

// count shows n when a page is complete.
func (p listProgress) count(n int) {
	if p.on && n%p.every == 0 {
		fmt.Fprintf(p.w, "\r%s…", plural(n, "transaction", "transactions"))
	}
}

// clear erases the count, leaving the line for what follows.
func (p listProgress) clear() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// printTransactionList prints transactions as a table, one a line.
func printTransactionList(w io.Writer, txs []*escrow.Transaction) {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tREFERENCE\tSTATE\tAMOUNT\tCURRENCY\tCREATED\tNEXT\tDESCRIPTION")
	for _, tx := range txs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", tx.ID, orDash(tx.Reference), tx.State(),
			tx.Totals().Items, tx.Currency, date(tx.CreationDate), nextColumn(tx), tx.Description)
	}
	tw.Flush()
}

// runTransactionsGet is "escrow transactions get ID" or "escrow transactions get --reference REF".
func runTransactionsGet(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow transactions get"
	fs := newFlagSet(name, "escrow transactions get (ID | --reference ref) [api flags]", stderr)
	var api apiFlags
	api.register(fs, false)
	var target getTarget
	fs.StringVar(&target.reference, "reference", "", "find the transaction by the `reference` given at creation")
	positional, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = target.parseID(positional)
	}
	if err != nil {
		return exitCode(stderr, name, err)
	}
	client, release, err := api.connect(stderr)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	defer release()
	tx, err := target.get(ctx, client, api.requestOptions())
	if err != nil {
		return exitCode(stderr, name, err)
	}
	return api.print(stdout, stderr, name, tx, func(w io.Writer) { printTransaction(w, tx) })
}

// getTarget is the transaction "escrow transactions get" reads: by reference when one is
// given, by id otherwise.
type getTarget struct {
	id        int64
	reference string
}

// parseID takes the id from the arguments, which hold it alone when no reference is given
// and nothing otherwise.
func (t *getTarget) parseID(positional []string) (err error) {
	switch {
	case t.reference != "" && len(positional) == 0:
		return nil
	case t.reference == "" && len(positional) == 1:
		t.id, err = parseID("transaction id", positional[0])
		return err
	}
	return usagef("give a transaction id or --reference, and nothing else")
}

// get reads the transaction.
func (t getTarget) get(ctx context.Context, client *escrow.Client, reqOpts []escrow.RequestOption) (*escrow.Transaction, error) {
	if t.reference != "" {
		return client.Transactions.GetByReference(ctx, t.reference, reqOpts...)
	}
	return client.Transactions.Get(ctx, t.id, reqOpts...)
}

// runTransactionsAct is "escrow transactions act ID ACTION": one PATCH on the transaction,
// or on one item with --item (milestones act per item).
func runTransactionsAct(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow transactions act"
	fs := newFlagSet(name, "escrow transactions act ID ACTION [--item ID] [--carrier c --tracking t [--carrier-contact x]] [--authorization type] [--reason text] [api flags]\n\n"+
		"actions: "+strings.Join(actionNames(), ", "), stderr)
	var api apiFlags
	api.register(fs, true)
	var target actTarget
	fs.Int64Var(&target.item, "item", 0, "act on the item with this `id` (milestone transactions act per item)")
	carrier := fs.String("carrier", "", "ship, ship_return: the `carrier`")
	tracking := fs.String("tracking", "", "ship, ship_return: the tracking `number`")
	contact := fs.String("carrier-contact", "", "ship, ship_return: how to reach the carrier (`contact`)")
	authorization := fs.String("authorization", "", "ship, ship_return of domain names: how it is handed over, `type` push, authorization_code or username_password")
	reason := fs.String("reason", "", "cancel: why (`text`), recorded in the timeline")
	positional, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var req *escrow.ActionRequest
	if err == nil {
		target.id, req, err = actionRequest(positional, *carrier, *tracking, *contact, *authorization, *reason)
	}
	if err == nil {
		err = target.checkItem()
	}
	if err != nil {
		return exitCode(stderr, name, err)
	}
	client, release, err := api.connect(stderr)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	defer release()
	tx, err := target.act(ctx, client, req, api.requestOptions())
	if err != nil {
		code := exitCode(stderr, name, err)
		if errors.Is(err, escrow.ErrActionNotAllowed) {
			explainRefusal(ctx, client, target.id, stderr)
		}
		return code
	}
	return api.print(stdout, stderr, name, tx, func(w io.Writer) {
		fmt.Fprintf(w, "%s: done.\n\n", req.Action)
		printTransaction(w, tx)
	})
}

// actTarget is what "escrow transactions act" acts on: the transaction, or one of its
// items when item is set.
type actTarget struct {
	id, item int64
}

// checkItem refuses an item id that cannot be one.
func (t actTarget) checkItem() error {
	if t.item < 0 {
		return usagef("--item must be a positive id: a milestone's id, as 'escrow transactions get ID' lists it")
	}
	return nil
}

// act sends the action.
func (t actTarget) act(ctx context.Context, client *escrow.Client, req *escrow.ActionRequest, reqOpts []escrow.RequestOption) (*escrow.Transaction, error) {
	if t.item > 0 {
		return client.Transactions.ActOnItem(ctx, t.id, t.item, req, reqOpts...)
	}
	return client.Transactions.Act(ctx, t.id, req, reqOpts...)
}

// explainRefusal follows an action the transaction's state refused with what the
// transaction waits for instead, read afresh as the client itself, so that the refusal
// names its way out; a failed read adds nothing.
func explainRefusal(ctx context.Context, client *escrow.Client, id int64, stderr io.Writer) {
	tx, err := client.Transactions.Get(ctx, id)
	if err != nil {
		return
	}
	fmt.Fprintf(stderr, "Transaction %d is %s.\n", id, tx.State())
	printNextSteps(stderr, tx)
}

// actionNames lists the actions the SDK knows (its action table, escrow.Actions).
func actionNames() []string {
	var names []string
	for _, a := range escrow.Actions() {
		names = append(names, string(a))
	}
	return names
}

// actionName matches what the API's action names look like: lowercase words joined by
// underscores. An action the SDK does not know is sent all the same, as the SDK sends it.
var actionName = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// actionsThat names the actions for which f is true.
func actionsThat(f func(escrow.Action) bool) []string {
	var names []string
	for _, a := range escrow.Actions() {
		if f(a) {
			names = append(names, string(a))
		}
	}
	return names
}

// actionRequest checks "ID ACTION" and the flags that go with the action, and builds the
// body. Flags that the action does not take are refused rather than silently dropped.
func actionRequest(positional []string, carrier, tracking, contact, authorization, reason string) (int64, *escrow.ActionRequest, error) {
	if len(positional) != 2 {
		return 0, nil, usagef("want a transaction id and an action, got %s", plural(len(positional), "argument", "arguments"))
	}
	id, err := parseID("transaction id", positional[0])
	if err != nil {
		return 0, nil, err
	}
	action := escrow.Action(positional[1])
	if !actionName.MatchString(string(action)) {
		return 0, nil, usagef("%q is no action name: want one of %s, or another lowercase_name the API takes", action, strings.Join(actionNames(), ", "))
	}
	req := &escrow.ActionRequest{Action: action}
	if err := addShipping(req, carrier, tracking, contact, authorization); err != nil {
		return 0, nil, err
	}
	if reason != "" {
		if action.Known() && !action.TakesCancelInformation() {
			return 0, nil, usagef("--reason goes with %s only: leave it out, or cancel with 'act ID cancel --reason TEXT'", strings.Join(actionsThat(escrow.Action.TakesCancelInformation), " and "))
		}
		req.CancelInformation = &escrow.CancelInformation{CancellationReason: reason}
	}
	return id, req, nil
}

// anySet reports whether any of the flags was given.
func anySet(flags ...string) bool {
	return slices.ContainsFunc(flags, func(f string) bool { return f != "" })
}

// checkAuthorization refuses an --authorization the API does not name.
func checkAuthorization(authorization string) error {
	switch escrow.AuthorizationType(authorization) {
	case "", escrow.AuthorizationPush, escrow.AuthorizationCode, escrow.AuthorizationUsernamePassword:
		return nil
	}
	return usagef("--authorization must be push, authorization_code or username_password")
}

// addShipping adds the shipping flags to an action's body. An action the SDK knows takes
// them only if its row says so; an unknown one gets what is given, and the API judges.
func addShipping(req *escrow.ActionRequest, carrier, tracking, contact, authorization string) error {
	if err := checkAuthorization(authorization); err != nil {
		return err
	}
	if !anySet(carrier, tracking, contact, authorization) {
		return nil
	}
	if req.Action.Known() && !req.Action.TakesShipping() {
		return usagef("--carrier, --tracking, --carrier-contact and --authorization go with %s only: the other actions carry no shipping information; leave them out", strings.Join(actionsThat(escrow.Action.TakesShipping), " and "))
	}
	req.ShippingInformation = &escrow.ShippingInformation{AuthorizationType: escrow.AuthorizationType(authorization)}
	if anySet(carrier, tracking, contact) {
		req.ShippingInformation.TrackingInformation = &escrow.TrackingInformation{Carrier: carrier, TrackingID: tracking, CarrierContact: contact}
	}
	return nil
}

// parseID reads a positive integer id.
func parseID(what, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("%s %q is not a positive integer", what, s)
	}
	return id, nil
}

// parseChecked parses a command's flags and checks its positional arguments with check.
// When ok is false the command ends with code: -h was answered, or a usage error reported.
func parseChecked(fs *flag.FlagSet, name string, args []string, check func([]string) error, stderr io.Writer) (positional []string, code int, ok bool) {
	positional, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, 0, false
	}
	if err == nil {
		err = check(positional)
	}
	if err != nil {
		return nil, exitCode(stderr, name, err), false
	}
	return positional, 0, true
}

// parseNone parses flags of a command that takes no positional argument. When ok is false
// the command ends with code.
func parseNone(fs *flag.FlagSet, name string, args []string, stderr io.Writer) (code int, ok bool) {
	_, code, ok = parseChecked(fs, name, args, want(), stderr)
	return code, ok
}

// printTransaction shows a transaction for people: its terms, parties, items and sums.
func printTransaction(w io.Writer, tx *escrow.Transaction) {
	tw := newTable(w)
	fmt.Fprintf(tw, "Transaction\t%d\n", tx.ID)
	fmt.Fprintf(tw, "Description\t%s\n", tx.Description)
	fmt.Fprintf(tw, "Reference\t%s\n", orDash(tx.Reference))
	fmt.Fprintf(tw, "State\t%s\n", tx.State())
	fmt.Fprintf(tw, "Currency\t%s\n", tx.Currency)
	fmt.Fprintf(tw, "Created\t%s\n", timestamp(tx.CreationDate))
	fmt.Fprintf(tw, "Closed\t%s\n", timestamp(tx.CloseDate))
	tw.Flush()

	fmt.Fprintln(w)
	tw = newTable(w)
	fmt.Fprintln(tw, "ROLE\tCUSTOMER\tAGREED")
	for _, p := range tx.Parties {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Role, orDash(p.Customer), yesNo(p.Agreed))
	}
	tw.Flush()

	fmt.Fprintln(w)
	tw = newTable(w)
	fmt.Fprintln(tw, "ITEM\tTYPE\tTITLE\tAMOUNT\tFEES\tSECURED\tPAID OUT\tSTATE")
	var scheduled escrow.Amount
	for i := range tx.Items {
		it := &tx.Items[i]
		var amount, fees, secured, paid escrow.Amount
		for _, s := range it.Schedule {
			amount = amount.Add(s.Amount)
			if s.Status.Secured {
				secured = secured.Add(s.Amount)
			}
			if s.Status.DisbursedToBeneficiary {
				paid = paid.Add(s.Amount)
			}
		}
		for _, f := range it.Fees {
			fees = fees.Add(f.Amount)
		}
		scheduled = scheduled.Add(amount)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", it.ID, it.Type, orDash(it.Title), amount, fees, secured, paid, tx.ItemState(it))
	}
	tw.Flush()

	// Secured and paid out are counted on the items' schedules, the fees aside: set them
	// beside the schedules' sum, not beside the total with fees.
	a := tx.Totals()
	fmt.Fprintf(w, "\nItems %s, broker fee %s, escrow fee %s: total %s %s.\n", a.Items, a.BrokerFee, a.EscrowFee, a.Total, tx.Currency)
	fmt.Fprintf(w, "Of the items' %s: secured %s, paid out %s.\n", scheduled, a.Secured, a.Disbursed)
	printNextSteps(w, tx)
}

// printNextSteps says who must do what next, one line each ("next: seller@example.com
// selects a disbursement method"), and why nothing was paid out when that is
// what the transaction waits for.
func printNextSteps(w io.Writer, tx *escrow.Transaction) {
	steps := tx.NextSteps()
	if len(steps) == 0 {
		switch tx.State() {
		case escrow.StateInDispute:
			fmt.Fprintln(w, "next: no party can act: the provider arbitrates the dispute.")
		case escrow.StateComplete, escrow.StateCancelled:
		default:
			fmt.Fprintln(w, "next: the provider: the parties have done their part.")
		}
		return
	}
	for _, line := range describeSteps(steps) {
		fmt.Fprintf(w, "next: %s\n", line)
	}
	for _, s := range steps {
		switch s.Action {
		case escrow.NextSelectDisbursementMethod:
			fmt.Fprintf(w, "      nothing owed to %s is paid out until then: 'escrow transactions disbursement add %d --as %[1]s' on an emulator\n", s.Customer, tx.ID)
		case escrow.NextPay:
			fmt.Fprintf(w, "      %s\n", payHint(tx.ID))
		}
	}
}

// payHint says how a buyer's payment is made, and how it arrives on an emulator, where
// nobody pays on the provider's page.
func payHint(id int64) string {
	return fmt.Sprintf("the buyer pays by wire ('escrow transactions pay wire %d') or on the page 'pay choose %[1]d METHOD' prints; "+
		"on an emulator, 'escrow emulator approve %[1]d' brings the funds in", id)
}

// nextColumn is the listing's short word on who must act next: the first step, and how
// many more there are.
func nextColumn(tx *escrow.Transaction) string {
	lines := describeSteps(tx.NextSteps())
	switch len(lines) {
	case 0:
		return "-"
	case 1:
		return lines[0]
	}
	return fmt.Sprintf("%s (+%d)", lines[0], len(lines)-1)
}

// alternatives are next actions that are one choice: the buyer accepts or rejects the
// goods, the seller the returned goods.
var alternatives = map[escrow.NextAction]escrow.NextAction{
	escrow.NextAccept:       escrow.NextReject,
	escrow.NextAcceptReturn: escrow.NextRejectReturn,
}

// describeSteps says the steps for people, one line each, with a choice between
// alternatives on one line: "buyer@example.com accepts or rejects the goods".
func describeSteps(steps []escrow.NextStep) []string {
	var lines []string
	for i := 0; i < len(steps); i++ {
		s := steps[i]
		line := s.String()
		if alt, ok := alternatives[s.Action]; ok && i+1 < len(steps) {
			if n := steps[i+1]; n.Action == alt && n.Customer == s.Customer && n.ItemID == s.ItemID {
				accept, reject := s.Action.Phrase(), alt.Phrase()
				verb, _, _ := strings.Cut(reject, " ")
				line = strings.Replace(line, accept, strings.Replace(accept, " ", " or "+verb+" ", 1), 1)
				i++
			}
		}
		lines = append(lines, line)
	}
	return lines
}

// plural writes a count with the noun in the number it takes: "1 transaction", "2
// transactions".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// orDash shows an empty string as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// yesNo shows a flag.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// date shows a timestamp's day in UTC, or "-".
func date(t escrow.Timestamp) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.DateOnly)
}

// timestamp shows a timestamp in UTC to the second, or "-".
func timestamp(t escrow.Timestamp) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
